"""Time expressions in a query ("yesterday around 9pm", "back in September", "on 13 October 2023")
turned into a window of ``ts``, so that recall can prefer the passages of that time.

Why: a developer asks their memory "what did we push late last night?" or "which framework did
we pick in early October?"; the words "last night" match nothing in the passages (transcripts
carry the time in ``ts``, never in the text), and the same fix made twice, in two sessions a few
hours apart, is told apart only by when. Recall uses the window as extra, pre-filtered search
legs (:func:`funes_core.read.recall.recall`): passages of that time get a bonus, nothing outside
it is removed, so a wrong reading costs little.

Deterministic and rule-based (no model, no locale): English expressions, read against ``now``
in UTC (``ts`` is stored in UTC; a user far from UTC sees "last night" shifted by their offset).
What is understood, relative to ``now``:

- days: ``today``, ``yesterday``, ``the day before yesterday``, ``N days ago``, ``last night``,
  ``on Tuesday`` / ``last Tuesday`` / ``Tuesday night`` (the most recent such day before today);
- spans: ``this week`` / ``earlier this week``, ``last week``, ``N weeks ago``, ``this month``,
  ``last month``, ``N months ago``, ``this year``, ``last year``, ``last spring|summer|autumn|fall|winter``;
- months: ``in September``, ``back in September``, ``last September``, ``September 2025``, with
  ``early`` / ``mid`` / ``late`` narrowing them to a third (the most recent such month when no year
  is given);
- dates: ``13 October 2023``, ``October 13, 2023``, ``1 February, 2023``, ``2023-10-13``;
- a time of day after a day: ``morning``, ``afternoon``, ``evening``, ``night``, ``late``,
  ``around 9pm`` (±1 hour), ``after 10:30pm``, ``before 9pm``.

A month name must stand next to a number, a year or a preposition ("in May", "May 3"), so "it
may fail" or "march through the list" are not dates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

__all__ = ["Window", "query_window"]

_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_MONTH_RE = "|".join(_MONTHS) + "|" + "|".join(m[:3] for m in _MONTHS if m != "may") + "|sept"
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUMBERS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        ]
    )
}
_NUM = r"(\d{1,2}|" + "|".join(_NUMBERS) + r"|a|an|a couple of|a few)"
_SEASONS = {"spring": (3, 3), "summer": (6, 3), "autumn": (9, 3), "fall": (9, 3), "winter": (12, 3)}


@dataclass(frozen=True, slots=True)
class Window:
    """``start`` ≤ ts < ``end`` (aware UTC datetimes); ``phrase`` is the text that named it."""

    start: datetime
    end: datetime
    phrase: str

    def contains(self, ts: str) -> bool:
        try:
            when = datetime.fromisoformat(ts.replace("Z", "+00:00"))
        except ValueError:
            return False
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return self.start <= when < self.end


def _number(text: str) -> int:
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    if text in ("a", "an"):
        return 1
    if text == "a couple of":
        return 2
    if text == "a few":
        return 3
    return _NUMBERS[text]


def _month_number(name: str) -> int:
    name = name.lower()
    if name == "sept":
        return 9
    for i, m in enumerate(_MONTHS, start=1):
        if m == name or m[:3] == name:
            return i
    raise ValueError(name)


def _date(year: str, month: str, day: str) -> datetime | None:
    """A calendar day, or ``None`` for one that does not exist (31 February)."""
    try:
        number = int(month) if month.isdigit() else _month_number(month)
        return datetime(int(year), number, int(day), tzinfo=UTC)
    except ValueError:
        return None


#: Explicit dates: (pattern, group numbers of year, month, day). 13 October 2023 / October 13,
#: 2023 / 2023-10-13.
_DATES: tuple[tuple[str, tuple[int, int, int]], ...] = (
    (r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(" + _MONTH_RE + r")\.?,?\s+(\d{4})\b", (3, 2, 1)),
    (r"\b(" + _MONTH_RE + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", (3, 1, 2)),
    (r"\b(\d{4})-(\d{2})-(\d{2})\b", (1, 2, 3)),
)


def _day(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int) -> datetime:
    while month > 12:
        year, month = year + 1, month - 12
    while month < 1:
        year, month = year - 1, month + 12
    return datetime(year, month, 1, tzinfo=UTC)


def _month_window(year: int, month: int, part: str | None) -> tuple[datetime, datetime]:
    start, end = _month_start(year, month), _month_start(year, month + 1)
    if part == "early":
        return start, start + timedelta(days=10)
    if part in ("mid", "middle of"):
        return start + timedelta(days=9), start + timedelta(days=21)
    if part == "late":
        return start + timedelta(days=19), end
    return start, end


def _recent_month(now: datetime, month: int) -> int:
    """The year of the most recent ``month`` that has begun (this year's if it has started)."""
    return now.year if month <= now.month else now.year - 1


_TIME = r"(\d{1,2})(?::(\d{2}))?\s*(am|pm)"


def _hour(h: str, m: str | None, ampm: str) -> float:
    hour = int(h) % 12 + (12 if ampm.lower() == "pm" else 0)
    return hour + (int(m) / 60 if m else 0.0)


def _refine(day: datetime, text: str) -> tuple[datetime, datetime]:
    """The part of ``day`` that the time-of-day words in ``text`` name (the whole day otherwise)."""
    t = text.lower()
    m = re.search(r"\b(?:around|about|at|at about|at around|circa|~)\s*" + _TIME, t)
    if m:
        h = _hour(m.group(1), m.group(2), m.group(3))
        return day + timedelta(hours=h - 1), day + timedelta(hours=h + 1)
    m = re.search(r"\b(after|since|before|until)\s*" + _TIME, t)
    if m:
        h = _hour(m.group(2), m.group(3), m.group(4))
        if m.group(1) in ("after", "since"):
            return day + timedelta(hours=h), day + timedelta(hours=30)
        return day, day + timedelta(hours=h)
    if re.search(r"\blate (?:last )?(?:night|evening)\b|\blate at night\b", t):
        return day + timedelta(hours=21), day + timedelta(hours=29)
    if re.search(r"\bnight\b", t):
        return day + timedelta(hours=18), day + timedelta(hours=30)
    if "evening" in t:
        return day + timedelta(hours=17), day + timedelta(hours=24)
    if "afternoon" in t:
        return day + timedelta(hours=12), day + timedelta(hours=18)
    if "morning" in t:
        return day + timedelta(hours=5), day + timedelta(hours=12)
    return day, day + timedelta(days=1)


def _found(start: datetime, end: datetime, phrase: str) -> Window:
    return Window(start, end, " ".join(phrase.split()))


def query_window(query: str, now: datetime) -> Window | None:
    """The window of time ``query`` names relative to ``now``, or ``None`` when it names none.

    The first expression found wins, in this order: explicit dates, relative days, weekdays,
    months, spans. ``now`` must be timezone-aware.
    """
    q = " ".join(query.split())
    low = q.lower()
    today = _day(now.astimezone(UTC))

    # Explicit dates: 13 October 2023 / October 13, 2023 / 2023-10-13.
    for pattern, (y, mo, d) in _DATES:
        m = re.search(pattern, low)
        day = _date(m.group(y), m.group(mo), m.group(d)) if m else None
        if m and day is not None:
            return _found(day, day + timedelta(days=1), m.group(0))

    # Relative days, with an optional time of day.
    m = re.search(r"\bthe day before yesterday\b", low)
    if m:
        start, end = _refine(today - timedelta(days=2), low)
        return _found(start, end, m.group(0))
    m = re.search(r"\b" + _NUM + r" days? ago\b", low)
    if m:
        start, end = _refine(today - timedelta(days=_number(m.group(1))), low)
        return _found(start, end, m.group(0))
    m = re.search(r"\blast night\b|\byesterday\b", low)
    if m:
        start, end = _refine(today - timedelta(days=1), low if "yesterday" in m.group(0) else "night " + low)
        return _found(start, end, m.group(0))
    m = re.search(r"\b(today|this morning|this afternoon|this evening|tonight)\b", low)
    if m:
        start, end = _refine(today, low)
        return _found(start, min(end, now + timedelta(seconds=1)), m.group(0))

    # Weekdays: the most recent such day before today.
    m = re.search(r"\b(?:on |last |this past )?(" + "|".join(_WEEKDAYS) + r")\b", low)
    if m:
        back = (today.weekday() - _WEEKDAYS.index(m.group(1))) % 7 or 7
        start, end = _refine(today - timedelta(days=back), low)
        return _found(start, end, m.group(0))

    # Months: "in (early) September", "last September", "September 2025", "back in Sept".
    m = re.search(
        r"\b(?:(early|mid|late|middle of)[\s-]+)?(" + _MONTH_RE + r")\.?,?\s+(\d{4})\b", low
    ) or re.search(
        r"\b(?:in|during|since|back in|last|this|that|from|of)\s+(?:(early|mid|late|the middle of)[\s-]+)?("
        + _MONTH_RE
        + r")\b(?!\s+\d)",
        low,
    )
    if m is None:
        m = re.search(r"\b(early|mid|late)[\s-]+(" + _MONTH_RE + r")\b", low)
    if m:
        part = (m.group(1) or "").replace("the ", "") or None
        month = _month_number(m.group(2))
        year_text = m.group(3) if m.lastindex and m.lastindex >= 3 else None
        year = int(year_text) if year_text else _recent_month(now, month)
        start, end = _month_window(year, month, part)
        return _found(start, end, m.group(0))

    # Spans.
    m = re.search(r"\b(?:earlier )?this week\b", low)
    if m:
        return _found(today - timedelta(days=today.weekday()), now, m.group(0))
    m = re.search(r"\blast week\b", low)
    if m:
        monday = today - timedelta(days=today.weekday())
        return _found(monday - timedelta(days=7), monday, m.group(0))
    m = re.search(r"\b" + _NUM + r" weeks? ago\b", low)
    if m:
        n = _number(m.group(1))
        centre = today - timedelta(days=7 * n)
        return _found(centre - timedelta(days=4), centre + timedelta(days=4), m.group(0))
    m = re.search(r"\bthis month\b", low)
    if m:
        return _found(_month_start(now.year, now.month), now, m.group(0))
    m = re.search(r"\blast month\b|\b" + _NUM + r" months? ago\b", low)
    if m:
        n = 1 if m.group(0) == "last month" else _number(m.group(1))
        start = _month_start(now.year, now.month - n)
        return _found(start, _month_start(start.year, start.month + 1), m.group(0))
    m = re.search(r"\b(?:last|this past) (spring|summer|autumn|fall|winter)\b", low)
    if m:
        first, length = _SEASONS[m.group(1)]
        start = _month_start(now.year, first)
        if start + timedelta(days=31 * length) > now:
            start = _month_start(now.year - 1, first)
        return _found(start, _month_start(start.year, start.month + length), m.group(0))
    m = re.search(r"\b(?:in|during|of|since) (\d{4})\b", low)
    if m and 1900 < int(m.group(1)) < 2200:
        year = int(m.group(1))
        return _found(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC), m.group(0))
    m = re.search(r"\b(this|last) year\b", low)
    if m:
        year = now.year if m.group(1) == "this" else now.year - 1
        return _found(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC), m.group(0))
    return None
