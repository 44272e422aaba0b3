"""The quick check of flat schemas never accepts what jsonschema refuses, and the messages stay jsonschema's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stillweb.sandboxes.apps import app_registry
from stillweb.sandboxes.tools.validation import ArgumentValidator, compile_validator, describe_errors, quick_check

SCHEMAS = [schema["function"]["parameters"] for schema in app_registry().schemas()]
FIELD_NAMES = sorted({name for schema in SCHEMAS for name in schema.get("properties", {})})[:40] + ["other"]
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 300), st.floats(-2, 2, allow_nan=False),
                   st.text(max_size=6), st.sampled_from(["inbox", "sent", "x" * 101, "", "1"]),
                   st.lists(st.integers(0, 3), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=1))


def test_every_app_endpoint_schema_is_flat():
    assert all(quick_check(schema) is not None for schema in SCHEMAS)


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"q": {"anyOf": [{"type": "string"}, {"type": "array"}]}}},
    {"type": "object", "properties": {"q": {"type": "string", "pattern": "^a"}}},
    {"type": "object", "properties": {"n": {"type": "integer", "enum": [1, 2]}}},
    {"type": "array"},
])
def test_schemas_that_are_not_flat_go_to_jsonschema(schema):
    assert quick_check(schema) is None
    assert ArgumentValidator(schema).problems({"q": 5, "n": 3}) == describe_errors(compile_validator(schema), {"q": 5, "n": 3})


@settings(max_examples=200, deadline=None)
@given(index=st.integers(0, len(SCHEMAS) - 1), data=st.data())
def test_the_quick_check_agrees_with_jsonschema(index, data):
    schema = SCHEMAS[index]
    own = sorted(schema.get("properties", {})) or ["other"]
    names = st.sampled_from(own) if data.draw(st.booleans()) else st.sampled_from(own + FIELD_NAMES)
    arguments = data.draw(st.one_of(st.dictionaries(names, VALUES, max_size=4), VALUES))
    expected = describe_errors(compile_validator(schema), arguments)
    if quick_check(schema)(arguments):
        assert expected == []
    assert ArgumentValidator(schema).problems(arguments) == expected


def test_valid_arguments_of_every_endpoint_pass_the_quick_check():
    registry = app_registry()
    for name in registry.names:
        tool = registry.tool(name)
        assert quick_check(tool.parameters)(tool.example), name


def _edges(spec: dict) -> list:
    """Values at and just past each limit of one property, and values of the wrong type."""
    values = [None, True, 1, 1.0, "", "1", [], {}]
    for key in ("minLength", "maxLength"):
        if key in spec:
            values += ["x" * max(0, spec[key] - 1), "x" * spec[key], "x" * (spec[key] + 1)]
    for key in ("minimum", "maximum"):
        if key in spec:
            values += [spec[key] - 1, spec[key], spec[key] + 1, float(spec[key])]
    return values + list(spec.get("enum", ())) + [str(item) + "!" for item in spec.get("enum", ())]


def test_limits_of_every_endpoint_agree_with_jsonschema():
    registry = app_registry()
    checked = 0
    for name in registry.names:
        tool = registry.tool(name)
        validator = compile_validator(tool.parameters)
        for field, spec in tool.parameters["properties"].items():
            for value in _edges(spec):
                arguments = {**tool.example, field: value}
                expected = describe_errors(validator, arguments)
                assert ArgumentValidator(tool.parameters).problems(arguments) == expected, (name, field, value)
                checked += not expected
        for missing in tool.parameters.get("required", ()):
            arguments = {key: value for key, value in tool.example.items() if key != missing}
            assert ArgumentValidator(tool.parameters).problems(arguments) == describe_errors(validator, arguments)
    assert checked > 100  # many edge values are valid: the quick path is exercised, not only the fallback
