"""``python -m funes_core.serve``: the memory service as a client starts it (detached, on demand)."""

from __future__ import annotations

from funes_core.serve.service import main

raise SystemExit(main())
