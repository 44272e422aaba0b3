"""A standing corpus of hostile action shapes: text a policy might write that breaks naive parsers.

Each shape is a function of a target length in characters and returns text of about that length
(never more than ``length`` + 64). The shapes cover what reaches the call formats, the answer and
citation parsers, argument validation, answer normalization, the degenerate-action checks and
context management: nested brackets and objects, runs of backslashes and quotes, unclosed and
repeated tags of every format, unicode escapes and lone surrogates, NUL and control bytes, huge
numbers and exponents, deep JSON, CRLF floods and mixed formats.

``tests/envs/test_hostile_actions.py`` steps every environment with each shape; ``scripts/bench_hostile.py``
measures the cost at 8k and 64k characters (the ratio must stay near linear, 8x).

>>> sorted(len(shape(8_000)) <= 8_064 for shape in SHAPES.values()) == [True] * len(SHAPES)
True
>>> len(SHAPES) >= 30
True
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["SHAPES", "shape_names"]


def _fill(unit: str, length: int, head: str = "", tail: str = "") -> str:
    """``head`` + ``unit`` repeated to about ``length`` characters + ``tail``."""
    room = max(0, length - len(head) - len(tail))
    return head + unit * (room // max(1, len(unit))) + tail


_CALL = '{"name": "search", "arguments": {"query": "x"}}'
_ANSWER_CALL = '{"name": "answer", "arguments": {"text": "'

SHAPES: dict[str, Callable[[int], str]] = {
    # JSON strings and escapes (the depth check's string scanner)
    "quote_backslash_run": lambda n: _fill('"\\', n, "<tool_call>{", "</tool_call>"),
    "openai_quote_backslash_run": lambda n: _fill('"\\', n, "{"),
    "backslash_run_in_string": lambda n: _fill("\\", n, '<tool_call>{"name": "', "</tool_call>"),
    "quote_run": lambda n: _fill('"', n, "<tool_call>", "</tool_call>"),
    "escaped_quote_run": lambda n: _fill('\\"', n, '<tool_call>{"name": "search", "arguments": {"query": "', "</tool_call>"),
    "unicode_escapes": lambda n: _fill("\\u0000", n, '<tool_call>{"name": "search", "arguments": {"query": "', '"}}</tool_call>'),
    "lone_surrogate_escapes": lambda n: _fill("\\ud800", n, '{"name": "search", "arguments": {"query": "', '"}}'),
    "lone_surrogate_chars": lambda n: _fill("\ud800", n, "<answer>", "</answer>"),
    # brackets and nesting
    "open_brackets": lambda n: _fill("[", n, "<tool_call>", "</tool_call>"),
    "open_objects": lambda n: _fill('{"a":', n, "<tool_call>", "</tool_call>"),
    "deep_valid_json": lambda n: "<tool_call>" + "[" * (n // 2 - 12) + "]" * (n // 2 - 12) + "</tool_call>",
    "many_keys": lambda n: _fill('"k": 1, ', n, '<tool_call>{"name": "search", "arguments": {', '"query": "x"}}</tool_call>'),
    "close_brackets": lambda n: _fill("]}", n, "{"),
    # numbers
    "huge_integer": lambda n: _fill("9", n, '<tool_call>{"name": "search", "arguments": {"query": "x", "k": ', "}}</tool_call>"),
    "huge_exponent": lambda n: _fill("9", n, '{"name": "open", "arguments": {"doc_id": 1e', "}}"),
    "huge_number_answer": lambda n: _fill("1,000", n, "<answer>", "</answer>"),
    "decimal_run": lambda n: _fill("1.5", n, "<answer>", "</answer>"),
    # tags: unclosed, repeated, strays, partial
    "unclosed_tool_call": lambda n: _fill("<tool_call>", n),
    "unclosed_answer_tags": lambda n: _fill("<answer>", n),
    "unclosed_answer_text": lambda n: _fill("word ", n, "<answer>"),
    "stray_closing_tags": lambda n: _fill("</tool_call></answer></search>", n),
    "repeated_calls": lambda n: _fill(f"<tool_call>{_CALL}</tool_call>", n),
    "unclosed_think": lambda n: _fill("<think>", n),
    "closing_think_run": lambda n: _fill("</think>", n),
    "partial_tags": lambda n: _fill("<tool_call", n),
    "angle_run": lambda n: _fill("<", n),
    "search_r1_tags": lambda n: _fill("<search>x</search>", n, "<think>t</think>"),
    "unclosed_search": lambda n: _fill("<search>", n),
    "information_tags": lambda n: _fill("<information>", n, "<search>q</search>"),
    "citations_flood": lambda n: _fill("1; ", n, "<answer>A</answer><citations>", "</citations>"),
    "abstain_tags": lambda n: _fill("<abstain>", n),
    "mixed_formats": lambda n: _fill(f"<tool_call>{_CALL}</tool_call><search>x</search><answer>y</answer>{_CALL}", n),
    # answers and normalization
    "long_answer": lambda n: _fill("word ", n, "<answer>", "</answer>"),
    "long_answer_call": lambda n: _fill("word ", n, _ANSWER_CALL, '", "citations": [1]}}'),
    "acronym_run": lambda n: _fill("U.S.", n, "<answer>", "</answer>"),
    "date_run": lambda n: _fill("12 February 1809 ", n, "<answer>", "</answer>"),
    "dash_dot_run": lambda n: _fill(".-", n, "<answer>", "</answer>"),
    "article_run": lambda n: _fill("the a an ", n, "<answer>", "</answer>"),
    # bytes and whitespace
    "nul_bytes": lambda n: _fill("\x00", n),
    "control_bytes": lambda n: _fill("\x01\x02\x1b[0m\x7f", n),
    "crlf_flood": lambda n: _fill("\r\n", n, "<tool_call>", "</tool_call>"),
    "whitespace_flood": lambda n: _fill(" \t", n),
    "astral_chars": lambda n: _fill("\U0001f600", n),
    # degenerate repetition
    "letter_run": lambda n: _fill("a", n),
    "tandem_repeat": lambda n: _fill("abcdefgh", n),
    "near_runs": lambda n: _fill("aaaaaaab", n),
    "huge_query": lambda n: _fill("a", n, '<tool_call>{"name": "search", "arguments": {"query": "', '"}}</tool_call>'),
}


def shape_names() -> list[str]:
    """The shapes' names, sorted."""
    return sorted(SHAPES)
