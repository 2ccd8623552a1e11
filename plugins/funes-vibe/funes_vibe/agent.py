"""Who funes-vibe is, and where Mistral Vibe (``vibe``) keeps things (``$VIBE_HOME``, default ``~/.vibe``).

Standard library only (plus the core's ``agent`` module). The session folder can also be moved
with ``session_logging.save_dir`` in ``config.toml``; such a folder is registered with ``--path``.
"""

from __future__ import annotations

from funes_core import Agent, Capabilities, Location

__all__ = ["AGENT"]

AGENT = Agent(
    id="vibe",
    label="Mistral Vibe",
    contract_version=2,  # the plugin contract this integration was written and checked for
    capabilities=Capabilities(discover=True, memory_binding=False, local_time=False),
    locations=(
        Location("home", ".vibe", env=("VIBE_HOME",), holds="Mistral Vibe's state and config.toml"),
        Location(
            "sessions",
            "logs/session",
            under="home",
            holds="sessions (session_<time>_<id>/messages.jsonl and meta.json)",
        ),
    ),
)
