"""MuSiQue jsonl: ``id``, ``question``, ``answer``, ``answer_aliases``, ``answerable``,
``paragraphs`` (``idx``, ``title``, ``paragraph_text``, ``is_supporting``) and
``question_decomposition`` (``id``, ``question``, ``answer``, ``paragraph_support_idx``).

Supporting paragraphs are the evidence (found by title, then by their text); the
decomposition's questions are the sub-questions of the retrieval check. A step refers to an
earlier step's answer as ``#1``, ``#2``, ... (MuSiQue's ``raw_data_to_official_format.py``
writes them so, with ``>>`` between a subject and a relation: ``"#1 >> spouse"``); each ``#k``
is replaced by step ``k``'s ``answer`` before the search (kept as written where the source gives
no answer), so BM25 sees the entity and not the placeholder. The steps as written stay in
``extra["question_decomposition"]``, the searched texts are ``extra["sub_questions_searched"]``. An
``answerable: false`` question (MuSiQue-Full) becomes an unanswerable task, where abstaining
is the correct outcome. Non-supporting paragraph texts are not kept in ``extra``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from stillweb.corpora.tasks.importers.base import EvidenceRef, FieldNames, QAFormat, SourceRow, answers_of, required_text

__all__ = ["MUSIQUE", "resolve_placeholders"]

_PLACEHOLDER = re.compile(r"#(\d+)")
_MUSIQUE_KEYS = ("id", "question", "answer", "answer_aliases", "answerable", "paragraphs", "question_decomposition")


def resolve_placeholders(steps: Sequence[Mapping[str, Any]]) -> list[str]:
    """The question of each step with a question, every ``#k`` replaced by step ``k``'s answer
    (1-based, as MuSiQue numbers them) where that step states a non-empty one.

    >>> resolve_placeholders([{"question": "Green >> performer", "answer": "Steve Hillage"},
    ...                       {"question": "#1 >> spouse", "answer": "Miquette Giraudy"},
    ...                       {"question": "Who followed #2 and #4?"}])
    ['Green >> performer', 'Steve Hillage >> spouse', 'Who followed Miquette Giraudy and #4?']
    """
    answers = [str(step.get("answer") or "").strip() for step in steps]

    def answer_of(match: re.Match[str]) -> str:
        k = int(match.group(1))
        return answers[k - 1] if 1 <= k <= len(answers) and answers[k - 1] else match.group(0)

    return [_PLACEHOLDER.sub(answer_of, str(step["question"])) for step in steps if step.get("question")]


def _parse(record: Mapping[str, Any], fields: FieldNames) -> SourceRow:
    answerable = record.get("answerable") is not False
    answers = answers_of([record.get("answer"), *(record.get("answer_aliases") or ())], "answer") if answerable else []
    paragraphs = list(record.get("paragraphs") or ())
    evidence = [EvidenceRef(title=str(p.get("title") or ""), text=str(p.get("paragraph_text") or "").strip(),
                            subject=str(p.get("title") or ""), relation="supporting_paragraph",
                            value=str(p.get("paragraph_text") or "").strip()[:200])
                for p in paragraphs if p.get("is_supporting")]
    steps = list(record.get("question_decomposition") or ())
    extra = {key: value for key, value in record.items() if key not in _MUSIQUE_KEYS}
    extra["supporting_paragraphs"] = [p.get("idx") for p in paragraphs if p.get("is_supporting")]
    extra["question_decomposition"] = steps
    sub_questions = resolve_placeholders(steps)
    extra["sub_questions_searched"] = sub_questions
    return SourceRow(source_id=str(record["id"]) if record.get("id") is not None else None,
                     question=required_text(record, "question"), answers=answers, evidence=evidence,
                     sub_questions=sub_questions,
                     answerable=answerable, extra=extra)


MUSIQUE = QAFormat("musique", "MuSiQue jsonl: id, question, answer, answer_aliases, answerable, paragraphs, "
                   "question_decomposition", lambda keys, fields: {"paragraphs", "question"} <= keys and
                   ("question_decomposition" in keys or "answerable" in keys), _parse)
