"""A request for the runs table (``/view/episodes``): its URL parameters validated into a :class:`RunQuery`
(sort key and order, filters, ranges, page), or a :class:`BadQuery` naming the bad value and the valid ones.

>>> RunQuery.parse({"sort": "reward", "order": "desc", "page": "2"}, table=None).params(page=1)
{'sort': 'reward', 'order': 'desc', 'page': ''}
>>> try:
...     RunQuery.parse({"sort": "colour"}, table=None)
... except BadQuery as error:
...     print(error)
sort 'colour' is not a column of the table; sort by one of: file, episode, task, env, ending, outcome, reward, turns, truncation, flags, policy
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stillweb.corpora.errors import UsageError

if TYPE_CHECKING:  # type names only: runs.py imports this module
    from stillweb.server.viewer.runs import RunTable

__all__ = ["BadQuery", "RunQuery", "SORT_KEYS", "ORDERS", "CHOICE_FILTERS", "RANGE_FILTERS", "filter_number", "listed"]

SORT_KEYS = ("file", "episode", "task", "env", "ending", "outcome", "reward", "turns", "truncation", "flags", "policy")
ORDERS = ("asc", "desc")
CHOICE_FILTERS = ("file", "task", "env", "ending", "outcome", "truncation", "flag", "policy")
RANGE_FILTERS = ("reward_min", "reward_max", "turns_min", "turns_max")
MAX_VALUE_CHARS = 1000
SHOWN_CHOICES = 30  # valid choices an error page lists before "and N more"


class BadQuery(UsageError):
    """A query parameter the table cannot be shown with (``name``); the message names it and the valid choices."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name


@dataclass(frozen=True)
class RunQuery:
    """A validated request for the table: sort key and order, filters, ranges and 1-based page."""

    sort: str = "file"
    order: str = "asc"
    filters: Mapping[str, str] = field(default_factory=dict)
    ranges: Mapping[str, float] = field(default_factory=dict)
    page: int = 1

    @classmethod
    def parse(cls, params: Mapping[str, str], table: RunTable | None) -> RunQuery:
        """The query of ``params`` (URL query parameters); :class:`BadQuery` names a bad value and the valid ones.

        Empty values mean "not given"; parameters other than these are ignored.
        """
        def given(name: str) -> str:
            value = str(params.get(name) or "").strip()
            if len(value) > MAX_VALUE_CHARS:
                raise BadQuery(f"{name} has {len(value):,} characters; at most {MAX_VALUE_CHARS} are read", name)
            return value

        sort, order = given("sort") or "file", given("order") or "asc"
        if sort not in SORT_KEYS:
            raise BadQuery(f"sort {sort!r} is not a column of the table; sort by one of: {', '.join(SORT_KEYS)}", "sort")
        if order not in ORDERS:
            raise BadQuery(f"order {order!r} is not an order; use one of: {', '.join(ORDERS)}", "order")
        filters = {}
        for name in CHOICE_FILTERS:
            value = given(name)
            if value:
                choices = table.choices[name]
                if value not in choices:
                    raise BadQuery(f"{name} {value!r} is not a value of these recordings; the choices are: {listed(choices)}", name)
                filters[name] = value
        ranges: dict[str, float] = {}
        for name in RANGE_FILTERS:
            value = given(name)
            if value:
                try:
                    number = int(value) if name.startswith("turns") else float(value)
                    finite = math.isfinite(number)
                except (ValueError, OverflowError):  # not a number, or a whole number too large for a float
                    finite = False
                if not finite:
                    kind = "a whole number" if name.startswith("turns") else "a finite number"
                    raise BadQuery(f"{name} {value!r} is not a number; give {kind} (for example {name}=1) or leave it empty", name)
                ranges[name] = number
        text = given("page") or "1"
        try:
            page = int(text)
        except ValueError:
            raise BadQuery(f"page {text!r} is not a page number; pages are numbered from 1", "page") from None
        return cls(sort, order, filters, ranges, page)

    @property
    def tie_break(self) -> str:
        """How rows equal in the sort key are ordered, as the table's caption says it (``file and
        episode``; the file or the episode alone when the sort key is the other one)."""
        return {"file": "episode", "episode": "file"}.get(self.sort, "file and episode")

    def params(self, **changes: Any) -> dict[str, Any]:
        """The URL parameters of this query (for links; ``changes`` replace some), defaults left out."""
        params: dict[str, Any] = {"sort": self.sort, "order": self.order, **self.filters,
                                  **{name: filter_number(value) for name, value in self.ranges.items()}, "page": self.page}
        params.update(changes)
        for name, default in (("sort", "file"), ("order", "asc"), ("page", 1)):
            if params.get(name) == default:
                params[name] = ""
        return params


def filter_number(value: float) -> str:
    """A number as the table and its filters write it (``1``, ``0.5``)."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def listed(choices: Sequence[str]) -> str:
    """The first choices, quoted, and how many more there are (for an error message)."""
    shown = ", ".join(repr(choice) for choice in choices[:SHOWN_CHOICES])
    more = len(choices) - SHOWN_CHOICES
    return (shown or "(none)") + (f" and {more:,} more" if more > 0 else "")
