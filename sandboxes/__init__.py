"""Tools an agent can call over a corpus snapshot, their JSON schemas and
validation, the tool-call text formats, and the code-execution sandbox.

The public names: :class:`ToolCall`, :class:`ToolResult`, :class:`ToolRegistry`
(``.call`` never raises on policy input), the tool classes, and the text
formats (:func:`get_format`: ``"tongyi"``, ``"openai"``, ``"search_r1"``).
"""

from stillweb.sandboxes.formats import FORMATS, ParsedAction, ToolCallFormat, get_format
from stillweb.sandboxes.tools.registry import TOOL_NAMES, ToolRegistry
from stillweb.sandboxes.tools.types import FLAGS, Tool, ToolCall, ToolInputError, ToolResult
from stillweb.sandboxes.tools.answer import AnswerTool
from stillweb.sandboxes.tools.python_and_calculator import CalculatorTool, PythonTool
from stillweb.sandboxes.tools.documents import FindTool, OpenTool, paginate
from stillweb.sandboxes.tools.search import SearchTool

__all__ = [
    "FLAGS",
    "FORMATS",
    "ParsedAction",
    "ToolCallFormat",
    "get_format",
    "TOOL_NAMES",
    "AnswerTool",
    "CalculatorTool",
    "FindTool",
    "OpenTool",
    "PythonTool",
    "SearchTool",
    "Tool",
    "ToolCall",
    "ToolInputError",
    "ToolRegistry",
    "ToolResult",
    "paginate",
]
