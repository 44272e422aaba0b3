"""The Tongyi DeepResearch (Qwen/Hermes-style XML tags) tool-call format.

A turn is optional reasoning in ``<think>...</think>``, then either tool calls::

    <tool_call>
    {"name": "search", "arguments": {"query": "Marie Curie birthplace"}}
    </tool_call>

(up to ``max_calls_per_turn`` of them; ``arguments`` may also be a JSON string)
or the final answer::

    <answer>Warsaw</answer>
    <citations>12; Marie Curie</citations>

or an abstention, when the documents do not contain the answer::

    <abstain>No document states the founding year of the club.</abstain>

The citation convention: an optional ``<citations>`` block right after
``</answer>`` holding doc ids or titles separated by ``;`` or newlines (titles
may contain commas), or a JSON list such as ``[12, "Paris, Texas"]``. A call of
the ``answer`` tool inside ``<tool_call>`` is accepted as the answer too (with
``"abstain": true``, as an abstention).
Results come back as ``<tool_response>...</tool_response>``, one block per call.

Tags inside a ``<tool_call>`` block (e.g. a query containing ``<answer>``) are
data, not markup; ``<think>`` is split off first (as vLLM's reasoning parsers
do), so a call argument cannot contain ``</think>``.
"""

from __future__ import annotations

from typing import Any

from stillweb.sandboxes.formats.base import (
    PLAIN_WORDS,
    PromptWords,
    Block,
    FormatProblem,
    ParsedAction,
    ToolCallFormat,
    abstention,
    checked_citations,
    find_blocks,
    load_json,
    split_thought,
    tagged_calls,
    tool_list_json,
)
from stillweb.sandboxes.tools.types import ToolResult

__all__ = ["TongyiFormat", "parse_citations"]

CALL_MARKER = "<tool_call/>"
EXAMPLE_CALL = '<tool_call>\n{"name": "search", "arguments": {"query": "Marie Curie birthplace"}}\n</tool_call>'
EXAMPLE_ANSWER = "<answer>Warsaw</answer>\n<citations>12; Marie Curie</citations>"
EXAMPLE_ABSTAIN = "<abstain>No document states the founding year.</abstain>"


def parse_citations(text: str) -> list[int | str]:
    """Doc ids and titles from a ``<citations>`` block (``;``/newline separated, or a JSON list)."""
    text = text.strip()
    if text.startswith("["):
        items = load_json(text)
        if not isinstance(items, list) or not all(isinstance(item, (int, str)) and not isinstance(item, bool) for item in items):
            raise FormatProblem("<citations> as JSON must be a list of doc ids and titles")
        return items
    parts = [part.strip() for line in text.split("\n") for part in line.split(";")]
    return [int(part) if part.isascii() and part.isdigit() else part for part in parts if part]


def _mask_blocks(text: str, blocks: list[Block]) -> str:
    """``text`` with each block replaced by :data:`CALL_MARKER`."""
    pieces, position = [], 0
    for block in blocks:
        pieces.extend((text[position : block.start], CALL_MARKER))
        position = block.end
    pieces.append(text[position:])
    return "".join(pieces)


class TongyiFormat(ToolCallFormat):
    """``<think>``, ``<tool_call>{json}</tool_call>``, ``<answer>``; results in ``<tool_response>``."""

    name = "tongyi"

    def _parse(self, text: str) -> ParsedAction:
        thought, action = split_thought(text)
        calls = find_blocks(action, "tool_call")
        outside = _mask_blocks(action, calls)  # tags inside call arguments are data, not markup
        if "<tool_response>" in outside:
            raise FormatProblem("do not write <tool_response>; the environment adds tool results")
        abstained = abstention(find_blocks(outside, "abstain"), outside, thought)
        if abstained is not None:
            return abstained
        answers = find_blocks(outside, "answer")
        if answers:
            if len(answers) > 1:
                raise FormatProblem("more than one <answer>")
            answer = answers[0]
            if CALL_MARKER in answer.inner:
                raise FormatProblem("a tool call inside the answer; call tools before answering")
            if calls:
                raise FormatProblem("either call tools or answer in one turn, not both")
            citations = self._trailing_citations(outside[answer.end :])
            return ParsedAction(answer=answer.inner.strip(), citations=citations, thought=thought)
        return self._action_from_calls(tagged_calls(calls), thought)

    @staticmethod
    def _trailing_citations(after: str) -> list[int | str]:
        rest = after.strip()
        if not rest:
            return []
        if rest.startswith("<citations>"):
            blocks = find_blocks(rest, "citations")
            if rest[blocks[0].end :].strip() or len(blocks) > 1:
                raise FormatProblem("text after the <citations> block; the answer must end the turn")
            return checked_citations(parse_citations(blocks[0].inner))
        raise FormatProblem("text after </answer>; the answer must end the turn (only <citations> may follow)")

    def write_call(self, name: str, arguments: dict[str, Any]) -> str:
        """The call in ``<tool_call>`` tags."""
        return f"<tool_call>\n{super().write_call(name, arguments)}\n</tool_call>"

    def write_answer(self, text: str, citations: list[int]) -> str:
        """``<answer>`` tags, then ``<citations>`` when there are any."""
        cited = f"\n<citations>{'; '.join(str(doc) for doc in citations)}</citations>" if citations else ""
        return f"<answer>{text}</answer>{cited}"

    def write_abstain(self, reason: str) -> str:
        """``<abstain>`` tags around the reason."""
        return f"<abstain>{reason}</abstain>"

    def how_to_call(self) -> str:
        """The expected forms, with examples."""
        return (f"Call a tool with\n{EXAMPLE_CALL}\nor give the final answer with\n{EXAMPLE_ANSWER}\n"
                f"or, if the documents do not contain it, abstain with\n{EXAMPLE_ABSTAIN}")

    def render_results(self, results: list[ToolResult]) -> str:
        """One ``<tool_response>`` block per result."""
        return "\n".join(f"<tool_response>\n{result.text}\n</tool_response>" for result in results)

    def system_prompt(self, schemas: list[dict], max_calls_per_turn: int | None = None,
                      words: PromptWords | None = None) -> str:
        """Qwen-style tool list in ``<tools>`` and how to call, between the environment's ``words``."""
        limit = max_calls_per_turn or self.max_calls_per_turn
        words = words or PLAIN_WORDS
        plain = "When you are done, write the answer inside <answer></answer>; if it cannot be done, say why inside <abstain></abstain>."
        return (
            f"{words.role}\n\n"
            "# Tools\n\nYou may call functions to assist with the user query. "
            "The function signatures are within <tools></tools> XML tags:\n"
            f"<tools>\n{tool_list_json(schemas)}\n</tools>\n\n"
            "For each function call, return a JSON object with the function name and arguments within "
            "<tool_call></tool_call> XML tags:\n"
            '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>\n'
            f"Make at most {limit} tool call(s) per turn. Results come back inside <tool_response></tool_response>.\n\n"
            + words.finish_text(EXAMPLE_ANSWER, EXAMPLE_ABSTAIN, plain)
        )
