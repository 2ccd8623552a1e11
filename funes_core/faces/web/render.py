"""Turning page data into HTML: one Jinja2 environment, autoescape always on, and the few filters
that mark up passages (matched words, redaction markers) by escaping first and marking second.

Why the filters escape themselves: a passage is hostile text (``<script>``, ``onerror=``,
``javascript:`` links, markdown image tricks). Nothing in it is ever interpreted: it is shown in
a ``<pre>``, never as markdown, and the only tags added around it are ``<mark>`` and ``<span>``
built here from escaped pieces. Control and direction-changing characters are made visible the
way the CLI shows them (:func:`funes_core.safetext.passage`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from funes_core.read.status import human_bytes
from funes_core.safetext import one_line, passage

__all__ = ["TEMPLATES", "environment", "mark", "page"]

TEMPLATES = Path(__file__).parent / "templates"
#: What the redactor leaves in place of a secret (``[REDACTED:<kind>]``, see redact/).
_REDACTION = r"\[REDACTED:[A-Za-z0-9_.-]+\]"


def mark(text: str, words: Sequence[str] = ()) -> Markup:
    """``text`` escaped, with redaction markers and the ``words`` (case-insensitive) marked."""
    # A word matches whole (``build`` marks ``build`` and ``build-arm64``, not ``building``), as
    # the BM25 leg matches tokens, not substrings.
    alternatives = [_REDACTION] + [rf"(?<![^\W_]){re.escape(w)}(?![^\W_])" for w in words if w]
    pattern = re.compile("|".join(f"({a})" for a in alternatives), re.IGNORECASE)
    shown = passage(text)
    out: list[str] = []
    at = 0
    for m in pattern.finditer(shown):
        if m.start() == m.end():
            continue
        out.append(str(escape(shown[at : m.start()])))
        piece = str(escape(m.group()))
        out.append(f'<span class="redacted">{piece}</span>' if m.group(1) else f"<mark>{piece}</mark>")
        at = m.end()
    out.append(str(escape(shown[at:])))
    return Markup("".join(out))


def _size(text: str) -> str:
    return human_bytes(len(text.encode("utf-8", "surrogatepass")))


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,  # every {{ }} is escaped, in every template, whatever its name
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["mark"] = mark
    env.filters["line"] = one_line
    env.filters["size"] = _size
    return env


def page(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)
