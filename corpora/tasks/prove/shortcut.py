"""The anti-shortcut filter: reject questions that one search already answers.

A task is rejected when its answer string is in the question itself, when
searching the question text returns the answer's page among the first
:func:`page_top_k` results, or when the answer string (or one of its aliases)
appears in a top-10 result's snippet.

The page check looks at the top 10 in a corpus of 1,000 documents or more, and
at the top 1% of a smaller one (at least the first result): ten results of a
106-page sample are a tenth of the corpus, so almost every question "found" its
answer's page there, and the sample yielded answers from only a handful of
pages (issue 35: 19 distinct answers, 76% one organisation).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stillweb.corpora.tasks.graph import normalize_text
from stillweb.corpora.tasks.task_world import TaskWorld

__all__ = ["SHORTCUT_TOP_K", "page_top_k", "shortcut_reason"]

SHORTCUT_TOP_K = 10


def page_top_k(doc_count: int) -> int:
    """How many first results the page check looks at: 10, or 1% of a corpus under 1,000 documents.

    >>> page_top_k(100_000), page_top_k(300), page_top_k(106)
    (10, 3, 1)
    """
    return max(1, min(SHORTCUT_TOP_K, doc_count // 100))


def shortcut_reason(world: TaskWorld, question: str, answers: Sequence[str], answer_doc: int) -> str | None:
    """Why the task is a shortcut (``answer_in_question``, ``answer_page_in_top_k``,
    ``answer_in_snippets``), or None when a single search does not answer it."""
    pattern = _whole_words(answers)
    if pattern is not None and pattern.search(normalize_text(question)):
        return "answer_in_question"
    hits = world.search(question, SHORTCUT_TOP_K)
    if any(hit.doc_id == answer_doc for hit in hits[:page_top_k(world.doc_count())]):
        return "answer_page_in_top_k"
    if pattern is not None and any(pattern.search(normalize_text(hit.snippet)) for hit in hits):
        return "answer_in_snippets"
    return None


def _whole_words(phrases: Sequence[str]) -> re.Pattern | None:
    """One pattern matching any of the normalized ``phrases`` as whole words (None if all are empty)."""
    needles = sorted({normalize_text(p) for p in phrases} - {""})
    if not needles:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, needles)) + r")(?!\w)")
