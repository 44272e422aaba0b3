"""``stillweb/Lookup-v0``: the single-turn sanity task, on the episode core.

The observation holds a passage and a question the passage answers; the
action is the answer (optionally inside ``<answer>...</answer>``); the reward is the
outcome of :func:`~stillweb.envs.scoring.rewards.score_outcome` (1 for a match after
normalization, under the task's answer-match rule), and the episode terminates.
A training pipeline that cannot learn this has a bug.

Tasks are taken the way every environment takes them (a task-set name in the snapshot, a
``.jsonl``/``.parquet`` file, or records; :func:`~stillweb.envs.core.task_loader.load_tasks`),
each with a ``passage`` (a record's ``passage``, else the sentence of one of its evidence documents
that states the answer), or, without ``tasks``, from the snapshot's facts: for each fact, the
sentence of its evidence document that states the value. Anything else is a ``UsageError`` saying
what Lookup-v0 takes.

>>> env = LookupEnv(tasks=[{"question": "Who wrote it?", "answer": "Ann Lee", "passage": "It was written by Ann Lee."}])
>>> observation, info = env.reset(seed=0)
>>> env.step("<answer>ann lee</answer>")[1:3]
(1.0, True)
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.corpora.snapshot.shared import shared_snapshot
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.envs.core.episode import EpisodeState, StepOutcome, TextEnv
from stillweb.envs.core.limits import EpisodeLimits
from stillweb.envs.core.spaces import to_charset
from stillweb.envs.core.task_loader import TaskPicker, TaskSet, TaskSource, load_tasks
from stillweb.envs.scoring.rewards import OutcomeScore, score_outcome
from stillweb.sandboxes.formats.base import ParsedAction, PromptWords, ToolCallFormat
from stillweb.sandboxes.tools.types import ToolResult

__all__ = ["LookupEnv", "lookup_tasks_from_facts", "tagged_answer"]

_OPEN_TAG = re.compile("<answer>", re.IGNORECASE)  # literal tags: searched once each, never backtracking
_CLOSE_TAG = re.compile("</answer>", re.IGNORECASE)
MAX_PASSAGE_CHARS = 600
TAKES = ("Lookup-v0 takes tasks with a passage: records (dicts with question, answer, passage), a .jsonl/.parquet "
         "file of them, a task-set name of the snapshot whose tasks' evidence documents state the answer, or "
         "no tasks (made from the snapshot's facts)")


class AnswerText(ToolCallFormat):
    """Lookup-v0's call format: the whole action is the answer (the text of its first ``<answer>`` tag, if any)."""

    name = "answer_text"

    def _parse(self, text: str) -> ParsedAction:
        return ParsedAction(answer=to_charset(tagged_answer(text)).strip())

    def how_to_call(self) -> str:
        """The expected form."""
        return "Reply with the answer only, or as <answer>...</answer>."

    def render_results(self, results: list[ToolResult]) -> str:
        """The text of the results (only a format error has one)."""
        return "\n".join(result.text for result in results)

    def system_prompt(self, schemas: list[dict], max_calls_per_turn: int | None = None,
                      words: PromptWords | None = None) -> str:
        """The environment's role line and how to answer (no tools)."""
        return f"{(words or LOOKUP_WORDS).role} {self.how_to_call()}"


LOOKUP_WORDS = PromptWords("Read the passage and answer the question.")


class LookupEnv(TextEnv):
    """Read a passage, answer the question about it; reward = the outcome of the answer.

    Args:
        snapshot: a snapshot path; needed for a task-set name and when ``tasks`` is None (tasks from facts).
        tasks: records, a ``.jsonl``/``.parquet`` file or a task-set name (see the module docstring).
        split: the split of a named task set.
        max_tasks: how many fact-derived tasks to build (the first facts in table order).
        max_action_chars: the action cap (:class:`~stillweb.envs.core.limits.EpisodeLimits`): a longer
            action is not read; the episode ends truncated (``action_too_long``) with reward 0.
    """

    def __init__(self, snapshot: str | Path | None = None, tasks: TaskSource | None = None, max_tasks: int = 1000,
                 max_action_chars: int | None = None, split: str = "train") -> None:
        if snapshot is None and (tasks is None or isinstance(tasks, str) and not tasks.endswith((".jsonl", ".parquet"))):
            raise UsageError(f"{TAKES}; a task-set name or no tasks needs snapshot=, got tasks={tasks!r}")
        self.snapshot = shared_snapshot(snapshot) if snapshot is not None else None
        if tasks is None:
            loaded = TaskSet((TaskRecord.from_dict(record) for record in lookup_tasks_from_facts(self.snapshot, max_tasks)),
                             source="lookup tasks")
        else:
            try:
                loaded = load_tasks(tasks, self.snapshot.path if self.snapshot is not None else None, split)
            except (TypeError, AttributeError) as error:
                raise UsageError(f"{TAKES}; got {type(tasks).__name__}: {error}") from None
        self.tasks = TaskSet((_with_passage(task, self.snapshot) for task in loaded), source=loaded.source)
        limits = EpisodeLimits(max_turns=1, max_format_errors=1,
                               **({} if max_action_chars is None else {"max_action_chars": max_action_chars}))
        self.setup_core(limits, AnswerText(**limits.format_options()), actions=None, mask_truncated=True)
        self._picker = TaskPicker(self.tasks, "lookup")

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Pick a task (``options["task_id"]`` or from the seed) and show passage and question."""
        super().reset(seed=seed, options=options)
        task = self._picker.pick(seed, options)
        title = f" ({task.extra['title']})" if task.extra.get("title") else ""
        observation = to_charset(f"{self.format.system_prompt([])}\n\n"
                                 f"Passage{title}:\n{task.extra['passage']}\n\nQuestion: {task.question}")
        self.start_episode(EpisodeState(task, [{"role": "user", "content": observation}], chars=len(observation)))
        return observation, self.base_info()

    def run_call(self, call: Any, episode: EpisodeState) -> ToolResult:
        """Lookup-v0 has no tools (its format never reads a call)."""
        raise AssertionError("Lookup-v0 runs no tool calls")

    def score(self, step: StepOutcome, episode: EpisodeState, ending: str) -> OutcomeScore:
        """The answer's outcome (0 for an episode that ended without one)."""
        return score_outcome(episode.task, step.answer, steps=episode.steps, counts=episode.counts)

    def base_info(self) -> dict[str, Any]:
        """The core's info and the snapshot's fingerprint."""
        info = super().base_info()
        return {"task_id": info.pop("task_id"),
                "snapshot_fingerprint": self.snapshot.fingerprint if self.snapshot is not None else None, **info}


def _with_passage(task: TaskRecord, snapshot: Snapshot | None) -> TaskRecord:
    """``task`` with ``extra["passage"]``: its own, else the sentence of an evidence document stating the answer."""
    if task.extra.get("passage"):
        return task
    docs = dict.fromkeys([*task.evidence_docs, *(item.doc_id for item in task.evidence if item.doc_id is not None)])
    for doc_id in docs if snapshot is not None else ():
        text = snapshot.get(doc_id).text if doc_id is not None and doc_id >= 0 else ""
        # the answer as the question says it, else an alias as the page writes it ("November 14, 1915" / 1915-11-14)
        sentence = next(filter(None, (_sentence_with(text, form) for form in (task.answer, *task.aliases))), None)
        if sentence:
            return replace(task, extra={**task.extra, "passage": sentence, "title": snapshot.title_of(doc_id)})
    raise UsageError(f"{TAKES}; task {task.task_id!r} has no passage and no evidence document stating "
                     f"{task.answer!r:.80}")


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
