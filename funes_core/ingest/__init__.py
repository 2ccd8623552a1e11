"""Ingest: from turns files to stored chunks, deterministically and without an LLM.

``sources`` finds and validates turns files, ``redact`` removes secrets, ``chunking`` renders and
splits blocks into chunks with stable ids, ``facets`` derives repo/workdir facets, ``engine`` runs
``funes index`` (tiers, dedup, the write lock), ``worker`` embeds what is owed in the background
(one low-priority process, resumable, observable by ``funes status``), and ``notes`` writes the
keyword-trigger notes that are indexed like any other turns.
"""
