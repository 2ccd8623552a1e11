"""Wiring funes into an agent: what a plugin declares, run by the core.

``agent`` holds who an integration is and where its agent keeps things; ``configedit`` edits an
agent's config files byte for byte (JSON, TOML, YAML, and the managed entries built on them);
``hookrt`` is the per-turn hook runtime (standard library only); ``spooling`` converts a session
into the spool under a lock and starts an indexer; ``overrides`` records the agents' location
variables at install; ``integrations`` runs the ``funes integrations`` subcommands.
"""
