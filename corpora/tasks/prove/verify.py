"""``stillweb tasks verify``: re-prove every task of a set with the independent solver.

For each task, :mod:`stillweb.corpora.tasks.prove.resolve` solves the stored
formalization over the snapshot's facts (not the generator's graph), and the
report says: how many distinct answers the formalization has, whether the stated
answer (or an alias) is among them, which branches off the target are redundant
(dropping one still leaves exactly the stated answer: the question is not
minimal), and whether the stated ``hops`` is the formalization's. A task is
**ambiguous** when it has any answer other than one (an unanswerable task: any
answer at all) or its stated answer is not the one; a formalization the solver
cannot read (an unknown relation, a cycle) is an **error** naming the task.
Sets written by older versions or edited by hand are verified the same way.
It also says whether the formalization is **keyed** (:mod:`stillweb.corpora.tasks.prove.keys`: the
answer pinned in the world, not only in the snapshot); a branch the key needs is never redundant.

>>> # report = verify_task_set("snapshots/syn", "default"); report.ambiguous
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from stillweb.corpora.tasks.formalization import is_constant
from stillweb.corpora.tasks.prove.keys import formalization_key_reason, inexact_labels
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.corpora.tasks.prove.resolve import FactTables, FormalizationError, name_key, reachable, solve
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.tasks.store.files import read_tasks, task_set_dir

__all__ = ["MAX_REDUNDANT_SHARE", "TaskCheck", "VerifyReport", "verify_task", "verify_task_set"]

MAX_REDUNDANT_SHARE = 0.02  # issue 21: at most 2% of a set may have a branch it does not need
_SHOWN = 5  # answers listed per task


@dataclass(frozen=True)
class TaskCheck:
    """What the independent solver found for one task."""

    task_id: str
    split: str
    answerable: bool
    solutions: int  # distinct answers of the formalization
    shown: tuple[str, ...]  # the first few of them, sorted
    stated_found: bool  # the stated answer (or an alias) is among them
    redundant_branches: tuple[str, ...]  # triples starting a branch the answer does not need
    stated_hops: int | None
    hops: int | None  # the formalization's hops (target to the farthest constant)
    error: str = ""
    keyed: bool = True  # the formalization pins its answer in the world (keys.py)

    @property
    def ambiguous(self) -> bool:
        """True when the task's key is wrong: not exactly the stated answer (or, unanswerable, some answer)."""
        if self.error:
            return False
        if not self.answerable:
            return self.solutions != 0
        return self.solutions != 1 or not self.stated_found

    @property
    def status(self) -> str:
        """``ok``, ``ambiguous``, ``redundant``, ``hops`` or ``error``."""
        if self.error:
            return "error"
        if self.ambiguous:
            return "ambiguous"
        if self.redundant_branches:
            return "redundant"
        if self.stated_hops is not None and self.hops is not None and self.stated_hops != self.hops:
            return "hops"
        return "ok"

    def line(self) -> str:
        """One line of the text report."""
        if self.error:
            return f"{self.task_id} [{self.split}] ERROR: {self.error}"
        shown = "; ".join(self.shown) + (" ..." if self.solutions > len(self.shown) else "")
        parts = [f"{self.task_id} [{self.split}] {self.status.upper()}: {self.solutions} answer(s) ({shown})",
                 f"stated answer {'among them' if self.stated_found else 'MISSING'}" if self.answerable else "unanswerable",
                 f"hops {self.stated_hops}/{self.hops}"]
        if self.redundant_branches:
            parts.append("redundant: " + " ; ".join(self.redundant_branches))
        if not self.keyed:
            parts.append("no key")
        return ", ".join(parts)


@dataclass(frozen=True)
class VerifyReport:
    """The checks of a whole set, in split then file order, and their totals."""

    checks: tuple[TaskCheck, ...]

    def count(self, status: str) -> int:
        """How many tasks have ``status`` (see :attr:`TaskCheck.status`)."""
        return sum(1 for check in self.checks if check.status == status)

    @property
    def ambiguous(self) -> int:
        """Tasks whose key is wrong."""
        return sum(1 for check in self.checks if check.ambiguous)

    @property
    def errors(self) -> int:
        """Tasks whose formalization cannot be read."""
        return sum(1 for check in self.checks if check.error)

    @property
    def redundant(self) -> int:
        """Tasks with at least one branch they do not need."""
        return sum(1 for check in self.checks if check.redundant_branches and not check.ambiguous)

    @property
    def sound(self) -> bool:
        """No ambiguous or unreadable task: every key can be bet on."""
        return not self.ambiguous and not self.errors

    @property
    def minimal(self) -> bool:
        """At most 2% of the tasks have a branch they do not need."""
        return self.redundant <= MAX_REDUNDANT_SHARE * len(self.checks)

    def summary(self) -> dict[str, int]:
        """Totals by kind."""
        return {"tasks": len(self.checks), "ambiguous": self.ambiguous, "errors": self.errors,
                "redundant": self.redundant, "hops_mismatch": self.count("hops"),
                "unkeyed": sum(1 for check in self.checks if not check.keyed and not check.error)}

    def to_dict(self) -> dict:
        """The report as plain JSON values."""
        return {"summary": self.summary(), "sound": self.sound, "minimal": self.minimal,
                "tasks": [{**asdict(check), "status": check.status} for check in self.checks]}


def verify_task(task: TaskRecord, tables: FactTables) -> TaskCheck:
    """Solve one task's formalization and compare with its stated answer."""
    base = {"task_id": task.task_id, "split": task.split or "", "answerable": task.answerable, "stated_hops": task.hops}
    if not task.formalization:
        return TaskCheck(**base, solutions=0, shown=(), stated_found=False, redundant_branches=(), hops=None,
                         error="no formalization")
    try:
        solved = solve(task.formalization, tables)
    except FormalizationError as error:
        return TaskCheck(**base, solutions=0, shown=(), stated_found=False, redundant_branches=(), hops=None,
                         error=f"task {task.task_id}: {error}")
    answers = _distinct(solved.answers, tables)
    golds = {name_key(gold) for gold in task.golds}
    found = any(golds & (tables.forms.get(value, set()) | {name_key(tables.labels[value])}) for value in solved.answers)
    inexact = inexact_labels(task.obfuscations)
    keyed = formalization_key_reason(task.formalization, inexact) is None
    redundant = ()
    if task.answerable and len(answers) == 1 and found:
        redundant = tuple(f"[{', '.join(triple)}]" for triple, left in solved.branches
                          if len(_distinct(left, tables)) == 1
                          and not (keyed and formalization_key_reason(_without(task.formalization, triple), inexact)))
    shown = tuple(sorted(answers.values())[:_SHOWN])
    return TaskCheck(**base, solutions=len(answers), shown=shown, stated_found=found, redundant_branches=redundant,
                     hops=solved.hops, keyed=keyed)


def _without(triples, branch) -> list:
    """The triples still joined to the target ``?`` (through variables) once the triple ``branch`` is removed."""
    rest = [t for t in triples if tuple(t) != tuple(branch)]
    joined = reachable([t for t in rest if not is_constant(t[0]) and not is_constant(t[2])])
    return [t for t in rest if all(term in joined for term in (t[0], t[2]) if not is_constant(term))]


def _distinct(values: frozenset[int], tables: FactTables) -> dict[str, str]:
    """Answers told apart by name (a page and a plain mention of it are one answer)."""
    out: dict[str, str] = {}
    for value in sorted(values):
        out.setdefault(name_key(tables.labels[value]), tables.labels[value])
    return out


def verify_task_set(snapshot: str | Path, name: str, tables: FactTables | None = None) -> VerifyReport:
    """Verify every task of ``snapshot``'s set ``name`` (all splits)."""
    if not task_set_dir(snapshot, name).is_dir():
        raise FileNotFoundError(f"no task set {name!r} in {snapshot} (generate it with `stillweb tasks generate`)")
    tables = tables or FactTables(snapshot)
    checks = [verify_task(task, tables) for split in SPLITS for task in read_tasks(snapshot, name, split)]
    return VerifyReport(tuple(checks))
