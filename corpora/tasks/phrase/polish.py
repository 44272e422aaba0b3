"""``stillweb tasks polish``: rewrite each question with a model, keeping only rewrites that change nothing.

The generator's questions are proven, but they read like templates. A model behind any
OpenAI-compatible endpoint may rewrite them as a person would write them; a rewrite is kept
only when it is still the same question:

- every constant's surface form that the original question states (the ``C@...`` values of
  the WebShaper formalization: names, dates, periods, ranges) is still in it, letter for letter
  (case aside);
- the answer and its aliases are not in it (a rewrite must not give the answer away);
- the independent re-proof (:func:`~stillweb.corpora.tasks.prove.verify.verify_task`: the solver over
  the snapshot's facts) gives the same result for the rewritten task as for the original;
- it is a question of at most :data:`MAX_QUESTION_CHARS` characters, and differs from the original.

Rejected rewrites keep the original question and are counted by reason (:data:`REJECTIONS`);
the set is written under a new name with the model id, the sampling settings and the counts
in its card. The source set is never changed.

>>> task = TaskRecord.from_dict({"question": "Which city founded in 1901 is home to Ann Lee?", "answer": "Velland",
...     "formalization": [["?", "founded", "C@1901"], ["C@Ann Lee", "residence", "?"]]})
>>> rewrite_problem(task, "Ann Lee lives in a city founded in 1901. Which city is it?")
>>> rewrite_problem(task, "Which city is home to Ann Lee?")
'constant_missing'
>>> rewrite_problem(task, "Is it Velland, home of Ann Lee, founded in 1901?")
'answer_leaked'
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.corpora.tasks.prove.resolve import FactTables
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.tasks.store.files import check_task_set_name, read_tasks, task_set_dir, write_task_set
from stillweb.corpora.tasks.prove.verify import verify_task

__all__ = ["PolishReport", "REJECTIONS", "MAX_QUESTION_CHARS", "polish_prompt", "rewrite_problem", "polish_task_set"]

MAX_QUESTION_CHARS = 2_000
# Why a rewrite was not kept, in the order they are checked.
REJECTIONS = ("no_reply", "too_long", "unchanged", "constant_missing", "answer_leaked", "reproof_changed")

_INSTRUCTIONS = (
    "Rewrite the question below so that it reads naturally, the way a person would ask it. Keep its meaning "
    "exactly: keep every clue, and keep each of these names, dates, numbers and ranges letter for letter: {constants}. "
    "Do not add facts, do not drop any clue, and never state the answer. Reply with the rewritten question only."
)


@dataclass(frozen=True)
class PolishReport:
    """What a polish run did: tasks seen and kept, rejections by reason, where the new set is."""

    path: Path
    tasks: int
    kept: int
    rejected: Mapping[str, int]
    model: str
    sampling: Mapping[str, Any]


def constant_forms(task: TaskRecord) -> list[str]:
    """The surface forms of the formalization's constants that the question states (case aside), sorted."""
    question = task.question.casefold()
    forms = {term[2:] for triple in task.formalization for term in triple if term.startswith("C@")}
    return sorted(form for form in forms if form and form.casefold() in question)


def polish_prompt(task: TaskRecord) -> list[dict[str, str]]:
    """The chat messages asking for a rewrite of ``task``'s question."""
    constants = "; ".join(f'"{form}"' for form in constant_forms(task)) or "(none)"
    return [{"role": "system", "content": _INSTRUCTIONS.format(constants=constants)},
            {"role": "user", "content": task.question}]


def rewrite_problem(task: TaskRecord, rewrite: str | None, tables: FactTables | None = None) -> str | None:
    """Why ``rewrite`` cannot replace ``task``'s question (one of :data:`REJECTIONS`), or None to keep it.

    ``tables``: the snapshot's facts for the re-proof (None skips it: only the text checks run).
    """
    text = (rewrite or "").strip()
    if not text:
        return "no_reply"
    if len(text) > MAX_QUESTION_CHARS:
        return "too_long"
    if text == task.question.strip():
        return "unchanged"
    folded = text.casefold()
    if any(form.casefold() not in folded for form in constant_forms(task)):
        return "constant_missing"
    if any(gold.strip() and gold.casefold() in folded for gold in task.golds):
        return "answer_leaked"
    if tables is not None and verify_task(replace(task, question=text), tables) != verify_task(task, tables):
        return "reproof_changed"
    return None


def polish_task_set(snapshot: str | Path, name: str, out_name: str, rewrite: Callable[[list[dict[str, str]]], str | None],
                    model: str, sampling: Mapping[str, Any], progress: bool = True) -> PolishReport:
    """Rewrite every question of ``snapshot``'s set ``name`` with ``rewrite(messages) -> text`` and write the
    result as the set ``out_name`` (its card: the source card, then the model, sampling and rejections).

    ``rewrite`` returns None (or raises :class:`~stillweb.corpora.errors.UpstreamError`) when the model gave
    no text: the task keeps its question, counted ``no_reply``.
    """
    from stillweb.corpora.errors import UpstreamError, UsageError

    check_task_set_name(out_name)
    if out_name == name:
        raise UsageError(f"--out must name a new task set, got the source set's own name {name!r}: polish never "
                         "rewrites a set in place")
    source = task_set_dir(snapshot, name)
    if not source.is_dir():
        raise UsageError(f"no task set {name!r} in {snapshot} (generate it with `stillweb tasks generate`)")
    tables = FactTables(snapshot)
    tasks = [task for split in SPLITS for task in read_tasks(snapshot, name, split)]
    polished, rejected = [], Counter()
    for task in tqdm(tasks, desc=f"polish {name}", unit="task", disable=not progress):
        try:
            text = rewrite(polish_prompt(task))
        except UpstreamError:
            text = None
        problem = rewrite_problem(task, text, tables)
        if problem is None:
            polished.append(replace(task, question=text.strip()))
        else:
            rejected[problem] += 1
            polished.append(task)
    counts = {reason: rejected[reason] for reason in REJECTIONS}
    kept = len(tasks) - sum(counts.values())

    def card(directory: Path) -> None:
        text = (source / "card.md").read_text(encoding="utf-8") if (source / "card.md").exists() else f"# {name}\n"
        settings = ", ".join(f"{key} {value}" for key, value in sorted(sampling.items()))
        reasons = ", ".join(f"{reason} {count}" for reason, count in counts.items())
        text += (f"\n## Polished questions\n\nSource set: `{name}`. Rewritten by `{model}` ({settings}). "
                 f"Kept {kept} of {len(tasks)} rewrites; rejected: {reasons}. A kept rewrite states every constant "
                 "of the original, not the answer, and re-proves the same; the source set keeps the original questions "
                 "(same task ids).\n")
        (directory / "card.md").write_text(text, encoding="utf-8")
        for extra_file in sorted(source.iterdir()):  # profiles and other files stay with the source set
            if extra_file.is_file() and extra_file.suffix not in (".parquet", ".md"):
                shutil.copy2(extra_file, directory / extra_file.name)

    path = write_task_set(snapshot, out_name, polished, card)
    return PolishReport(path, len(tasks), kept, counts, model, dict(sampling))
