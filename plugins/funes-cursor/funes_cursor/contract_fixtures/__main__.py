"""``python -m funes_cursor.contract_fixtures``: write the fixture store again from store.json."""

from __future__ import annotations

import json

from funes_cursor.contract_fixtures import SOURCE, TARGET, build

build(json.loads(SOURCE.read_text(encoding="utf-8")), TARGET)
print(f"wrote {TARGET}")
