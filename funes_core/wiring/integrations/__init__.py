"""``funes integrations``: one module per subcommand over a shared orchestrator.

``common`` holds the orchestrator state and helpers (plugin boundary, install records, status);
``install``, ``remove``, ``listing``, ``info``, ``convert``, ``check`` and ``new`` each hold one
subcommand; ``atomic`` checks every config file a change touches before any is written; ``seed``
converts what changed into a spool.
"""
