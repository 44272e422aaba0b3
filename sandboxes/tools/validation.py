"""Argument validation: JSON-schema checks with messages a model can act on.

Each tool's schema is compiled once (:func:`compile_validator`); a call's
arguments are checked before the tool runs, and every problem is described by
field name and expected form (:func:`describe_errors`). Integers are strict:
``5.0`` and ``true`` are not integers here (plain jsonschema accepts ``5.0``).

:class:`ArgumentValidator` checks a flat schema (an object of strings, integers and
booleans, the shape of every app endpoint) with plain Python first and asks jsonschema
only when that quick check fails or the schema is not flat: the quick check accepts
nothing jsonschema would refuse, so the messages are jsonschema's, and a valid call no
longer pays for a jsonschema walk (about a third of an app call's cost).

The one documented leniency lives in :func:`doc_reference`: a document id given
as a numeric string (``"123"``) is taken as the id 123.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

from stillweb.sandboxes.tools.types import preview

__all__ = ["ArgumentValidator", "compile_validator", "describe_errors", "quick_check", "doc_reference", "MAX_REPORTED_ERRORS"]

# At most this many problems are listed in one error message.
MAX_REPORTED_ERRORS = 3


def _is_strict_integer(checker: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


_StrictValidator = validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_strict_integer),
)


def compile_validator(schema: dict) -> Draft202012Validator:
    """A validator for ``schema``; raises ``jsonschema.SchemaError`` if the schema itself is invalid."""
    _StrictValidator.check_schema(schema)
    return _StrictValidator(schema)


def describe_errors(validator: Draft202012Validator, arguments: Any) -> list[str]:
    """Messages for the ways ``arguments`` break the schema, in a stable order; empty if valid."""
    errors = sorted(validator.iter_errors(arguments), key=_error_sort_key)
    return [_describe(error) for error in errors[:MAX_REPORTED_ERRORS]]


class ArgumentValidator:
    """A tool's argument check: :func:`quick_check` first when the schema is flat, jsonschema otherwise.

    >>> check = ArgumentValidator({"type": "object", "properties": {"k": {"type": "integer", "minimum": 1}},
    ...                            "required": ["k"], "additionalProperties": False})
    >>> check.problems({"k": 2}), check.problems({"k": 0})
    ([], ["argument 'k' must be at least 1, got 0"])
    """

    def __init__(self, schema: dict) -> None:
        self.validator = compile_validator(schema)
        self._quick = quick_check(schema)

    def problems(self, arguments: Any) -> list[str]:
        """The messages of :func:`describe_errors` (empty when ``arguments`` are valid)."""
        if self._quick is not None and self._quick(arguments):
            return []
        return describe_errors(self.validator, arguments)


# Keywords a flat schema may use: checked ones, and annotations that constrain nothing.
_OBJECT_KEYWORDS = {"type", "properties", "required", "additionalProperties", "minProperties", "description", "title"}
_FIELD_KEYWORDS = {"type", "minimum", "maximum", "minLength", "maxLength", "enum", "description", "default", "title", "examples"}


def quick_check(schema: dict) -> Callable[[Any], bool] | None:
    """A plain-Python test that is true only for arguments ``schema`` accepts, or None when the schema is
    not flat (an object whose properties are strings, strict integers or booleans with length, range and
    string-enum limits). False means "not sure": ask jsonschema (:func:`describe_errors`) for the reasons.

    >>> quick_check({"type": "object", "properties": {"q": {"type": "string", "maxLength": 3}}})({"q": "abcd"})
    False
    >>> quick_check({"type": "object", "properties": {"q": {"anyOf": [{"type": "string"}]}}}) is None
    True
    """
    if schema.get("type") != "object" or not set(schema) <= _OBJECT_KEYWORDS:
        return None
    properties = schema.get("properties", {})
    fields = {name: _field_check(spec) for name, spec in properties.items()} if isinstance(properties, dict) else None
    closed = schema.get("additionalProperties", True)
    if fields is None or any(check is None for check in fields.values()) or closed not in (True, False):
        return None
    required = tuple(schema.get("required", ()))
    least = schema.get("minProperties", 0)
    if type(least) is not int:
        return None

    def check(arguments: Any) -> bool:
        if type(arguments) is not dict or len(arguments) < least:
            return False
        for name in required:
            if name not in arguments:
                return False
        for name, value in arguments.items():
            test = fields.get(name)
            if test is None:
                if closed is False:
                    return False
            elif not test(value):
                return False
        return True

    return check


def _field_check(spec: Any) -> Callable[[Any], bool] | None:
    """The test of one flat property, or None if it is not flat."""
    if not isinstance(spec, dict) or not set(spec) <= _FIELD_KEYWORDS:
        return None
    kind, enum = spec.get("type"), spec.get("enum")
    low, high = spec.get("minimum"), spec.get("maximum")
    shortest, longest = spec.get("minLength", 0), spec.get("maxLength")
    if kind == "string" and low is None and high is None and (enum is None or all(type(item) is str for item in enum)):
        allowed = None if enum is None else frozenset(enum)
        return lambda value: (type(value) is str and len(value) >= shortest and (longest is None or len(value) <= longest)
                              and (allowed is None or value in allowed))
    if kind == "integer" and enum is None and "minLength" not in spec and longest is None:
        return lambda value: type(value) is int and (low is None or value >= low) and (high is None or value <= high)
    if kind == "boolean" and set(spec) <= {"type", "description", "default", "title", "examples"}:
        return lambda value: type(value) is bool
    return None


def doc_reference(value: int | str) -> int | str:
    """The document a ``doc`` argument names: an int id, or a title string.

    The leniency: a string of ASCII digits (surrounding spaces allowed) is a doc id,
    so ``"123"`` opens doc 123, not a page titled "123".
    """
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.isascii() and stripped.isdigit() and len(stripped) <= 10:
            return int(stripped)
    return value


def _error_sort_key(error: ValidationError) -> tuple:
    return (tuple(str(part) for part in error.absolute_path), str(error.validator), error.message[:200])


def _field(error: ValidationError) -> str:
    path = list(error.absolute_path)
    return ".".join(str(part) for part in path) if path else ""


def _expected_type(schema: dict) -> str:
    if "anyOf" in schema or "oneOf" in schema:
        options = schema.get("anyOf") or schema.get("oneOf")
        return " or ".join(_expected_type(option) for option in options)
    kind = schema.get("type", "value")
    article = "an" if str(kind)[0] in "aeiou" else "a"
    return f"{article} {kind}"


def _describe(error: ValidationError) -> str:
    if error.validator in ("anyOf", "oneOf"):
        # The value had the right type for one alternative but broke one of its rules
        # (e.g. a string that is too long): report that rule, not the type mismatch.
        specific = sorted((e for e in error.context if e.validator != "type"), key=_error_sort_key)
        if specific:
            return _describe(specific[0])
    name = _field(error)
    where = f"argument '{name}'" if name else "the arguments"
    kind = error.validator
    schema = error.schema if isinstance(error.schema, dict) else {}
    value = error.validator_value
    if kind == "required":
        missing = [key for key in value if not isinstance(error.instance, dict) or key not in error.instance]
        return f"missing required argument '{missing[0] if missing else value[0]}'"
    if kind == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted((str(k) for k in error.instance if k not in allowed)) if isinstance(error.instance, dict) else []
        extras = ", ".join(f"'{str(key)[:40]}'" for key in extra[:5])
        return f"unexpected argument(s) {extras}; allowed: {', '.join(allowed)}"
    if kind in ("type", "anyOf", "oneOf"):
        if not name and not isinstance(error.instance, dict):
            return f"the arguments must be a JSON object, got {preview(error.instance)}"
        return f"{where} must be {_expected_type(schema)}, got {preview(error.instance)}"
    if kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is not None and high is not None:
            return f"{where} must be between {low} and {high}, got {preview(error.instance)}"
        bound = "at least" if kind.endswith("inimum") else "at most"
        return f"{where} must be {bound} {value}, got {preview(error.instance)}"
    if kind == "maxLength":
        return f"{where} is too long ({len(error.instance)} characters; at most {value})"
    if kind == "minLength":
        return f"{where} must not be empty" if value == 1 else f"{where} needs at least {value} characters"
    if kind == "minProperties":
        return f"give at least {value - 1} field(s) to change besides the id" if "id" in (error.instance or {}) else f"give at least {value} argument(s)"
    if kind == "enum":
        return f"{where} must be one of {', '.join(map(str, value))}, got {preview(error.instance)}"
    if kind == "maxItems":
        return f"{where} has too many items ({len(error.instance)}; at most {value})"
    if kind == "minItems":
        return f"{where} needs at least {value} item(s)"
    return f"{where}: {error.message[:200]}"
