"""Diversity of a task set (issue 49 item 3): caps on answers and on what is asked of them, and near-duplicates.

Checked by the generation driver in attempt order, so a set is the same for any worker count:

- **answer quota**: no answer more than ``max(2, n/10)`` times in a set of ``n`` (and never more than
  ``max_per_answer``): while generating, ``n`` is the count asked for; a set that ends short is trimmed to its
  own ``n`` afterwards (:func:`trim_to_quota`, the latest tasks of an answer go first);
- **answer relation quota**: at most :data:`PER_ANSWER_RELATION` questions ask the same relation of the same
  entity ("the GDP of Afghanistan", however the country is reached; :func:`answer_relation_key`);
- **near-duplicates**: the same answer reached through the same pages, by another pivot (.af, Kabul and the
  "Afghan National Anthem" each naming Afghanistan: :func:`near_duplicate_key`), is kept once.

Keys are built from the record alone (answer, formalization, evidence documents): sorted tuples, never set order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from stillweb.corpora.tasks.formalization import TARGET
from stillweb.corpora.tasks.store.record import TaskRecord

__all__ = ["PER_ANSWER_RELATION", "Diversity", "answer_cap", "answer_relation_key", "near_duplicate_key",
           "trim_to_quota"]

PER_ANSWER_RELATION = 2  # questions asking one relation of one entity, at most


def answer_cap(n: int, max_per_answer: int) -> int:
    """Tasks one answer may have in a set of ``n``: ``max(2, n/10)``, at most ``max_per_answer``."""
    return max(1, min(max_per_answer, max(2, n // 10)))


def _asked_relations(record: TaskRecord) -> tuple[str, ...]:
    """The relations of the triples that touch the target, sorted."""
    return tuple(sorted({relation for subject, relation, obj in record.formalization if TARGET in (subject, obj)}))


def answer_relation_key(record: TaskRecord) -> tuple:
    """(the answer's entity: its page, or the page stating a value; the relations asked of it)."""
    return (record.answer_doc, _asked_relations(record))


def near_duplicate_key(record: TaskRecord, group: str) -> tuple:
    """(answer group, relations asked, the pages read): equal for the same chain through another pivot."""
    return (group, _asked_relations(record), tuple(sorted(set(record.evidence_docs))))


class Diversity:
    """The driver's running counts; :meth:`reason` says why a record would break a cap (None: it fits)."""

    def __init__(self, count: int, max_per_answer: int, group: Callable[[TaskRecord], str]) -> None:
        self.cap, self.group = answer_cap(count, max_per_answer), group
        self.per_answer: Counter = Counter()
        self.per_relation: Counter = Counter()
        self.seen: set[tuple] = set()

    def reason(self, record: TaskRecord) -> str | None:
        """``answer_quota``, ``answer_relation_quota`` or ``near_duplicate``; None when the record fits."""
        if not record.answerable:
            return None
        group = self.group(record)
        if self.per_answer[group] >= self.cap:
            return "answer_quota"
        if self.per_relation[answer_relation_key(record)] >= PER_ANSWER_RELATION:
            return "answer_relation_quota"
        if near_duplicate_key(record, group) in self.seen:
            return "near_duplicate"
        return None

    def add(self, record: TaskRecord) -> None:
        """Count a kept record."""
        group = self.group(record)
        self.per_answer[group] += 1
        if record.answerable:
            self.per_relation[answer_relation_key(record)] += 1
            self.seen.add(near_duplicate_key(record, group))


def trim_to_quota(tasks: list[TaskRecord], max_per_answer: int,
                  group: Callable[[TaskRecord], str]) -> tuple[list[TaskRecord], int]:
    """The tasks with no answer over :func:`answer_cap` of the set's own size (a set that ended short of its
    count), the latest tasks of an answer dropped first; and how many were dropped."""
    kept = list(tasks)
    while True:
        cap, seen, trimmed = answer_cap(len(kept), max_per_answer), Counter(), []
        for task in kept:
            key = group(task)
            seen[key] += 1
            if seen[key] <= cap or not task.answerable:
                trimmed.append(task)
        if len(trimmed) == len(kept):
            return kept, len(tasks) - len(kept)
        kept = trimmed
