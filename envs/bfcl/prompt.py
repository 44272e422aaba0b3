"""``BFCL-v0``'s tool schemas and prompt text, from BFCL's own function docs and prompts.

:func:`openai_schema` converts one BFCL function doc to an OpenAI function definition the way
BFCL's FC handlers do (``model_handler/utils.py`` ``_cast_to_openai_type``: BFCL's types mapped
with its ``GORILLA_TO_OPENAPI`` table, ``"dict"`` to ``"object"``, a float parameter marked
``format: float`` and "This is a float type value." in its description); the doc's ``response``
part is left out (no function-calling API takes it). Both the openai and tongyi formats list
these definitions.

>>> schema = openai_schema({"name": "f", "description": "d", "parameters": {"type": "dict",
...     "properties": {"x": {"type": "float", "description": "X."}}, "required": ["x"]}})
>>> schema["function"]["parameters"]["properties"]["x"]
{'type': 'number', 'description': 'X. This is a float type value.', 'format': 'float'}
"""

from __future__ import annotations

import copy
from typing import Any

from stillweb.sandboxes.formats.base import PromptWords

__all__ = ["openai_schema", "REPLY_SCHEMA", "ADDED_FUNCTIONS_PROMPT", "BFCL_INSTRUCTIONS", "bfcl_words"]

# BFCL-v0's own words: the system prompt's role line and closing (reply, or ask for what is missing), per format.
_BFCL_ROLE = ("You help a user through the functions of their apps (file system, messages, posts, tickets, trading, "
         "travel, vehicle). Call the functions the request needs.")
_BFCL_WORDS = {"tongyi": PromptWords(_BFCL_ROLE, "Then reply to the user inside <answer></answer>; if a request lacks something "
                                       "you need, ask for it in your reply."),
          "openai": PromptWords(_BFCL_ROLE, "Then reply with the answer function alone; if a request lacks something you need, "
                                       "ask for it in your reply.")}
# The system message when the functions go to the model as functions (TRL, verl, the SFT export).
BFCL_INSTRUCTIONS = ("You help a user through the functions of their apps (file system, messages, posts, tickets, "
                     "trading, travel, vehicle). Call the functions the request needs, then reply with the answer "
                     "function; if a request lacks something you need, ask for it in your reply.")


def bfcl_words(format_name: str) -> PromptWords:
    """BFCL-v0's words for the call format ``format_name``."""
    return _BFCL_WORDS.get(format_name, PromptWords(_BFCL_ROLE))

# BFCL's DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC (constants/default_prompts.py): the user turn
# of a miss_func task that brings the held-back functions.
ADDED_FUNCTIONS_PROMPT = "I have updated some more functions you can choose from. What about now?"

REPLY_SCHEMA = {
    "type": "function",
    "function": {
        "name": "answer",
        "description": ("Reply to the user and end your part of this turn: call it when you have no more functions to "
                        "call for the request (what you did, what you found, or what you still need to know)."),
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string", "maxLength": 5000, "description": "your reply to the user"}},
            "required": ["text"],
            "additionalProperties": False,
        },
    },
}

# BFCL's constants/type_mappings.py GORILLA_TO_OPENAPI (the types its multi-turn docs use and Python's names).
_TYPES = {"integer": "integer", "number": "number", "float": "number", "string": "string", "boolean": "boolean",
          "bool": "boolean", "array": "array", "list": "array", "dict": "object", "object": "object",
          "tuple": "array", "any": "string"}


def openai_schema(doc: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI function definition from a BFCL function doc."""
    parameters = copy.deepcopy(doc.get("parameters") or {"type": "dict", "properties": {}})
    parameters["type"] = "object"
    parameters["properties"] = {name: _cast(spec) for name, spec in (parameters.get("properties") or {}).items()}
    return {"type": "function", "function": {"name": doc["name"], "description": doc.get("description", ""),
                                             "parameters": parameters}}


def _cast(spec: dict[str, Any]) -> dict[str, Any]:
    """One property with BFCL's types mapped to JSON Schema's, nested properties and items too."""
    spec = dict(spec)
    kind = spec.get("type", "string")
    if kind == "float":
        spec["description"] = spec.get("description", "") + " This is a float type value."
        spec["format"] = "float"
    spec["type"] = _TYPES.get(kind, "string")
    if "properties" in spec:
        spec["properties"] = {name: _cast(inner) for name, inner in spec["properties"].items()}
    if isinstance(spec.get("items"), dict):
        spec["items"] = _cast(spec["items"])
    return spec
