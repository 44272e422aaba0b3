"""The checks of an app task (tau-bench style: outcome by state, not by trajectory).

:func:`reference_sums` replays the task's reference program on a fresh copy of the base
(error-free) and keeps the per-table fingerprints of the final state (cached per
process). :func:`score_app_episode` compares the episode's state with it:

- ``state_match``: every table the reference changed has the reference's content;
- ``no_collateral``: every other table is unchanged (collateral damage fails the task);
- ``facts``: each user turn's answer states the facts that turn asked for;
- ``abstention``: the agent abstained exactly when the request cannot be done.

``outcome`` is 1 when all pass (and the episode ended with an answer), the default reward.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from stillweb.corpora.apps.generate import AppWorldBase
from stillweb.corpora.tasks.answer_match import normalize_answer
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.sandboxes.apps import replay_program

__all__ = ["AppChecks", "reference_sums", "score_app_episode", "facts_stated"]

_REFERENCE_CACHE: dict[tuple[int, str], dict[str, int]] = {}
_CACHE_LIMIT = 4096


@dataclass(frozen=True)
class AppChecks:
    """The checks of one episode (1.0 pass, 0.0 fail) and the binary outcome."""

    outcome: float
    state_match: float
    no_collateral: float
    facts: float
    abstention: float
    answered_turns: int
    changed_tables: tuple[str, ...]

    @property
    def total(self) -> float:
        """The reward: the binary outcome."""
        return self.outcome

    def as_dict(self) -> dict[str, Any]:
        """The checks as ``info["reward_parts"]``."""
        parts = asdict(self)
        parts["changed_tables"] = list(self.changed_tables)
        return parts


def reference_sums(base: AppWorldBase, task: TaskRecord) -> dict[str, int]:
    """Per-table fingerprints after the reference program of ``task`` (every turn) on a fresh copy."""
    key = (id(base), task.task_id)
    if key not in _REFERENCE_CACHE:
        if len(_REFERENCE_CACHE) >= _CACHE_LIMIT:
            _REFERENCE_CACHE.clear()
        calls = [call for turn in task.extra["program"] for call in turn]
        session, _ = replay_program(base, int(task.extra["app_user"]), calls)
        _REFERENCE_CACHE[key] = dict(session.sums)
        session.close()
    return _REFERENCE_CACHE[key]


def facts_stated(answer: str, facts: Sequence[str]) -> bool:
    """Every fact appears in the answer (normalized, as whole words); ``"a|b"`` is stated by either.

    >>> facts_stated("It is 555-0101, I think.", ["555-0101"]), facts_stated("No.", ["permission|forbidden"])
    (True, False)
    """
    said = f" {normalize_answer(answer)} "
    return all(any(f" {normalize_answer(option)} " in said for option in fact.split("|")) for fact in facts)


def score_app_episode(base: AppWorldBase, task: TaskRecord, sums: Mapping[str, int], answers: Sequence[str],
                      abstained: bool, finished: bool) -> AppChecks:
    """The checks of an episode whose state has fingerprints ``sums`` and whose answers (one per
    answered user turn) are ``answers``; ``finished``: the last turn was answered."""
    reference = reference_sums(base, task)
    touched = {name for name, total in reference.items() if total != base.table_sums[name]}
    state_match = all(sums[name] == reference[name] for name in touched)
    no_collateral = all(sums[name] == reference[name] for name in reference if name not in touched)
    expected = task.extra["facts"]
    facts = len(answers) == len(expected) and all(facts_stated(answer, turn) for answer, turn in zip(answers, expected))
    impossible = not task.answerable
    abstention = abstained == impossible
    passed = finished and state_match and no_collateral and abstention and facts
    changed = tuple(sorted(name for name, total in sums.items() if total != base.table_sums[name]))
    return AppChecks(float(passed), float(state_match), float(no_collateral), float(facts),
                     float(abstention), len(answers), changed)

