"""Hook implementations of funes-notes: what the ``funes`` entry point loads (kept cheap to import)."""

from __future__ import annotations

from collections.abc import Iterable

from funes_core import Converter, hookimpl
from funes_notes.converter import NotesConverter


@hookimpl
def funes_register_converters() -> Iterable[type[Converter]]:
    return [NotesConverter]
