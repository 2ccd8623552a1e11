"""The read verbs: one module per verb, each holding its parameters, its query and its text.

``recall``, ``get``, ``sessions``, ``scan``, ``sketch``, ``status`` and ``triggers`` are bound
alike by the CLI and the MCP server (:mod:`funes_core.faces`), so both print the same bytes;
``common`` holds what several verbs share (units, filters, hints, :class:`VerbError`).
"""
