"""The solvability check of imported tasks: is the gold evidence in the snapshot, does BM25
find it for the question (and each sub-question), and does an evidence document state the
answer? Results are :class:`~stillweb.corpora.tasks.import_check.ImportCheck` s.

The retrieval check runs every question and sub-question through
:meth:`~stillweb.corpora.snapshot.Snapshot.search_many` in batches (all cores); a hit is a
result on a gold evidence page (any passage of it, in a passage snapshot).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stillweb.corpora.progress import progress_bar
from stillweb.corpora.snapshot import Snapshot
from stillweb.corpora.tasks.answer_match import qa_normalize
from stillweb.corpora.tasks.import_check import ImportCheck

__all__ = ["MappedTask", "check_tasks"]

_QUERY_BATCH = 4096
_TEXT_CACHE = 100_000


@dataclass(frozen=True)
class MappedTask:
    """What the check needs of one task: its questions, golds and mapped evidence."""

    question: str
    sub_questions: tuple[str, ...]
    golds: tuple[str, ...]
    evidence_items: int
    evidence_docs: tuple[int, ...]
    unmapped: tuple[str, ...]


def check_tasks(snapshot: Snapshot, tasks: Sequence[MappedTask], k: int, retrieval: bool = True,
                workers: int | None = None, progress: bool = False) -> list[ImportCheck]:
    """One report per task, in order (``retrieval=False`` skips the BM25 check: ``k`` 0)."""
    hits = _retrieval_hits(snapshot, tasks, k, workers, progress) if retrieval else None
    normalized: dict[int, str] = {}  # doc id -> its normalized text (evidence pages recur across questions)
    reports = []
    for index, task in enumerate(tasks):
        question_hit, sub_hits = hits[index] if hits is not None else (None, ())
        reports.append(ImportCheck(
            evidence_items=task.evidence_items, evidence_mapped=task.evidence_items - len(task.unmapped),
            unmapped=task.unmapped, k=k if hits is not None else 0, question_hit=question_hit,
            sub_question_hits=sub_hits, answer_in_evidence=_answer_in_evidence(snapshot, task, normalized)))
    return reports


def _answer_in_evidence(snapshot: Snapshot, task: MappedTask, normalized: dict[int, str]) -> bool | None:
    if not task.evidence_docs or not task.golds:
        return None
    golds = [f" {gold} " for gold in (qa_normalize(g) for g in task.golds) if gold]
    for doc in dict.fromkeys(passage for doc in task.evidence_docs for passage in snapshot.passages_of(doc)):
        if doc not in normalized:
            if len(normalized) >= _TEXT_CACHE:
                normalized.clear()
            normalized[doc] = f" {qa_normalize(snapshot.text_of(doc))} "
        if any(gold in normalized[doc] for gold in golds):
            return True
    return False


def _retrieval_hits(snapshot: Snapshot, tasks: Sequence[MappedTask], k: int, workers: int | None,
                    progress: bool) -> list[tuple[bool | None, tuple[bool, ...]]]:
    """Per task: (gold page in the question's top k, the same per sub-question); (None, ()) without evidence."""
    queries: list[str] = []
    owners: list[int] = []
    for index, task in enumerate(tasks):
        if task.evidence_docs:
            for query in (task.question, *task.sub_questions):
                queries.append(query)
                owners.append(index)
    found: list[list[bool]] = [[] for _ in tasks]
    gold_titles = [frozenset(snapshot.title_of(doc) for doc in task.evidence_docs) for task in tasks]
    bar = progress_bar(total=len(queries), desc="retrieval check", unit="question", enabled=progress)
    try:
        for start in range(0, len(queries), _QUERY_BATCH):
            batch = queries[start:start + _QUERY_BATCH]
            for owner, results in zip(owners[start:start + _QUERY_BATCH], snapshot.search_many(batch, k, workers=workers)):
                found[owner].append(any(hit.title in gold_titles[owner] for hit in results))
            bar.update(len(batch))
    finally:
        bar.close()
    return [(hits[0], tuple(hits[1:])) if hits else (None, ()) for hits in found]
