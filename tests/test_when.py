"""Time expressions in a query → a window of ``ts`` (``funes_core.read.when``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from funes_core.read.when import Window, query_window

#: A Thursday morning, as in the agent-session benchmark.
NOW = datetime(2026, 2, 12, 9, 0, tzinfo=UTC)


def span(query: str, now: datetime = NOW) -> tuple[str, str] | None:
    window = query_window(query, now)
    if window is None:
        return None
    return window.start.strftime("%Y-%m-%d %H:%M"), window.end.strftime("%Y-%m-%d %H:%M")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what did we push yesterday?", ("2026-02-11 00:00", "2026-02-12 00:00")),
        ("yesterday around 9pm, which hook?", ("2026-02-11 20:00", "2026-02-11 22:00")),
        ("around 9:10pm yesterday", ("2026-02-11 20:10", "2026-02-11 22:10")),
        ("yesterday before 9pm", ("2026-02-11 00:00", "2026-02-11 21:00")),
        ("last night after 10:30pm", ("2026-02-11 22:30", "2026-02-12 06:00")),
        ("what did we push late last night?", ("2026-02-11 21:00", "2026-02-12 05:00")),
        ("last night", ("2026-02-11 18:00", "2026-02-12 06:00")),
        ("yesterday evening", ("2026-02-11 17:00", "2026-02-12 00:00")),
        ("the day before yesterday", ("2026-02-10 00:00", "2026-02-11 00:00")),
        ("two days ago", ("2026-02-10 00:00", "2026-02-11 00:00")),
        ("3 days ago", ("2026-02-09 00:00", "2026-02-10 00:00")),
        ("on Tuesday night", ("2026-02-10 18:00", "2026-02-11 06:00")),
        ("last Thursday", ("2026-02-05 00:00", "2026-02-06 00:00")),
        ("this morning", ("2026-02-12 05:00", "2026-02-12 09:00")),
        ("earlier this week", ("2026-02-09 00:00", "2026-02-12 09:00")),
        ("last week", ("2026-02-02 00:00", "2026-02-09 00:00")),
        ("back in September", ("2025-09-01 00:00", "2025-10-01 00:00")),
        ("last September", ("2025-09-01 00:00", "2025-10-01 00:00")),
        ("in early October", ("2025-10-01 00:00", "2025-10-11 00:00")),
        ("late October 2023", ("2023-10-20 00:00", "2023-11-01 00:00")),
        ("in February", ("2026-02-01 00:00", "2026-03-01 00:00")),
        ("in July 2023", ("2023-07-01 00:00", "2023-08-01 00:00")),
        ("last month", ("2026-01-01 00:00", "2026-02-01 00:00")),
        ("last autumn", ("2025-09-01 00:00", "2025-12-01 00:00")),
        ("in 2023", ("2023-01-01 00:00", "2024-01-01 00:00")),
        ("last year", ("2025-01-01 00:00", "2026-01-01 00:00")),
        ("What painting did Melanie show on October 13, 2023?", ("2023-10-13 00:00", "2023-10-14 00:00")),
        ("What did Gina find on 1 February, 2023?", ("2023-02-01 00:00", "2023-02-02 00:00")),
        ("the 2023-10-13 deploy", ("2023-10-13 00:00", "2023-10-14 00:00")),
        # No such day: the month it names, rather than an error.
        ("what happened on 31 February 2023?", ("2023-02-01 00:00", "2023-03-01 00:00")),
    ],
)
def test_expressions(query: str, expected: tuple[str, str]) -> None:
    assert span(query) == expected


@pytest.mark.parametrize(
    "query",
    [
        "it may fail on CI",
        "march through the list of migrations",
        "which bead depends on spotter-0p7.1?",
        "the 2023 budget",
        "",
        "🎉",
    ],
)
def test_no_window(query: str) -> None:
    assert query_window(query, NOW) is None


def test_window_contains_ts() -> None:
    window = query_window("yesterday", NOW)
    assert isinstance(window, Window) and window.phrase == "yesterday"
    assert window.contains("2026-02-11T23:59:59Z") and not window.contains("2026-02-12T00:00:00Z")
    assert not window.contains("not a time")
