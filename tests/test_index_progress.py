"""The progress display of ``funes index`` (and so of a first install): turns per second and the time left."""

from __future__ import annotations

import io

from rich.console import Console

from funes_core.faces.cli.index import RichProgress


def test_storing_shows_turns_per_second_and_the_time_left() -> None:
    now = [100.0]
    out = io.StringIO()
    bar = RichProgress(
        Console(file=out, force_terminal=True, color_system=None, width=200), clock=lambda: now[0]
    )
    bar.writing(100)
    for _ in range(2):
        now[0] += 10.0
        bar.wrote(steps=25, turns=5_000, chunks=7_500)
    bar.close()  # stop the live display; what it showed last is rendered below
    out.seek(0)
    out.truncate(0)
    bar.console.print(bar._progress.get_renderable())
    shown = out.getvalue()
    assert "50/100" in shown
    assert "10,000 turns (500 turns/s), 15,000 chunks" in shown
    assert "eta 0:00:20" in shown  # 50 steps left at 2.5 steps a second
