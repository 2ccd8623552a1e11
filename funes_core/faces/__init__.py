"""The faces of funes: the typer CLI (``cli``) and the MCP server (``mcp``).

Both are thin bindings of :mod:`funes_core.read` and :mod:`funes_core.host`: they parse arguments,
call a verb and print (or return) its text. No face formats a passage or runs a query itself.
"""
