"""Printing untrusted text safely: in agent text, in one-line messages and in shell commands.

Everything funes prints about a memory comes from transcripts, and a transcript may be hostile: a
session id holding a newline can forge a whole extra recall hit, an escape sequence can clear an
agent's terminal, a BiDi override can make text read differently than it is, and ``$(…)`` in a
printed ``get`` hint runs when the hint is pasted into a shell. So:

- :func:`one_line` is for every metadata field (ids, role, tool name, workdir, repo, labels) and for
  values quoted in messages: nothing in it can end the line or steer a terminal;
- :func:`passage` is for passage bodies, which are verbatim and multi-line: newlines and tabs stay,
  every other control or direction-changing character is escaped;
- :func:`shell_word` quotes one argument of a command line a person may copy and paste.

Escapes are visible and unambiguous (``\\x1b``, ``\\u{202e}``), so an agent still sees exactly what
the transcript held. Text without such characters comes back unchanged (the same object), which
keeps the byte-stable agent contract for ordinary data.
"""

from __future__ import annotations

import re
import shlex

__all__ = ["one_line", "passage", "shell_word", "shorten", "unescape"]

#: C0 and C1 controls, DEL, line/paragraph separators, zero-width and BiDi formatting characters,
#: the BOM, interlinear annotations and lone surrogates.
_HIDDEN_ANYWHERE = (
    "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff"
)
_ONE_LINE = re.compile(f"[{_HIDDEN_ANYWHERE}\t\n\r]")
#: In a passage a newline, a tab and a CR that ends a line (``\r\n``) are text; a lone CR (which
#: makes a terminal overwrite the line) is not.
_PASSAGE = re.compile(f"[{_HIDDEN_ANYWHERE}]|\r(?!\n)")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{{{code:x}}}"


def one_line(text: str) -> str:
    """``text`` with every control, separator and formatting character escaped: one printable line."""
    return _ONE_LINE.sub(_escape, text) if _ONE_LINE.search(text) else text


def passage(text: str) -> str:
    """A verbatim passage made safe to print: newlines and tabs kept, other control characters escaped."""
    return _PASSAGE.sub(_escape, text) if _PASSAGE.search(text) else text


def shell_word(text: str) -> str:
    """One shell argument, quoted only when it needs it (``abc`` stays ``abc``; ``$(x)`` becomes ``'$(x)'``).

    Control characters are escaped first, so the quoted word is also one visible line.
    """
    return shlex.quote(one_line(text))


_ESCAPED = re.compile(r"\\x([0-9a-f]{2})|\\u\{([0-9a-f]{1,6})\}")


def unescape(text: str) -> str:
    """Undo :func:`one_line`'s escapes, so an escaped id printed in a hint can be looked up again."""
    return _ESCAPED.sub(lambda m: chr(int(m[1] or m[2], 16)), text)


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was: ``abc… (5,000 chars)``."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} chars)"
