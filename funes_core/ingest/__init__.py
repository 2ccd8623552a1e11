"""Ingest: from turns files to stored chunks, deterministically and without an LLM.

``sources`` finds and validates turns files, ``redact`` removes secrets, ``chunking`` renders and
splits blocks into chunks with stable ids, ``facets`` derives repo/workdir facets, ``engine`` runs
``funes index`` (tiers, dedup, embedding catch-up, the write lock), and ``notes`` writes the
keyword-trigger notes that are indexed like any other turns.
"""
