"""One task-generation attempt, and the parameters that determine every attempt.

Attempt ``i`` is a pure function of (snapshot, :class:`GenerationParams`, i):
its random choices come from ``KeyedRng(seed, "task", i)``. Attempts run in
the driver (:func:`attempt_task`), in local worker processes
(:func:`attempt_batches_in_processes`) or on Ray actors
(:mod:`stillweb.corpora.tasks.compose.on_ray`); each worker opens the world and
builds its fact graph once (:class:`AttemptWorker`). The driver
(:mod:`stillweb.corpora.tasks.compose.generate`) consumes results in index order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.corpora.arguments import check_positive_int
from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.processes import ignore_interrupts, process_context
from stillweb.corpora.tasks.compose.assemble import build_record
from stillweb.corpora.tasks.compose.operations import compose_query
from stillweb.corpora.tasks.compose.page_hops import two_page_roots
from stillweb.corpora.tasks.compose.params import ComposeParams
from stillweb.corpora.tasks.graph import FactGraph
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.corpora.tasks.prove.shortcut import shortcut_reason
from stillweb.corpora.tasks.task_world import TaskWorld, open_world
from stillweb.corpora.tasks.prove.unanswerable import make_unanswerable, wants_unanswerable

__all__ = ["MIN_PAGES_REAL", "Attempt", "AttemptWorker", "GenerationParams", "attempt_batches_in_processes", "attempt_task"]

# (index, record or None, "ok" or the rejection reason, could the question read two pages: None off real pages)
Attempt = tuple[int, "TaskRecord | None", str, "bool | None"]
# Real pages (issue 49 item 4): where the data has a keyed chain through another page for the attempt's answer
# (compose/page_hops.py), its question reads at least this many pages (its evidence documents), so none is one
# infobox look-up in disguise ("the GDP of the country whose capital is Luanda"); rejection ``too_few_pages``.
# Where it has none, a one-page question is what the data allows: kept, and counted on the card.
MIN_PAGES_REAL = 2


@dataclass(frozen=True)
class GenerationParams:
    """Everything that determines a task set (besides the snapshot): the one place they are kept."""

    count: int
    seed: int = 0
    compose: ComposeParams = field(default_factory=ComposeParams)
    attempts_per_task: int = 50
    shortcut_filter: bool = True
    verify_limit: int | None = None  # verify only the first N kept tasks (None: all, if a verifier is given)
    unanswerable: float = 0.0  # share of attempts made unanswerable (stillweb.corpora.tasks.prove.unanswerable)
    max_per_answer: int = 3  # tasks per answer at most (3: any set of 100+ has <= 3% per answer, >= 33% distinct)
    # pages each question reads at least (None: on real pages MIN_PAGES_REAL where its answer has a chain, else 1)
    min_pages: int | None = None

    def __post_init__(self) -> None:
        check_positive_int("count", self.count)
        check_positive_int("attempts_per_task", self.attempts_per_task)
        check_positive_int("max_per_answer", self.max_per_answer)
        if self.min_pages is not None:
            check_positive_int("min_pages", self.min_pages)
        if not 0.0 <= self.unanswerable <= 1.0:
            raise UsageError(f"unanswerable must be a share in [0, 1], got {self.unanswerable}")

    @property
    def max_attempts(self) -> int:
        """The bound on attempts for this set."""
        return max(1000, self.count * self.attempts_per_task)

    def card_fields(self) -> dict[str, Any]:
        """The parameters as the task card's ``generator`` entry (key order fixed: the card's bytes depend on it)."""
        fields = {"seed": self.seed, **asdict(self.compose), "count": self.count,
                  "attempts_per_task": self.attempts_per_task, "shortcut_filter": self.shortcut_filter,
                  "verify_limit": self.verify_limit, "max_per_answer": self.max_per_answer}
        if self.unanswerable:  # only then, so sets without unanswerable tasks keep their cards byte for byte
            fields["unanswerable"] = self.unanswerable
        if self.min_pages is not None:  # likewise: only when set
            fields["min_pages"] = self.min_pages
        return fields


def attempt_task(graph: FactGraph, params: GenerationParams, index: int,
                 fingerprint: str) -> tuple[TaskRecord | None, str, bool | None]:
    """Attempt ``index``: a task record and "ok", or None and the rejection reason; and, on real pages, whether
    its question could read two pages (its answer has a keyed chain through another page, or it read two)."""
    rng = KeyedRng(params.seed, "task", index)
    composition = compose_query(graph, rng.child("compose"), params.compose)
    could = _could_take_two_pages(graph, params, composition.answer)
    if composition.query is None:
        return None, composition.reason, could
    if wants_unanswerable(params.seed, index, params.unanswerable):
        return *make_unanswerable(composition, graph, rng.child("unanswerable"), fingerprint), could
    record = build_record(composition.query, composition.proof, graph, rng.child("render"), fingerprint)
    pages = len(set(record.evidence_docs))
    if pages < (params.min_pages or (MIN_PAGES_REAL if could else 1)):
        return None, "too_few_pages", could
    could = could if could is None else could or pages >= MIN_PAGES_REAL
    if params.shortcut_filter:
        reason = shortcut_reason(graph.world, record.question, list(record.golds), record.answer_doc)
        if reason:
            return None, "shortcut:" + reason, could
    return record, "ok", could


def _could_take_two_pages(graph: FactGraph, params: GenerationParams, answer: int) -> bool | None:
    """On real pages: the answer has a keyed chain through another page within the hops asked (page_hops.py);
    None on a synthetic world, where the rule does not apply."""
    if not graph.real:
        return None
    max_hops = min(params.compose.max_hops, 2) if params.compose.level == 1 else params.compose.max_hops
    return answer in two_page_roots(graph, max_hops)


class AttemptWorker:
    """One worker's world and fact graph (built once), computing batches of attempts."""

    def __init__(self, source: TaskWorld | str | Path, params: GenerationParams) -> None:
        world = open_world(source) if isinstance(source, (str, Path)) else source
        self.graph, self.params, self.fingerprint = FactGraph(world), params, world.fingerprint

    def run(self, indexes: range) -> list[Attempt]:
        """(index, record, reason) for each attempt of ``indexes``."""
        return [(i, *attempt_task(self.graph, self.params, i, self.fingerprint)) for i in indexes]


_WORKER: list[AttemptWorker] = []  # the one AttemptWorker of a pool process


def attempt_batches_in_processes(source: TaskWorld | str, params: GenerationParams, batches: Sequence[range],
                                 workers: int) -> Iterator[list[Attempt]]:
    """The results of ``batches`` in order, computed by ``workers`` local processes
    (started as :mod:`stillweb.corpora.processes` says)."""
    with process_context().Pool(workers, initializer=_start_worker, initargs=(source, params)) as pool:
        yield from pool.imap(_run_batch, batches)


def _start_worker(source: TaskWorld | str, params: GenerationParams) -> None:
    ignore_interrupts()
    _WORKER.append(AttemptWorker(source, params))


def _run_batch(indexes: range) -> list[Attempt]:
    return _WORKER[0].run(indexes)
