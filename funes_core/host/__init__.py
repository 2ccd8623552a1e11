"""The plugin host: hookspecs, the plugin manager, the plugin-facing bases and the integrations.

``hookspecs`` declares the hooks, ``manager`` discovers and isolates plugins, ``api`` holds the
bases a plugin subclasses (re-exported by :mod:`funes_core`), ``catalog`` reads the integration
catalog, ``configedit`` edits agents' config files byte-carefully, and ``integrations`` runs the
``funes integrations`` subcommands.
"""
