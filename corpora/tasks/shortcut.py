"""The anti-shortcut filter: reject questions that one search already answers.

A task is rejected when its answer string is in the question itself, when
searching the question text (top 10) returns the answer's page, or when the
answer string (or one of its aliases) appears in a top result's snippet.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stillweb.corpora.tasks.graph import normalize_text
from stillweb.corpora.tasks.task_world import TaskWorld

__all__ = ["SHORTCUT_TOP_K", "shortcut_reason"]

SHORTCUT_TOP_K = 10


def shortcut_reason(world: TaskWorld, question: str, answers: Sequence[str], answer_doc: int) -> str | None:
    """Why the task is a shortcut (``answer_in_question``, ``answer_page_in_top10``,
    ``answer_in_snippets``), or None when a single search does not answer it."""
    pattern = _whole_words(answers)
    if pattern is not None and pattern.search(normalize_text(question)):
        return "answer_in_question"
    hits = world.search(question, SHORTCUT_TOP_K)
    if any(hit.doc_id == answer_doc for hit in hits):
        return "answer_page_in_top10"
    if pattern is not None and any(pattern.search(normalize_text(hit.snippet)) for hit in hits):
        return "answer_in_snippets"
    return None


def _whole_words(phrases: Sequence[str]) -> re.Pattern | None:
    """One pattern matching any of the normalized ``phrases`` as whole words (None if all are empty)."""
    needles = sorted({normalize_text(p) for p in phrases} - {""})
    if not needles:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, needles)) + r")(?!\w)")
