"""MuSiQue jsonl: ``id``, ``question``, ``answer``, ``answer_aliases``, ``answerable``,
``paragraphs`` (``idx``, ``title``, ``paragraph_text``, ``is_supporting``) and
``question_decomposition`` (``id``, ``question``, ``answer``, ``paragraph_support_idx``).

Supporting paragraphs are the evidence (found by title, then by their text); the
decomposition's questions are the sub-questions of the retrieval check. An
``answerable: false`` question (MuSiQue-Full) becomes an unanswerable task, where abstaining
is the correct outcome. Non-supporting paragraph texts are not kept in ``extra``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stillweb.corpora.tasks.importers.base import EvidenceRef, FieldNames, QAFormat, SourceRow, answers_of, required_text

__all__ = ["MUSIQUE"]

_MUSIQUE_KEYS = ("id", "question", "answer", "answer_aliases", "answerable", "paragraphs", "question_decomposition")


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
    return SourceRow(source_id=str(record["id"]) if record.get("id") is not None else None,
                     question=required_text(record, "question"), answers=answers, evidence=evidence,
                     sub_questions=[str(step.get("question") or "") for step in steps if step.get("question")],
                     answerable=answerable, extra=extra)


MUSIQUE = QAFormat("musique", "MuSiQue jsonl: id, question, answer, answer_aliases, answerable, paragraphs, "
                   "question_decomposition", lambda keys, fields: {"paragraphs", "question"} <= keys and
                   ("question_decomposition" in keys or "answerable" in keys), _parse)
