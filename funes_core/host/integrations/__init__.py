"""``funes integrations``: one module per subcommand over a shared orchestrator.

``common`` holds the orchestrator state and helpers (plugin boundary, install records, status);
``install``, ``remove``, ``listing``, ``info``, ``convert`` and ``check`` each hold one subcommand.
"""
