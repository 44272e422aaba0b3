"""Splitting pages into fixed-size word windows: the DPR / wiki-18 passage recipe.

Dense Passage Retrieval (Karpukhin et al., 2020) and the ``wiki-18`` corpus that
Search-R1 and FlashRAG retrieve from cut every Wikipedia article into disjoint
blocks of 100 words, each stored with its article's title. :func:`split_passages`
does the same to a parsed page: every passage keeps the page's title (indexed
and shown with it, as ``"Title"\\ntext`` in Search-R1's ``/retrieve`` response),
its url and kind, and gets the source id ``"<page id>-<n>"`` (n from 0) when the
page has one. Text in a language written without spaces (``language`` with a bigram analyzer,
:mod:`stillweb.corpora.search.analyzers`) counts each of its characters as a word: a Chinese page
becomes windows of ``words`` characters (plus any Latin words among them), not one window.
"""

from __future__ import annotations

import re
from dataclasses import replace

from stillweb.corpora.search.analyzers import BIGRAM_RANGES, analyzer_for
from stillweb.corpora.arguments import check_positive_int
from stillweb.corpora.snapshot.records import ParsedPage

__all__ = ["split_passages", "passage_source_id"]


def passage_source_id(page_id: str, number: int) -> str:
    """The source id of passage ``number`` (from 0) of a page with id ``page_id`` ("" without one)."""
    return f"{page_id}-{number}" if page_id else ""


_PASSAGE_UNITS = re.compile(f"[{BIGRAM_RANGES}]|[^\\s{BIGRAM_RANGES}]+")  # a character of a no-space script, or a word


def split_passages(page: ParsedPage, text: str, words: int, language: str = "en") -> list[tuple[ParsedPage, str]]:
    """``text`` (the page's rendered text) as consecutive windows of ``words`` words.

    Returns ``(passage, passage_text)`` pairs in reading order; a page of at most
    ``words`` words, or an empty one, is one passage. Passages carry no links or
    facts: the build keeps those with the first passage.

    >>> page = ParsedPage(title="Lunor", text="", source_id="7")
    >>> [(p.source_id, t) for p, t in split_passages(page, "a b c d e", 2)]
    [('7-0', 'a b'), ('7-1', 'c d'), ('7-2', 'e')]
    >>> [t for _p, t in split_passages(page, "北京是 China 的首都", 3, "zh")]
    ['北京是', 'China 的首', '都']
    """
    check_positive_int("passage length in words", words)
    if analyzer_for(language) is not None:
        units = [match.span() for match in _PASSAGE_UNITS.finditer(text)]
        windows = [" ".join(text[units[start][0] : units[min(start + words, len(units)) - 1][1]].split())
                   for start in range(0, len(units), words)] or [text]
    else:
        tokens = text.split()
        windows = [" ".join(tokens[start : start + words]) for start in range(0, len(tokens), words)] or [text]
    return [
        (replace(page, source_id=passage_source_id(page.source_id, number), links=[], facts=[]), window)
        for number, window in enumerate(windows)
    ]
