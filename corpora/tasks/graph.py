"""The fact graph: indexes over a snapshot's facts for composing and proving tasks.

Entity facts (``object >= 0``) are edges; literal facts (dates, years, numbers,
text) are attributes. The indexes answer, fast and deterministically:

- ``subjects_with(relation, object)`` and ``objects_of(relation, subject)``
  (the two directions of an edge relation),
- ``subjects_matching(relation, condition)`` for literal conditions (exact text,
  exact date, year range, number range) via sorted numpy arrays,
- ``stated_in(fact)``: the doc id whose plaintext states the fact's value (the
  fact's evidence doc, else the subject's or object's own page), checked once
  and cached; facts no document states are never used.

A value of entity type without a page of its own (an infobox listing five
places, one of them linked) is an entity too, so the uniqueness proof counts
it: it gets a *named entity* id (``>= NAMED_BASE``), one per distinct name, and
its fact becomes an edge to it. A name that is a page's title joins that page.
Named entities are never answers (they have no page), but they can be
constants ("C@Caribbean Sea") and intermediate variables of a question.
"""

from __future__ import annotations

import html
from collections import Counter, defaultdict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from stillweb.corpora.snapshot.records import Fact
from stillweb.corpora.tasks.prove.keys import pins
from stillweb.corpora.tasks.prove.real_world import PLAUSIBLE, backward_fits, constant_refusal, dated_years, titled_work, value_refusal
from stillweb.corpora.tasks.phrase.phrasing import entity_label, is_qualifier, reviewed
from stillweb.corpora.tasks.types import entity_classes, fits, role_classes
from stillweb.corpora.tasks.phrase.value_forms import value_forms
from stillweb.corpora.tasks.task_world import TaskWorld

__all__ = ["FactGraph", "IDENTITY_RELATIONS", "NAMED_BASE", "normalize_text", "fact_year", "refusal"]

KEY_DEPTH_CAP = 6  # keyed chains are never walked deeper (the generator's hops stop at 6)
NAMED_BASE = 1 << 40  # ids of entities known only by name (no page); doc ids stay far below

# Relations that name the entity itself or say nothing checkable: never constants or answers.
IDENTITY_RELATIONS = frozenset({
    "name", "title", "native_name", "official_name", "full_name", "birth_name", "other_names",
    "image", "caption", "logo", "alt", "website", "url", "signature", "image_size", "footnotes",
})

def normalize_text(text: str) -> str:
    """Lowercase with collapsed whitespace: the form used for matching values."""
    return " ".join(text.split()).lower()


def fact_year(fact: Fact) -> int | None:
    """The year a date or year fact is about, else None."""
    if fact.date and fact.date[:4].lstrip("-").isdigit():
        return int(fact.date[:4])
    if fact.value_type == "year" and fact.number is not None:
        return int(fact.number)
    return None


class FactGraph:
    """Indexes over all facts of a world; see the module docstring."""

    def __init__(self, world: TaskWorld) -> None:
        self.world = world
        self.facts: list[Fact] = _read_facts(world.facts_table())
        self._names: list[str] = []  # labels of the named entities, by id - NAMED_BASE
        self._name_facts()
        out: defaultdict[tuple[str, int], list[int]] = defaultdict(list)
        into: defaultdict[tuple[str, int], list[int]] = defaultdict(list)
        edges_of: defaultdict[int, list[int]] = defaultdict(list)
        literals_of: defaultdict[int, list[int]] = defaultdict(list)
        every_literal: defaultdict[int, list[int]] = defaultdict(list)
        text: defaultdict[tuple[str, str], set[int]] = defaultdict(set)
        years: defaultdict[str, list[tuple[int, int]]] = defaultdict(list)
        numbers: defaultdict[str, list[tuple[float, int]]] = defaultdict(list)
        self._template_of: dict[int, str] = {}
        template_of = self._template_of
        for fact in self.facts:
            template_of.setdefault(fact.subject, fact.template)
        self.refused: Counter = Counter()  # facts no question uses, by reason (see refusal)
        self.real = bool(getattr(world, "real", False))  # real pages: values must hold in the real world
        self.years = dated_years(self.facts)  # time-varying facts -> the year their source gives (real_world.py)
        self.forward_only: set[int] = set()  # edges whose backward verb does not hold of their subject
        for fact in self.facts:
            index, subject, relation, value, value_type, obj, number, date, template, _ = fact
            if relation in IDENTITY_RELATIONS or is_qualifier(relation):
                continue
            reason = refusal(self, fact)  # a refused fact is never said, but the proof still counts it
            if reason is not None:
                self.refused[reason] += 1
            if obj >= 0:
                out[relation, subject].append(obj)
                into[relation, obj].append(subject)
                if reason is None and not backward_fits(relation, entity_classes(self, subject)):
                    self.forward_only.add(index)
                    self.refused["verb_off_domain"] += 1  # said forward only, on its subject
                if reason is None:
                    edges_of[subject].append(index)
                    edges_of[obj].append(index)
                continue
            every_literal[subject].append(index)
            if reason is None:
                literals_of[subject].append(index)
            text[relation, normalize_text(value)].add(subject)
            if date:
                text[relation, "date:" + date].add(subject)
            if date or value_type == "year":
                year = fact_year(fact)
                if year is not None:
                    years[relation].append((year, subject))
            if number is not None and value_type == "number":
                numbers[relation].append((number, subject))
        self._out, self._in, self._text = dict(out), dict(into), dict(text)
        self._edges_of, self._literals_of, self._every_literal = dict(edges_of), dict(literals_of), dict(every_literal)
        self._years = {rel: _sorted_arrays(pairs) for rel, pairs in years.items()}
        self._numbers = {rel: _sorted_arrays(pairs) for rel, pairs in numbers.items()}
        self.entities: list[int] = sorted(e for e, edges in self._edges_of.items() if edges and e < NAMED_BASE)
        self._stated: dict[int, int | None] = {}
        self._roles: dict[tuple[str, bool], set[int]] | None = None
        self._shares: dict[tuple[str, bool, str, str], float] = {}
        self._texts: dict[int, str] = {}
        self._key_depth: dict[int, tuple[int, int, int]] | None = None
        self._keyable: dict[int, list[int]] = {}
        self._said: Counter | None = None
        for index in sorted({i for edges in self._edges_of.values() for i in edges}):  # used as edges, never named
            fact = self.facts[index]
            if (named := constant_refusal(self, fact.relation, fact.object, False)) == "ambiguous_title":
                self.refused[named] += 1

    def _name_facts(self) -> None:
        """Turn entity values without a page into edges to named entities (see the module docstring)."""
        pages = {e for f in self.facts for e in (f.subject, f.object) if e >= 0}
        by_name = {normalize_text(self.world.title_of(page)): page for page in sorted(pages)}
        for position, fact in enumerate(self.facts):
            if fact.object >= 0 or fact.value_type != "entity" or not fact.value.strip() or fact.relation in IDENTITY_RELATIONS:
                continue
            key = normalize_text(fact.value)
            if key not in by_name:
                by_name[key] = NAMED_BASE + len(self._names)
                self._names.append(fact.value.strip())
            self.facts[position] = fact._replace(object=by_name[key])

    def keyable(self, depth: int = 1) -> list[int]:
        """The entities (pages) below which a keyed chain of ``depth`` edges may go (1: some fact pins
        them, :func:`~stillweb.corpora.tasks.prove.keys.pins`): the targets of keyed questions, in id order."""
        if depth not in self._keyable:
            self._keyable[depth] = [e for e in self.entities if self.key_depth(e) >= max(depth, 1)]
        return self._keyable[depth]

    def key_depth(self, entity: int, parent: int = -1) -> int:
        """How many edges a keyed chain can reach below ``entity`` without stepping back to ``parent``
        (1: a fact pins it directly; 0: none), up to :data:`KEY_DEPTH_CAP`. Longer cycles are not
        excluded, so it is an upper bound that steers composition's walk (computed once)."""
        if self._key_depth is None:
            self._key_depth = _key_depths(self)
        best = self._key_depth.get(entity)
        if best is None:
            return 0
        first, via, second = best
        return second if via == parent else first

    def said_label(self, label: str, entity: int = -1) -> str:
        """A constant's title as a question says it: without its disambiguator ("Springfield
        (Illinois)" -> "Springfield") unless another entity of the world would read the same; then
        the disambiguator is said as a person says it: "Springfield, Illinois" for a place, "the
        journalist Pia Kivistö" for a kind, never in parentheses. A work page (``entity``) is said with
        its kind and year: "the 1992 novel Deep Trouble" (real_world.titled_work)."""
        if entity >= 0 and self.real and (named := titled_work(self, entity, entity_label(label))) not in (None, entity_label(label)):
            return named
        if self._said is None:
            ids = {e for f in self.facts for e in (f.subject, f.object) if e >= 0}  # each title read once
            labels = {self.label_of(e) for e in ids}
            self._said = Counter(entity_label(t) for t in labels)
        short = entity_label(label)
        if short == label or self._said[short] <= 1:
            return short
        qualifier = label[len(short):].strip()[1:-1].strip()
        if qualifier[:1].isupper():
            return f"{short}, {qualifier}"
        return f"the {qualifier} {short}"

    def year_of(self, fact_index: int) -> int | None:
        """The year a time-varying fact's source gives ("in 2016"), None for any other fact."""
        return self.years.get(fact_index)

    def is_page(self, entity: int) -> bool:
        """True for a document's id, False for an entity known only by name."""
        return 0 <= entity < NAMED_BASE

    def label_of(self, entity: int) -> str:
        """The page title of an entity, or its name when it has no page."""
        return self.world.title_of(entity) if entity < NAMED_BASE else self._names[entity - NAMED_BASE]

    # --- edges -------------------------------------------------------------
    def edges_of(self, entity: int) -> list[int]:
        """Indexes of the edge facts touching ``entity`` (as subject or object)."""
        return self._edges_of.get(entity, [])

    def literals_of(self, entity: int) -> list[int]:
        """Indexes of the literal facts about ``entity`` that questions may use (not refused)."""
        return self._literals_of.get(entity, [])

    def all_literals_of(self, entity: int) -> list[int]:
        """Indexes of every literal fact about ``entity``, refused ones included (for the proof)."""
        return self._every_literal.get(entity, [])

    def objects_of(self, relation: str, subject: int) -> list[int]:
        """Entities ``o`` with a fact (subject, relation, o)."""
        return self._out.get((relation, subject), [])

    def subjects_with(self, relation: str, obj: int) -> list[int]:
        """Entities ``s`` with a fact (s, relation, obj)."""
        return self._in.get((relation, obj), [])

    def template_of(self, entity: int) -> str:
        """The infobox template of an entity's first fact ('' if none)."""
        return self._template_of.get(entity, "")

    def value_share(self, edge_relation: str, as_subject: bool, relation: str, key: str) -> float:
        """The share of the entities at one end of ``edge_relation`` (its subjects, or its objects)
        whose ``relation`` text value normalizes to ``key``: near 1 when the value only restates
        what the edge already says (the performers of albums who work as musicians)."""
        cache_key = (edge_relation, as_subject, relation, key)
        if cache_key not in self._shares:
            if self._roles is None:
                roles: defaultdict[tuple[str, bool], set[int]] = defaultdict(set)
                for rel, subject in self._out:
                    roles[rel, True].add(subject)
                for rel, obj in self._in:
                    roles[rel, False].add(obj)
                self._roles = dict(roles)
            pool = self._roles.get((edge_relation, as_subject), set())
            matches = self.subjects_with_text(relation, key)
            small, large = (pool, matches) if len(pool) <= len(matches) else (matches, pool)
            self._shares[cache_key] = sum(1 for e in small if e in large) / len(pool) if pool else 0.0
        return self._shares[cache_key]

    # --- literal conditions ------------------------------------------------
    def subjects_with_text(self, relation: str, key: str) -> set[int]:
        """Subjects whose ``relation`` value normalizes to ``key`` (``date:ISO`` for dates)."""
        return self._text.get((relation, key), set())

    def subjects_in_year_range(self, relation: str, low: int, high: int) -> set[int]:
        """Subjects whose ``relation`` year lies in [low, high]."""
        return _range_subjects(self._years.get(relation), low, high)

    def subjects_in_number_range(self, relation: str, low: float, high: float) -> set[int]:
        """Subjects whose ``relation`` number lies in [low, high]."""
        return _range_subjects(self._numbers.get(relation), low, high)

    def year_range_size(self, relation: str, low: int, high: int) -> int:
        """How many ``relation`` years lie in [low, high] (an upper bound on the subjects)."""
        return _range_size(self._years.get(relation), low, high)

    def number_range_size(self, relation: str, low: float, high: float) -> int:
        """How many ``relation`` numbers lie in [low, high] (an upper bound on the subjects)."""
        return _range_size(self._numbers.get(relation), low, high)

    # --- evidence ------------------------------------------------------------
    def stated_in(self, fact_index: int) -> int | None:
        """The doc id whose plaintext contains a form of the fact's value, or None."""
        if fact_index in self._stated:
            return self._stated[fact_index]
        fact = self.facts[fact_index]
        forms = [normalize_text(f) for f in value_forms(fact.value, fact.date, fact.number)]
        found = None
        for doc in dict.fromkeys(d for d in (fact.evidence, fact.subject, fact.object) if self.is_page(d)):
            text = self._text_of(doc)
            if any(form and form in text for form in forms):
                found = doc
                break
        self._stated[fact_index] = found
        return found

    def stated_form(self, fact_index: int) -> str:
        """The form of the fact's value that its evidence document contains."""
        fact = self.facts[fact_index]
        doc = self.stated_in(fact_index)
        text = self._text_of(doc) if doc is not None else ""
        for form in value_forms(fact.value, fact.date, fact.number):
            if normalize_text(form) in text:
                return form
        return fact.value

    def _text_of(self, doc: int) -> str:
        if doc not in self._texts:
            try:
                self._texts[doc] = normalize_text(self.world.text_of(doc))
            except (KeyError, IndexError):
                self._texts[doc] = ""
        return self._texts[doc]


def refusal(graph: FactGraph, fact: Fact) -> str | None:
    """Why no question uses ``fact`` (None when one may): ``unphrased_relation`` (no reviewed words
    for it), ``implausible_value`` (a number beyond :data:`PLAUSIBLE`), ``one_value_class`` (a text
    value of one or two characters: "postal code is M" names no class), ``placeholder``,
    ``compound_value`` and ``time_varying_without_year`` (:func:`~stillweb.corpora.tasks.prove.real_world.value_refusal`:
    "Unknown first wife", "GBP; Pound sign£", a population without its year), ``off_range`` (its object's
    page is of a class the relation cannot point to: a car as a person's successor)."""
    if not reviewed(fact.relation):
        return "unphrased_relation"
    if fact.value_type == "number" and fact.number is not None and fact.relation in PLAUSIBLE:
        low, high = PLAUSIBLE[fact.relation]
        if not low <= fact.number <= high:
            return "implausible_value"
    if fact.value_type == "text" and len(fact.value.strip()) <= 2:
        return "one_value_class"
    if (said := value_refusal(fact, graph.year_of(fact.index), graph.real)) is not None:
        return said
    if fact.object >= 0 and graph.is_page(fact.object) and \
            fits(entity_classes(graph, fact.object), role_classes(fact.relation, False)) == frozenset():
        return "off_range"
    return None


def _key_depths(graph: FactGraph) -> dict[int, tuple[int, int, int]]:
    """entity -> (best key depth, the neighbour giving it, best depth through another neighbour)."""
    pinned_by: defaultdict[int, set[int]] = defaultdict(set)  # entity -> entities whose facts pin it
    depths: dict[int, tuple[int, int, int]] = {}
    for fact in graph.facts:
        if fact.relation in IDENTITY_RELATIONS or is_qualifier(fact.relation):
            continue
        for end in ((fact.subject, fact.object) if fact.object >= 0 else (fact.subject,)):
            if pins(fact, end):
                depths[end] = (1, -1, 1)
                if fact.object >= 0:
                    pinned_by[end].add(fact.object if end == fact.subject else fact.subject)
    chained = sorted(pinned_by)
    for _ in range(KEY_DEPTH_CAP - 1):
        grown = dict(depths)
        for entity in chained:
            first, via, second = 1, -1, 1
            for other in pinned_by[entity]:
                depth = min(_through(depths, other, entity) + 1, KEY_DEPTH_CAP)
                if depth > first or (depth == first and other < via):
                    if via != other:
                        second = max(second, first)
                    first, via = depth, other
                elif depth > second:
                    second = depth
            grown[entity] = (first, via, second)
        depths = grown
    return depths


def _through(depths: dict[int, tuple[int, int, int]], entity: int, parent: int) -> int:
    found = depths.get(entity)
    if found is None:
        return 0
    return found[2] if found[1] == parent else found[0]


def _read_facts(table: pa.Table) -> list[Fact]:
    """One :class:`Fact` per row; nulls become "" / "text" / -1, a missing evidence doc the subject."""

    def column(name: str, fill: object = None) -> list:
        values = table[name] if fill is None else pc.fill_null(table[name], fill)
        return values.to_pylist()

    evidence = pc.coalesce(table["evidence"], table["subject"]).to_pylist()
    values = [html.unescape(v) if "&" in v else v for v in column("value", "")]  # "Pound&nbsp;sterling"
    return list(map(
        Fact, range(table.num_rows), column("subject"), column("relation", ""), values,
        column("value_type", "text"), column("object", -1), column("number"), column("date"),
        column("template", ""), evidence,
    ))


def _sorted_arrays(pairs: list[tuple[float, int]]) -> tuple[np.ndarray, np.ndarray]:
    pairs.sort()
    keys = np.array([p[0] for p in pairs], dtype=np.float64)
    subjects = np.array([p[1] for p in pairs], dtype=np.int64)
    return keys, subjects


def _range_bounds(keys: np.ndarray, low: float, high: float) -> tuple[int, int]:
    return int(np.searchsorted(keys, low, side="left")), int(np.searchsorted(keys, high, side="right"))


def _range_subjects(arrays: tuple[np.ndarray, np.ndarray] | None, low: float, high: float) -> set[int]:
    if arrays is None:
        return set()
    keys, subjects = arrays
    start, stop = _range_bounds(keys, low, high)
    return set(subjects[start:stop].tolist())


def _range_size(arrays: tuple[np.ndarray, np.ndarray] | None, low: float, high: float) -> int:
    if arrays is None:
        return 0
    start, stop = _range_bounds(arrays[0], low, high)
    return stop - start
