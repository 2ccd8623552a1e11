"""What funes' Kilo plugin runs after each turn: ``python -I -m funes_kilo.hook …``.

The plugin file starts it on Kilo's ``session.idle`` event with ``{"session_id": "ses_…"}`` on
stdin and Kilo's own environment, so the databases found are the ones the running Kilo uses
(``XDG_DATA_HOME``, ``KILO_DB``). Standard library only: it runs on every turn.
"""

from __future__ import annotations

from collections.abc import Mapping

from funes_core import HookSources, run_hook
from funes_kilo.agent import AGENT, databases
from funes_opencode.hook import locate_in


def locate(event: Mapping[str, object], environ: Mapping[str, str]) -> HookSources | None:
    """Every Kilo database, narrowed to the session the event names."""
    return locate_in(databases, event, environ)


if __name__ == "__main__":
    raise SystemExit(run_hook(AGENT.id, locate))
