"""Sample Codex rollouts, their golden turns and a realistic Codex config (contract-suite fixtures).

Shipped inside the package so ``funes integrations check codex`` can run the golden tests on an
installed funes-codex, not only in this repository's tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from funes_core import SessionRef


def hook_events(ref: SessionRef, home: Path) -> list[dict[str, object]]:
    """What Codex hands its Stop hook: the rollout's path, and (when Codex has none) the session id alone.

    With the id alone the hook finds the rollout under ``$CODEX_HOME/sessions``, which is what the
    kit's ``location:hook`` checks; an archived rollout gets no event of that kind (Codex fires no
    hook for a session ``codex archive`` put away).
    """
    full: dict[str, object] = {
        "hook_event_name": "Stop",
        "session_id": ref.session_id,
        "transcript_path": str(ref.path),
        "cwd": str(home),
    }
    if "archived_sessions" in ref.path.parts:
        return [full]
    return [full, {"hook_event_name": "Stop", "session_id": ref.session_id, "transcript_path": None}]
