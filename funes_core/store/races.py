"""Commits several writers race for: which failures are a lost race, and doing the step again.

A remote's table takes commits from several machines at once; Lance refuses the loser's commit
when it cannot rebase it. Apart from the store because the push path retries its own steps too.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    pass

T = TypeVar("T")
#: What Lance says when a concurrent writer's commit won a race it cannot rebase this one onto.
_COMMIT_RACE = re.compile(
    r"Retryable commit conflict|Incompatible transaction|Too many concurrent writ", re.IGNORECASE
)


def lost_commit_race(exc: BaseException) -> bool:
    """True when Lance refused a commit because a concurrent writer's came first and the step must be
    done again on the latest version: a conflict it could not rebase ("Retryable commit conflict"),
    a commit a concurrent creation's overwrite made stale ("Incompatible transaction"), or its own
    retries running out beside busy writers ("Too many concurrent writers")."""
    return _COMMIT_RACE.search(str(exc)) is not None


def retry_lost_races(step: Callable[[], T], refresh: Callable[[], object], attempts: int = 8) -> T:
    """Run ``step``, an idempotent commit to a table several writers share; after a lost race
    (:func:`lost_commit_race`), ``refresh`` to the latest version and run it again there.

    A store of a shared table never re-reads it by itself, and redoing the step on its stale view
    lost the same race again, every time. Each retry waits a growing, jittered pause first (two
    writers retrying at once collided in lock-step). Any other error is raised at once.
    """
    import random

    attempt = 1
    while True:
        try:
            return step()
        except Exception as exc:
            if attempt == attempts or not lost_commit_race(exc):
                raise
        time.sleep(random.uniform(0.2, 1.0) * attempt)
        with contextlib.suppress(Exception):
            refresh()
        attempt += 1


def _unless_done(table: Any, step: Callable[[], object], done: Callable[[list[Any]], bool]) -> None:
    """Run ``step``, an index change; if it fails, accept that when the latest version's indexes
    show it ``done`` (a concurrent writer made the same change first: a lost commit race)."""
    try:
        step()
    except Exception:
        with contextlib.suppress(Exception):
            table.checkout_latest()
        if not done(table.list_indices()):
            raise
