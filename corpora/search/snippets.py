"""Search-result snippets: a window of a document's text showing as many query terms as possible.

:func:`make_snippet` works on the UTF-8 bytes the snapshot memory-maps, with ``bytes.find``
over an ASCII-lowercased copy, so its cost stays small whatever the page length; the output
is pinned by ``tests/corpora/test_search_golden.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from stillweb.corpora.search.analyzers import BigramAnalyzer
from stillweb.corpora.search.index import MAX_QUERY_CHARS

__all__ = ["SNIPPET_CHARS", "make_snippet", "snippet_needles"]

SNIPPET_CHARS = 240
_NEVER = 1 << 62  # the position of a needle with no further occurrence: it never fits a window


def snippet_needles(query: str, analyzer: BigramAnalyzer | None = None) -> list[bytes]:
    """The byte strings a snippet looks for: the query's lowercased terms, UTF-8 encoded
    (``analyzer``: the snapshot's language analyzer, ``None`` for English)."""
    return [term.encode("utf-8") for term in query_terms(query, analyzer)]


def make_snippet(text: bytes, needles: list[bytes], width: int = SNIPPET_CHARS,
                 fold: Callable[[bytes], bytes] | None = None) -> str:
    """A window of about ``width`` bytes of UTF-8 ``text`` showing as many ``needles`` as possible.

    ``needles`` come from :func:`snippet_needles`. Candidates are the first
    occurrence of each needle; the window starting at the candidate that covers
    the most needles wins (the earliest on ties), moved back to the start of
    its line when that is close. Matching works on bytes lowercased for ASCII
    only (length-preserving), with bounded ``bytes.find`` calls, so the cost
    stays small whatever the page length. ``fold`` (a snapshot with a language analyzer: its
    length-preserving traditional-to-simplified fold) is applied to the copy the needles are looked
    for in, and the window starts a few characters before them rather than at a space.
    """
    lower = (fold(text) if fold is not None else text).lower()
    found = [(position, needle) for position, needle in zip(map(lower.find, needles), needles) if position >= 0]
    firsts = sorted(position for position, _needle in found)
    best_start = firsts[0] if firsts else 0
    if firsts and firsts[-1] - firsts[0] >= width:  # the terms are spread out: pick the richest window
        best_start = _richest_window(lower, found, firsts, width)
    line_start = text.rfind(b"\n", 0, best_start) + 1
    if best_start - line_start < width // 3:
        best_start = line_start
    elif best_start and fold is None:
        best_start = text.rfind(b" ", 0, best_start - width // 6) + 1
    elif best_start:  # Chinese and Japanese have no spaces to start at: a little before the terms, on a character
        best_start = max(line_start, best_start - width // 6)
        while best_start > line_start and text[best_start] & 0xC0 == 0x80:  # a UTF-8 continuation byte
            best_start -= 1
    snippet = text[best_start : best_start + width].decode("utf-8", errors="ignore").replace("\n", " ")
    return snippet + ("..." if best_start + width < len(text) else "")


def _richest_window(lower: bytes, found: list[tuple[int, bytes]], starts: list[int], width: int) -> int:
    """The first of ``starts`` (ascending) whose window ``[start, start + width)`` holds the most needles whole.

    Each needle's next occurrence at or after the window start only moves forward as the
    start does, so it is looked up again only when the start passes it: a few ``find``
    calls per needle instead of one per needle and start. Stops early once every needle fits.
    """
    following = [[position, needle, len(needle)] for position, needle in found]
    best_start, best_count = starts[0], 0
    for start in starts:
        end = start + width
        count = 0
        for entry in following:
            if entry[0] < start:
                position = lower.find(entry[1], start)
                entry[0] = position if position >= 0 else _NEVER
            if entry[0] + entry[2] <= end:
                count += 1
        if count > best_count:
            best_start, best_count = start, count
            if count == len(following):
                break
    return best_start


MAX_SNIPPET_TERMS = 12


def query_terms(query: str, analyzer: BigramAnalyzer | None = None) -> list[str]:
    """Lowercase word terms of a query for snippets: in order, without duplicates or
    stop words, at most ``MAX_SNIPPET_TERMS`` (a long question's first content words);
    with a language's ``analyzer``, its distinct terms (twice as many: bigrams are short)."""
    if analyzer is not None:
        return list(dict.fromkeys(analyzer.terms(query[:MAX_QUERY_CHARS])))[: 2 * MAX_SNIPPET_TERMS]
    seen: dict[str, None] = {}
    for term in re.findall(r"\w+", query[:MAX_QUERY_CHARS].lower()):
        if len(term) > 1 and term not in _STOPWORDS:
            seen.setdefault(term, None)
            if len(seen) == MAX_SNIPPET_TERMS:
                break
    return list(seen)


_STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were which who with what when where".split()
)
