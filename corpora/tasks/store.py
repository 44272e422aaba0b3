"""Task files: ``<snapshot>/tasks/<name>/{train,dev,test}.parquet`` and ``card.md``.

Each split file is a table of :data:`~stillweb.corpora.tasks.record.TASKS_SCHEMA`
(list fields as Arrow lists, evidence and obfuscations as lists of structs);
:func:`read_tasks` returns :class:`~stillweb.corpora.tasks.record.TaskRecord`
objects, and also reads task sets written before the typed columns (list
fields as JSON strings). A task set is written into a temporary directory
and renamed into place, so an interrupted run never leaves a partial set.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from stillweb.corpora.tasks.record import TASKS_SCHEMA, TaskRecord
from stillweb.corpora.tasks.splits import SPLITS

__all__ = ["task_set_dir", "read_tasks", "write_task_set", "tasks_table"]


def task_set_dir(snapshot_path: str | Path, name: str) -> Path:
    """Where the task set ``name`` of a snapshot lives."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"bad task set name {name!r}: use a plain, non-hidden directory name")
    return Path(snapshot_path) / "tasks" / name


def tasks_table(tasks: Sequence[TaskRecord]) -> pa.Table:
    """The records as one table of :data:`TASKS_SCHEMA`."""
    return pa.Table.from_pylist([task.to_row() for task in tasks], schema=TASKS_SCHEMA)


def read_tasks(snapshot_path: str | Path, name: str, split: str = "train") -> list[TaskRecord]:
    """The tasks of one split of a task set, in file order."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
    path = task_set_dir(snapshot_path, name) / f"{split}.parquet"
    if not path.exists():
        raise FileNotFoundError(f"no task file {path} (generate it with `stillweb tasks generate`)")
    return [TaskRecord.from_dict(row) for row in pq.read_table(path).to_pylist()]


def write_task_set(
    snapshot_path: str | Path, name: str, tasks: Sequence[TaskRecord], card: Callable[[Path], None]
) -> Path:
    """Write the split files and the card (``card(dir)`` writes it) atomically; returns the set dir."""
    final = task_set_dir(snapshot_path, name)
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=final.parent))
    try:
        for split in SPLITS:
            table = tasks_table([t for t in tasks if t.split == split])
            pq.write_table(table, staging / f"{split}.parquet", compression="zstd")
        card(staging)
        if final.exists():
            retired = Path(tempfile.mkdtemp(prefix=f".{name}.old.", dir=final.parent))
            final.rename(retired / name)
            staging.rename(final)
            shutil.rmtree(retired)
        else:
            staging.rename(final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final
