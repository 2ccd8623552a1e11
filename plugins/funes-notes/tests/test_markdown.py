"""Cutting real-world Markdown into sections (funes_notes.markdown)."""

from __future__ import annotations

import pytest

from funes_notes.markdown import front_matter, sections


def trails(text: str) -> list[tuple[str, ...]]:
    return [s.trail for s in sections(text)]


def test_nested_headings_carry_their_parents_lines() -> None:
    text = "# Runbook\n\n## Deploy\n\nmake deploy\n\n### Rollback\n\nundo it\n\n## Storage\n\nSQLite\n"
    found = sections(text)
    assert [s.trail for s in found] == [
        ("Runbook", "Deploy"),
        ("Runbook", "Deploy", "Rollback"),
        ("Runbook", "Storage"),
    ]
    assert found[1].stored_text() == "# Runbook\n## Deploy\n### Rollback\n\nundo it"
    assert found[2].text == "## Storage\n\nSQLite"


def test_a_heading_with_text_of_its_own_is_a_section_and_an_empty_leaf_too() -> None:
    text = "# Title\nintro\n## A\n## B\nb text\n"
    assert trails(text) == [("Title",), ("Title", "A"), ("Title", "B")]
    assert sections(text)[1].stored_text() == "# Title\n## A"


def test_code_fences_hide_headings_and_must_close_with_the_same_fence() -> None:
    text = (
        "# Setup\n\n```bash\n# install\npip install x\n```\n\n"
        "~~~~\n## not a heading\n~~~\n## still not\n~~~~\n\n## Real\nok\n"
    )
    found = sections(text)
    assert [s.trail for s in found] == [("Setup",), ("Setup", "Real")]
    assert "# install" in found[0].text and "## still not" in found[0].text


def test_hashtags_and_numbers_are_not_headings_and_closing_hashes_are_dropped() -> None:
    text = "#hashtag line\n#123 issue\n\n## Title ##\nbody\n####### seven is text\n"
    found = sections(text)
    assert [s.trail for s in found] == [(), ("Title",)]
    assert found[0].text == "#hashtag line\n#123 issue"
    assert found[1].text.endswith("####### seven is text")


def test_setext_headings_and_thematic_breaks() -> None:
    text = (
        "Big title\n=========\n\nSome text\n\nSub title\n---------\nsub text\n\n"
        "- a list item\n---\n\nafter a break\n\n---\n"
    )
    found = sections(text)
    assert [s.trail for s in found] == [("Big title",), ("Big title", "Sub title")]
    assert found[1].text.startswith("Sub title\n---------\nsub text\n\n- a list item\n---")


def test_front_matter_is_not_a_heading_and_alone_is_not_stored() -> None:
    only = "---\ntitle: x\ndate: 2026-03-01\n---\n# Heading\nbody\n"
    assert trails(only) == [("Heading",)]
    with_intro = "---\ntags: [a]\n---\nIntro\n\n# Heading\nbody\n"
    assert [s.text for s in sections(with_intro)] == ["---\ntags: [a]\n---\nIntro", "# Heading\nbody"]
    # A text line under the front matter, underlined: a setext heading of that line alone.
    underlined = "---\ntags: [a]\n---\nA title\n---\nbody\n"
    assert [(s.trail, s.text) for s in sections(underlined)] == [(("A title",), "A title\n---\nbody")]


def test_front_matter_values() -> None:
    lines = "---\ntitle: 'Run: book'\nupdated: 2026-02-11T09:30:00+01:00  # edited\n  nested: 1\n---\nx\n"
    fm = front_matter(lines.splitlines(keepends=True))
    assert fm.lines == 5
    assert fm.values == {"title": "Run: book", "updated": "2026-02-11T09:30:00+01:00"}
    toml = front_matter('+++\ndate = "2026-03-01"\n+++\n'.splitlines(keepends=True))
    assert toml.values == {"date": "2026-03-01"}
    assert front_matter(["---\n", "never closed\n"]).lines == 0


def test_tables_nested_lists_and_blank_lines_stay_verbatim() -> None:
    body = "| a | b |\n|---|---|\n| 1 | 2 |\n\n1. one\n   - nested\n     - deeper\n2. two  \n"
    found = sections(f"## Data\n\n\n{body}\n\n")
    assert found[0].text == "## Data\n\n\n" + body.rstrip("\n")


def test_crlf_line_endings_become_lf() -> None:
    found = sections("# A\r\nline one\r\n\r\n## B\r\nline two\r\n")
    assert [s.text for s in found] == ["# A\nline one", "## B\nline two"]


def test_plain_text_is_one_section() -> None:
    found = sections("# not a heading in a .txt\nsecond line\n", markdown=False)
    assert [(s.trail, s.text) for s in found] == [((), "# not a heading in a .txt\nsecond line")]


@pytest.mark.parametrize("text", ["", "\n\n", "---\ntitle: x\n---\n"])
def test_nothing_to_store(text: str) -> None:
    assert sections(text) == []
