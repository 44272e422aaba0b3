"""An independent solver of task formalizations, over a snapshot's fact table alone.

``stillweb tasks verify`` must not trust the generator: this module shares no
code with :mod:`stillweb.corpora.tasks.graph` or :mod:`~stillweb.corpora.tasks.prove.uniqueness`.
It reads ``facts.parquet``, ``docs.parquet`` (titles) and ``redirects.parquet``
(aliases), and solves the WebShaper triples of a task (``[V@A, relation, C@x]``,
``?`` the target) the way a careful reader of the pages would:

- every value a fact states is a candidate, whether or not it has a page of its
  own: an infobox field listing five places gives five places, "Caribbean Sea"
  without an article included;
- things are identified by name (a page by its title or a redirect to it, a value
  without a page by its text), so a link and a plain mention of the same page agree;
- a constant is read every way it can be read: a name, a value in any written
  form (``4 March 1992``, ``12,000``), a period ("the early 1990s", "the 1870s",
  "the second half of the 19th century", "the first decade of the 21st century")
  or a range ("50,000–100,000", inclusive).

Formalizations are trees (WebShaper's), so one pass from the leaves to the
target gives the exact set of target values that some assignment satisfies.

>>> parse_period("the mid 1890s"), parse_period("the second half of the 19th century")
((1894, 1896), (1850, 1899))
>>> parse_range("2,000,000–4,000,000")
(2000000.0, 4000000.0)
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


from stillweb.corpora.snapshot.manifest import read_snapshot_table
from stillweb.corpora.errors import DataError
from stillweb.corpora.tasks.phrase.value_forms import value_forms

__all__ = ["FactTables", "FormalizationError", "Solved", "parse_period", "parse_range", "name_key", "reachable", "solve"]

TARGET = "?"


class FormalizationError(DataError):
    """A formalization the solver cannot read (unknown relation, cycle, bad term)."""


def name_key(text: str) -> str:
    """Casefolded text with collapsed whitespace: how names and values are compared."""
    return " ".join(str(text).split()).casefold()


_PART = {"early": (0, 3), "mid": (4, 6), "late": (7, 9)}
_ORDINAL_WORDS = {"first": 1, "second": 2}
_PERIOD = [
    (re.compile(r"^(?:the )?(early|mid|late)[ -](-?\d{1,4})0s$"), lambda m: _decade_part(m[1], int(m[2]) * 10)),
    (re.compile(r"^(?:the )?(-?\d{1,4})0s$"), lambda m: (int(m[1]) * 10, int(m[1]) * 10 + 9)),
    (re.compile(r"^(?:the )?(first|second) decade of the 21st century$"),
     lambda m: (2000 + 10 * (_ORDINAL_WORDS[m[1]] - 1), 2009 + 10 * (_ORDINAL_WORDS[m[1]] - 1))),
    (re.compile(r"^(?:the )?(first|second) half of the (\d{1,2})(?:st|nd|rd|th) century$"),
     lambda m: _century_half(int(m[2]), m[1])),
    (re.compile(r"^(?:the )?(\d{1,2})(?:st|nd|rd|th) century$"),
     lambda m: ((int(m[1]) - 1) * 100, (int(m[1]) - 1) * 100 + 99)),
]
_RANGE = re.compile(r"^(\d[\d,]*(?:\.\d+)?)\s*[–-]\s*(\d[\d,]*(?:\.\d+)?)$")


def _decade_part(part: str, decade: int) -> tuple[int, int]:
    low, high = _PART[part]
    return decade + low, decade + high


def _century_half(century: int, half: str) -> tuple[int, int]:
    low = (century - 1) * 100 + (0 if half == "first" else 50)
    return low, low + 49


def parse_period(label: str) -> tuple[int, int] | None:
    """The inclusive year range a period phrase names, or None."""
    text = name_key(label).removeprefix("in ")
    for pattern, bounds in _PERIOD:
        match = pattern.match(text)
        if match:
            return bounds(match)
    return None


def parse_range(label: str) -> tuple[float, float] | None:
    """The inclusive bounds of a numeric range such as ``50,000–100,000``, or None."""
    match = _RANGE.match(name_key(label))
    if not match:
        return None
    low, high = (float(part.replace(",", "")) for part in match.groups())
    return (low, high) if low <= high else None


@dataclass(frozen=True)
class Solved:
    """The target values that satisfy a formalization, with each branch's share.

    ``answers``: value ids of the target. ``branches``: for each branch hanging
    off the pivot (the target, or for an attribute answer the variable holding
    it), its first triple and the answers left when that branch is dropped.
    """

    answers: frozenset[int]
    branches: tuple[tuple[tuple[str, str, str], frozenset[int]], ...]
    hops: int


class FactTables:
    """The fact table as name-keyed edges; see the module docstring.

    Every value gets an integer id: a page's title (redirects fold onto it), a
    value without a page by its text, a literal by its date, number or text.
    """

    def __init__(self, snapshot: str | Path) -> None:
        path = Path(snapshot)
        docs = read_snapshot_table(path / "docs.parquet", columns=["doc_id", "title"]).to_pydict()
        self.ids: dict[str, int] = {}
        self.labels: list[str] = []
        self.forms: dict[int, set[str]] = defaultdict(set)  # id -> normalized surface forms
        page_of_doc: dict[int, int] = {}
        for doc_id, title in zip(docs["doc_id"], docs["title"]):
            page_of_doc[doc_id] = self._intern("e:" + name_key(title), title)
        self.by_name: dict[str, int] = {name_key(self.labels[page]): page for page in page_of_doc.values()}
        redirects = path / "redirects.parquet"
        if redirects.exists():
            table = read_snapshot_table(redirects).to_pydict()
            for alias, doc_id in zip(table["alias"], table["doc_id"]):
                if doc_id in page_of_doc:
                    self.by_name.setdefault(name_key(alias), page_of_doc[doc_id])
        for name, page in self.by_name.items():
            self.forms[page].add(name)
        self.out: dict[str, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
        self.into: dict[str, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
        self.by_form: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
        years: dict[str, list[tuple[int, int]]] = defaultdict(list)
        numbers: dict[str, list[tuple[float, int]]] = defaultdict(list)
        facts = read_snapshot_table(path / "facts.parquet",
                                    columns=["subject", "relation", "value", "value_type", "object", "number", "date"]).to_pydict()
        for subject, relation, value, kind, obj, number, date in zip(*facts.values()):
            if subject not in page_of_doc or not relation:
                continue
            value = value or ""
            target = self._value_id(value, kind, obj, number, date, page_of_doc)
            if target is None:
                continue
            self.out[relation][page_of_doc[subject]].add(target)
            self.into[relation][target].add(page_of_doc[subject])
            for form in self.forms[target]:
                self.by_form[relation][form].add(target)
            year = _year_of(date, kind, number)
            if year is not None:
                years[relation].append((year, target))
            if number is not None and kind == "number":
                numbers[relation].append((number, target))
        self.years = {rel: _sorted_pairs(pairs) for rel, pairs in years.items()}
        self.numbers = {rel: _sorted_pairs(pairs) for rel, pairs in numbers.items()}

    def _intern(self, key: str, label: str) -> int:
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = len(self.labels)
            self.labels.append(label)
        return found

    def _value_id(self, value: str, kind: str, obj: int | None, number, date, page_of_doc: dict[int, int]) -> int | None:
        if obj is not None and obj >= 0 and obj in page_of_doc:
            return page_of_doc[obj]
        if not value.strip():
            return None
        if kind == "entity":
            page = self.by_name.get(name_key(value))
            if page is not None:
                return page
            found = self._intern("e:" + name_key(value), value)
            self.forms[found].add(name_key(value))
            return found
        key = f"d:{date}" if date else f"n:{number!r}" if number is not None else "t:" + name_key(value)
        found = self._intern(key, value)
        self.forms[found].update(name_key(form) for form in value_forms(value, date, number))
        return found

    def relations(self) -> set[str]:
        """The relations the fact table states."""
        return set(self.out)

    def matches(self, label: str, relation: str, value_side: bool) -> set[int]:
        """Ids a constant ``label`` can stand for: objects of ``relation`` (``value_side``), else subjects."""
        key = name_key(label)
        if not value_side:
            page = self.by_name.get(key)
            return {page} if page is not None and page in self.out[relation] else set()
        found = set(self.by_form[relation].get(key, ()))
        period = parse_period(label)
        if period is not None:
            found |= _in_range(self.years.get(relation), *period)
        bounds = parse_range(label)
        if bounds is not None:
            found |= _in_range(self.numbers.get(relation), *bounds)
        return found


def _year_of(date: str | None, kind: str, number: float | None) -> int | None:
    if date:
        match = re.match(r"^(-?\d{1,4})", date)
        return int(match[1]) if match else None
    if kind == "year" and number is not None:
        return int(number)
    return None


def _sorted_pairs(pairs: list[tuple[float, int]]) -> tuple[list[float], list[int]]:
    pairs.sort()
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _in_range(pairs: tuple[list[float], list[int]] | None, low: float, high: float) -> set[int]:
    if pairs is None:
        return set()
    keys, ids = pairs
    return set(ids[bisect.bisect_left(keys, low):bisect.bisect_right(keys, high)])


def _is_variable(term: str) -> bool:
    return term == TARGET or (term.startswith("V@") and len(term) > 2)


def solve(triples: Sequence[Sequence[str]], tables: FactTables) -> Solved:
    """Solve a tree-shaped formalization; raises :class:`FormalizationError` naming what is wrong."""
    triples = [tuple(t) for t in triples]
    around: dict[str, list[int]] = defaultdict(list)
    for position, triple in enumerate(triples):
        if len(triple) != 3 or not all(isinstance(part, str) for part in triple):
            raise FormalizationError(f"triple {position} is not three strings: {triple!r}")
        subject, relation, obj = triple
        if relation not in tables.out:
            raise FormalizationError(f"unknown relation {relation!r} (triple {position})")
        ends = [term for term in (subject, obj) if _is_variable(term)]
        if not ends:
            raise FormalizationError(f"triple {position} has no variable: {triple!r}")
        for term in (subject, obj):
            if not _is_variable(term) and not (term.startswith("C@") and len(term) > 2):
                raise FormalizationError(f"bad term {term!r} in triple {position}")
        for term in dict.fromkeys(ends):
            around[term].append(position)
    if TARGET not in around:
        raise FormalizationError("no target '?' in the formalization")
    variables = len(around)
    joins = [t for t in triples if _is_variable(t[0]) and _is_variable(t[2])]
    if len(joins) != variables - 1 or len(reachable(joins)) != variables:
        raise FormalizationError("the variables do not form one tree (a cycle, or parts not joined to '?')")
    pivot, via = TARGET, None
    if len(around[TARGET]) == 1:
        subject, _, obj = triples[around[TARGET][0]]
        if obj == TARGET and _is_variable(subject):  # an attribute answer: the branches hang off its holder
            pivot, via = subject, around[TARGET][0]
    supports, hops = [], 0
    for position in around[pivot]:
        if position == via:
            continue
        support, depth = _support(position, pivot, triples, around, tables)
        supports.append((position, support))
        hops = max(hops, depth)
    if not supports:
        raise FormalizationError("the target has no constraint")
    branches = []
    for position, _ in supports:
        rest = [s for p, s in supports if p != position]
        branches.append((triples[position], frozenset(_to_target(_intersect(rest), via, triples, tables))
                         if rest else frozenset()))
    answers = _to_target(_intersect([s for _, s in supports]), via, triples, tables)
    return Solved(frozenset(answers), tuple(branches) if len(supports) > 1 else (), hops + (1 if via is not None else 0))


def reachable(joins: Sequence[Sequence[str]]) -> set[str]:
    """The terms joined to the target ``?`` through ``joins`` (triples between variables), ``?`` included."""
    reached, frontier = {TARGET}, [TARGET]
    while frontier:
        term = frontier.pop()
        for subject, _, obj in joins:
            for a, b in ((subject, obj), (obj, subject)):
                if a == term and b not in reached:
                    reached.add(b)
                    frontier.append(b)
    return reached


def _intersect(sets: list[set[int]]) -> set[int]:
    ordered = sorted(sets, key=len)
    result = set(ordered[0])
    for other in ordered[1:]:
        result &= other
    return result


def _to_target(pivot_values: set[int], via: int | None, triples, tables: FactTables) -> set[int]:
    """The target values: the pivot's own, or its values of the attribute relation."""
    if via is None:
        return pivot_values
    relation = triples[via][1]
    out = tables.out[relation]
    return {value for holder in pivot_values for value in out.get(holder, ())}


def _support(position: int, node: str, triples, around, tables: FactTables) -> tuple[set[int], int]:
    """Values of ``node`` that the branch through triple ``position`` allows, and the branch's depth."""
    subject, relation, obj = triples[position]
    node_is_subject = subject == node
    other = obj if node_is_subject else subject
    if not _is_variable(other):
        labels = [part.strip() for part in other[2:].split(" | ")]
        found: set[int] = set()
        for label in labels:
            found |= tables.matches(label, relation, value_side=node_is_subject)
        values, depth = found, 0
    else:
        parts = [_support(p, other, triples, around, tables) for p in around[other] if p != position]
        if not parts:
            raise FormalizationError(f"variable {other} has no constraint")
        values = _intersect([p[0] for p in parts])
        depth = max(p[1] for p in parts)
    step = tables.into[relation] if node_is_subject else tables.out[relation]
    lifted = {mine for value in values for mine in step.get(value, ())}
    return lifted, depth + 1
