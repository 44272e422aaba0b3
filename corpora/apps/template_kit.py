"""What a task template works with: the base state of one user (read-only SQL), a keyed
random stream, and :class:`TaskSpec`, the task it returns.

A template reads the base database to choose its targets and to know the answers,
and writes the *reference program*: the calls, turn by turn, that solve the task on a
fresh copy. It never runs the API (that is the layer above); the checks come from
replaying the program (``stillweb.envs.apps.scoring``).
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.corpora.keyed import KeyedRng

__all__ = ["TaskSpec", "TemplateContext", "call", "pages", "CATEGORIES", "PAGE_SIZE"]

# Task categories, in the order the set card lists them.
CATEGORIES = ("lookup", "single_write", "dependent_writes", "pagination", "aggregation", "multi_turn", "recovery", "impossible")
PAGE_SIZE = 10  # the API's default page size (sandboxes/apps/resources.py)


@dataclass(frozen=True)
class TaskSpec:
    """A task as a template makes it: user turns, the reference calls of each turn, the facts each
    answer must state (a fact ``"a|b"`` is stated by either), whether abstaining is the right
    move (its reason must then state the facts), and scripted transient errors."""

    turns: tuple[str, ...]
    program: tuple[tuple[dict[str, Any], ...], ...]
    facts: tuple[tuple[str, ...], ...]
    abstain: bool = False
    errors: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 1 <= len(self.turns) <= 3 or not len(self.turns) == len(self.program) == len(self.facts):
            raise UsageError(f"a task has 1-3 turns, each with its calls and facts: {self!r:.300}")


def call(endpoint: str, /, **arguments: Any) -> dict[str, Any]:
    """One reference call."""
    return {"name": endpoint, "arguments": arguments}


def pages(endpoint: str, total: int, /, **arguments: Any) -> list[dict[str, Any]]:
    """The calls listing every page of ``total`` items at the default page size."""
    return [call(endpoint, **arguments, page=page) for page in range(1, max(1, math.ceil(total / PAGE_SIZE)) + 1)]


class TemplateContext:
    """The base state seen as user ``user`` (ids 1-based) with the stream ``rng``."""

    def __init__(self, connection: sqlite3.Connection, user: int, users: int, rng: KeyedRng) -> None:
        self.connection = connection
        self.user = user
        self.users = users
        self.rng = rng

    def rows(self, sql: str, *parameters: Any) -> list[dict[str, Any]]:
        """Rows of a query as dicts (the query should order its rows totally)."""
        cursor = self.connection.execute(sql, parameters)
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]

    def mine(self, table: str, where: str = "1", *parameters: Any) -> list[dict[str, Any]]:
        """The user's rows of ``table`` matching ``where``, by id."""
        return self.rows(f"SELECT * FROM {table} WHERE owner = ? AND ({where}) ORDER BY id", self.user, *parameters)

    def pick(self, items: list[Any]) -> Any:
        """One item, keyed; None for an empty list."""
        return self.rng.choice(items) if items else None

    def unique(self, items: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
        """The items whose ``key`` value no other item shares (safe to name in an instruction)."""
        counts: dict[Any, int] = {}
        for item in items:
            counts[item[key]] = counts.get(item[key], 0) + 1
        return [item for item in items if counts[item[key]] == 1]
