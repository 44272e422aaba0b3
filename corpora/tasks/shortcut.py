"""The anti-shortcut filter: reject questions that one search already answers.

A task is rejected when its answer string is in the question itself, when
searching the question text (top 10) returns the answer's page, or when the
answer string (or one of its aliases) appears in a top result's snippet.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stillweb.corpora.tasks.graph import normalize_text
from stillweb.corpora.tasks.world import TaskWorld

__all__ = ["SHORTCUT_TOP_K", "shortcut_reason", "mentions"]

SHORTCUT_TOP_K = 10


def mentions(text: str, phrase: str) -> bool:
    """True when ``phrase`` occurs in ``text`` as whole words (case-insensitive)."""
    needle = normalize_text(phrase)
    if not needle:
        return False
    return re.search(r"(?<!\w)" + re.escape(needle) + r"(?!\w)", normalize_text(text)) is not None


def shortcut_reason(world: TaskWorld, question: str, answers: Sequence[str], answer_doc: int) -> str | None:
    """Why the task is a shortcut (``answer_in_question``, ``answer_page_in_top10``,
    ``answer_in_snippets``), or None when a single search does not answer it."""
    if any(mentions(question, a) for a in answers):
        return "answer_in_question"
    hits = world.search(question, SHORTCUT_TOP_K)
    if any(hit.doc_id == answer_doc for hit in hits):
        return "answer_page_in_top10"
    if any(mentions(hit.snippet, a) for hit in hits for a in answers):
        return "answer_in_snippets"
    return None
