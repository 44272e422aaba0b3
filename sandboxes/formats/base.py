"""What every tool-call text format shares: the parsed action, safe scanning of
tags and JSON, and the base class.

A format turns the policy's text into a :class:`ParsedAction` and tool results
back into text. Parsing never raises and never hangs, whatever the text:

- at most ``max_action_chars`` characters are accepted (default :data:`MAX_ACTION_CHARS`;
  an environment passes its limits' cap); longer text is a format error (nothing is scanned);
- tags are found with ``str.find`` (linear time), never with backtracking regexes;
- JSON is read with :func:`load_json`, which turns decode errors, deep nesting
  (``RecursionError``) and non-standard constants (``NaN``) into error messages.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from stillweb.corpora.errors import PolicyInputError, UsageError
from stillweb.corpora.arguments import check_positive_int
from stillweb.sandboxes.tools.types import ToolCall, ToolResult, preview
from stillweb.sandboxes.tools.answer import MAX_ANSWER_CHARS, MAX_CITATIONS

__all__ = [
    "ParsedAction",
    "PromptWords",
    "ToolCallFormat",
    "Block",
    "find_blocks",
    "split_thought",
    "load_json",
    "call_from_object",
    "tagged_calls",
    "checked_citations",
    "tool_list_json",
    "MAX_ACTION_CHARS",
    "ABSTAIN_CALL",
    "PLAIN_WORDS",
    "abstention",
]

MAX_ACTION_CHARS = 100_000
# Abstaining with the answer tool (the OpenAI format, and the Tongyi format's <tool_call>).
ABSTAIN_CALL = 'to abstain call {"name": "answer", "arguments": {"abstain": true, "text": "<what the documents lack>"}}'


@dataclass(frozen=True)
class PromptWords:
    """An environment's own words in its system prompt; the call format puts the tool list and its syntax
    between them (:meth:`ToolCallFormat.system_prompt`).

    ``role`` opens the prompt: who the agent is and what it does. ``finish`` closes it: how to end the
    episode (``{example_answer}`` and ``{example_abstain}`` become the format's examples); ``None``
    takes the format's plain one.

    >>> PromptWords("You convert units.").finish_text("<answer>3</answer>", "<abstain>?</abstain>", "Answer.")
    'Answer.'
    """

    role: str
    finish: str | None = None

    def finish_text(self, example_answer: str, example_abstain: str, default: str) -> str:
        """The closing text, the format's examples filled in (``default``: the format's plain closing)."""
        if self.finish is None:
            return default
        return self.finish.replace("{example_answer}", example_answer).replace("{example_abstain}", example_abstain)


# What a system prompt opens with when the environment gives no words of its own.
PLAIN_WORDS = PromptWords("Use the tools to complete the task.")


@dataclass
class ParsedAction:
    """What the policy's text asked for.

    Exactly one of these holds: ``error`` is set (the text broke the format; the
    message says what was expected, with an example), ``answer`` is set (the
    final answer, with ``citations``: doc ids or titles), or ``calls`` is
    non-empty. ``thought`` is the reasoning text (``<think>`` or message content).
    ``abstained`` marks an abstention ("the documents do not say"): ``answer``
    then holds the stated reason (possibly empty), which is not an answer.
    """

    calls: list[ToolCall] = field(default_factory=list)
    answer: str | None = None
    citations: list[int | str] = field(default_factory=list)
    error: str | None = None
    thought: str = ""
    abstained: bool = False

    def error_result(self) -> ToolResult | None:
        """The format error as a ``format_error`` result to show the model, or ``None``."""
        if self.error is None:
            return None
        return ToolResult(name="format", text=self.error, flag="format_error")


@dataclass(frozen=True)
class Block:
    """A tagged region ``<tag>inner</tag>``: ``start`` of the open tag, ``end`` after the close tag."""

    start: int
    end: int
    inner: str


class FormatProblem(PolicyInputError, ValueError):
    """Raised inside a parser for text that breaks the format; becomes ``ParsedAction.error``."""


def find_blocks(text: str, tag: str) -> list[Block]:
    """Every ``<tag>...</tag>`` block in order (a block ends at the first closing tag);
    :class:`FormatProblem` if one is unclosed or a closing tag has no opening."""
    opening, closing = f"<{tag}>", f"</{tag}>"
    blocks, position = [], 0
    while True:
        start = text.find(opening, position)
        if start == -1:
            break
        inner_start = start + len(opening)
        end = text.find(closing, inner_start)
        if end == -1:
            raise FormatProblem(f"{opening} is never closed with {closing}")
        blocks.append(Block(start, end + len(closing), text[inner_start:end]))
        position = end + len(closing)
    stray = text.find(closing, position)
    if stray != -1 or (not blocks and closing in text):
        raise FormatProblem(f"{closing} without a matching {opening}")
    return blocks


def split_thought(text: str) -> tuple[str, str]:
    """(thought, the rest): ``<think>...</think>`` blocks, or everything before a lone leading ``</think>``.

    Chat templates that open ``<think>`` in the prompt make the model's text start
    mid-thought, so text before the first ``</think>`` with no ``<think>`` before it
    is thought too.
    """
    first_close = text.find("</think>")
    first_open = text.find("<think>")
    if first_close != -1 and (first_open == -1 or first_close < first_open):
        thought, text = text[:first_close], text[first_close + len("</think>") :]
    else:
        thought = ""
    blocks = find_blocks(text, "think")
    pieces, position = [], 0
    for block in blocks:
        pieces.append(text[position : block.start])
        position = block.end
    pieces.append(text[position:])
    thoughts = [thought] + [block.inner for block in blocks]
    return "\n".join(part.strip() for part in thoughts if part.strip()), "".join(pieces)


def _reject_constant(name: str) -> Any:
    raise UsageError(f"{name} is not valid JSON")


MAX_JSON_DEPTH = 100
# A JSON string, or an unclosed one running to the end: the match never fails once it has seen its opening
# quote, so the scan never restarts (linear time on any text; ``"(?:\\.|[^"\\])*"`` restarted at every quote
# of an unclosed run of quotes and backslashes: quadratic).
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)


def _json_depth(text: str) -> int:
    """The deepest bracket nesting of ``text`` outside JSON strings."""
    depth = deepest = 0
    for char in _JSON_STRING.sub("", text):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def load_json(text: str) -> Any:
    """Parse strict JSON; :class:`FormatProblem` describing the problem on any failure.

    Nesting is checked before parsing, so the answer never depends on how deep the
    caller's own stack is (in-process and in a server thread give the same message).
    """
    if text.count("{") + text.count("[") > MAX_JSON_DEPTH and _json_depth(text) > MAX_JSON_DEPTH:  # nesting needs brackets
        raise FormatProblem("the JSON is nested too deeply")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise FormatProblem("the JSON is nested too deeply") from None
    except ValueError as error:  # JSONDecodeError, NaN/Infinity
        raise FormatProblem(f"invalid JSON ({str(error)[:120]}) in {preview(text.strip(), 60)}") from None


def call_from_object(value: Any, call_id: Any = None) -> ToolCall:
    """A :class:`ToolCall` from ``{"name": str, "arguments": object or JSON-string of an object}``."""
    if not isinstance(value, dict):
        raise FormatProblem(f'a tool call must be a JSON object {{"name": ..., "arguments": {{...}}}}, got {preview(value, 60)}')
    name = value.get("name")
    if not isinstance(name, str) or not name:
        raise FormatProblem(f'the tool call has no "name" string: {preview(value, 80)}')
    if "arguments" not in value:
        raise FormatProblem(f'the call of {preview(name, 40)} has no "arguments" object')
    arguments = value["arguments"]
    if isinstance(arguments, str):
        arguments = load_json(arguments) if arguments.strip() else {}
    if not isinstance(arguments, dict):
        raise FormatProblem(f'"arguments" of {preview(name, 40)} must be a JSON object, got {preview(arguments, 60)}')
    return ToolCall(name=name, arguments=arguments, call_id=call_id if isinstance(call_id, str) else None)


def tagged_calls(blocks: list[Block]) -> list[ToolCall]:
    """The calls in ``<tool_call>{json}</tool_call>`` blocks (Tongyi and Hermes)."""
    return [call_from_object(load_json(block.inner.strip())) for block in blocks]


def tool_list_json(schemas: list[dict]) -> str:
    """One JSON function definition per line (accepts OpenAI function definitions or MCP tools)."""
    lines = []
    for schema in schemas:
        if "function" in schema:
            definition = schema
        else:
            parameters = schema.get("inputSchema", schema.get("parameters", {}))
            definition = {"type": "function", "function": {"name": schema["name"], "description": schema.get("description", ""), "parameters": parameters}}
        lines.append(json.dumps(definition, ensure_ascii=False))
    return "\n".join(lines)


class ToolCallFormat(ABC):
    """A way of writing tool calls and answers in text. Subclasses implement the three methods below.

    ``max_calls_per_turn`` bounds the calls one action may hold; more is a format error. Longer actions
    than ``max_action_chars`` and longer answers than ``max_answer_chars`` are format errors too (an
    environment passes its :class:`~stillweb.envs.core.limits.EpisodeLimits`' caps).
    """

    name: str = ""

    def __init__(self, max_calls_per_turn: int = 1, max_action_chars: int = MAX_ACTION_CHARS,
                 max_answer_chars: int = MAX_ANSWER_CHARS) -> None:
        self.max_calls_per_turn = check_positive_int("max_calls_per_turn", max_calls_per_turn)
        self.max_action_chars = check_positive_int("max_action_chars", max_action_chars)
        self.max_answer_chars = check_positive_int("max_answer_chars", max_answer_chars)

    def parse(self, text: str) -> ParsedAction:
        """The action in ``text``; never raises (problems are ``ParsedAction.error``)."""
        try:
            if not isinstance(text, str):
                raise FormatProblem(f"the action must be text, got {type(text).__name__}")
            if len(text) > self.max_action_chars:
                raise FormatProblem(f"the action is too long ({len(text)} characters; at most {self.max_action_chars})")
            return _short_answer(self._parse(text), self.max_answer_chars)
        except FormatProblem as problem:
            return ParsedAction(error=f"Format error: {problem}. {self.how_to_call()}")
        except Exception as error:  # the agent boundary: never crash on policy text
            return ParsedAction(error=f"Format error: unreadable action ({type(error).__name__}). {self.how_to_call()}")

    @abstractmethod
    def _parse(self, text: str) -> ParsedAction:
        """Parse text of acceptable size; raise :class:`FormatProblem` for format violations."""

    @abstractmethod
    def how_to_call(self) -> str:
        """A short reminder of the expected form, with an example (appended to every format error)."""

    @abstractmethod
    def render_results(self, results: list[ToolResult]) -> str:
        """The text the model sees for the results of one turn's calls."""

    @abstractmethod
    def system_prompt(self, schemas: list[dict], max_calls_per_turn: int | None = None,
                      words: PromptWords | None = None) -> str:
        """The environment's ``words`` (its role and how to finish; default :data:`PLAIN_WORDS`) around the tool
        descriptions and calling syntax of this format (``max_calls_per_turn`` ``None``: this format's limit)."""

    # Writing actions (what a scripted agent, an integration or the viewer sends): the inverse of parse.
    def write_call(self, name: str, arguments: dict[str, Any]) -> str:
        """Action text calling one tool (here: the call as a JSON object)."""
        return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)

    def write_answer(self, text: str, citations: list[int]) -> str:
        """Action text giving the final answer with cited doc ids (here: a call of the answer tool)."""
        return self.write_call("answer", {"text": text, "citations": citations})

    def write_abstain(self, reason: str) -> str:
        """Action text abstaining (the documents do not hold the answer), with the reason."""
        return self.write_call("answer", {"abstain": True, "text": reason})

    def _check_count(self, count: int) -> None:
        if count > self.max_calls_per_turn:
            raise FormatProblem(f"{count} tool calls in one turn; at most {self.max_calls_per_turn} allowed")

    def _action_from_calls(self, calls: list[ToolCall], thought: str) -> ParsedAction:
        """Calls, or the answer when the only call is the ``answer`` tool."""
        if not calls:
            raise FormatProblem("no tool call or answer found")
        self._check_count(len(calls))
        answers = [call for call in calls if call.name == "answer"]
        if not answers:
            return ParsedAction(calls=calls, thought=thought)
        if len(calls) > 1:
            raise FormatProblem("the answer call must be the only call of its turn")
        arguments = answers[0].arguments
        text, citations, abstain = arguments.get("text"), arguments.get("citations", []), arguments.get("abstain", False)
        if not isinstance(text, str):
            raise FormatProblem('the answer call needs {"text": "<your answer>"}')
        if not isinstance(citations, list) or not all(_is_citation(item) for item in citations):
            raise FormatProblem('"citations" must be a list of doc ids or titles, e.g. [12, "Marie Curie"]')
        if not isinstance(abstain, bool):
            raise FormatProblem(f'"abstain" must be true or false, got {preview(abstain, 40)}; {ABSTAIN_CALL}')
        return ParsedAction(answer=text.strip(), citations=checked_citations(citations), thought=thought, abstained=abstain)


def _short_answer(parsed: ParsedAction, max_answer_chars: int) -> ParsedAction:
    """``parsed`` unchanged; :class:`FormatProblem` when its answer (or abstention reason) is longer than
    ``max_answer_chars``: a long answer is refused before anything normalizes or scores it."""
    if parsed.answer is not None and len(parsed.answer) > max_answer_chars:
        what = "abstention reason" if parsed.abstained else "answer"
        raise FormatProblem(f"the {what} is {len(parsed.answer)} characters long; at most {max_answer_chars}: "
                            "give a short answer (a name, a number, a date)")
    return parsed


def abstention(blocks: list[Block], action: str, thought: str) -> ParsedAction | None:
    """The abstention written as ``<abstain>reason</abstain>`` (Tongyi and Search-R1), or None.

    It must be the whole action (after ``<think>``): alone, once, and with no tool call in it.
    """
    if not blocks:
        return None
    if len(blocks) > 1:
        raise FormatProblem("more than one <abstain>")
    block = blocks[0]
    if action[: block.start].strip() or action[block.end :].strip():
        raise FormatProblem("<abstain>...</abstain> must be the whole turn: no tool call, answer or text around it")
    return ParsedAction(answer=block.inner.strip(), thought=thought, abstained=True)


def checked_citations(citations: list[int | str]) -> list[int | str]:
    """``citations`` unchanged; :class:`FormatProblem` when there are more than :data:`MAX_CITATIONS`."""
    if len(citations) > MAX_CITATIONS:
        raise FormatProblem(f"{len(citations)} citations; at most {MAX_CITATIONS}")
    return citations


def _is_citation(item: Any) -> bool:
    return isinstance(item, str) or (isinstance(item, int) and not isinstance(item, bool))
