"""Editing agents' config files without touching any byte that is not ours.

``json`` edits JSON configs (the public editor, re-exported by :mod:`funes_core`).
"""
