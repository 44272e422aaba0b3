"""The Search-R1 format: ``<search>query</search>`` and ``<answer>...</answer>``.

A turn is optional ``<think>...</think>`` reasoning, then either a search (up to
``max_calls_per_turn`` of them) or the final answer, which must end the turn.
A search becomes a call of the ``search`` tool with ``k = search_k`` results
(3, as in the Search-R1 paper). Results come back as
``<information>Doc 1(Title: ...) snippet ...</information>``; any other tool
result is shown as its text inside ``<information>``. There are no citations.
``<abstain>reason</abstain>`` (the whole turn) abstains: the documents do not
contain the answer.
"""

from __future__ import annotations

from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.corpora.arguments import check_positive_int
from stillweb.sandboxes.formats.base import FormatProblem, ParsedAction, ToolCallFormat, abstention, find_blocks, split_thought
from stillweb.sandboxes.tools.types import ToolCall, ToolResult

__all__ = ["SearchR1Format"]

EXAMPLE = (
    "<think>I need the birthplace.</think>\n<search>Marie Curie birthplace</search>\nor\n<answer>Warsaw</answer>\n"
    "or, if the information does not contain the answer,\n<abstain>No document gives her birthplace.</abstain>"
)


class SearchR1Format(ToolCallFormat):
    """``<search>``/``<answer>`` tags; results in ``<information>``."""

    name = "search_r1"

    def __init__(self, max_calls_per_turn: int = 1, search_k: int = 3, **caps: int) -> None:
        super().__init__(max_calls_per_turn, **caps)
        self.search_k = check_positive_int("search_k", search_k)

    def _parse(self, text: str) -> ParsedAction:
        thought, action = split_thought(text)
        if "<information>" in action:
            raise FormatProblem("do not write <information>; the environment adds search results")
        abstained = abstention(find_blocks(action, "abstain"), action, thought)
        if abstained is not None:
            return abstained
        searches, answers = find_blocks(action, "search"), find_blocks(action, "answer")
        if answers:
            if len(answers) > 1:
                raise FormatProblem("more than one <answer>")
            if "<search>" in answers[0].inner:
                raise FormatProblem("a search inside the answer; search before answering")
            if searches:
                raise FormatProblem("either search or answer in one turn, not both")
            if action[answers[0].end :].strip():
                raise FormatProblem("text after </answer>; the answer must end the turn")
            return ParsedAction(answer=answers[0].inner.strip(), thought=thought)
        if not searches:
            raise FormatProblem("no <search> or <answer> found")
        self._check_count(len(searches))
        queries = [block.inner.strip() for block in searches]
        if not all(queries):
            raise FormatProblem("empty <search></search>; put keywords inside")
        calls = [ToolCall("search", {"query": query, "k": self.search_k}) for query in queries]
        return ParsedAction(calls=calls, thought=thought)

    def write_call(self, name: str, arguments: dict[str, Any]) -> str:
        """``<search>`` tags (this format has only the search tool)."""
        if name != "search":
            raise UsageError(f"the search_r1 format has only the search tool, not {name!r}")
        return f"<search>{arguments['query']}</search>"

    def write_answer(self, text: str, citations: list[int]) -> str:
        """``<answer>`` tags (the format has no citations: they are left out)."""
        return f"<answer>{text}</answer>"

    def write_abstain(self, reason: str) -> str:
        """``<abstain>`` tags around the reason."""
        return f"<abstain>{reason}</abstain>"

    def how_to_call(self) -> str:
        """The expected forms, with examples."""
        return f"Search with <search>keywords</search>, answer with <answer>...</answer> or abstain with <abstain>...</abstain>, e.g.\n{EXAMPLE}"

    def render_results(self, results: list[ToolResult]) -> str:
        """One ``<information>`` block per result, search hits as ``Doc i(Title: t) snippet``."""
        return "\n".join(f"<information>{_information(result)}</information>" for result in results)

    def system_prompt(self, schemas: list[dict], max_calls_per_turn: int | None = None) -> str:
        """The Search-R1 instruction (the search tool is implicit; ``schemas`` are not listed)."""
        limit = max_calls_per_turn or self.max_calls_per_turn
        return (
            "Answer the given question. You must conduct reasoning inside <think> and </think> first every time "
            "you get new information. After reasoning, if you find you lack some knowledge, you can call a search "
            f"engine by <search> query </search> (at most {limit} per turn) and it will return the top searched "
            "results between <information> and </information>. You can search as many times as you want. "
            "If you find no further external knowledge needed, you can directly provide the answer inside "
            "<answer> and </answer>, without detailed illustrations. For example, <answer> Beijing </answer>. "
            "If after searching the information does not contain the answer, reply <abstain> what is missing "
            "</abstain> instead of guessing."
        )


def _information(result: ToolResult) -> str:
    data = result.data if result.flag is None and result.name == "search" and isinstance(result.data, dict) else None
    if data is None or "queries" not in data:
        return result.text
    lines = []
    for query in data["queries"]:
        for rank, hit in enumerate(query["results"], 1):
            lines.append(f"Doc {rank}(Title: {hit['title']}) {hit['snippet']}")
    return "\n".join(lines) if lines else "No results."
