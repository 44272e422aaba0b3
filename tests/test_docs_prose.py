"""The docs' prose reads as written: no paragraph of README.md or docs/*.md starts with punctuation or with a
link fragment whose heading was lost (README's serving paragraph once began ``, [docs/freeze.md](...)):``)."""

from __future__ import annotations

import re
from pathlib import Path

from support.doc_blocks import markdown_files

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
PUNCTUATION = tuple(",;:.)]!?")
LINK_FRAGMENT = re.compile(r"^\[[^\]]*\]\([^)]*\)[)\]:,]")  # a link closed by what belonged to a lost heading
NOT_PROSE = re.compile(r"^(#|\||>|<!--|[-*+] |\d+[.)] |\*\*|!\[)")


def paragraphs(text: str) -> list[tuple[int, str]]:
    """``(line, first line)`` of every prose paragraph outside fenced blocks.

    >>> paragraphs("a\\nb\\n\\n```\\n, code\\n```\\n\\n, broken")
    [(1, 'a'), (8, ', broken')]
    """
    found, fenced, previous_blank = [], False, True
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced, previous_blank = not fenced, False
            continue
        if not fenced and previous_blank and line.strip():
            found.append((number, line.strip()))
        previous_blank = not line.strip()
    return found


def bad_openings(text: str) -> list[tuple[int, str]]:
    """The paragraphs that open with punctuation or a heading-less link fragment.

    >>> bad_openings(", [docs/freeze.md](docs/freeze.md)): the tools\\n\\n[a](b)): lost\\n\\n- a list\\n\\n**Fine** text")
    [(1, ', [docs/freeze.md](docs/freeze.md)): the tools'), (3, '[a](b)): lost')]
    """
    return [(number, line) for number, line in paragraphs(text)
            if not NOT_PROSE.match(line) and (line.startswith(PUNCTUATION) or LINK_FRAGMENT.match(line))]


def test_no_paragraph_opens_with_punctuation_or_a_lost_heading():
    found = {str(path.relative_to(ROOT)): bad for path in markdown_files(ROOT)
             if (bad := bad_openings(path.read_text(encoding="utf-8")))}
    assert not found, f"paragraphs that start mid-sentence (a heading or a sentence was lost): {found}"
