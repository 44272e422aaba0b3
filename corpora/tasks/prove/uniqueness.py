"""The uniqueness proof: evaluate a query over the fact graph and count its answers.

The query is a tree, so bottom-up semi-joins give each node's exact candidate
set: a node's candidates are the entities satisfying all of its constants and,
for every child, linked by the child's edge relation to one of the child's
candidates. The answers are the root's candidates (entity answers) or their
distinct values of the answer relation (literal answers: every value the root's
candidates state, linked or not). Entities include those known only by name
(see :mod:`stillweb.corpora.tasks.graph`), so a value without a page is counted
like any other. Conditions are the obfuscated ones, so the proof holds for the
question as asked.
"""

from __future__ import annotations

from dataclasses import dataclass

from stillweb.corpora.errors import UsageError
from stillweb.corpora.tasks.graph import FactGraph, fact_year, normalize_text
from stillweb.corpora.tasks.query import Constant, Node, Query

__all__ = ["Proof", "prove", "constant_matches", "constant_holds"]

_LIST_RATIO = 8  # list a constraint with up to this many entities per current candidate; test the rest one by one


@dataclass(frozen=True)
class Proof:
    """Outcome of evaluating a query: its answers and each node's candidate count."""

    answers: frozenset
    candidates: dict[str, int]
    expected: object  # the answer the query was built for (entity id or normalized value)

    @property
    def unique(self) -> bool:
        """True when the query has exactly the expected answer."""
        return self.answers == frozenset([self.expected])


def prove(query: Query, graph: FactGraph) -> Proof:
    """Evaluate ``query`` over ``graph`` (see module docstring)."""
    candidates: dict[str, set[int]] = {}
    for node in reversed(query.nodes):  # children are created after their parents
        candidates[node.name] = _node_candidates(node, query, graph, candidates)
    root = candidates[query.root.name]
    if query.literal_answer:
        relation = query.answer_relation
        answers = frozenset(
            [normalize_text(graph.facts[i].value) for s in root for i in graph.all_literals_of(s)
             if graph.facts[i].relation == relation]
            + [normalize_text(graph.label_of(o)) for s in root for o in graph.objects_of(relation, s)]
        )
        expected: object = normalize_text(graph.facts[query.answer_fact].value)
    else:
        answers = frozenset(root)
        expected = query.root.entity
    return Proof(answers, {name: len(c) for name, c in candidates.items()}, expected)


def constant_matches(const: Constant, graph: FactGraph) -> set[int]:
    """The entities satisfying one constant."""
    cond, rel = const.condition, const.relation
    if cond.kind == "entity":
        lookup = graph.subjects_with if const.node_is_subject else graph.objects_of
        return {s for e in cond.entities for s in lookup(rel, e)}
    if cond.kind in ("text", "date"):
        out: set[int] = set()
        for key in cond.keys:
            out |= graph.subjects_with_text(rel, key)
        return out
    if cond.kind == "year_range":
        return graph.subjects_in_year_range(rel, int(cond.low), int(cond.high))
    if cond.kind == "number_range":
        return graph.subjects_in_number_range(rel, cond.low, cond.high)
    raise UsageError(f"unknown condition kind {cond.kind!r}")


def constant_holds(const: Constant, entity: int, graph: FactGraph) -> bool:
    """True when ``entity`` satisfies the constant (``entity in constant_matches(...)``, checked locally)."""
    cond, rel = const.condition, const.relation
    if cond.kind == "entity":
        around = graph.objects_of(rel, entity) if const.node_is_subject else graph.subjects_with(rel, entity)
        return any(e in around for e in cond.entities)
    if cond.kind in ("text", "date"):
        return any(entity in graph.subjects_with_text(rel, key) for key in cond.keys)
    facts = (graph.facts[i] for i in graph.all_literals_of(entity))
    if cond.kind == "year_range":
        return any(f.relation == rel and (y := fact_year(f)) is not None and cond.low <= y <= cond.high for f in facts)
    if cond.kind == "number_range":
        return any(
            f.relation == rel and f.value_type == "number" and f.number is not None and cond.low <= f.number <= cond.high
            for f in facts
        )
    raise UsageError(f"unknown condition kind {cond.kind!r}")


def _constant_size(const: Constant, graph: FactGraph) -> int:
    """How many entities satisfy the constant, without building the set."""
    cond, rel = const.condition, const.relation
    if cond.kind == "entity":
        lookup = graph.subjects_with if const.node_is_subject else graph.objects_of
        return sum(len(lookup(rel, e)) for e in cond.entities)
    if cond.kind in ("text", "date"):
        return sum(len(graph.subjects_with_text(rel, key)) for key in cond.keys)
    if cond.kind == "year_range":
        return graph.year_range_size(rel, int(cond.low), int(cond.high))
    if cond.kind == "number_range":
        return graph.number_range_size(rel, cond.low, cond.high)
    raise UsageError(f"unknown condition kind {cond.kind!r}")


def _node_candidates(node: Node, query: Query, graph: FactGraph, done: dict[str, set[int]]) -> set[int]:
    """Semi-join: build the smallest constraint's set, then narrow it by the others.

    A constraint (a constant, or a child's edge into its candidates) is either
    listed and intersected, or tested entity by entity on the current result,
    whichever touches fewer entities; so the cost stays near the size of the
    answer instead of the size of the largest constraint ("born in the 1950s").
    """
    constraints: list[tuple[int, int, Constant | Node]] = []  # (size, position, constant or child)
    for position, const in enumerate(node.constants):
        constraints.append((_constant_size(const, graph), position, const))
    for position, child_name in enumerate(node.children, start=len(node.constants)):
        constraints.append((len(done[child_name]), position, query.node(child_name)))
    if not constraints:
        raise UsageError(f"node {node.name} has no constraint")
    constraints.sort(key=lambda item: item[:2])
    result: set[int] | None = None
    for size, _, other in constraints:
        if result is not None and not result:
            break
        listed = result is None or size <= _LIST_RATIO * len(result)
        if isinstance(other, Constant):
            if listed:
                matches = constant_matches(other, graph)
                result = matches if result is None else result & matches
            else:
                result = {p for p in result if constant_holds(other, p, graph)}
        else:
            below = done[other.name]
            if listed:
                lift = graph.subjects_with if other.parent_is_subject else graph.objects_of
                lifted = {p for c in below for p in lift(other.relation, c)}
                result = lifted if result is None else result & lifted
            else:
                down = graph.objects_of if other.parent_is_subject else graph.subjects_with
                result = {p for p in result if any(c in below for c in down(other.relation, p))}
    return result
