"""The solvability check of imported tasks: is the gold evidence in the snapshot, does BM25
find it for the question (and each sub-question), and does an evidence document state the
answer? Results are :class:`~stillweb.corpora.tasks.store.import_check.ImportCheck` s.

The retrieval check runs every question and sub-question through
:meth:`~stillweb.corpora.snapshot.reading.Snapshot.search_many` in batches (all cores); a hit is a
result on a gold evidence page (any passage of it, in a passage snapshot). A question without
evidence is checked for fit instead: does one of its top ``k`` passages hold a golden answer
(normalized, as whole words, as :func:`answer_in_evidence` reads evidence)?
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from dataclasses import dataclass

from stillweb.corpora.progress import progress_bar
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.search.analyzers import CJK_RANGES
from stillweb.corpora.tasks.answer_match import qa_normalize
from stillweb.corpora.tasks.store.import_check import ImportCheck
from stillweb.corpora.tasks.importers.evidence import DocTexts

__all__ = ["MappedTask", "answer_in_evidence", "check_tasks"]

_QUERY_BATCH = 4096


@dataclass(frozen=True)
class MappedTask:
    """What the check needs of one task: its questions, golds, mapped evidence and whether that
    evidence states the answer (:func:`answer_in_evidence`, run as the task is mapped)."""

    question: str
    sub_questions: tuple[str, ...]
    golds: tuple[str, ...]
    evidence_items: int
    evidence_docs: tuple[int, ...]
    unmapped: tuple[str, ...]
    answer_in_evidence: bool | None


def check_tasks(snapshot: Snapshot, tasks: Sequence[MappedTask], k: int, retrieval: bool = True,
                workers: int | None = None, progress: bool = False, texts: DocTexts | None = None) -> list[ImportCheck]:
    """One report per task, in order (``retrieval=False`` skips the BM25 checks: ``k`` 0)."""
    texts = texts or DocTexts(snapshot)
    hits = _retrieval_hits(snapshot, tasks, k, workers, progress, texts) if retrieval else None
    reports = []
    for index, task in enumerate(tasks):
        question_hit, sub_hits, fits = hits[index] if hits is not None else (None, (), None)
        reports.append(ImportCheck(
            evidence_items=task.evidence_items, evidence_mapped=task.evidence_items - len(task.unmapped),
            unmapped=task.unmapped, k=k if hits is not None else 0, question_hit=question_hit,
            sub_question_hits=sub_hits, answer_in_evidence=task.answer_in_evidence, answer_in_top_k=fits))
    return reports


def answer_in_evidence(texts: DocTexts, golds: Sequence[str], evidence_docs: Sequence[int]) -> bool | None:
    """Does a passage of an evidence page hold a normalized gold as whole words? None without
    evidence or golds. Han, Kana and Hangul text puts no space between words: a word boundary there
    is any change between such a character and another (踢爆 in ...即算为踢爆。, Nexon in 韩国Nexon开发).
    """
    if not evidence_docs or not golds:
        return None
    return _gold_in(texts, golds, dict.fromkeys(passage for doc in evidence_docs for passage in texts.passages(doc)))


def _gold_in(texts: DocTexts, golds: Sequence[str], passages: Iterable[int]) -> bool:
    """Does one of ``passages`` hold a normalized gold as whole words?"""
    normalized = [gold for gold in (qa_normalize(g) for g in golds) if gold]
    padded = [f" {gold} " for gold in normalized]
    for passage in passages:
        text = texts.normalized(passage)
        if any(gold in text for gold in padded):
            return True
        if any(gold in text and _whole_word(gold).search(text) for gold in normalized):
            return True
    return False


@lru_cache(maxsize=4096)
def _whole_word(gold: str) -> re.Pattern[str]:
    """``gold`` with a space, a CJK character or CJK punctuation beside each end that is a letter or digit
    of a spaced script (a CJK or punctuation end needs nothing beside it)."""
    left = f"(?<=[ {CJK_RANGES}{_BOUNDARY_PUNCTUATION}])" if _SPACED_WORD_RE.match(gold[0]) else ""
    right = f"(?=[ {CJK_RANGES}{_BOUNDARY_PUNCTUATION}])" if _SPACED_WORD_RE.match(gold[-1]) else ""
    return re.compile(left + re.escape(gold) + right)


_BOUNDARY_PUNCTUATION = "\u2000-\u206f\u3000-\u303f\uff00-\uffef"  # “”—…, 、。「」 and the full-width forms （），：
_SPACED_WORD_RE = re.compile(f"[^\\W{CJK_RANGES}]")


def _retrieval_hits(snapshot: Snapshot, tasks: Sequence[MappedTask], k: int, workers: int | None, progress: bool,
                    texts: DocTexts) -> list[tuple[bool | None, tuple[bool, ...], bool | None]]:
    """Per task: (gold page in the question's top k, the same per sub-question, None); without evidence
    (None, (), a golden answer in the question's top k passages); (None, (), None) without either."""
    queries: list[str] = []
    owners: list[int] = []
    for index, task in enumerate(tasks):
        if task.evidence_docs or task.golds:
            for query in (task.question, *(task.sub_questions if task.evidence_docs else ())):
                queries.append(query)
                owners.append(index)
    found: list[list[bool]] = [[] for _ in tasks]
    gold_titles = [frozenset(snapshot.title_of(doc) for doc in task.evidence_docs) for task in tasks]
    bar = progress_bar(total=len(queries), desc="retrieval check", unit="question", enabled=progress)
    try:
        for start in range(0, len(queries), _QUERY_BATCH):
            batch = queries[start:start + _QUERY_BATCH]
            for owner, results in zip(owners[start:start + _QUERY_BATCH], snapshot.search_many(batch, k, workers=workers)):
                if tasks[owner].evidence_docs:
                    found[owner].append(any(hit.title in gold_titles[owner] for hit in results))
                else:
                    found[owner].append(_gold_in(texts, tasks[owner].golds, [hit.doc_id for hit in results]))
            bar.update(len(batch))
    finally:
        bar.close()
    return [((hits[0], tuple(hits[1:]), None) if task.evidence_docs else (None, (), hits[0])) if hits else (None, (), None)
            for task, hits in zip(tasks, found)]
