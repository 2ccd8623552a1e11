"""Sample Hermes sessions and configs in the funes contract-suite layout.

Each ``state.db`` is built from the ``state.sql`` beside it (plus ``schema.sql`` unless the case
brings its own tables) by ``python -m funes_hermes.fixtures``; the SQL is the reviewable source,
the database is what Hermes itself would leave. ``expected.funes.jsonl`` files are the goldens.
"""
