"""The OpenAI / Hermes JSON tool-call format.

The action text is one of:

- an assistant message as JSON: ``{"role": "assistant", "content": ..., "tool_calls":
  [{"id": "call_1", "type": "function", "function": {"name": ..., "arguments": "<json string>"}}]}``;
- a call object ``{"name": ..., "arguments": {...} or "<json string>"}``, or a JSON list of them;
- Hermes style: calls wrapped in ``<tool_call>{...}</tool_call>`` tags, optionally after ``<think>``.

The final answer is a call of the ``answer`` tool (``{"name": "answer", "arguments":
{"text": ..., "citations": [...]}}``), alone in its turn; ``"abstain": true`` in its
arguments abstains (the documents do not contain the answer; ``text`` says what is missing). Results are rendered as
tool messages, one JSON object per line: ``{"role": "tool", "tool_call_id", "name", "content"}``.
"""

from __future__ import annotations

import json
from typing import Any

from stillweb.sandboxes.formats.base import (
    PLAIN_WORDS,
    PromptWords,
    FormatProblem,
    ParsedAction,
    ToolCallFormat,
    call_from_object,
    find_blocks,
    load_json,
    split_thought,
    tagged_calls,
    tool_list_json,
)
from stillweb.sandboxes.tools.types import ToolCall, ToolResult

__all__ = ["OpenAIFormat"]

EXAMPLE_CALL = '{"name": "search", "arguments": {"query": "Marie Curie birthplace"}}'
EXAMPLE_ANSWER = '{"name": "answer", "arguments": {"text": "Warsaw", "citations": [12]}}'
EXAMPLE_ABSTAIN = '{"name": "answer", "arguments": {"abstain": true, "text": "No document gives her birthplace."}}'


class OpenAIFormat(ToolCallFormat):
    """JSON tool calls (OpenAI message, bare call objects, or Hermes ``<tool_call>`` tags)."""

    name = "openai"

    def _parse(self, text: str) -> ParsedAction:
        thought, action = split_thought(text)
        body = action.strip()
        if not body.startswith(("{", "[")):
            if "<tool_call>" in body or "</tool_call>" in body:
                return self._action_from_calls(tagged_calls(find_blocks(body, "tool_call")), thought)
            raise FormatProblem("no JSON tool call found (plain text is not an answer; call the answer tool)")
        value = load_json(body)
        if isinstance(value, dict) and ("tool_calls" in value or "role" in value):
            calls, content = _message_calls(value)
            thought = "\n".join(part for part in (thought, content) if part)
        elif isinstance(value, list):
            self._check_count(len(value))
            calls = [call_from_object(item) for item in value]
        else:
            calls = [call_from_object(value)]
        return self._action_from_calls(calls, thought)

    def how_to_call(self) -> str:
        """The expected forms, with examples."""
        return (f"Call a tool with a JSON object such as\n{EXAMPLE_CALL}\nand answer with\n{EXAMPLE_ANSWER}\n"
                f"or, if the documents do not contain the answer, abstain with\n{EXAMPLE_ABSTAIN}")

    def render_results(self, results: list[ToolResult]) -> str:
        """One tool message (JSON) per line."""
        messages = []
        for index, result in enumerate(results):
            message = {
                "role": "tool",
                "tool_call_id": result.call_id or f"call_{index}",
                "name": result.name,
                "content": result.text,
            }
            messages.append(json.dumps(message, ensure_ascii=False))
        return "\n".join(messages)

    def system_prompt(self, schemas: list[dict], max_calls_per_turn: int | None = None,
                      words: PromptWords | None = None) -> str:
        """The function definitions and how to call with JSON, between the environment's ``words``."""
        limit = max_calls_per_turn or self.max_calls_per_turn
        words = words or PLAIN_WORDS
        plain = 'To finish, call the answer function alone; if it cannot be done, call it with {"abstain": true, "text": "<why>"}.'
        return (
            f"{words.role}\n\n# Tools\n\nThe available functions, one JSON definition per line:\n"
            f"<tools>\n{tool_list_json(schemas)}\n</tools>\n\n"
            "To call a function, reply with only a JSON object (or a JSON list of objects):\n"
            f"{EXAMPLE_CALL}\n"
            f"Make at most {limit} call(s) per turn. Results come back as tool messages.\n"
            + words.finish_text(EXAMPLE_ANSWER, EXAMPLE_ABSTAIN, plain)
        )


def _message_calls(message: dict) -> tuple[list[ToolCall], str]:
    """The calls and text content of an OpenAI assistant message."""
    content = message.get("content")
    content = content if isinstance(content, str) else ""
    items = message.get("tool_calls")
    if not isinstance(items, list) or not items:
        raise FormatProblem('the message has no "tool_calls" list; to answer, call the answer tool')
    calls = []
    for item in items:
        function: Any = item.get("function") if isinstance(item, dict) else None
        if not isinstance(function, dict):
            raise FormatProblem('each entry of "tool_calls" needs {"type": "function", "function": {"name", "arguments"}}')
        calls.append(call_from_object(function, call_id=item.get("id")))
    return calls, content.strip()
