"""funes-memory-notes: a person's own Markdown and text notes as a funes source.

``funes integrations install notes --path DIR`` registers a folder (or a single file); every
``funes index`` then stores what changed, one session per file and one turn per heading section
(harness ``notes``, role ``note``). See :mod:`funes_notes.converter`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes_core import lazy_exports

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

# The public names, once, each ``as`` itself: type checkers read them, lazy_exports loads them on use.
if TYPE_CHECKING:
    from funes_notes.converter import NotesConverter as NotesConverter

__getattr__, __dir__ = lazy_exports(__name__, __file__)
