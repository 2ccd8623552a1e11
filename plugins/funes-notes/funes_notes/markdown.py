"""Cutting a Markdown (or plain text) note into sections, one per heading, without changing a byte.

A section is a heading and everything up to the next heading of the same or a higher level, minus
its subsections: ``## Deploy`` then ``### Rollback`` make two sections, and the text of
``Rollback`` is stored with the heading lines above it (``# Runbook``, ``## Deploy``), so a passage
recalled on its own still says where it sits. Every character stored is the file's own (line
endings become ``\n`` and blank lines around a section are trimmed): nothing is rendered, reflowed
or summarised.

What counts as a heading follows CommonMark where it matters in real notes:

* ATX headings: up to three spaces, one to six ``#``, then a space or the end of the line
  (``#hashtag`` and ``#123`` are text); closing ``#``s are not part of the title;
* setext headings: a paragraph line underlined with ``===`` (level 1) or ``---`` (level 2); an
  underline after a blank line, a list item, a quote or a table row is not one (``---`` there is
  a thematic break);
* nothing inside a fenced code block (`````` ``` `````` or ``~~~``, closed by a fence of the same
  character at least as long) is a heading, so a shell comment in a code sample never cuts a note;
* a front matter block (``---`` … ``---`` or ``...`` for YAML, ``+++`` … ``+++`` for TOML) at the
  very top is not a heading either; it stays, verbatim, in the text before the first heading
  (when there is no such text, the block alone is metadata, not a passage, and is not stored).

Text before the first heading is a section of its own (the *preamble*). A heading with no text of
its own, directly followed by a deeper heading, is not stored on its own: its line is in every
subsection's text. A plain text file (``.txt``) is one section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FRONT_MATTER_DATE_KEYS", "FrontMatter", "Section", "front_matter", "sections"]

#: Keys whose value dates a note, most specific first (the first one that parses wins).
FRONT_MATTER_DATE_KEYS = ("updated", "modified", "last_modified", "lastmod", "date", "created")
#: How far down the closing line of a front matter block may be (a longer block is not one).
FRONT_MATTER_MAX_LINES = 200

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_ATX_EMPTY = re.compile(r"^ {0,3}(#{1,6})[ \t]*#*[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_NOT_PARAGRAPH = re.compile(r"^(?: {4,}|\t| {0,3}(?:[-*+][ \t]|\d{1,9}[.)][ \t]|>|\||<))")
_KEY_VALUE = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*[:=][ \t]*(.*?)[ \t]*$")


@dataclass(frozen=True, slots=True)
class Section:
    """One section: the titles above and of it, its heading lines and its verbatim text."""

    #: The titles from the top of the document down to this section's own (``()``: the preamble).
    trail: tuple[str, ...]
    #: The verbatim heading lines of the enclosing sections, outermost first.
    context: tuple[str, ...]
    #: The section itself, verbatim: its heading line(s) and its body, outer blank lines trimmed.
    text: str

    @property
    def title(self) -> str:
        return self.trail[-1] if self.trail else ""

    def stored_text(self) -> str:
        """What is stored: the enclosing heading lines, then the section."""
        return "\n".join((*self.context, self.text)) if self.context else self.text


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """The simple ``key: value`` pairs of a front matter block and the number of lines it spans."""

    values: dict[str, str]
    lines: int


def _strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def front_matter(lines: list[str]) -> FrontMatter:
    """The front matter at the top of ``lines`` (``lines=0`` when there is none).

    Only top-level scalar ``key: value`` (YAML) and ``key = value`` (TOML) pairs are read, and only
    to date the note; the block itself is kept in the text.
    """
    if not lines:
        return FrontMatter({}, 0)
    opener = _strip_eol(lines[0]).rstrip()
    if opener not in ("---", "+++"):
        return FrontMatter({}, 0)
    closers = ("---", "...") if opener == "---" else ("+++",)
    for index in range(1, min(len(lines), FRONT_MATTER_MAX_LINES + 1)):
        if _strip_eol(lines[index]).rstrip() in closers:
            values: dict[str, str] = {}
            for raw in lines[1:index]:
                match = _KEY_VALUE.match(_strip_eol(raw))
                if match and not raw[:1].isspace():
                    value = match[2].split(" #")[0].strip().strip("'\"")
                    values.setdefault(match[1].lower(), value)
            return FrontMatter(values, index + 1)
    return FrontMatter({}, 0)


@dataclass(slots=True)
class _Open:
    level: int
    title: str
    heading: list[str]
    body: list[str]
    #: Lines at the start of ``body`` that no heading may take (the front matter block).
    fixed: int = 0


def _title(text: str | None) -> str:
    return " ".join((text or "").split())


def _close(opened: _Open, stack: list[_Open], out: list[tuple[int, Section]]) -> None:
    if not "".join(opened.body[opened.fixed :]).strip() and not opened.heading:
        return  # a preamble that is only front matter: metadata, not a passage
    body = "".join(opened.body)
    heading = "".join(opened.heading)
    whole = (heading + body).strip("\r\n")
    if not whole.strip():
        return
    trail = tuple(o.title for o in stack) + ((opened.title,) if opened.level else ())
    context = tuple("".join(o.heading).strip("\r\n") for o in stack)
    text = "\n".join(_strip_eol(line) for line in whole.split("\n"))
    # The level rides along so that heading-only sections can be dropped below.
    out.append((opened.level if body.strip() else -opened.level, Section(trail, context, text.strip("\n"))))


def sections(text: str, *, markdown: bool = True) -> list[Section]:
    """The sections of a note, in document order (see the module docstring)."""
    if not text.strip():
        return []
    if not markdown:
        return [Section((), (), "\n".join(_strip_eol(line) for line in text.split("\n")).strip("\n"))]
    lines = text.splitlines(keepends=True)
    start = front_matter(lines).lines
    out: list[tuple[int, Section]] = []
    stack: list[_Open] = []
    current = _Open(0, "", [], list(lines[:start]), fixed=start)
    fence: tuple[str, int] | None = None
    for line in lines[start:]:
        bare = _strip_eol(line)
        if fence is not None:
            current.body.append(line)
            closing = _FENCE.match(bare)
            if (
                closing
                and closing[1][0] == fence[0]
                and len(closing[1]) >= fence[1]
                and not bare.strip().strip(fence[0])
            ):
                fence = None
            continue
        opening = _FENCE.match(bare)
        if opening:
            fence = (opening[1][0], len(opening[1]))
            current.body.append(line)
            continue
        atx = _ATX.match(bare) or _ATX_EMPTY.match(bare)
        setext = _SETEXT.match(bare)
        paragraph: list[str] = []
        if setext:
            # The paragraph being underlined: the text lines since the last blank line.
            for previous in reversed(current.body[current.fixed :]):
                bare_previous = _strip_eol(previous)
                if (
                    not bare_previous.strip()
                    or _NOT_PARAGRAPH.match(bare_previous)
                    or _FENCE.match(bare_previous)
                    or _SETEXT.match(bare_previous)
                ):
                    break
                paragraph.insert(0, previous)
        if atx:
            level, title, heading = len(atx[1]), _title(atx.group(2) if atx.lastindex else ""), [line]
        elif setext and paragraph:
            del current.body[len(current.body) - len(paragraph) :]
            level = 1 if setext[1][0] == "=" else 2
            title, heading = _title(" ".join(p.strip() for p in paragraph)), [*paragraph, line]
        else:
            current.body.append(line)
            continue
        _close(current, stack, out)
        if current.level:
            stack.append(current)
        while stack and stack[-1].level >= level:
            stack.pop()
        current = _Open(level, title, heading, [])
    _close(current, stack, out)
    kept: list[Section] = []
    for index, (level, section) in enumerate(out):
        if level < 0:  # a heading with no text of its own
            following = out[index + 1][1] if index + 1 < len(out) else None
            if following is not None and following.context[: len(section.context) + 1] == (
                *section.context,
                section.text,
            ):
                continue  # its line heads the subsection that follows
        kept.append(section)
    return kept
