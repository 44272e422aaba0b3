"""Snippets (issue 37 item 4): the faster richest-window search picks exactly the window of the
one-find-per-needle-and-start search it replaced, on any text and any query (the rest of
``make_snippet`` is pinned by test_search_golden.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from stillweb.corpora.search.snippets import _richest_window, make_snippet, snippet_needles


def reference_window(lower: bytes, needles: list[bytes], width: int) -> int:
    """The richest window's start as it was found before issue 37 (a ``find`` per needle and start)."""
    firsts = sorted(p for p in map(lower.find, needles) if p >= 0)
    best_start, best_count = firsts[0], 0
    for position in firsts:
        count = sum(1 for needle in needles if lower.find(needle, position, position + width) >= 0)
        if count > best_count:
            best_start, best_count = position, count
    return best_start


WORDS = ["river", "rive", "city", "ethnicity", "Born", "born", "née", "ZÜRICH", "the", "a1", "x", "founded", "\n"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(WORDS + ["filler " * 9, "lorem ipsum dolor " * 5]), max_size=120),
       st.lists(st.sampled_from(WORDS), min_size=1, max_size=14), st.sampled_from([20, 60, 240]))
def test_richest_window_equals_the_reference(words, query_words, width):
    text = " ".join(words).encode("utf-8")
    lower, needles = text.lower(), snippet_needles(" ".join(query_words))
    found = [(p, n) for p, n in zip(map(lower.find, needles), needles) if p >= 0]
    if found:
        firsts = sorted(p for p, _ in found)
        assert _richest_window(lower, found, firsts, width) == reference_window(lower, needles, width)
    assert isinstance(make_snippet(text, needles, width), str)
