"""Each environment its own words: the call format supplies only the tool list and the syntax."""

from __future__ import annotations

import pytest

from stillweb.sandboxes.formats import FORMATS, get_format
from stillweb.sandboxes.formats.base import PromptWords

SCHEMAS = [{"type": "function", "function": {"name": "add", "description": "Add.", "parameters": {
    "type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}}]
WORDS = PromptWords("You add integers.", "Finish like this:\n{example_abstain}")


@pytest.mark.parametrize("name", list(FORMATS))
def test_the_env_s_words_open_and_close_the_prompt_and_no_research_words_leak(name):
    prompt = get_format(name).system_prompt(SCHEMAS, words=WORDS)
    assert prompt.startswith("You add integers.") and "Finish like this:\n" in prompt
    assert "research" not in prompt and "cite" not in prompt and "citations" not in prompt
    plain = get_format(name).system_prompt(SCHEMAS)
    assert "research" not in plain and "citations" not in plain


@pytest.mark.parametrize("name", ["tongyi", "openai"])
def test_the_format_supplies_the_tool_list_and_the_syntax(name):
    prompt = get_format(name, max_calls_per_turn=2).system_prompt(SCHEMAS, words=WORDS)
    assert '"name": "add"' in prompt and "at most 2" in prompt and prompt.index("# Tools") > len(WORDS.role)
