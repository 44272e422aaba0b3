"""Generating a task set: attempts in index order, proofs, filters, dedup, splits, files.

Attempt ``i`` is a pure function of (snapshot, seed, parameters, i)
(:mod:`stillweb.corpora.tasks.compose.attempts`). The driver keeps at most
``max(2, n/10)`` (and ``max_per_answer``) tasks per answer, two per relation asked of one
entity, and one of each near-duplicate (:mod:`~stillweb.corpora.tasks.compose.diversity`,
checked in index order: rejections ``answer_quota``, ``answer_relation_quota``,
``near_duplicate``), so no answer dominates a set, and makes dev and test
non-empty in sets of 10 or more (:func:`~stillweb.corpora.tasks.store.splits.fill_empty_splits`). Workers compute batches of
attempts in parallel, but results are consumed strictly in index order and
generation stops at exactly the attempt that completes the set, so the output
is byte-identical for any worker count. Attempts are bounded: when the world
cannot yield the requested tasks, :class:`TaskGenerationError` says how many
could be made and why.

>>> # summary = generate_tasks("snap/", "default", GenerationParams(count=100, seed=0))
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from tqdm import tqdm

from stillweb.corpora.errors import UsageError
from stillweb.corpora.arguments import check_positive_int
from stillweb.corpora.tasks.compose.attempts import (Attempt, GenerationParams, attempt_batches_in_processes,
                                             attempt_task)
from stillweb.corpora.tasks.compose.diversity import Diversity, trim_to_quota
from stillweb.corpora.tasks.store.card import render_card
from stillweb.corpora.tasks.graph import FactGraph, normalize_text
from stillweb.corpora.tasks.compose.on_ray import attempt_batches_on_ray
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.corpora.tasks.store.splits import fill_empty_splits
from stillweb.corpora.tasks.store.files import task_set_dir, write_task_set
from stillweb.corpora.tasks.task_world import TaskWorld, open_world

__all__ = ["VERIFY_SAMPLE", "TaskGenerationError", "GenerationResult", "GenerationSummary", "Verifier", "answer_group",
           "generate_task_list", "generate_tasks", "page_hop_counts"]

Verifier = Callable[[TaskRecord], "int | None"]  # a task -> the oracle's step count, or None if it failed

VERIFY_SAMPLE = 50  # default solvability sample: the reference agent solves the first 50 kept tasks
_BATCH = 32
_HOPELESS_AFTER = 2000  # attempts without a single task: stop and explain


class TaskGenerationError(UsageError):
    """The requested task set cannot be made (the message says how many could, and why)."""


@dataclass
class GenerationResult:
    """Tasks in index order plus what happened to every consumed attempt."""

    tasks: list[TaskRecord]
    attempts: int
    rejections: Counter
    verified: int = 0
    refused: Counter = field(default_factory=Counter)  # facts no question uses, by reason (graph.refusal)
    page_hops: Counter | None = None  # real pages only: page_hop_counts (issue 49 item 4)


@dataclass(frozen=True)
class GenerationSummary:
    """What :func:`generate_tasks` wrote."""

    name: str
    path: str
    fingerprint: str
    count: int
    splits: dict[str, int]
    attempts: int
    rejections: dict[str, int]
    verified: int


def generate_task_list(
    world: TaskWorld | str | Path,
    params: GenerationParams,
    workers: int = 1,
    verifier: Verifier | None = None,
    progress: bool = False,
    graph: FactGraph | None = None,
    on_ray: bool = False,
) -> GenerationResult:
    """Generate tasks in memory (no files); ``world`` is a TaskWorld or a snapshot path.

    ``graph``: a :class:`FactGraph` already built over the same world, to reuse
    across calls (worker processes build their own). ``on_ray``: attempt batches
    run on Ray actors (:mod:`stillweb.corpora.tasks.compose.on_ray`; ``world`` a path),
    with the same result.
    """
    check_positive_int("workers", workers)
    loaded = open_world(world) if isinstance(world, (str, Path)) else world
    if graph is None:
        graph = FactGraph(loaded)
    elif graph.world.fingerprint != loaded.fingerprint:
        raise UsageError(f"graph was built over world {graph.world.fingerprint[:12]}, not {loaded.fingerprint[:12]}")
    if not graph.entities:
        raise TaskGenerationError(
            f"made 0 of {params.count} tasks: the snapshot has {len(graph.facts)} facts and no entity-to-entity "
            "facts, so no multi-hop question can be composed"
        )
    result = GenerationResult(tasks=[], attempts=0, rejections=Counter(), refused=Counter(graph.refused))
    seen: set[str] = set()
    could_by_hash: dict[str, bool] = {}  # kept tasks (by canonical hash): could their question read two pages
    could_count = 0
    diversity = Diversity(params.count, params.max_per_answer, answer_group)  # quotas and near-duplicates
    bar = tqdm(total=params.count, desc="tasks", unit="task", disable=not progress)
    try:
        source = _worker_source(world, loaded) if workers > 1 or on_ray else None
        for index, record, reason, could in _attempts(graph, source, params, workers, loaded.fingerprint, on_ray):
            result.attempts = index + 1
            could_count += bool(could)
            if record is not None and record.canonical_hash in seen:
                record, reason = None, "duplicate"
            if record is not None and (capped := diversity.reason(record)) is not None:
                record, reason = None, capped
            if record is not None and verifier is not None and (params.verify_limit is None or result.verified < params.verify_limit):
                steps = verifier(record)
                result.verified += 1
                if steps is None:
                    record, reason = None, "unsolvable"
                else:
                    record = replace(record, oracle_steps=steps)
            if record is None:
                result.rejections[reason] += 1
            else:
                seen.add(record.canonical_hash)
                could_by_hash[record.canonical_hash] = bool(could)
                diversity.add(record)
                result.tasks.append(record)
                bar.update(1)
            if len(result.tasks) >= params.count:
                break
            if not result.tasks and result.attempts >= _HOPELESS_AFTER:
                break
    finally:
        bar.close()
    if len(result.tasks) < params.count:  # a short set: no answer over max(2, n/10) of its own n
        result.tasks, trimmed = trim_to_quota(result.tasks, params.max_per_answer, answer_group)
        if trimmed:
            result.rejections["answer_quota"] += trimmed
    if graph.real:
        result.page_hops = page_hop_counts(result.tasks, result.attempts, could_count, could_by_hash)
    if not result.tasks:
        raise TaskGenerationError(_shortfall(result, params))
    splits = fill_empty_splits([t.split for t in result.tasks],
                               [answer_group(t) if t.answerable else None for t in result.tasks])
    result.tasks = [t if t.split == split else replace(t, split=split) for t, split in zip(result.tasks, splits)]
    return result


def answer_group(record: TaskRecord) -> str:
    """The key of the answer quota and of split moves: the answer page for entities, else the value."""
    if not record.answerable:
        return "unanswerable:" + record.task_id
    if record.shape.startswith("value"):
        return "value:" + normalize_text(record.answer)
    return f"entity:{record.answer_doc}"


def page_hop_counts(tasks: list[TaskRecord], attempts: int, could: int, could_by_hash: dict[str, bool]) -> Counter:
    """The card's page-hop figures (issue 49 item 4): ``attempts``; ``could`` (attempts whose answer had a keyed
    chain through another page, or whose question read two); kept answerable tasks reading ``two_pages`` or more;
    one-page tasks ``one_page_no_chain`` (the data allowed no more) and ``one_page_with_chain`` (only under
    ``min_pages=1``)."""
    counts = Counter(attempts=attempts, could=could)
    for task in tasks:
        if task.answerable:
            one = len(set(task.evidence_docs)) < 2
            chain = could_by_hash.get(task.canonical_hash, False)
            counts["one_page_with_chain" if one and chain else "one_page_no_chain" if one else "two_pages"] += 1
    return counts


def _shortfall(result: GenerationResult, params: GenerationParams) -> str:
    """How many tasks could be made, and the rejection counts that explain why."""
    reasons = ", ".join(f"{k}={v}" for k, v in sorted(result.rejections.items(), key=lambda kv: (-kv[1], kv[0])))
    compose = params.compose
    return (
        f"made {len(result.tasks)} of {params.count} tasks in {result.attempts} attempts "
        f"(min_hops={compose.min_hops}, max_hops={compose.max_hops}, level={compose.level}); "
        f"rejections: {reasons or 'none'}"
    )


def generate_tasks(
    snapshot_path: str | Path,
    name: str,
    params: GenerationParams,
    *,
    workers: int = 1,
    verifier: Verifier | None = None,
    allow_partial: bool = False,
    progress: bool = False,
    on_ray: bool = False,
) -> GenerationSummary:
    """Generate ``params.count`` tasks from the snapshot and write ``tasks/<name>/`` (splits + card.md).

    ``on_ray``: run the attempts on Ray actors (``workers`` of them, default the
    cluster's CPUs); the task set is byte-identical to the local one.

    Raises :class:`TaskGenerationError` (saying how many tasks could be made
    and the rejection counts) when fewer than ``params.count`` tasks can be made,
    unless ``allow_partial`` (then at least one task is still required).
    """
    task_set_dir(snapshot_path, name)  # validates the name before any work
    world = open_world(snapshot_path)
    result = generate_task_list(world, params, workers, verifier, progress, on_ray=on_ray)
    made = len(result.tasks)
    if made < params.count and not allow_partial:
        raise TaskGenerationError(_shortfall(result, params) + "; pass allow_partial (--allow-partial) to keep them")

    def card(directory: Path) -> None:
        text = render_card(name, world.fingerprint, params.card_fields(), result.tasks, result.attempts,
                           result.rejections, result.verified, params.verify_limit if verifier is not None else 0,
                           refused=result.refused, page_hops=result.page_hops)
        (directory / "card.md").write_text(text, encoding="utf-8")

    path = write_task_set(snapshot_path, name, result.tasks, card)
    splits = Counter(t.split for t in result.tasks)
    return GenerationSummary(
        name=name,
        path=str(path),
        fingerprint=world.fingerprint,
        count=made,
        splits={s: splits.get(s, 0) for s in ("train", "dev", "test")},
        attempts=result.attempts,
        rejections=dict(sorted(result.rejections.items())),
        verified=result.verified,
    )


def _attempts(
    graph: FactGraph, source: TaskWorld | str | None, params: GenerationParams, workers: int, fingerprint: str,
    on_ray: bool = False,
) -> Iterator[Attempt]:
    """(index, record, reason, could) for attempts 0, 1, 2, ... up to the bound, in order."""
    if source is None or (workers == 1 and not on_ray):
        for index in range(params.max_attempts):
            yield index, *attempt_task(graph, params, index, fingerprint)
        return
    batches = [range(start, min(start + _BATCH, params.max_attempts)) for start in range(0, params.max_attempts, _BATCH)]
    if on_ray:
        results = attempt_batches_on_ray(source, params, batches, None if workers == 1 else workers)
    else:
        results = attempt_batches_in_processes(source, params, batches, workers)
    for batch in results:
        yield from batch


def _worker_source(world: TaskWorld | str | Path, loaded: TaskWorld) -> TaskWorld | str:
    """What a worker process opens: the snapshot path (a snapshot world is not sent whole), else the world."""
    if isinstance(world, (str, Path)):
        return str(world)
    snapshot = getattr(loaded, "snapshot", None)
    return str(snapshot.path) if snapshot is not None else loaded
