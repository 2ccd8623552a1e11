"""What the Gemini CLI runs after each turn: ``python -I -m funes_gemini.hook --funes-home DIR -- FUNES...``.

Gemini runs the command of an ``AfterAgent`` (every turn) or ``SessionEnd`` hook with the event as
JSON on stdin (``session_id``, ``transcript_path``: the chat file, ``hook_event_name``) and reads
the hook's stdout as JSON: the core's hook runtime prints nothing. Standard library only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from funes_core import HookSources, run_hook
from funes_gemini.agent import AGENT


def locate(event: Mapping[str, object], environ: Mapping[str, str]) -> HookSources | None:
    """The chat file the event names."""
    given = event.get("transcript_path")
    if isinstance(given, str) and os.path.isfile(given):
        return HookSources((given,), what=str(event.get("hook_event_name") or "AfterAgent"))
    return None


if __name__ == "__main__":
    raise SystemExit(run_hook(AGENT.id, locate))
