"""``import_tasks``: public QA files to a task set of a snapshot (``stillweb tasks import``).

Rows are read in the order of the files (:mod:`.reading`), their evidence mapped to doc ids
(:mod:`.evidence`), checked (:mod:`.solvability`), split and written like a generated set
(parquet splits and ``card.md``, :func:`~stillweb.corpora.tasks.store.files.write_task_set`).

Splits: a row's own split (Search-R1's ``extra_info.split``), else the file's name
(``train``, ``dev``/``validation``/``val``, ``test``), else a seeded hash: tasks sharing a
golden answer form one group, placed by the hash of its smallest task id, so no answer is
shared across splits and adding a file never moves another group.
"""

from __future__ import annotations

import gc
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from stillweb.corpora.errors import UsageError
from stillweb.corpora.keyed import stable_hash
from stillweb.corpora.progress import progress_bar
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.tasks.answer_match import check_answer_match, qa_normalize
from stillweb.corpora.tasks.prove.emptiness import EmptinessProof
from stillweb.corpora.tasks.store.export import check_data_source, data_source_of
from stillweb.corpora.tasks.store.import_check import fit_warning, solvability_summary
from stillweb.corpora.tasks.importers.base import FieldNames, SkippedQuestion, SourceRow
from stillweb.corpora.tasks.importers.solvability import MappedTask, answer_in_evidence, check_tasks
from stillweb.corpora.tasks.importers.evidence import EvidenceMapper
from stillweb.corpora.tasks.importers.qrels import Qrels
from stillweb.corpora.tasks.importers.reading import ImportFileError, read_rows
from stillweb.corpora.tasks.store.record import EvidenceItem, TaskRecord
from stillweb.corpora.tasks.store.splits import split_of
from stillweb.corpora.tasks.store.files import check_task_set_name, write_task_set

__all__ = ["ImportOptions", "ImportSummary", "import_tasks", "DEFAULT_IMPORT_MATCH"]

DEFAULT_IMPORT_MATCH = "em"  # Search-R1's exact match: what the published baselines report
SOURCE_LABEL = "source_label"  # emptiness proof kind: the source marks the question unanswerable
_SPLIT_NAMES = {"train": "train", "training": "train", "dev": "dev", "validation": "dev", "val": "dev",
                "valid": "dev", "test": "test"}


@dataclass(frozen=True)
class ImportOptions:
    """How to import (the ``tasks import`` options)."""

    format: str | None = None
    answer_match: str | None = None  # None: the source's own rule, else em
    strict: bool = False
    require_evidence: bool = False
    fields: FieldNames = field(default_factory=FieldNames)
    k: int = 10
    retrieval: bool = True
    seed: int = 0
    workers: int | None = None
    progress: bool = True
    qrels: tuple[str | Path, ...] = ()  # TREC qrels files whose judged docs are evidence (:mod:`.qrels`)
    data_source: str | None = None  # Search-R1's name of the source (None: the file's name says it, if it does)


@dataclass(frozen=True)
class ImportSummary:
    """What an import did."""

    path: Path
    tasks: int
    rows: int
    formats: dict[str, str]
    splits: dict[str, int]
    unmapped: dict[str, int]
    dropped_no_evidence: int
    solvability: dict | None
    skipped: dict[str, int] = field(default_factory=dict)  # questions not read, by reason (:class:`SkippedQuestion`)

    @property
    def warning(self) -> str | None:
        """The fit warning (:func:`~stillweb.corpora.tasks.store.import_check.fit_warning`): fewer than half of the
        questions without evidence have a golden answer in BM25's top k; else ``None``."""
        return fit_warning(self.solvability)

    def line(self) -> str:
        """The console line."""
        splits = ", ".join(f"{split} {count}" for split, count in self.splits.items())
        unmapped = ", ".join(f"{reason} {count}" for reason, count in self.unmapped.items()) or "none"
        figures = self.solvability or {}
        line = (f"imported {self.tasks} of {self.rows} questions ({', '.join(sorted(set(self.formats.values())))}) "
                f"to {self.path} ({splits}); evidence items mapped {figures.get('evidence_mapped', 0)} of "
                f"{figures.get('evidence_items', 0)}, unmapped: {unmapped}")
        if figures.get("retrieval_checked"):
            line += f"; gold doc in BM25 top {figures['k']}: {figures['question_hit']} of {figures['retrieval_checked']}"
        if figures.get("fit_checked"):
            line += f"; answer in BM25 top {figures['k']}: {figures['answer_in_top_k']} of {figures['fit_checked']}"
        if self.skipped:
            line += "; questions skipped: " + ", ".join(f"{reason} {count}" for reason, count in self.skipped.items())
        if self.dropped_no_evidence:
            line += f"; dropped without evidence (--require-evidence): {self.dropped_no_evidence}"
        return line


def import_tasks(snapshot_path: str | Path, files: Sequence[str | Path], name: str,
                 options: ImportOptions | None = None) -> ImportSummary:
    """Import ``files`` into task set ``name`` of the snapshot; returns what was done.

    Raises ``ValueError`` (:class:`~stillweb.corpora.errors.StillwebError`) naming the file,
    line and field of a bad row, a repeated task id (both places), an unknown format, and
    with ``strict`` the first evidence item that maps to no document.
    """
    options = options or ImportOptions()
    check_task_set_name(name)
    if options.answer_match is not None:
        check_answer_match(options.answer_match)
    check_data_source(options.data_source)
    if not files:
        raise UsageError("no files to import: name one or more QA files")
    if options.retrieval and not 1 <= options.k <= 100:
        raise UsageError(f"the retrieval check's k must be 1..100, got {options.k}")
    with _gc_paused():
        return _import(snapshot_path, files, name, options)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while an import runs: its records are millions of
    objects without cycles (reference counting frees them), and each full collection walks them
    all, ~40% of the CPU time of 100,000 HotpotQA questions (``scripts/bench_import.py``)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _import(snapshot_path: str | Path, files: Sequence[str | Path], name: str, options: ImportOptions) -> ImportSummary:
    qrels = Qrels.read(options.qrels)
    snapshot = Snapshot.open(snapshot_path)
    try:
        mapper = EvidenceMapper(snapshot)
        formats, records, mapped, skipped = _read_all(files, mapper, options, qrels)
        checks = check_tasks(snapshot, mapped, options.k, options.retrieval, options.workers, options.progress,
                             mapper.texts)  # the texts the mapping has just read, not read again
    finally:
        snapshot.close()  # the retrieval check's search workers
    kept = [(record, check) for record, check in zip(records, checks)
            if not options.require_evidence or not record.answerable or check.evidence_present]
    assigned = _splits([record for record, _check in kept], options.seed)
    kept = [replace(record, solvability=check, split=split) for (record, check), split in zip(kept, assigned)]
    summary = solvability_summary([t.solvability for t in kept])
    splits = Counter(t.split for t in kept)

    def card(directory: Path) -> None:
        from stillweb.corpora.tasks.importers.card import render_import_card

        (directory / "card.md").write_text(
            render_import_card(name, snapshot.fingerprint, formats, kept, len(records), options, summary,
                               qrels.unused(), skipped),
            encoding="utf-8")

    path = write_task_set(snapshot.path, name, kept, card)
    return ImportSummary(path, len(kept), len(records), formats, {s: splits[s] for s in ("train", "dev", "test")},
                         dict((summary or {}).get("unmapped", {})), len(records) - len(kept), summary, skipped)


def _read_all(files: Sequence[str | Path], mapper: EvidenceMapper, options: ImportOptions,
              qrels: Qrels) -> tuple[dict[str, str], list[TaskRecord], list[MappedTask], dict[str, int]]:
    """Every row of ``files`` (its qrels judgements added) as a record and what its check needs;
    the format of each file; the questions skipped, by reason (``strict``: an error)."""
    records, mapped, formats, seen, skipped = [], [], {}, {}, Counter()
    bar = progress_bar(total=None, desc="importing", unit="question", enabled=options.progress)
    try:
        for path in (Path(item) for item in files):
            if not path.is_file():
                raise FileNotFoundError(f"no QA file {path}")
            file_split = _split_of_name(path.name)
            data_source = options.data_source or data_source_of(path)  # kept for the verl export (export.py)
            for where, format_name, row in read_rows(path, options.format, options.fields):
                formats.setdefault(str(path), format_name)
                if isinstance(row, SkippedQuestion):
                    if options.strict:
                        raise ImportFileError(f"{where}: {row.detail} (drop --strict to skip and count such questions)")
                    skipped[row.reason] += 1
                    continue
                row = qrels.with_judged(row)
                if data_source and not row.extra.get("data_source"):
                    row.extra = {**row.extra, "data_source": data_source}
                task_id = row.source_id or stable_hash(row.question + "\x1f" + "\x1e".join(row.answers))
                if task_id in seen:
                    raise ImportFileError(f"task id {task_id!r} repeated: {seen[task_id]} and {where}; ids must be "
                                          "unique across the imported files (import them as separate sets)")
                seen[task_id] = where
                record, task = _task(row, format_name, task_id, where, file_split, mapper, mapper.snapshot, options)
                records.append(record)
                mapped.append(task)
                bar.update(1)
    finally:
        bar.close()
    return formats, records, mapped, dict(sorted(skipped.items()))


def _task(row: SourceRow, format_name: str, task_id: str, where: str, file_split: str | None, mapper: EvidenceMapper,
          snapshot: Snapshot, options: ImportOptions) -> tuple[TaskRecord, MappedTask]:
    evidence, unmapped = [], []
    for ref in row.evidence:
        doc, reason = mapper.map(ref)
        if reason is not None:
            if options.strict:
                raise ImportFileError(f"{where}: evidence item {_describe(ref)} maps to no document: {reason} "
                                      "(drop --strict to count such items instead)")
            unmapped.append(reason)
        evidence.append(EvidenceItem(ref.subject or ref.title or ref.source_id, ref.relation or "evidence",
                                     ref.value, -1 if doc is None else doc,
                                     "" if doc is None else snapshot.title_of(doc)))
    docs = tuple(dict.fromkeys(item.doc_id for item in evidence if item.doc_id >= 0))
    answer_match = options.answer_match or row.answer_match or DEFAULT_IMPORT_MATCH
    split = _SPLIT_NAMES.get(str(row.split).lower()) if row.split else None
    record = TaskRecord(
        task_id=task_id, question=row.question, answer=row.answers[0] if row.answerable else "",
        aliases=tuple(row.answers[1:]) if row.answerable else (), evidence=tuple(evidence), evidence_docs=docs,
        split=split or file_split, answerable=row.answerable, hops=_hops(row),
        emptiness_proof=None if row.answerable else EmptinessProof(SOURCE_LABEL, (), ()),
        source=format_name, answer_match=check_answer_match(answer_match), extra=row.extra)
    golds = tuple(row.answers) if row.answerable else ()
    task = MappedTask(row.question, tuple(row.sub_questions), golds, len(row.evidence), docs, tuple(unmapped),
                      answer_in_evidence(mapper.texts, golds, docs))
    return record, task


def _hops(row: SourceRow) -> int | None:
    """Sub-questions (MuSiQue's decomposition), else distinct evidence pages, else unknown."""
    pages = {ref.title or ref.source_id or str(ref.doc_id) for ref in row.evidence}
    return len(row.sub_questions) or len(pages) or None


def _describe(ref) -> str:
    parts = [f"{key}={value!r}" for key, value in (("source_id", ref.source_id), ("title", ref.title),
                                                   ("text", ref.text[:80])) if value]
    return "(" + ", ".join(parts or [f"doc_id={ref.doc_id}"]) + ")"


def _split_of_name(name: str) -> str | None:
    """The split a file's name states (``hotpot_dev_distractor_v1.json`` -> dev), if exactly one."""
    words = {word for word in re.split(r"[^a-z]+", name.lower()) if word}
    named = {_SPLIT_NAMES[word] for word in words if word in _SPLIT_NAMES}
    return named.pop() if len(named) == 1 else None


def _splits(tasks: list[TaskRecord], seed: int) -> list[str | None]:
    """Each task's split: its own, else its answer group's seeded split (see the module docstring)."""
    splits = [task.split for task in tasks]
    loose = [index for index, split in enumerate(splits) if split is None]
    parent = list(range(len(loose)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for position, index in enumerate(loose):
        for gold in tasks[index].golds or (f"\x00unanswerable:{tasks[index].task_id}",):
            key = qa_normalize(gold) or gold
            if key in owner:
                parent[root(position)] = root(owner[key])
            else:
                owner[key] = position
    groups: dict[int, str] = {}
    for position, index in enumerate(loose):
        group = root(position)
        groups[group] = min(groups.get(group, tasks[index].task_id), tasks[index].task_id)
    for position, index in enumerate(loose):
        splits[index] = split_of(f"import:{seed}:{groups[root(position)]}")
    return splits
