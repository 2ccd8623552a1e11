"""funes-memory-notes: a person's own Markdown and text notes as a funes source.

``funes integrations install notes --path DIR`` registers a folder (or a single file); every
``funes index`` then stores what changed, one session per file and one turn per heading section
(harness ``notes``, role ``note``). See :mod:`funes_notes.converter`.
"""

from __future__ import annotations

from funes_notes.converter import NotesConverter

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

__all__ = ["NotesConverter"]
