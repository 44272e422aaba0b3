"""``stillweb/Lookup-v0``: the single-turn sanity task.

The observation holds a passage and a question the passage answers; the
action is the answer (optionally inside ``<answer>...</answer>``); the reward is
1 for an exact match after normalization, else 0, and the episode terminates.
A training pipeline that cannot learn this has a bug.

Tasks come from a list of dicts (``question``, ``answer``, ``passage``, optional
``title``/``aliases``/``task_id``) or from a snapshot's facts: for each fact, the
sentence of its evidence document that states the value.

>>> env = LookupEnv(tasks=[{"question": "Who wrote it?", "answer": "Ann Lee", "passage": "It was written by Ann Lee."}])
>>> observation, info = env.reset(seed=0)
>>> env.step("<answer>ann lee</answer>")[1:3]
(1.0, True)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from stillweb.corpora.errors import UsageError
from stillweb.corpora.snapshot import Snapshot
from stillweb.corpora.version import PACKAGE_VERSION
from stillweb.corpora.tasks.answer_match import answers_match, best_f1
from stillweb.corpora.shared import shared_snapshot
from stillweb.envs.core.degenerate import ACTION_TOO_LONG
from stillweb.envs.core.limits import EpisodeLimits
from stillweb.envs.core.spaces import to_charset
from stillweb.envs.core.steps import check_step, over_long_observation
from stillweb.corpora.tasks.record import TaskRecord
from stillweb.envs.core.task_loader import TaskPicker, TaskSet

__all__ = ["LookupEnv", "lookup_tasks_from_facts", "tagged_answer"]

_OPEN_TAG = re.compile("<answer>", re.IGNORECASE)  # literal tags: searched once each, never backtracking
_CLOSE_TAG = re.compile("</answer>", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?\n]*[.!?]?")
MAX_PASSAGE_CHARS = 600


class LookupEnv(gym.Env[str, str]):
    """Read a passage, answer the question about it; reward = normalized exact match.

    Args:
        snapshot: a snapshot path; needed when ``tasks`` is None (tasks from facts).
        tasks: list of task dicts with a ``passage``; ``None`` derives them from facts.
        max_tasks: how many fact-derived tasks to build (the first facts in table order).
        max_action_chars: the action cap (:class:`~stillweb.envs.core.limits.EpisodeLimits`): a longer
            action is not read; the episode ends truncated (``action_too_long``) with reward 0.
    """

    metadata = {"render_modes": []}

    def __init__(self, snapshot: str | Path | None = None, tasks: Sequence[Mapping[str, Any]] | None = None,
                 max_tasks: int = 1000, max_action_chars: int | None = None) -> None:
        if snapshot is None and tasks is None:
            raise UsageError("LookupEnv needs tasks=[...] (dicts with question, answer, passage) or a snapshot path")
        self.snapshot = shared_snapshot(snapshot) if snapshot is not None else None
        records = list(tasks) if tasks is not None else lookup_tasks_from_facts(self.snapshot, max_tasks)
        for record in records:
            if not record.get("passage"):
                raise UsageError(f"Lookup task record lacks a 'passage': {dict(record)!r:.200}")
        self.tasks = TaskSet((TaskRecord.from_dict(record) for record in records), source="lookup tasks")
        self.limits = EpisodeLimits(max_turns=1, **({} if max_action_chars is None else {"max_action_chars": max_action_chars}))
        self.observation_space = self.limits.observation_space()
        self.action_space = self.limits.action_space()
        self._picker = TaskPicker(self.tasks, "lookup")
        self._task: TaskRecord | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Pick a task (``options["task_id"]`` or from the seed) and show passage and question."""
        super().reset(seed=seed)
        self._task = self._picker.pick(seed, options)
        record = self._task.extra
        title = f" ({record['title']})" if record.get("title") else ""
        observation = (
            "Read the passage and answer the question. Reply with the answer only, "
            "or as <answer>...</answer>.\n\n"
            f"Passage{title}:\n{record['passage']}\n\nQuestion: {self._task.question}"
        )
        return to_charset(observation), self._info()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Score the answer; the episode terminates (or, for an action over the cap, is truncated).
        ``RuntimeError`` outside an episode."""
        check_step(self._task is None, action)
        info = self._info()
        if self.limits.over_long(action):
            self._task = None
            info.update(answer=None, outcome=0.0, f1=0.0, truncation_reason=ACTION_TOO_LONG)
            return over_long_observation(action, self.limits.max_action_chars), 0.0, False, True, info
        answer = to_charset(tagged_answer(action)).strip()
        cap = self.limits.max_answer_chars
        if len(answer) > cap:  # refused unscored: normalizing it would cost time for nothing
            correct = False
            info["answer_error"] = (f"the answer is {len(answer)} characters long; at most {cap}: "
                                    "give a short answer (a name, a number, a date)")
        else:
            correct = answers_match(answer, self._task.golds)
        info.update(answer=answer[:1000], outcome=float(correct), f1=best_f1(answer[:1000], self._task.golds))
        self._task = None
        return "", float(correct), True, False, info

    def _info(self) -> dict[str, Any]:
        assert self._task is not None
        return {
            "task_id": self._task.task_id,
            "snapshot_fingerprint": self.snapshot.fingerprint if self.snapshot is not None else None,
            "package_version": PACKAGE_VERSION,
        }


def tagged_answer(action: str) -> str:
    """The text of the first ``<answer>...</answer>`` (tags in any case), else the whole action.

    Linear time: one search for the opening tag, one for the closing tag after it.

    >>> tagged_answer("I think <ANSWER> Ann Lee </answer> and <answer>x</answer>"), tagged_answer("Ann <answer>")
    (' Ann Lee ', 'Ann <answer>')
    """
    opening = _OPEN_TAG.search(action)
    closing = _CLOSE_TAG.search(action, opening.end()) if opening else None
    return action[opening.end() : closing.start()] if closing else action


def lookup_tasks_from_facts(snapshot: Snapshot, max_tasks: int = 1000) -> list[dict[str, Any]]:
    """Lookup tasks from the first facts whose evidence document states the value in a sentence.

    Each task asks "What is the <relation> of <subject>?" over that sentence.
    """
    table = snapshot.facts_table
    columns = {name: table.column(name).to_pylist() for name in ("subject", "relation", "value", "evidence")}
    tasks: list[dict[str, Any]] = []
    texts: dict[int, str] = {}
    for subject, relation, value, evidence in zip(columns["subject"], columns["relation"], columns["value"], columns["evidence"]):
        if len(tasks) >= max_tasks:
            break
        if evidence is None or evidence < 0 or not value:
            continue
        if evidence not in texts:
            texts[evidence] = snapshot.get(evidence).text
        sentence = _sentence_with(texts[evidence], value)
        if sentence is None:
            continue
        subject_title = snapshot.title_of(subject)
        question = f"What is the {relation.replace('_', ' ')} of {subject_title}?"
        tasks.append({"question": question, "answer": value, "passage": sentence, "title": snapshot.title_of(evidence)})
    if not tasks:
        raise UsageError(f"no fact of snapshot {snapshot.path} is stated in a sentence of its evidence document")
    return _unique_by_question(tasks)


def _sentence_with(text: str, value: str) -> str | None:
    position = text.find(value)
    if position < 0:
        return None
    start = max(text.rfind(". ", 0, position) + 2, text.rfind("\n", 0, position) + 1, 0)
    ends = [end for end in (text.find(". ", position + len(value)), text.find("\n", position + len(value))) if end >= 0]
    end = min(ends) + 1 if ends else len(text)
    return text[start:end].strip()[:MAX_PASSAGE_CHARS] or None


def _unique_by_question(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep the first task for each (question, answer): duplicates would share a task id."""
    seen: set[tuple[str, str]] = set()
    unique = []
    for task in tasks:
        key = (task["question"], task["answer"])
        if key not in seen:
            seen.add(key)
            unique.append(task)
    return unique
