"""The command Claude Code runs on ``Stop``, ``SubagentStop`` and ``SessionEnd``.

Installed (by :class:`funes_claude.wiring.ClaudeHookInstaller`) as::

    <python> -I -m funes_claude.hook --funes-home <FUNES_HOME> -- <funes command...>

Claude Code waits for a hook before it carries on. The core's hook runtime
(:func:`funes_core.run_hook`, standard library only; this package's ``__init__`` loads
nothing eagerly) reads the event, starts ``funes integrations convert claude … --index`` detached and
exits 0 at once, printing nothing; the worker converts under the integration's lock and makes
sure an indexer runs (see :mod:`funes_core.wiring.spooling`). This module only says which
transcripts an event is about:

* ``Stop``: the session's transcript (``transcript_path``; ``claude mcp list`` fires
  ``SessionEnd`` with a path that is never created, so a missing file means nothing to do);
* ``SubagentStop``: the subagent's transcript (``agent_transcript_path``), else the session's
  subagents, else the session;
* ``SessionEnd``: the session and all its subagents.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from funes_core import HookSources, run_hook

__all__ = ["HOOK_MODULE", "locate", "targets"]

#: The module Claude Code runs; also how the installer recognises its own hooks.
HOOK_MODULE = "funes_claude.hook"


def targets(event: str, transcript: str, agent_transcript: str | None) -> list[str]:
    """The transcripts to convert for one event: the session, its subagents, or both."""
    main = [transcript]
    folder = os.path.join(os.path.dirname(transcript), os.path.basename(transcript)[: -len(".jsonl")])
    subagents_dir = os.path.join(folder, "subagents")
    subagents: list[str] = []
    if os.path.isdir(subagents_dir):
        subagents = sorted(
            os.path.join(subagents_dir, n) for n in os.listdir(subagents_dir) if n.endswith(".jsonl")
        )
    if event == "SubagentStop":
        if agent_transcript and os.path.isfile(agent_transcript):
            return [agent_transcript]
        return subagents or main
    if event == "SessionEnd":
        return main + subagents
    return main


def locate(event: Mapping[str, object], environ: Mapping[str, str]) -> HookSources | None:
    """The transcripts a Claude Code hook event is about (see the module docstring)."""
    name = str(event.get("hook_event_name") or "?")
    transcript = event.get("transcript_path")
    if not isinstance(transcript, str) or not os.path.isfile(transcript):
        return None
    agent = event.get("agent_transcript_path")
    paths = targets(name, transcript, agent if isinstance(agent, str) and agent else None)
    return HookSources(tuple(paths), what=name)


if __name__ == "__main__":
    sys.exit(run_hook("claude", locate))
