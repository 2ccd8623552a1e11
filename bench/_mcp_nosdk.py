"""A measuring stick for ``bench/mcp_startup.py``: funes' tools over stdio without the MCP SDK.

Not a server anyone should use: it answers ``initialize`` and ``tools/list`` from the front's
snapshot and ``tools/call`` for the read verbs by calling them directly (no argument validation
beyond the verbs' own). It runs the same memory settings as ``funes mcp`` (lean malloc, a trim
after each call), so the RSS difference to the shipped server is what the SDK's import and its
pydantic models cost, which is how much a server without the SDK could save.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def main() -> None:
    from funes_core.faces import mcp as server
    from funes_core.faces.mcp_front import handshake_snapshot
    from funes_core.read.common import VerbError
    from funes_core.read.handle import resolve_memories

    server.lean_malloc()
    snapshot = handshake_snapshot()
    version = snapshot["latest_handshake"]
    verbs = {verb.name: verb for verb in server.TOOLS}
    memory = None
    for line in sys.stdin:
        if not line.strip():
            continue
        frame = json.loads(line)
        ident, method = frame.get("id"), frame.get("method")
        if ident is None:
            continue
        result: dict[str, Any]
        if method == "initialize":
            result = snapshot["initialize"][version]
        elif method == "tools/list":
            result = snapshot["results"][version]["tools/list"]
        elif method == "tools/call":
            params = frame["params"]
            memory = memory or resolve_memories(None)
            verb = verbs[params["name"]]
            try:
                text = verb.run(memory, verb.args(**params.get("arguments", {})))
                result = {"content": [{"type": "text", "text": text}], "isError": False}
            except VerbError as exc:
                result = {"content": [{"type": "text", "text": str(exc)}], "isError": True}
            finally:
                server.release_memory()
        else:
            result = {}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
