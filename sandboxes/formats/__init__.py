"""The tool-call text formats, by name.

>>> fmt = get_format("tongyi", max_calls_per_turn=2)
>>> fmt.parse('<tool_call>{"name": "search", "arguments": {"query": "x"}}</tool_call>').calls[0].name
'search'

Formats: ``"tongyi"`` (:class:`TongyiFormat`), ``"openai"`` (:class:`OpenAIFormat`,
which also reads Hermes ``<tool_call>`` tags) and ``"search_r1"``
(:class:`SearchR1Format`). Each has ``parse(text) -> ParsedAction``,
``render_results(results) -> str`` and ``system_prompt(schemas) -> str``.

The formats are one registry, :data:`FORMATS` (name -> class): to add a format, write its module (a
:class:`ToolCallFormat`) and add one entry there; ``get_format``, the CLI's ``--tool-format`` choices, the
viewer's play page and the docs' lists (checked by tests/test_registries.py) read it.
"""

from __future__ import annotations

from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.sandboxes.formats.base import MAX_ACTION_CHARS, ParsedAction, ToolCallFormat
from stillweb.sandboxes.formats.openai import OpenAIFormat
from stillweb.sandboxes.formats.search_r1 import SearchR1Format
from stillweb.sandboxes.formats.tongyi import TongyiFormat

__all__ = [
    "FORMATS",
    "MAX_ACTION_CHARS",
    "OpenAIFormat",
    "ParsedAction",
    "SearchR1Format",
    "TongyiFormat",
    "ToolCallFormat",
    "get_format",
]

FORMATS: dict[str, type[ToolCallFormat]] = {
    "tongyi": TongyiFormat,
    "openai": OpenAIFormat,
    "search_r1": SearchR1Format,
}


def get_format(name: str, **options: Any) -> ToolCallFormat:
    """A new format by name; ``options`` go to its constructor (``max_calls_per_turn``, ``search_k``).

    Raises ``ValueError`` naming the unknown format and the available ones.
    """
    if name not in FORMATS:
        raise UsageError(f"unknown format {name!r}; available: {sorted(FORMATS)}")
    return FORMATS[name](**options)
