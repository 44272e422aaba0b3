"""Scripted policies: a reference agent that solves tasks with the tools, and a
random-text agent for robustness tests (:func:`~stillweb.envs.agents.loop.run_episode` drives either).

:class:`ReferenceAgent` reads only its observations (it never touches the
snapshot): with the task's evidence, for each fact in solving order it
searches the fact's document title, opens the document, and finds the fact's
value in it (for a document it already read, only the find); then it
answers, citing the evidence documents. Without evidence it searches the
question, opens the top results and looks for the answer. On an unanswerable
task (``answerable`` false) it does the same searching, then abstains. It is the
quick-start demo, the benchmark baseline, and the solvability proof of
generated tasks.

>>> agent = ReferenceAgent({"question": "Who?", "answer": "Ann"})
>>> agent.act("prompt").startswith("<tool_call>")
True
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Mapping
from typing import Any

from stillweb.corpora.keyed import KeyedRng
from stillweb.envs.agents.loop import Agent, run_episode
from stillweb.corpora.tasks.answer_match import normalize_answer
from stillweb.sandboxes.formats import get_format
from stillweb.corpora.tasks.store.record import TaskRecord

__all__ = ["ReferenceAgent", "RandomTextAgent", "write_call", "write_answer", "write_abstain"]

_DOC_LINE = re.compile(r"\[doc (\d+)\] ([^\n]+)")
_FOUND = re.compile(r"line\(s\) of \[doc (\d+)\]")
OPEN_TOP_RESULTS = 3

Script = Generator[str, str, None]


def write_call(tool_format: str, name: str, arguments: dict[str, Any]) -> str:
    """Action text calling one tool in ``tool_format``: the format's own
    :meth:`~stillweb.sandboxes.formats.base.ToolCallFormat.write_call` (search_r1 can only search).

    >>> write_call("search_r1", "search", {"query": "Ada"})
    '<search>Ada</search>'
    """
    return get_format(tool_format).write_call(name, arguments)


def write_answer(tool_format: str, text: str, citations: list[int]) -> str:
    """Action text giving the final answer with citations (dropped in search_r1, which has none).

    >>> write_answer("tongyi", "Paris", [3, 5])
    '<answer>Paris</answer>\\n<citations>3; 5</citations>'
    """
    return get_format(tool_format).write_answer(text, citations)


def write_abstain(tool_format: str, reason: str) -> str:
    """Action text abstaining (the documents do not contain the answer), with the reason.

    >>> write_abstain("search_r1", "No document says.")
    '<abstain>No document says.</abstain>'
    """
    return get_format(tool_format).write_abstain(reason)


class ReferenceAgent:
    """A scripted solver that uses only the tools (see the module docstring).

    Args:
        task: the task record (``question``, ``answer``; ``evidence`` makes it targeted).
        tool_format: the env's ``tool_format``.
    """

    def __new__(cls, task: TaskRecord | Mapping[str, Any], tool_format: str = "tongyi") -> Any:
        """An app task (one with a reference ``program``) gets the ``Apps-v0`` reference agent, a BFCL
        task (one with BFCL's ``ground_truth``) the ``BFCL-v0`` one."""
        from stillweb.envs.apps.agents import AppReferenceAgent, is_app_task
        from stillweb.envs.bfcl.agents import BfclReferenceAgent, is_bfcl_task

        if cls is ReferenceAgent and is_app_task(task):
            return AppReferenceAgent(task, tool_format)
        if cls is ReferenceAgent and is_bfcl_task(task):
            return BfclReferenceAgent(task, tool_format)
        return super().__new__(cls)

    def __init__(self, task: TaskRecord | Mapping[str, Any], tool_format: str = "tongyi") -> None:
        self.task = TaskRecord.from_dict(task)
        self.tool_format = tool_format
        write_call(tool_format, "search", {"query": "check the format name"})
        self.observations: list[str] = []
        self._script = self._solve()
        self._started = False

    def act(self, observation: str) -> str:
        """The next action, given the latest observation (the prompt on the first call)."""
        self.observations.append(observation)
        if not self._started:
            self._started = True
            return next(self._script)
        try:
            return self._script.send(observation)
        except StopIteration:
            return self._answer([])

    def _solve(self) -> Script:
        if self.tool_format == "search_r1":
            yield from self._search_only()
        elif self.task.evidence:
            yield from self._follow_evidence()
        else:
            yield from self._search_question()

    def _follow_evidence(self) -> Script:
        cited: list[int] = []
        for item in self.task.evidence:
            doc: int | str | None = item.doc_id if item.doc_id in cited else None
            if doc is None:  # a document not read yet: search for it, open it as a reader would
                results = yield self._call("search", {"query": item.doc_title or item.subject})
                listed = {int(found) for found, _ in _DOC_LINE.findall(results)}
                doc = item.doc_id if item.doc_id in listed else _doc_titled(results, item.doc_title)
                if doc is None:
                    doc = item.doc_title  # not among the hits: open it by the title read earlier
                opened = yield self._call("open", {"doc": doc})
                doc = _opened_doc_id(opened)
                if doc is None:
                    continue
                cited.append(doc)
            yield self._call("find", {"doc": doc, "pattern": item.value[:200] or item.relation})
        yield self._answer(cited)

    def _search_question(self) -> Script:
        results = yield self._call("search", {"query": self.task.question[:500]})
        cited: list[int] = []
        for doc in list(dict.fromkeys(int(found) for found, _ in _DOC_LINE.findall(results)))[:OPEN_TOP_RESULTS]:
            yield self._call("open", {"doc": doc})
            found = yield self._call("find", {"doc": doc, "pattern": self.task.answer[:200]})
            cited.extend(int(match) for match in _FOUND.findall(found))
        yield self._answer(list(dict.fromkeys(cited)))

    def _search_only(self) -> Script:
        queries = [item.doc_title or item.subject for item in self.task.evidence] or [self.task.question[:500]]
        for query in queries:
            yield self._call("search", {"query": query})
        yield self._answer([])

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        return write_call(self.tool_format, name, arguments)

    def _answer(self, citations: list[int]) -> str:
        if not self.task.answerable:
            return write_abstain(self.tool_format, "The documents found do not contain the answer.")
        return write_answer(self.tool_format, self._best_answer(), citations)

    def _best_answer(self) -> str:
        """The gold answer (or an alias) if an observation showed it, else the last evidence
        value if shown, else ``"unknown"``: the agent never answers what it has not seen, so
        a solved episode proves the answer is reachable through the tools."""
        seen = normalize_answer("\n".join(self.observations[1:]))
        for gold in self.task.golds:
            normalized = normalize_answer(gold)
            if normalized and normalized in seen:
                return gold
        if self.task.evidence and normalize_answer(self.task.evidence[-1].value) in seen:
            return self.task.evidence[-1].value
        return "unknown"


def _doc_titled(observation: str, title: str) -> int | None:
    """The doc id that search results list under exactly ``title``, if any."""
    for doc, listed_title in _DOC_LINE.findall(observation):
        if listed_title.strip().casefold() == title.strip().casefold():
            return int(doc)
    return None


def _opened_doc_id(observation: str) -> int | None:
    """The doc id of the page an ``open`` call showed (None when it failed)."""
    match = _DOC_LINE.search(observation)
    return int(match.group(1)) if match and "not_found" not in observation[: match.start()] else None


class RandomTextAgent:
    """Random and adversarial action text, keyed by ``seed`` (for robustness tests).

    Mixes random Unicode (lone surrogates included), empty text, megabytes of
    text, JSON bombs, broken and unknown tool calls, and calls inside answers.

    >>> RandomTextAgent(0).act("") == RandomTextAgent(0).act("")
    True
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.turn = 0

    def act(self, observation: str) -> str:
        """A random or adversarial action; the same (seed, turn) always gives the same text."""
        rng = KeyedRng(self.seed, "random_text", self.turn)
        self.turn += 1
        kind = rng.choice(sorted(_GENERATORS))
        return _GENERATORS[kind](rng)


def _random_unicode(rng: KeyedRng) -> str:
    return "".join(chr(rng.integer(0, 0x10FFFF)) for _ in range(rng.integer(0, 300)))


_GENERATORS: dict[str, Callable[[KeyedRng], str]] = {
    "unicode": _random_unicode,
    "empty": lambda rng: rng.choice(["", " ", "\n\n", "\x00"]),
    "huge": lambda rng: rng.choice(["a", "<tool_call>", "{", "é"]) * rng.integer(100_000, 1_000_000),
    "json_bomb": lambda rng: "<tool_call>" + "[" * rng.integer(1_000, 100_000) + "</tool_call>",
    "unknown_tool": lambda rng: write_call("tongyi", rng.choice(["rm", "exec", "", "search " * 3]), {"x": 1}),
    "bad_arguments": lambda rng: write_call("tongyi", rng.choice(["search", "open", "find"]), {"doc": -rng.integer(1, 9), "k": "many"}),
    "unclosed": lambda rng: rng.choice(["<tool_call>{", "<answer>", "</tool_call>", "<think>", "<search>"]) + _random_unicode(rng),
    "call_in_answer": lambda rng: "<answer>" + write_call("tongyi", "search", {"query": "x"}) + "</answer>",
    "surrogates": lambda rng: "".join(chr(rng.integer(0xD800, 0xDFFF)) for _ in range(rng.integer(1, 50))),
    "answer": lambda rng: rng.choice(["<answer>1</answer>", '{"name": "answer", "arguments": {"text": "x", "citations": [999999999]}}']),
}
