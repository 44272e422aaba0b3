"""Scripted policies for ``Apps-v0``: the reference agent (replays the task's reference
program, retrying transient errors as a careful agent would) and the baselines the
soundness tests measure (doing nothing, answering at once, read-only, random calls).

>>> agent = AppReferenceAgent({"question": "q", "answer": "done", "program": [[]], "turns": ["q"], "facts": [[]]})
>>> agent.act("prompt")
'<answer>Done.</answer>'
"""

from __future__ import annotations

import re
from collections.abc import Generator, Mapping
from typing import Any

from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.sandboxes.apps import ENDPOINTS, WRITE_ENDPOINTS, app_registry
from stillweb.sandboxes.formats import get_format

__all__ = ["AppReferenceAgent", "ReadOnlyAgent", "RandomCallAgent", "is_app_task", "MAX_RETRIES"]

_TRANSIENT_ERROR = re.compile(r"\b(429|503|504) (?:Too Many Requests|Service Unavailable|Gateway Timeout)")
_RETRY_AFTER = re.compile(r"retry after (\d+) minute")
MAX_RETRIES = 6

Script = Generator[str, str, None]


def is_app_task(task: TaskRecord | Mapping[str, Any]) -> bool:
    """Whether a task (record or dict) is an app task (it has a reference ``program``)."""
    extra = task.extra if isinstance(task, TaskRecord) else task
    return "program" in extra


class AppReferenceAgent:
    """Plays the reference program turn by turn: each call until it succeeds (``wait`` for a 429's
    retry-after, repeat after a 503 or timeout), then the answer stating the turn's facts, or an
    abstention for a request that cannot be done."""

    def __init__(self, task: TaskRecord | Mapping[str, Any], tool_format: str = "tongyi") -> None:
        self.task = TaskRecord.from_dict(task)
        self.tool_format = tool_format
        self._script = self._solve()
        self._started = False

    def act(self, observation: str) -> str:
        """The next action, given the latest observation."""
        if not self._started:
            self._started = True
            return next(self._script)
        try:
            return self._script.send(observation)
        except StopIteration:
            return get_format(self.tool_format).write_answer("Done.", []) if self.tool_format != "openai" else self._answer("Done.")

    def _solve(self) -> Script:
        extra = self.task.extra
        for turn, (calls, facts) in enumerate(zip(extra["program"], extra["facts"])):
            for call in calls:
                for _ in range(MAX_RETRIES):
                    observation = yield get_format(self.tool_format).write_call(call["name"], call["arguments"])
                    transient = _TRANSIENT_ERROR.search(observation[:400])
                    if transient is None:
                        break
                    waited = _RETRY_AFTER.search(observation[:400])
                    if transient.group(1) == "429" and waited:
                        yield get_format(self.tool_format).write_call("wait", {"minutes": int(waited.group(1))})
            if not self.task.answerable:
                reasons = ", ".join(fact.split("|")[0] for fact in facts)
                yield get_format(self.tool_format).write_abstain(f"This cannot be done ({reasons}).")
                return
            yield self._answer("; ".join(facts) if facts else "Done.")

    def _answer(self, text: str) -> str:
        return get_format(self.tool_format).write_answer(text, []) if self.tool_format == "tongyi" else \
            get_format("openai").write_call("answer", {"text": text})


class ReadOnlyAgent:
    """Calls every read endpoint that needs no argument once (the list endpoints), then answers
    "Done.": it can solve a lookup by luck of wording, never a task that needs a write."""

    def __init__(self, task: Any = None, tool_format: str = "tongyi") -> None:
        self.tool_format = tool_format
        self._pending = [name for name in ENDPOINTS if name.startswith("list_")][:12]

    def act(self, observation: str) -> str:
        """The next list call, then the answer."""
        if self._pending:
            return get_format(self.tool_format).write_call(self._pending.pop(0), {})
        return get_format(self.tool_format).write_answer("Done.", []) if self.tool_format == "tongyi" else \
            get_format("openai").write_call("answer", {"text": "Done."})


class RandomCallAgent:
    """Random endpoint calls with example or random arguments, keyed by ``seed``, then (sometimes)
    an answer or abstention: the random baseline, and a fuzzer of the API."""

    def __init__(self, seed: int, tool_format: str = "tongyi") -> None:
        self.seed = seed
        self.turn = 0
        self.tool_format = tool_format

    def act(self, observation: str) -> str:
        """A keyed random action."""
        rng = KeyedRng(self.seed, "random_app_call", self.turn)
        self.turn += 1
        roll = rng.random()
        if roll < 0.05:
            return get_format(self.tool_format).write_abstain("no")
        if roll < 0.12:
            return get_format(self.tool_format).write_answer(rng.choice(["Done.", "42", "yes", ""]), []) if self.tool_format == "tongyi" \
                else get_format("openai").write_call("answer", {"text": "Done."})
        name = rng.choice(ENDPOINTS + ("no_such_endpoint",))
        arguments = dict(app_registry().tool(name).example) if name in ENDPOINTS else {}
        for key in list(arguments):
            if rng.chance(0.5):
                arguments[key] = rng.choice([rng.integer(-3, 3000), "x" * rng.integer(0, 300), None, True, [], {}])
        if name in WRITE_ENDPOINTS and rng.chance(0.3):
            arguments["id"] = rng.integer(1, 5000)
        return get_format(self.tool_format).write_call(name, arguments)
