"""Tests of the agent tools, their validation and the ToolRegistry, on a small hand-made snapshot."""

from __future__ import annotations

import json
import sys
import types
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from stillweb.corpora.snapshot.reading import Snapshot
from support.snapshots import build_tool_snapshot
from stillweb.sandboxes import FLAGS, TOOL_NAMES, ToolCall, ToolRegistry, ToolResult, paginate
from stillweb.sandboxes.tools.arithmetic import CalculatorError, evaluate
from stillweb.sandboxes.tools.python_and_calculator import MAX_STREAM_CHARS, TRUNCATION_MARKER

@pytest.fixture(scope="module")
def snapshot(tmp_path_factory) -> Snapshot:
    return Snapshot.open(build_tool_snapshot(tmp_path_factory.mktemp("tools") / "snap"))


@pytest.fixture(scope="module")
def registry(snapshot) -> ToolRegistry:
    return ToolRegistry(snapshot)


def call(registry: ToolRegistry, name: str, **arguments) -> ToolResult:
    return registry.call(ToolCall(name, arguments))


# -- types and registry ---------------------------------------------------------------


def test_call_and_result_round_trip_through_json():
    tool_call = ToolCall("search", {"query": "x"}, call_id="c1")
    assert ToolCall.from_dict(json.loads(json.dumps(tool_call.to_dict()))) == tool_call
    result = ToolResult("search", "text", {"a": [1]}, flag="not_found", call_id="c1", shown_docs=(3, 1), opened_doc=3)
    assert ToolResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result
    with pytest.raises(ValueError, match="flag"):
        ToolResult("x", "y", flag="oops")


def test_results_report_the_documents_they_showed_and_opened(registry):
    """The typed fields agree with the structured data, so environments never read ``data`` or ``text``."""
    found = call(registry, "search", query=["Warsaw", "river Curie"], k=3)
    hits = [hit["doc_id"] for query in found.data["queries"] for hit in query["results"]]
    assert found.shown_docs == tuple(dict.fromkeys(hits)) and found.shown_docs and found.opened_doc is None
    doc = found.shown_docs[0]
    opened = call(registry, "open", doc=doc)
    assert opened.shown_docs == (doc,) and opened.opened_doc == doc
    assert call(registry, "find", doc=doc, pattern="a").shown_docs == (doc,)
    assert call(registry, "find", doc=doc, pattern="a").opened_doc is None
    beyond = call(registry, "open", doc=doc, page=999)
    assert beyond.flag == "bad_arguments" and beyond.shown_docs == (doc,) and beyond.opened_doc is None
    missing = call(registry, "open", doc="No Such Title Anywhere")
    assert missing.flag == "not_found" and missing.shown_docs == () and missing.opened_doc is None


def test_registry_whitelist_and_names(snapshot):
    assert ToolRegistry(snapshot).names == TOOL_NAMES
    assert ToolRegistry(snapshot, tools=["search", "answer"]).names == ("search", "answer")
    with pytest.raises(ValueError, match="browse"):
        ToolRegistry(snapshot, tools=["search", "browse"])


def test_schemas_are_valid_closed_object_schemas(registry):
    for definition in registry.schemas():
        assert definition["type"] == "function"
        function = definition["function"]
        assert set(function) == {"name", "description", "parameters"}
        Draft202012Validator.check_schema(function["parameters"])
        assert function["parameters"]["type"] == "object"
        assert function["parameters"]["additionalProperties"] is False
    assert [tool["name"] for tool in registry.mcp_tools()] == list(registry.names)
    assert all(set(tool) == {"name", "description", "inputSchema"} for tool in registry.mcp_tools())


def test_unknown_tool_lists_available_tools(registry):
    result = call(registry, "browse", url="x")
    assert result.flag == "unknown_tool"
    assert "search, open, find" in result.text
    assert registry.call(ToolCall(None, None)).flag == "unknown_tool"  # type: ignore[arg-type]


def test_tool_not_in_whitelist_is_unknown(snapshot):
    assert ToolRegistry(snapshot, tools=["search"]).call(ToolCall("open", {"doc": 0})).flag == "unknown_tool"


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("search", {}, "missing required argument 'query'"),
        ("search", {"query": "x", "q": 1}, "unexpected argument(s) 'q'"),
        ("search", {"query": "x", "k": 50}, "argument 'k' must be between 1 and 10"),
        ("search", {"query": "x", "k": 5.0}, "argument 'k' must be an integer"),
        ("search", {"query": "x", "k": True}, "argument 'k' must be an integer"),
        ("search", {"query": "x" * 600}, "argument 'query' is too long (600 characters; at most 500)"),
        ("search", {"query": ["a"] * 6}, "too many items"),
        ("open", {"doc": [1]}, "argument 'doc' must be an integer or a string"),
        ("open", {"doc": -1}, "argument 'doc'"),
        ("calculator", {"expression": 3}, "argument 'expression' must be a string"),
        ("answer", {"text": "a", "citations": "12"}, "argument 'citations' must be an array"),
    ],
)
def test_bad_arguments_name_the_field_and_show_an_example(registry, name, arguments, expected):
    result = registry.call(ToolCall(name, arguments))
    assert result.flag == "bad_arguments"
    assert expected in result.text
    assert "Example: " + name + "({" in result.text


def test_non_dict_arguments_are_bad_arguments(registry):
    result = registry.call(ToolCall("search", ["x"]))  # type: ignore[arg-type]
    assert result.flag == "bad_arguments"
    assert "must be a JSON object" in result.text


def test_call_id_and_alias_are_echoed(registry):
    result = registry.call(ToolCall("visit", {"doc": 0}, call_id="call_7"))
    assert (result.name, result.call_id, result.flag) == ("visit", "call_7", None)


# -- search ---------------------------------------------------------------------------


def test_search_lists_numbered_results(registry):
    result = call(registry, "search", query="Warsaw capital", k=2)
    assert result.flag is None
    assert result.text.startswith('Results for "Warsaw capital":\n1. [doc 1] Warsaw\n   Warsaw is the capital')
    hits = result.data["queries"][0]["results"]
    assert [hit["doc_id"] for hit in hits][0] == 1
    assert set(hits[0]) == {"doc_id", "source_id", "title", "score", "snippet"}


def test_search_matches_snapshot_search(registry, snapshot):
    hits = call(registry, "search", query="river", k=3).data["queries"][0]["results"]
    assert [hit["doc_id"] for hit in hits] == [r.doc_id for r in snapshot.search("river", 3)]


def test_search_many_queries_in_order(registry):
    result = call(registry, "search", query=["nobel", "vistula"], k=1)
    assert [q["query"] for q in result.data["queries"]] == ["nobel", "vistula"]
    assert result.text.index('"nobel"') < result.text.index('"vistula"')


def test_search_without_results_and_blank_query(registry):
    assert "No results" in call(registry, "search", query="zzzqqq").text
    assert call(registry, "search", query="   ").flag == "bad_arguments"


# -- open and find --------------------------------------------------------------------


@pytest.mark.parametrize("doc", [0, "0", " 0 ", "Marie Curie", "Curie", "marie curie", "Marie_Curie"])
def test_open_resolves_ids_numeric_strings_titles_and_redirects(registry, doc):
    result = call(registry, "open", doc=doc)
    assert result.flag is None
    assert result.data["doc_id"] == 0
    assert "Page 1 of 1. End of document." in result.text


def test_numeric_string_is_a_doc_id_not_a_title(registry):
    assert call(registry, "open", doc="1984").flag == "not_found"  # there is no doc 1984
    assert call(registry, "open", doc=3).data["title"] == "1984"


def test_open_paginates_and_says_how_to_read_on(registry, snapshot):
    first = call(registry, "open", doc="Long River")
    pages = first.data["pages"]
    assert pages > 1
    assert f"Page 1 of {pages}. Next page: open({{\"doc\": 2, \"page\": 2}})" in first.text
    contents = [call(registry, "open", doc=2, page=n).data["content"] for n in range(1, pages + 1)]
    assert "".join(contents) == snapshot.get(2).text
    assert all(len(content) <= 2000 for content in contents)


def test_open_page_out_of_range_names_the_range(registry):
    pages = call(registry, "open", doc=2).data["pages"]
    result = call(registry, "open", doc=2, page=pages + 1)
    assert result.flag == "bad_arguments"
    assert f"has pages 1 to {pages}" in result.text


def test_open_unknown_title_suggests_nearest_titles(registry):
    result = call(registry, "open", doc="Marie Curi")
    assert result.flag == "not_found"
    assert '"Marie Curie"' in result.text
    assert "Marie Curie" in result.data["nearest_titles"]
    assert call(registry, "open", doc=999).flag == "not_found"


def test_find_reports_page_and_offset_of_each_line(registry):
    result = call(registry, "find", doc="Long River", pattern="GOLD")
    assert result.flag is None and result.data["total"] == 1
    match = result.data["matches"][0]
    content = call(registry, "open", doc=2, page=match["page"]).data["content"]
    assert content[match["offset"] : match["offset"] + 4] == "Gold"


def test_find_caps_matches_with_a_note(registry):
    result = call(registry, "find", doc=2, pattern="river")
    assert result.data["total"] == 30 and len(result.data["matches"]) == 10
    assert "showing the first 10 of 30" in result.text


def test_find_without_match_and_unknown_doc(registry):
    assert call(registry, "find", doc=0, pattern="zebra").text.startswith("No line of [doc 0] Marie Curie")
    assert call(registry, "find", doc="Nowhere", pattern="x").flag == "not_found"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab \n", max_size=400), st.integers(min_value=1, max_value=50))
def test_paginate_covers_text_in_bounded_pages(text, page_chars):
    starts = paginate(text, page_chars)
    bounds = starts + [len(text)]
    assert starts[0] == 0
    assert all(0 < bounds[i + 1] - bounds[i] <= page_chars for i in range(len(starts) - 1)) or len(starts) == 1
    assert len(text) - starts[-1] <= page_chars


# -- calculator -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("0.1 + 0.2", "0.3"),
        ("1/3", "1/3 (≈ 0.333333333333333)"),
        ("2**10 - 24", "1000"),
        ("-(3 - 5) * 2", "4"),
        ("7 // 2 + 7 % 2", "4"),
        ("sqrt(16/9)", "4/3 (≈ 1.33333333333333)"),
        ("9 ** 0.5", "3"),
        ("sqrt(2)", "1.4142135623730951 (approximate)"),
        ("round(2.5) + round(3.14159, 2)", "5.14"),
        ("max(1, 2.5, -3) + min(4, 5) + abs(-1)", "7.5"),
        ("1_000 * 1e3", "1000000"),
        ("2 ** -2", "0.25"),
    ],
)
def test_calculator_is_exact(expression, value):
    assert evaluate(expression).text == value


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("1/0", "division by zero"),
        ("2 ** 100000", "power too large"),
        ("10 ** 10 ** 10", "power too large"),
        ("__import__('os')", "unsupported function"),
        ("(1).real", "unsupported element"),
        ("x + 1", "unsupported element"),
        ("2 ** 0.3", "integer exponents"),
        ("sqrt(-1)", "negative"),
        ("1 +", "not a valid arithmetic expression"),
        ("-" * 500 + "1", "nested too deeply"),
        ("9" * 1001, "too long"),
        ("'a' * 3", "only numbers"),
    ],
)
def test_calculator_rejects_with_a_clear_message(expression, message):
    with pytest.raises(CalculatorError, match=message):
        evaluate(expression)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789.+-*/%() e_sqrtabminx,", max_size=60))
def test_calculator_never_raises_anything_else(expression):
    try:
        evaluate(expression)
    except CalculatorError:
        pass


def test_calculator_tool_errors_are_bad_arguments(registry):
    assert call(registry, "calculator", expression="(1914 - 1867) * 12 / 5").text == "(1914 - 1867) * 12 / 5 = 112.8"
    result = call(registry, "calculator", expression="1/0")
    assert result.flag == "bad_arguments" and "division by zero" in result.text


# -- answer ---------------------------------------------------------------------------


def test_answer_is_terminal_and_resolves_citations(registry):
    result = call(registry, "answer", text="1867", citations=[0, "Curie", "Nope", "2"])
    assert result.terminal and result.flag is None
    assert result.data["answer"] == "1867"
    found = [(c["doc_id"], c["found"]) for c in result.data["citations"]]
    assert found == [(0, True), (0, True), (None, False), (2, True)]
    assert '"Nope" (not found)' in result.text


# -- python ---------------------------------------------------------------------------


@dataclass
class _FakeExecution:
    stdout: str
    stderr: str
    exit_code: int
    reason: str
    stdout_truncated: bool = False
    stderr_truncated: bool = False


@pytest.fixture
def fake_sandbox(monkeypatch):
    """Stand in for ``pysandbox`` so these tests check only the tool's rendering."""
    module = types.ModuleType("stillweb.sandboxes.python.sandbox")
    module.PythonSandboxConfig = lambda: "config"
    module.outcome = _FakeExecution("", "", 0, "ok")
    module.run_python = lambda code, config: module.outcome
    monkeypatch.setitem(sys.modules, "stillweb.sandboxes.python.sandbox", module)
    return module


def test_python_tool_shows_streams_and_truncates(snapshot, fake_sandbox):
    fake_sandbox.outcome = _FakeExecution("x" * (MAX_STREAM_CHARS + 10), "warn", 1, "error")
    result = ToolRegistry(snapshot, tools=["python"]).call(ToolCall("python", {"code": "print(1)"}))
    assert result.flag is None
    assert result.text.startswith("exit code: 1 (error)\nstdout:\n")
    assert TRUNCATION_MARKER in result.text and result.data["stdout_truncated"]
    assert result.data["stderr"] == "warn"


def test_python_tool_flags_timeouts(snapshot, fake_sandbox):
    fake_sandbox.outcome = _FakeExecution("", "", -9, "timeout")
    assert ToolRegistry(snapshot, tools=["python"]).call(ToolCall("python", {"code": "while 1: pass"})).flag == "timeout"


# -- the boundary: nothing raises ------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)
argument_names = st.sampled_from(["query", "k", "doc", "page", "pattern", "expression", "text", "citations", "code", "x"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["search", "open", "visit", "find", "calculator", "answer", "nope", ""]),
    arguments=st.dictionaries(argument_names, json_values, max_size=4) | json_values,
)
@pytest.mark.slow
def test_registry_never_raises_and_results_serialise(registry, name, arguments):
    result = registry.call(ToolCall(name, arguments))
    assert isinstance(result, ToolResult) and result.flag in FLAGS
    json.dumps(result.to_dict())


# -- on the shared synthetic snapshot ---------------------------------------------------


def test_tools_on_synthetic_snapshot(small_snapshot):
    snapshot = Snapshot.open(small_snapshot)
    registry = ToolRegistry(snapshot, tools=["search", "open", "find"])
    for doc_id in range(0, len(snapshot), max(1, len(snapshot) // 10)):
        document = snapshot.get(doc_id)
        pages = call(registry, "open", doc=document.title).data["pages"]
        contents = [call(registry, "open", doc=doc_id, page=n).data["content"] for n in range(1, pages + 1)]
        assert "".join(contents) == document.text
        word = document.title.split()[0]
        for match in call(registry, "find", doc=doc_id, pattern=word).data["matches"]:
            start = match["offset"]
            assert contents[match["page"] - 1][start : start + len(word)].lower() == word.lower()
        hits = call(registry, "search", query=document.title, k=10).data["queries"][0]["results"]
        assert [hit["doc_id"] for hit in hits] == [r.doc_id for r in snapshot.search(document.title, 10)]
