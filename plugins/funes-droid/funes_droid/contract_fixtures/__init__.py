"""Sample Factory Droid sessions, their reviewed goldens and a realistic config: the contract fixtures.

Shipped inside the package so ``funes integrations check droid`` runs the golden tests on the
installed plugin. ``cases/basic/`` is a session in the layout and records droid 0.215.0 writes
(``<cwd>/<uuid>.jsonl`` beside its ``.settings.json``: the hook notices, the injected context,
a ``ToolSearch`` load and an MCP call to funes included), ``home/`` a HOME as Droid leaves it,
``config-home/`` a HOME whose ``.factory/settings.json`` and ``mcp.json`` hold the user's own
models, hooks and servers.
"""
