"""Tests of the tool-call text formats: happy paths, format errors, rendering, and adversarial text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stillweb.sandboxes import ToolCall, ToolResult, get_format
from stillweb.sandboxes.formats import FORMATS, MAX_ACTION_CHARS, ParsedAction

SCHEMAS = [
    {"type": "function", "function": {"name": "search", "description": "Search.", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "open", "description": "Open.", "parameters": {"type": "object"}}},
]


def tongyi_call(name: str, arguments: dict) -> str:
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": arguments})}\n</tool_call>'


def assert_one_outcome(action: ParsedAction) -> None:
    """Exactly one of: an error, an answer, a non-empty list of calls."""
    outcomes = [action.error is not None, action.answer is not None, bool(action.calls)]
    assert outcomes.count(True) == 1, action


# -- tongyi ---------------------------------------------------------------------------


def test_tongyi_reads_thought_and_calls():
    action = get_format("tongyi", max_calls_per_turn=2).parse(
        "<think>I should search.</think>\n" + tongyi_call("search", {"query": "x"}) + tongyi_call("open", {"doc": 3})
    )
    assert action.error is None and action.thought == "I should search."
    assert action.calls == [ToolCall("search", {"query": "x"}), ToolCall("open", {"doc": 3})]


def test_tongyi_thought_opened_by_the_chat_template():
    action = get_format("tongyi").parse("thinking already</think>" + tongyi_call("search", {"query": "x"}))
    assert action.thought == "thinking already" and len(action.calls) == 1


def test_tongyi_arguments_as_json_string():
    text = '<tool_call>{"name": "open", "arguments": "{\\"doc\\": 3}"}</tool_call>'
    assert get_format("tongyi").parse(text).calls == [ToolCall("open", {"doc": 3})]


def test_tongyi_answer_with_citations():
    action = get_format("tongyi").parse("<think>done</think><answer> Warsaw </answer>\n<citations>12; Paris, Texas\n7</citations>")
    assert (action.answer, action.citations, action.error) == ("Warsaw", [12, "Paris, Texas", 7], None)
    action = get_format("tongyi").parse('<answer>W</answer><citations>[12, "Paris, Texas"]</citations>')
    assert action.citations == [12, "Paris, Texas"]


def test_tongyi_answer_tool_call_is_the_answer():
    action = get_format("tongyi").parse(tongyi_call("answer", {"text": "W", "citations": [1]}))
    assert (action.answer, action.citations, action.calls) == ("W", [1], [])


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("I think it is Warsaw.", "no tool call or answer found"),
        (tongyi_call("search", {"query": "a"}) * 2, "2 tool calls in one turn; at most 1"),
        ('<tool_call>{"name": "search", "arguments": {"query": "a"}', "never closed"),
        ("<tool_call>{'name': 'search'}</tool_call>", "invalid JSON"),
        ('<tool_call>{"arguments": {}}</tool_call>', 'no "name"'),
        ('<tool_call>{"name": "search", "arguments": [1]}</tool_call>', "must be a JSON object"),
        ("<answer>W</answer> because of doc 3", "text after </answer>"),
        ("<answer>W " + tongyi_call("search", {"query": "a"}) + "</answer>", "a tool call inside the answer"),
        (tongyi_call("search", {"query": "a"}) + "<answer>W</answer>", "not both"),
        ("<answer>a</answer><answer>b</answer>", "more than one <answer>"),
        ("<tool_response>fake</tool_response>", "do not write <tool_response>"),
        ("<think>never closed", "never closed"),
        ("</answer>", "without a matching <answer>"),
        ("<answer>W</answer><citations>" + "1;" * 21 + "</citations>", "21 citations; at most 20"),
    ],
)
def test_tongyi_format_errors_say_what_was_expected(text, problem):
    action = get_format("tongyi").parse(text)
    assert action.error is not None and problem in action.error
    assert "<tool_call>" in action.error and "<answer>Warsaw</answer>" in action.error
    assert action.error_result().flag == "format_error"


def test_tongyi_render_and_prompt():
    fmt = get_format("tongyi", max_calls_per_turn=3)
    rendered = fmt.render_results([ToolResult("search", "one"), ToolResult("open", "two")])
    assert rendered == "<tool_response>\none\n</tool_response>\n<tool_response>\ntwo\n</tool_response>"
    prompt = fmt.system_prompt(SCHEMAS)
    assert json.dumps(SCHEMAS[0]) in prompt and "at most 3 tool call(s)" in prompt and "<answer></answer>" in prompt
    assert "<citations>" not in prompt  # citations are WikiQA-v0's words (envs/wikiqa/prompt.py), not the format's


# -- openai ---------------------------------------------------------------------------


def test_openai_message_with_tool_calls():
    message = {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [{"id": "call_a", "type": "function", "function": {"name": "search", "arguments": '{"query": "x"}'}}],
    }
    action = get_format("openai").parse(json.dumps(message))
    assert action.calls == [ToolCall("search", {"query": "x"}, call_id="call_a")]
    assert action.thought == "Let me look."


def test_openai_bare_objects_lists_and_hermes_tags():
    fmt = get_format("openai", max_calls_per_turn=2)
    assert fmt.parse('{"name": "search", "arguments": {"query": "x"}}').calls == [ToolCall("search", {"query": "x"})]
    calls = fmt.parse('[{"name": "search", "arguments": {"query": "x"}}, {"name": "open", "arguments": {"doc": 1}}]').calls
    assert [c.name for c in calls] == ["search", "open"]
    assert fmt.parse("<think>t</think>" + tongyi_call("open", {"doc": 1})).calls == [ToolCall("open", {"doc": 1})]


def test_openai_answer_is_the_answer_tool():
    action = get_format("openai").parse('{"name": "answer", "arguments": {"text": "W", "citations": [3, "Warsaw"]}}')
    assert (action.answer, action.citations) == ("W", [3, "Warsaw"])


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("The answer is W.", "no JSON tool call found"),
        ('{"name": "search", "arguments": {"query": "x"}', "invalid JSON"),
        ('{"role": "assistant", "content": "W"}', 'no "tool_calls"'),
        ('{"role": "assistant", "tool_calls": [{"id": "1"}]}', "needs {\"type\": \"function\""),
        ('[{"name": "search", "arguments": {}}, {"name": "search", "arguments": {}}]', "2 tool calls"),
        ('{"name": "answer", "arguments": {"citations": [1]}}', 'needs {"text"'),
        ('{"name": "answer", "arguments": {"text": "W", "citations": [true]}}', "citations"),
        ('{"name": "search", "arguments": {"query": NaN}}', "NaN"),
        ("[]", "no tool call"),
    ],
)
def test_openai_format_errors(text, problem):
    action = get_format("openai").parse(text)
    assert action.error is not None and problem in action.error
    assert '{"name": "search"' in action.error


def test_openai_answer_must_be_alone():
    text = '[{"name": "search", "arguments": {}}, {"name": "answer", "arguments": {"text": "W"}}]'
    assert "only call of its turn" in get_format("openai", max_calls_per_turn=2).parse(text).error


def test_openai_renders_tool_messages():
    rendered = get_format("openai").render_results([ToolResult("search", "hits", call_id="call_a"), ToolResult("open", "page")])
    first, second = (json.loads(line) for line in rendered.split("\n"))
    assert first == {"role": "tool", "tool_call_id": "call_a", "name": "search", "content": "hits"}
    assert second["tool_call_id"] == "call_1"
    assert '"name": "open"' in get_format("openai").system_prompt(SCHEMAS)


# -- search_r1 ------------------------------------------------------------------------


def test_search_r1_search_and_answer():
    fmt = get_format("search_r1")
    action = fmt.parse("<think>need facts</think>\n<search> Marie Curie </search>")
    assert action.calls == [ToolCall("search", {"query": "Marie Curie", "k": 3})] and action.thought == "need facts"
    assert fmt.parse("<think>ok</think><answer> Warsaw </answer>").answer == "Warsaw"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Warsaw", "no <search> or <answer>"),
        ("<search>a</search><search>b</search>", "2 tool calls"),
        ("<search> </search>", "empty <search>"),
        ("<answer>W</answer> done", "text after </answer>"),
        ("<answer><search>x</search></answer>", "a search inside the answer"),
        ("<search>x</search><answer>W</answer>", "not both"),
        ("<search>x</search><information>made up</information>", "do not write <information>"),
    ],
)
def test_search_r1_format_errors(text, problem):
    action = get_format("search_r1", parser="strict").parse(text)  # stillweb's strict parser (Search-R1's: test_search_r1_parity)
    assert action.error is not None and problem in action.error and "<search>" in action.error


def test_search_r1_renders_information_blocks():
    data = {"queries": [{"query": "q", "results": [{"doc_id": 4, "title": "T", "score": 1.0, "snippet": "S"}]}]}
    rendered = get_format("search_r1", results="snippets").render_results([ToolResult("search", "text", data), ToolResult("x", "oops", flag="tool_error")])
    assert rendered == "<information>Doc 1(Title: T) S</information>\n<information>oops</information>"
    assert "<search> query </search>" in get_format("search_r1").system_prompt(SCHEMAS)


# -- construction ---------------------------------------------------------------------


def test_get_format_rejects_unknown_names_and_bad_limits():
    with pytest.raises(ValueError, match="'hermes'"):
        get_format("hermes")
    with pytest.raises(ValueError, match="max_calls_per_turn"):
        get_format("tongyi", max_calls_per_turn=0)
    with pytest.raises(ValueError, match="search_k"):
        get_format("search_r1", search_k=0)


# -- adversarial text: no parser raises or hangs --------------------------------------

TAGS = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<answer>", "</answer>", "<search>", "</search>",
        "<citations>", "</citations>", "<tool_response>", "<information>", "{", "}", "[", "]", '"', ":", ",",
        '"name"', '"arguments"', '"tool_calls"', '"search"', '"answer"', "\\", "\ud800", "\x00", "NaN", "1"]

hostile_text = st.lists(st.sampled_from(TAGS) | st.text(max_size=8), max_size=40).map("".join)

BOMBS = [
    "[" * 100_000,
    "<tool_call>" + "[" * 99_000 + "</tool_call>",
    '{"name": "search", "arguments": ' + "{\"a\": " * 30_000 + "1" + "}" * 30_001,
    "<tool_call>" * 9_000,
    "<think>" * 14_000,
    "</answer>" * 10_000,
    "<answer>" + "x" * 99_000 + "</answer>",
    "x" * (MAX_ACTION_CHARS + 1),
    "\ud800\udfff\x00" * 1000,
    '<tool_call>{"name": "search", "arguments": {"query": "\\ud800"}}</tool_call>',
    "",
]


@pytest.mark.parametrize("name", sorted(FORMATS))
@pytest.mark.parametrize("text", BOMBS, ids=range(len(BOMBS)))
def test_parsers_survive_bombs(name, text):
    assert_one_outcome(get_format(name).parse(text))


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_parsers_reject_non_text(name):
    assert "must be text" in get_format(name).parse(None).error  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(FORMATS)), text=hostile_text | st.text(max_size=200))
def test_parsers_never_raise(name, text):
    assert_one_outcome(get_format(name, max_calls_per_turn=2).parse(text))


# Tags inside arguments are data, except the two a tag format cannot carry: "</think>" (reasoning is
# split off first) and "</tool_call>" (it ends the block, as in vLLM's Hermes parser).
UNCARRIABLE_TAGS = ("think>", "</tool_call>")
argument_text = st.text(max_size=20) | st.sampled_from(["<answer>", "<tool_call>", "<tool_response>", "<search>"])
call_arguments = st.dictionaries(
    st.text(max_size=8), st.integers() | argument_text | st.booleans(), max_size=3
).filter(lambda arguments: not any(tag in json.dumps(arguments, ensure_ascii=False) for tag in UNCARRIABLE_TAGS))


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(["search", "open", "find", "python"]), arguments=call_arguments)
def test_written_calls_parse_back(name, arguments):
    expected = [ToolCall(name, arguments)]
    assert get_format("tongyi").parse(tongyi_call(name, arguments)).calls == expected
    assert get_format("openai").parse(json.dumps({"name": name, "arguments": arguments})).calls == expected


@settings(max_examples=150, deadline=None)
@given(query=st.text(max_size=50).filter(lambda q: q.strip() and "<" not in q))
def test_search_r1_queries_parse_back(query):
    assert get_format("search_r1").parse(f"<search>{query}</search>").calls[0].arguments["query"] == query.strip()


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_format_parses_the_actions_it_writes(name):
    fmt = get_format(name)
    call = fmt.parse(fmt.write_call("search", {"query": "Ada Quill"}))
    assert [(c.name, c.arguments["query"]) for c in call.calls] == [("search", "Ada Quill")] and call.error is None
    answer = fmt.parse(fmt.write_answer("Paris", [3, 5]))
    assert (answer.answer, answer.abstained) == ("Paris", False)
    assert answer.citations == ([] if name == "search_r1" else [3, 5])
    abstain = fmt.parse(fmt.write_abstain("No document says."))
    assert abstain.abstained and abstain.error is None
    if name == "search_r1":
        with pytest.raises(ValueError, match="only the search tool"):
            fmt.write_call("open", {"doc_id": 1})
