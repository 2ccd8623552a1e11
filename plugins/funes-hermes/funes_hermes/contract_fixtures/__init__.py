"""Sample Hermes sessions and configs in the funes contract-suite layout.

Each ``state.db`` is built from the ``state.sql`` beside it (plus ``schema.sql`` unless the case
brings its own tables) by ``python -m funes_hermes.fixtures``; the SQL is the reviewable source,
the database is what Hermes itself would leave. ``expected.funes.jsonl`` files are the goldens.
"""

# The kit derives its variants (earlier, torn, corrupt, long) of these SQLite cases with these
# functions: it finds them here, in pytest and in `funes integrations check hermes` alike.
from __future__ import annotations

from funes_hermes.fixtures import make_corrupt, make_earlier, make_long, make_torn

__all__ = ["make_corrupt", "make_earlier", "make_long", "make_torn"]
