"""The computing tools: ``python`` (code in the sandbox) and ``calculator`` (exact arithmetic).

``python`` runs code through :func:`stillweb.sandboxes.python.sandbox.run_python`
(imported when first called, so the other tools work without it) and shows
stdout, stderr and how the run ended, each cut at :data:`MAX_STREAM_CHARS`
characters with a visible marker. A run stopped by its time limit is flagged
``timeout``; a program that fails (non-zero exit) is a normal result, since
reading the traceback is how the model debugs.
"""

from __future__ import annotations

from typing import Any

from stillweb.sandboxes.tools.arithmetic import MAX_EXPRESSION_CHARS, SUPPORTED, CalculatorError, evaluate
from stillweb.sandboxes.tools.types import Tool, ToolInputError, ToolResult, example_call

__all__ = ["PythonTool", "CalculatorTool", "MAX_CODE_CHARS", "MAX_STREAM_CHARS"]

MAX_CODE_CHARS = 20_000
MAX_STREAM_CHARS = 4_000
TRUNCATION_MARKER = "\n[... output truncated ...]"


class PythonTool(Tool):
    """Run a Python program in an isolated sandbox and show its output."""

    name = "python"
    description = (
        "Run a Python 3 program in an isolated sandbox (no network, no files kept, limited time and memory) "
        "and return what it printed. Use print() to see values."
    )
    parameters = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "minLength": 1, "maxLength": MAX_CODE_CHARS, "description": "The program to run."}
        },
        "required": ["code"],
        "additionalProperties": False,
    }
    example = {"code": "print(sum(range(10)))"}

    def __init__(self, config: Any = None) -> None:
        self.config = config

    def run(self, arguments: dict) -> ToolResult:
        """stdout, stderr and the exit reason of the program."""
        try:
            from stillweb.sandboxes.python.sandbox import PythonSandboxConfig, run_python
        except ImportError:
            raise ToolInputError("tool_error", "The python tool is not available in this environment; use calculator.") from None
        if self.config is None:
            self.config = PythonSandboxConfig()
        execution = run_python(arguments["code"], self.config)
        stdout, stdout_cut = _truncate(execution.stdout, execution.stdout_truncated)
        stderr, stderr_cut = _truncate(execution.stderr, execution.stderr_truncated)
        text = f"exit code: {execution.exit_code} ({execution.reason})\nstdout:\n{stdout or '(empty)'}"
        if stderr:
            text += f"\nstderr:\n{stderr}"
        data = {
            "stdout": stdout,
            "stderr": stderr,
            "exit_code": execution.exit_code,
            "reason": execution.reason,
            "stdout_truncated": stdout_cut,
            "stderr_truncated": stderr_cut,
        }
        flag = "timeout" if execution.reason == "timeout" else None
        return ToolResult(name=self.name, text=text, data=data, flag=flag)


def _truncate(stream: str, already_truncated: bool) -> tuple[str, bool]:
    """The stream cut to :data:`MAX_STREAM_CHARS` with a marker if it was cut here or in the sandbox."""
    cut = already_truncated or len(stream) > MAX_STREAM_CHARS
    return (stream[:MAX_STREAM_CHARS] + TRUNCATION_MARKER if cut else stream), cut


class CalculatorTool(Tool):
    """Evaluate an arithmetic expression exactly (rational arithmetic, no eval)."""

    name = "calculator"
    description = (
        "Evaluate an arithmetic expression exactly (0.1 + 0.2 = 0.3, 1/3 stays a fraction). "
        f"Supports {SUPPORTED}. Example: (2**10 - 24) / 7"
    )
    parameters = {
        "type": "object",
        "properties": {
            "expression": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_EXPRESSION_CHARS,
                "description": "An arithmetic expression.",
            }
        },
        "required": ["expression"],
        "additionalProperties": False,
    }
    example = {"expression": "(1914 - 1867) * 12 / 5"}

    def run(self, arguments: dict) -> ToolResult:
        """The exact value; an expression that cannot be evaluated is ``bad_arguments``."""
        expression = arguments["expression"]
        try:
            calculation = evaluate(expression)
        except CalculatorError as error:
            message = f"cannot evaluate the expression: {error}. Example: {example_call(self.name, self.example)}"
            raise ToolInputError("bad_arguments", message, {"expression": expression, "error": str(error)}) from None
        data = {
            "expression": expression,
            "value": calculation.text,
            "exact": calculation.exact,
            "numerator": calculation.numerator,
            "denominator": calculation.denominator,
        }
        return self.result(f"{expression.strip()} = {calculation.text}", data)
