"""lancedb imported without the REST namespace client's models, which still work when used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PROBE = textwrap.dedent(
    """
    import json, sys
    from funes_core.store.lazy_namespace import PACKAGE, install
    installed = install()
    import lancedb
    loaded = sorted(m for m in sys.modules if m.startswith(PACKAGE + "."))
    db = lancedb.connect(sys.argv[1])
    import pyarrow as pa
    table = db.create_table("t", data=pa.table({"x": [1, 2, 3]}))
    rows = table.count_rows()
    from lance_namespace import ListNamespacesResponse, LanceNamespace
    made = ListNamespacesResponse(namespaces=["a"], page_token=None)
    from lance_namespace_urllib3_client import ApiClient
    print(json.dumps({
        "installed": installed,
        "api_clients_loaded": any(".api." in m for m in loaded),
        "models_loaded": len([m for m in loaded if ".models." in m]),
        "rows": rows,
        "model": type(made).__name__,
        "namespaces": made.namespaces,
        "isinstance": isinstance(made, ListNamespacesResponse),
        "real_class": type(made).__module__,
        "api_client": ApiClient.__module__,
    }))
    """
)


def _probe(tmp_path: Path, **env: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "db")],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
        timeout=300,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
def test_lancedb_imports_without_the_clients_and_a_model_is_real_when_used(tmp_path: Path) -> None:
    got = _probe(tmp_path)
    assert got["installed"] is True
    assert got["api_clients_loaded"] is False
    assert isinstance(got["models_loaded"], int) and got["models_loaded"] < 40  # of ~147
    assert got["rows"] == 3
    assert got["model"] == "ListNamespacesResponse"
    assert got["namespaces"] == ["a"]
    assert got["isinstance"] is True
    assert got["real_class"] == "lance_namespace_urllib3_client.models.list_namespaces_response"
    assert got["api_client"] == "lance_namespace_urllib3_client.api_client"


@pytest.mark.slow
def test_switched_off_by_the_environment(tmp_path: Path) -> None:
    got = _probe(tmp_path, FUNES_LAZY_NAMESPACE="0")
    assert got["installed"] is False
    assert got["api_clients_loaded"] is True
    assert got["models_loaded"] > 100
    assert got["isinstance"] is True
