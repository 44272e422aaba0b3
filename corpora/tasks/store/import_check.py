"""What the importer checked of one imported task against the snapshot (its solvability report).

Stored with the task (the ``solvability`` column) and summed for the set in ``card.md``,
``stillweb tasks stats`` and the viewer's task pages:

- ``evidence_items`` / ``evidence_mapped``: the source's gold evidence (supporting titles,
  paragraphs, provenance, evidence document ids) and how many became snapshot doc ids;
  ``unmapped`` names the reason of each one that did not (``missing_title``, ...);
- ``k``: the depth of the BM25 check (0: not run); ``question_hit``: a gold evidence doc is
  among the top ``k`` for the question; ``sub_question_hits``: the same per sub-question
  (MuSiQue's decomposition), in order;
- ``answer_in_evidence``: a golden answer (normalized) occurs in an evidence doc's text;
- ``answer_in_top_k``: for a task without evidence (FlashRAG's NQ, TriviaQA...), a golden answer occurs
  in one of BM25's top ``k`` passages for the question: how well the questions fit the corpus. An
  import warns when fewer than half of the questions it checked fit (:func:`fit_warning`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

__all__ = ["ImportCheck", "IMPORT_CHECK_TYPE", "FIT_WARNING_SHARE", "fit_warning", "format_solvability",
           "solvability_summary"]

FIT_WARNING_SHARE = 0.5  # fewer questions than this share with a gold string in the top k: the import warns


@dataclass(frozen=True)
class ImportCheck:
    """One task's solvability report (see the module docstring); ``None`` fields: not checked."""

    evidence_items: int = 0
    evidence_mapped: int = 0
    unmapped: tuple[str, ...] = ()
    k: int = 0
    question_hit: bool | None = None
    sub_question_hits: tuple[bool, ...] = ()
    answer_in_evidence: bool | None = None
    answer_in_top_k: bool | None = None

    @property
    def evidence_present(self) -> bool:
        """The source names gold evidence and every item of it is in the snapshot."""
        return self.evidence_items > 0 and self.evidence_mapped == self.evidence_items

    @classmethod
    def from_dict(cls, item: Mapping[str, Any]) -> "ImportCheck":
        """A report from its dict (a parquet struct or JSON)."""
        return cls(
            evidence_items=int(item.get("evidence_items") or 0),
            evidence_mapped=int(item.get("evidence_mapped") or 0),
            unmapped=tuple(str(reason) for reason in item.get("unmapped") or ()),
            k=int(item.get("k") or 0),
            question_hit=item.get("question_hit"),
            sub_question_hits=tuple(bool(hit) for hit in item.get("sub_question_hits") or ()),
            answer_in_evidence=item.get("answer_in_evidence"),
            answer_in_top_k=item.get("answer_in_top_k"),
        )

    def to_dict(self) -> dict[str, Any]:
        """The report as a plain dict (the parquet struct's fields)."""
        return {"evidence_items": self.evidence_items, "evidence_mapped": self.evidence_mapped,
                "unmapped": list(self.unmapped), "k": self.k, "question_hit": self.question_hit,
                "sub_question_hits": list(self.sub_question_hits), "answer_in_evidence": self.answer_in_evidence,
                "answer_in_top_k": self.answer_in_top_k}


IMPORT_CHECK_TYPE = pa.struct([
    ("evidence_items", pa.int32()),
    ("evidence_mapped", pa.int32()),
    ("unmapped", pa.list_(pa.string())),
    ("k", pa.int32()),
    ("question_hit", pa.bool_()),
    ("sub_question_hits", pa.list_(pa.bool_())),
    ("answer_in_evidence", pa.bool_()),
    ("answer_in_top_k", pa.bool_()),
])


def solvability_summary(checks: Sequence[ImportCheck | None]) -> dict[str, Any] | None:
    """The set's solvability figures over the tasks that have a report (``None`` when none has).

    >>> solvability_summary([ImportCheck(1, 1, (), 5, True, (), True), ImportCheck(2, 1, ("missing_title",))])
    {'tasks': 2, 'with_evidence': 2, 'evidence_present': 1, 'evidence_items': 3, 'evidence_mapped': 2, 'unmapped': {'missing_title': 1}, 'k': 5, 'retrieval_checked': 1, 'question_hit': 1, 'sub_questions': 0, 'sub_question_hits': 0, 'answer_checked': 1, 'answer_in_evidence': 1, 'fit_checked': 0, 'answer_in_top_k': 0}
    """
    reports = [check for check in checks if check is not None]
    if not reports:
        return None
    unmapped = Counter(reason for check in reports for reason in check.unmapped)
    retrieved = [check for check in reports if check.question_hit is not None]
    answered = [check for check in reports if check.answer_in_evidence is not None]
    fitted = [check for check in reports if check.answer_in_top_k is not None]
    return {
        "tasks": len(reports),
        "with_evidence": sum(check.evidence_items > 0 for check in reports),
        "evidence_present": sum(check.evidence_present for check in reports),
        "evidence_items": sum(check.evidence_items for check in reports),
        "evidence_mapped": sum(check.evidence_mapped for check in reports),
        "unmapped": {reason: unmapped[reason] for reason in sorted(unmapped)},
        "k": max((check.k for check in reports), default=0),
        "retrieval_checked": len(retrieved),
        "question_hit": sum(bool(check.question_hit) for check in retrieved),
        "sub_questions": sum(len(check.sub_question_hits) for check in reports),
        "sub_question_hits": sum(sum(check.sub_question_hits) for check in reports),
        "answer_checked": len(answered),
        "answer_in_evidence": sum(bool(check.answer_in_evidence) for check in answered),
        "fit_checked": len(fitted),
        "answer_in_top_k": sum(bool(check.answer_in_top_k) for check in fitted),
    }


def fit_warning(summary: Mapping[str, Any] | None) -> str | None:
    """The warning an import prints when fewer than half of the questions it checked without evidence have a
    golden answer in BM25's top k (the questions do not fit the corpus), else ``None``.

    >>> fit_warning({"fit_checked": 17, "answer_in_top_k": 0, "k": 10}).split(":")[1]
    " 0 of 17 questions (0.0%) have a golden answer in BM25's top 10 passages"
    """
    checked, fitting = (summary or {}).get("fit_checked", 0), (summary or {}).get("answer_in_top_k", 0)
    if not checked or fitting >= FIT_WARNING_SHARE * checked:
        return None
    return (f"warning: {fitting} of {checked} questions ({100.0 * fitting / checked:.1f}%) have a golden answer in "
            f"BM25's top {summary['k']} passages: these questions do not fit this corpus (another corpus, e.g. "
            "wiki-18 for FlashRAG's sets, or other questions); --no-retrieval-check skips the check")


def format_solvability(summary: Mapping[str, Any] | None) -> list[str]:
    """Markdown list lines of :func:`solvability_summary` (none for a set without reports)."""
    if not summary:
        return []
    unmapped = ", ".join(f"{reason} {count}" for reason, count in summary["unmapped"].items()) or "none"
    retrieval = (f"{_share(summary['question_hit'], summary['retrieval_checked'])} of the questions with evidence have "
                 f"a gold doc in BM25's top {summary['k']}" if summary["retrieval_checked"] else
                 "no question names evidence" if summary.get("fit_checked") else "not run")
    lines = [
        f"- gold evidence present: {_share(summary['evidence_present'], summary['with_evidence'])} of the "
        f"{summary['with_evidence']} tasks that name evidence ({summary['evidence_mapped']} of "
        f"{summary['evidence_items']} items mapped; unmapped: {unmapped})",
        f"- retrieval check: {retrieval}",
    ]
    if summary["sub_questions"]:
        lines.append(f"- sub-questions: {_share(summary['sub_question_hits'], summary['sub_questions'])} of "
                     f"{summary['sub_questions']} have a gold doc in the top {summary['k']}")
    lines.append(f"- answer string in an evidence document: {_share(summary['answer_in_evidence'], summary['answer_checked'])}"
                 f" of {summary['answer_checked']} tasks")
    if summary.get("fit_checked"):
        lines.append(f"- answer string in BM25's top {summary['k']} (questions without evidence): "
                     f"{_share(summary['answer_in_top_k'], summary['fit_checked'])} of {summary['fit_checked']}"
                     + (" (fewer than half: the questions do not fit this corpus)" if fit_warning(summary) else ""))
    return lines


def _share(part: int, whole: int) -> str:
    return f"{part} ({100.0 * part / whole:.1f}%)" if whole else "n/a"
