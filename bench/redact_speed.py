"""Redaction benchmark: how long the index-time redactor takes per block of text.

Every text block of every turn passes :func:`funes_core.redact.redact` before it is
chunked, so its cost is paid once per block at index time. Two blocks of about 1,200 characters
are timed, built from the corpora of ``tests/test_redact.py``: one of look-alikes only (nothing to
replace, the common case) and one with a planted secret. The target is under 1,000 µs a block.

Each figure is the mean over ``--rounds`` calls, the least disturbed of ``--repeats`` such runs
(the machine is shared: one long run measures the neighbours' load as much as the redactor).
This was a test until it failed under load (1,117 µs at a load average of 10): speed is measured
here, not asserted in the suite.

Usage::

    uv run python bench/redact_speed.py
    uv run python bench/redact_speed.py --rounds 300 --repeats 9 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_redact import LOOKALIKES, PLANTED  # noqa: E402

from funes_core.redact import redact  # noqa: E402

#: The size of a block, in characters (about a paragraph of a turn).
BLOCK = 1200


def block(parts: list[str], size: int = BLOCK) -> str:
    """``parts`` joined by newlines, repeated until ``size`` characters, cut there."""
    text = "\n".join(parts)
    while len(text) < size:
        text += "\n" + text
    return text[:size]


def blocks() -> dict[str, str]:
    """The two timed blocks: look-alikes only (``clean``), and with a planted secret (``dirty``)."""
    return {
        "clean": block(LOOKALIKES[:12]),
        "dirty": block(LOOKALIKES[:10])[:1100] + "\n" + PLANTED[2].text[:100],
    }


def mean_us(text: str, rounds: int, repeats: int) -> float:
    """Mean µs per call over ``rounds`` calls, the least of ``repeats`` runs (after one warm-up call)."""
    redact(text)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(rounds):
            redact(text)
        best = min(best, (time.perf_counter() - start) / rounds * 1e6)
    return best


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=100, help="calls per run (default 100)")
    parser.add_argument("--repeats", type=int, default=5, help="runs; the least disturbed counts (default 5)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    result: dict[str, object] = {
        "load_1min": os.getloadavg()[0],
        "block_chars": BLOCK,
        **{f"{name}_us": mean_us(text, args.rounds, args.repeats) for name, text in blocks().items()},
    }
    print(
        f"redact: {result['clean_us']:.0f} µs per clean {BLOCK}-char block, "
        f"{result['dirty_us']:.0f} µs with a secret (load {result['load_1min']:.2f})"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
