"""Exact arithmetic for the ``calculator`` tool, without ``eval``.

:func:`evaluate` parses an expression with :mod:`ast` and walks the tree itself,
computing with :class:`fractions.Fraction`, so ``0.1 + 0.2`` is exactly ``0.3``
and ``1/3`` stays a third. Supported:

- numbers: integers, decimals (``2.5``, ``1e3``, ``1_000``), taken exactly as written;
- operators: ``+ - * / // % **``, unary ``+``/``-``, parentheses;
- functions: ``sqrt(x)``, ``abs(x)``, ``round(x)`` / ``round(x, n)`` (half to even),
  ``min(a, b, ...)``, ``max(a, b, ...)``, ``floor(x)``, ``ceil(x)``;
- constants: ``pi``, ``e`` (as floats).

Exponents must be integers or halves (``x ** 0.5`` is ``sqrt(x)``). ``sqrt`` of a
perfect rational square is exact; otherwise the result is an IEEE float, marked
approximate (``sqrt`` is correctly rounded, so it is the same on every machine).
Guards: at most :data:`MAX_EXPRESSION_CHARS` characters, nesting depth
:data:`MAX_DEPTH`, and no number beyond :data:`MAX_BITS` bits, checked before a
power is computed. Every failure is a :class:`CalculatorError` with a message
meant for the model.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction

from stillweb.corpora.errors import PolicyInputError

__all__ = ["CalculatorError", "Calculation", "evaluate", "MAX_BITS", "MAX_DEPTH", "MAX_EXPRESSION_CHARS"]

MAX_EXPRESSION_CHARS = 1000
MAX_DEPTH = 60
MAX_BITS = 4000  # about 1,200 decimal digits
SIGNIFICANT_DIGITS = 15
MAX_EXACT_DECIMALS = 30

Number = Fraction | float


class CalculatorError(PolicyInputError, ValueError):
    """An expression the calculator cannot evaluate; the message says why."""


@dataclass(frozen=True)
class Calculation:
    """The value of an expression: ``text`` as shown to the model, ``exact`` is false for floats."""

    expression: str
    text: str
    exact: bool
    numerator: int | None = None
    denominator: int | None = None


def evaluate(expression: str) -> Calculation:
    """Evaluate ``expression`` exactly; raises :class:`CalculatorError` on any problem."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise CalculatorError(f"expression too long ({len(expression)} characters; at most {MAX_EXPRESSION_CHARS})")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise CalculatorError(f"not a valid arithmetic expression ({type(exc).__name__}: {str(exc)[:100]})") from None
    try:
        value = _Evaluator(expression).visit(tree.body, 0)
    except RecursionError:
        raise CalculatorError(f"expression nested too deeply (at most {MAX_DEPTH} levels)") from None
    except ZeroDivisionError:
        raise CalculatorError("division by zero") from None
    except OverflowError:
        raise CalculatorError("number too large for a float result") from None
    return _calculation(expression, value)


def _calculation(expression: str, value: Number) -> Calculation:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CalculatorError("result is not a finite number")
        return Calculation(expression, f"{value!r} (approximate)", exact=False)
    return Calculation(expression, _format_fraction(value), True, value.numerator, value.denominator)


def _format_fraction(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    exact_decimal = _terminating_decimal(value)
    if exact_decimal is not None:
        return exact_decimal
    with localcontext() as context:
        context.prec = SIGNIFICANT_DIGITS
        approximate = Decimal(value.numerator) / Decimal(value.denominator)
    return f"{value.numerator}/{value.denominator} (≈ {approximate})"


def _terminating_decimal(value: Fraction) -> str | None:
    """The exact decimal expansion when the denominator is 2^a * 5^b and it is short."""
    denominator, twos, fives = value.denominator, 0, 0
    while denominator % 2 == 0:
        denominator //= 2
        twos += 1
    while denominator % 5 == 0:
        denominator //= 5
        fives += 1
    places = max(twos, fives)
    if denominator != 1 or places > MAX_EXACT_DECIMALS:
        return None
    scaled = abs(value.numerator) * 10**places // value.denominator
    digits = str(scaled).rjust(places + 1, "0")
    sign = "-" if value < 0 else ""
    return f"{sign}{digits[:-places]}.{digits[-places:]}"


def _check_size(value: Number) -> Number:
    if isinstance(value, Fraction) and max(value.numerator.bit_length(), value.denominator.bit_length()) > MAX_BITS:
        raise CalculatorError(f"number too large (more than {MAX_BITS} bits, about 1,200 digits)")
    return value


def _exact_sqrt(value: Number) -> Number:
    if value < 0:
        raise CalculatorError("square root of a negative number")
    if isinstance(value, Fraction):
        top, bottom = math.isqrt(value.numerator), math.isqrt(value.denominator)
        if top * top == value.numerator and bottom * bottom == value.denominator:
            return Fraction(top, bottom)
    return math.sqrt(value)


def _power(base: Number, exponent: Number) -> Number:
    if isinstance(exponent, Fraction) and exponent.denominator == 2:
        return _exact_sqrt(_power(base, exponent * 2))
    if isinstance(exponent, float) or exponent.denominator != 1:
        raise CalculatorError("only integer exponents (or halves, for square roots) are supported")
    power = exponent.numerator
    if base == 0 and power < 0:
        raise ZeroDivisionError
    if isinstance(base, Fraction):
        size = max(base.numerator.bit_length(), base.denominator.bit_length())
        if size > 1 and size * abs(power) > MAX_BITS:
            raise CalculatorError(f"power too large (the result would exceed {MAX_BITS} bits)")
        return base**power
    return base**power


def _round(value: Number, places: Number = Fraction(0)) -> Number:
    if isinstance(places, float) or places.denominator != 1 or abs(places) > MAX_EXACT_DECIMALS:
        raise CalculatorError(f"round(x, n) needs an integer n between -{MAX_EXACT_DECIMALS} and {MAX_EXACT_DECIMALS}")
    rounded = round(value, int(places))
    return Fraction(rounded) if isinstance(rounded, int) else rounded


def _floor(value: Number) -> Number:
    return Fraction(math.floor(value))


def _ceil(value: Number) -> Number:
    return Fraction(math.ceil(value))


def _at_least_one(function: Callable[..., Number]) -> Callable[..., Number]:
    def checked(*values: Number) -> Number:
        if not values:
            raise CalculatorError(f"{function.__name__}() needs at least one argument")
        return function(values)

    return checked


_BINARY: dict[type, Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: _power,
}
_UNARY: dict[type, Callable[[Number], Number]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS: dict[str, tuple[Callable[..., Number], tuple[int, int]]] = {
    "sqrt": (_exact_sqrt, (1, 1)),
    "abs": (abs, (1, 1)),
    "round": (_round, (1, 2)),
    "floor": (_floor, (1, 1)),
    "ceil": (_ceil, (1, 1)),
    "min": (_at_least_one(min), (1, 100)),
    "max": (_at_least_one(max), (1, 100)),
}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}
SUPPORTED = "numbers, + - * / // % **, parentheses, " + ", ".join(f"{name}()" for name in _FUNCTIONS) + ", pi, e"


class _Evaluator:
    """Walks an expression tree, computing each node exactly."""

    def __init__(self, source: str) -> None:
        self.source = source

    def visit(self, node: ast.AST, depth: int) -> Number:
        if depth > MAX_DEPTH:
            raise CalculatorError(f"expression nested too deeply (at most {MAX_DEPTH} levels)")
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self.visit(node.left, depth + 1), self.visit(node.right, depth + 1)
            return _check_size(_BINARY[type(node.op)](left, right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](self.visit(node.operand, depth + 1))
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        if isinstance(node, ast.Name) and node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        snippet = (ast.get_source_segment(self.source, node) or type(node).__name__)[:40]
        raise CalculatorError(f"unsupported element {snippet!r}; supported: {SUPPORTED}")

    def constant(self, node: ast.Constant) -> Number:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise CalculatorError(f"unsupported constant {str(value)[:40]!r}; only numbers are allowed")
        if isinstance(value, int):
            return _check_size(Fraction(value))
        written = (ast.get_source_segment(self.source, node) or repr(value)).replace("_", "")
        try:
            return _check_size(Fraction(written))
        except (ValueError, ZeroDivisionError):
            return _check_size(Fraction(repr(value)))

    def call(self, node: ast.Call, depth: int) -> Number:
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in _FUNCTIONS or node.keywords:
            raise CalculatorError(f"unsupported function call; supported functions: {', '.join(_FUNCTIONS)}")
        function, (low, high) = _FUNCTIONS[name]
        if not low <= len(node.args) <= high:
            raise CalculatorError(f"{name}() takes {low if low == high else f'{low} to {high}'} argument(s)")
        arguments = [self.visit(argument, depth + 1) for argument in node.args]
        return _check_size(function(*arguments))
