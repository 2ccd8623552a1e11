"""The plugin host: hookspecs, the plugin manager, the plugin-facing bases and the catalog.

``hookspecs`` declares the hooks, ``manager`` discovers and isolates plugins, ``api`` holds the
bases a plugin subclasses (re-exported by :mod:`funes_core`), ``registration`` makes a plugin's
hook implementations from its part classes, ``transcripts`` holds the helpers converters share,
``catalog`` reads the integration catalog and ``scaffold`` writes a new plugin. Wiring an agent
(its config edits, hooks and the ``funes integrations`` commands) is :mod:`funes_core.wiring`.
"""
