"""The order in which a question tells its variables, shared by the English and the Chinese renderer.

SailorFog-QA and WebShaper tell each entity of a question in a sentence of its own and then ask
("A manga series ... was discontinued. The series was written by a newcomer ... Which artist ...?").
:func:`plan_question` lays a query out that way: its variables children first
(:meth:`~stillweb.corpora.tasks.query.Query.solving_order`), so every variable is told after the
variables it is named by, and the root, asked about, last. Each :class:`TellingStep` holds:

- the **anchor**: the child through which the variable is named ("the city where that painter was
  born", "that painter's spouse"), preferably one that pins it (:func:`~stillweb.corpora.tasks.prove.keys.determines`:
  then it is "the city", else "a film that ...");
- the **parts**: everything else said of it, its constants and its other children, in keyed-random order.

A person with one exact occupation goes by it ("a painter" rather than "a person who worked as a
painter"): the occupation is then the noun, not a part. :func:`ordinals` numbers the variables that
share a noun in the order they are told, so each renderer can keep them apart ("the second person").
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass, field

from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.tasks.graph import FactGraph
from stillweb.corpora.tasks.phrase.phrasing import natural_case
from stillweb.corpora.tasks.prove.keys import determines
from stillweb.corpora.tasks.query import Constant, Node, Query
from stillweb.corpora.tasks.types import entity_classes, is_person, variable_noun

__all__ = ["Part", "TellingStep", "Plan", "Telling", "plan_question", "ordinals", "OCCUPATION"]

OCCUPATION = "occupation"
_MAX_OCCUPATION_WORDS = 3


@dataclass(frozen=True)
class Part:
    """One fact said of a variable: a constant, or the edge to one of its children."""

    relation: str
    node_is_subject: bool  # the variable is the fact's subject ("was born in X"), else its object
    constant: Constant | None = None
    child: str | None = None  # the child variable's name


@dataclass
class TellingStep:
    """One variable as the question tells it (see the module docstring)."""

    node: Node
    anchor: Part | None
    parts: list[Part]
    pinned: bool  # the anchor pins the variable: "the city where ...", else "a film that ..."


@dataclass
class Plan:
    """A query laid out for telling: steps children first, the root last; nouns and classes per variable."""

    steps: list[TellingStep]
    nouns: dict[str, str]
    people: dict[str, bool]
    kinds: dict[str, str]  # the entity's class, for per-class phrases ("was published in X" for a book)
    occupations: dict[str, str] = field(default_factory=dict)  # a person's noun taken from its occupation
    root_told: bool = False  # a literal answer's holder is told before the ask; an entity answer is only asked

    def step(self, name: str) -> TellingStep:
        """The step of the variable ``name``."""
        return next(step for step in self.steps if step.node.name == name)

    def told(self) -> list[TellingStep]:
        """The steps told before the ask: all but an entity answer's root, which is only asked about."""
        return self.steps if self.root_told else self.steps[:-1]

    def shared(self, name: str, nouns: dict[str, str] | None = None) -> bool:
        """True when another variable told before the ask goes by the noun of ``name`` (in ``nouns``, a
        renderer's own words, else :attr:`nouns`)."""
        nouns = nouns or self.nouns
        said = [nouns[step.node.name] for step in self.told()]
        return said.count(nouns[name]) > (1 if any(step.node.name == name for step in self.told()) else 0)

    def shared_with_root(self, name: str, nouns: dict[str, str] | None = None) -> bool:
        """True when the root, asked about last, goes by the noun of ``name`` (another variable)."""
        nouns = nouns or self.nouns
        return name != self.steps[-1].node.name and nouns[name] == nouns[self.steps[-1].node.name]


def plan_question(query: Query, graph: FactGraph, rng: KeyedRng) -> Plan:
    """The steps of ``query`` (see the module docstring); choices drawn from ``rng``."""
    nouns = {n.name: variable_noun(graph, query, n) for n in query.nodes}
    people = {n.name: is_person(graph, query, n) for n in query.nodes}
    kinds = {n.name: next(iter(sorted(entity_classes(graph, n.entity) or ())), "") for n in query.nodes}
    occupations = {}
    for node in query.nodes:
        said = _occupation(node)
        if people[node.name] and nouns[node.name] == "person" and said is not None \
                and len(node.constants) + len(node.children) >= 2:  # something else is said of it
            occupations[node.name] = said.condition.labels[0]
            nouns[node.name] = natural_case(said.condition.labels[0]).lower()
    steps = []
    for node in query.solving_order():
        constants = [Part(c.relation, c.node_is_subject, constant=c) for c in node.constants
                     if not (node.name in occupations and c is _occupation(node))]
        children = [Part(child.relation, child.parent_is_subject, child=child.name)
                    for child in (query.node(name) for name in node.children)]
        pinning = [p for p in children if determines(p.relation, known_is_subject=not p.node_is_subject)]
        anchor = pinning[0] if pinning else (children[0] if children else None)
        rest = [p for p in children if p is not anchor]
        steps.append(TellingStep(node, anchor, rng.shuffled(constants) + rng.shuffled(rest), bool(pinning)))
    return Plan(steps, nouns, people, kinds, occupations, query.literal_answer)


def _occupation(node: Node) -> Constant | None:
    """The node's one exact occupation constant, short enough to be its noun."""
    for constant in node.constants:
        condition = constant.condition
        if (constant.relation == OCCUPATION and constant.node_is_subject and condition.kind == "text"
                and len(condition.labels) == 1 and len(condition.labels[0].split()) <= _MAX_OCCUPATION_WORDS):
            return constant
    return None


def ordinals(plan: Plan, nouns: dict[str, str] | None = None) -> dict[str, int]:
    """For each variable told before the ask whose noun (in ``nouns``, else the plan's) another of them
    shares, its place (1, 2, ...) among them in telling order."""
    nouns = nouns or plan.nouns
    seen: Counter = Counter()
    numbers = {}
    for step in plan.told():
        name = step.node.name
        if plan.shared(name, nouns):
            seen[nouns[name]] += 1
            numbers[name] = seen[nouns[name]]
    return numbers


class Telling(ABC):
    """What a renderer keeps while it tells a plan (the English and the Chinese one subclass it): each told
    variable's handle, the variables folded into another's words or named by their role, the order told.

    A subclass gives :meth:`nouns_of` (its words for the variables), :meth:`tell`, :meth:`ref` (a variable
    named through its anchor, and whether by its role), :meth:`foldable`, :meth:`indefinite`, :meth:`handle`, :meth:`ask_entity`, :meth:`ask_value`,
    :meth:`only` ("the person") and :meth:`numbered` ("the second person")."""

    def __init__(self, query: Query, graph: FactGraph, rng: KeyedRng) -> None:
        self.query, self.graph, self.rng = query, graph, rng
        self.plan = plan_question(query, graph, rng)
        self.nouns = self.nouns_of()
        self.ordinal = ordinals(self.plan, self.nouns)
        self.handles: dict[str, str] = {}  # how a told variable is said afterwards (numbered ones: name_of)
        self.folded: set[str] = set()  # variables named inside another sentence (their handle holds a clause)
        self.roles: set[str] = set()  # told as another's attribute ("that painter's spouse"), then "the spouse"
        self.told: list[str] = []
        self.sentences: list[str] = []

    def nouns_of(self) -> dict[str, str]:
        return self.plan.nouns

    def parts_of_question(self) -> list[str]:
        """The sentences telling every variable but the root, then the ask."""
        for step in self.plan.steps[:-1]:
            self.tell(step)
        root = self.plan.steps[-1]
        ask = self.ask_value(root) if self.query.literal_answer else self.ask_entity(root)  # may tell the root first
        return [*self.sentences, ask]

    def name_of(self, name: str) -> str:
        """How a told variable is said now: its handle; one of namesakes without a role is :meth:`only` while
        it is the only one told, then :meth:`numbered` by its :meth:`place`."""
        if name not in self.ordinal or name in self.folded or name in self.roles:
            return self.handles[name]
        if self.place(name) <= 1 and len(self.namesakes(name)) <= 1:
            return self.only(name)
        return self.numbered(name, self.place(name))

    def namesakes(self, name: str) -> list[str]:
        """The numbered variables told so far that go by the noun of ``name``."""
        return [n for n in self.told if n in self.ordinal and self.nouns[n] == self.nouns[name]
                and n not in self.folded and n not in self.roles]

    def place(self, name: str) -> int:
        """The place of a numbered variable among its namesakes told so far (itself included)."""
        told = self.namesakes(name)
        return told.index(name) + 1 if name in told else len(told) + 1

    def folds(self, step: TellingStep, has_own: bool) -> bool:
        """True when the variable, with nothing of its own to tell (not ``has_own``), is named inside the next
        sentence by :meth:`ref` (when :meth:`foldable`); else it counts as told and a sentence follows."""
        if not has_own and step.anchor is not None:
            ref, _role = self.ref(step)
            if self.foldable(step, ref):
                self.handles[step.node.name] = ref
                self.folded.add(step.node.name)
                return True
        self.told.append(step.node.name)
        return False

    def introduce(self, step: TellingStep) -> str:
        """The subject of a variable's first sentence (:meth:`ref` through its anchor, else :meth:`indefinite`);
        its handle is set, by its role when the subject names one."""
        subject, role = self.ref(step) if step.anchor is not None else (self.indefinite(step.node.name), False)
        if role:
            self.roles.add(step.node.name)
        self.handles[step.node.name] = self.handle(step)
        return subject

    @abstractmethod
    def tell(self, step: TellingStep) -> None:
        """The sentences of one variable (or none: :meth:`folds`)."""

    @abstractmethod
    def indefinite(self, name: str) -> str:
        """The variable told with nothing before it: "a painter", "another person"."""

    @abstractmethod
    def handle(self, step: TellingStep) -> str:
        """How the variable is said once told ("that city", "the spouse")."""

    @abstractmethod
    def ref(self, step: TellingStep) -> tuple[str, bool]:
        """The variable named through its anchor, and whether it then goes by its role."""

    @abstractmethod
    def foldable(self, step: TellingStep, ref: str) -> bool:
        """True when ``ref`` may name the variable inside its parent's words."""

    @abstractmethod
    def ask_entity(self, root: TellingStep) -> str:
        """The ask for an entity answer."""

    @abstractmethod
    def ask_value(self, root: TellingStep) -> str:
        """The ask for a literal answer."""

    @abstractmethod
    def only(self, name: str) -> str:
        """A numbered variable while it is the only one told: "the person"."""

    @abstractmethod
    def numbered(self, name: str, place: int) -> str:
        """A numbered variable by its place among its namesakes: "the second person"."""
