"""Task files: ``<snapshot>/tasks/<name>/{train,dev,test}.parquet`` and ``card.md``.

Each split file is a table of :data:`~stillweb.corpora.tasks.store.record.TASKS_SCHEMA`
(list fields as Arrow lists, evidence and obfuscations as lists of structs);
:func:`read_tasks` returns :class:`~stillweb.corpora.tasks.store.record.TaskRecord`
objects, and also reads task sets written before the typed columns (list
fields as JSON strings). A task set is written into a temporary directory
and renamed into place (:mod:`stillweb.corpora.snapshot.publish`), so an interrupted run or a full disk never
leaves a partial set.
:func:`check_task_set_name` is the one rule for task-set names (the library,
the environments and the server all apply it), and :func:`read_task_file` the
one reader of a split file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from stillweb.corpora.errors import UsageError
from stillweb.corpora.snapshot.publish import publish_directory
from stillweb.corpora.tasks.store.record import TASKS_SCHEMA, TaskRecord
from stillweb.corpora.tasks.store.splits import SPLITS

__all__ = ["check_task_set_name", "read_task_file", "read_tasks", "task_file", "task_set_dir", "tasks_table",
           "write_task_set"]

_SET_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")


def check_task_set_name(name: object) -> str:
    """``name`` if it is a task-set name (1-100 of letters, digits, ``_``, ``.``, ``-``, not
    starting with ``.`` or ``-``): never a path. ``ValueError`` naming it otherwise.

    >>> check_task_set_name("hard-v2")
    'hard-v2'
    """
    if not isinstance(name, str) or not _SET_NAME.fullmatch(name):
        raise UsageError(f"bad task set name {name!r}: use 1-100 letters, digits, '_', '.' or '-', "
                         "not starting with '.' or '-' (a plain directory name, not a path)")
    return name


def task_set_dir(snapshot_path: str | Path, name: str) -> Path:
    """Where the task set ``name`` of a snapshot lives (the name checked by :func:`check_task_set_name`)."""
    return Path(snapshot_path) / "tasks" / check_task_set_name(name)


def task_file(snapshot_path: str | Path, name: str, split: str) -> Path:
    """The file of one split of a task set (``ValueError`` for a bad name or an unknown split)."""
    if split not in SPLITS:
        raise UsageError(f"unknown split {split!r}; expected one of {SPLITS}")
    return task_set_dir(snapshot_path, name) / f"{split}.parquet"


def tasks_table(tasks: Sequence[TaskRecord]) -> pa.Table:
    """The records as one table of :data:`TASKS_SCHEMA`."""
    return pa.Table.from_pylist([task.to_row() for task in tasks], schema=TASKS_SCHEMA)


def read_tasks(snapshot_path: str | Path, name: str, split: str = "train") -> list[TaskRecord]:
    """The tasks of one split of a task set, in file order."""
    path = task_file(snapshot_path, name, split)
    if not path.exists():
        raise FileNotFoundError(f"no task file {path} (generate it with `stillweb tasks generate`)")
    return read_task_file(path)


def read_task_file(path: str | Path) -> list[TaskRecord]:
    """The records of one parquet split file (typed columns, or the JSON-string lists of older sets)."""
    return [TaskRecord.from_dict(row) for row in pq.read_table(path).to_pylist()]


def write_task_set(
    snapshot_path: str | Path, name: str, tasks: Sequence[TaskRecord], card: Callable[[Path], None]
) -> Path:
    """Write the split files and the card (``card(dir)`` writes it) atomically; returns the set dir."""
    def fill(staging: Path) -> None:
        for split in SPLITS:
            table = tasks_table([t for t in tasks if t.split == split])
            pq.write_table(table, staging / f"{split}.parquet", compression="zstd")
        card(staging)

    return publish_directory(task_set_dir(snapshot_path, name), fill, "the task set")
