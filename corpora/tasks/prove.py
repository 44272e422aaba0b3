"""The uniqueness proof: evaluate a query over the fact graph and count its answers.

The query is a tree, so bottom-up semi-joins give each node's exact candidate
set: a node's candidates are the entities satisfying all of its constants and,
for every child, linked by the child's edge relation to one of the child's
candidates. The answers are the root's candidates (entity answers) or their
distinct values of the answer relation (literal answers). Conditions are the
obfuscated ones, so the proof holds for the question as asked.
"""

from __future__ import annotations

from dataclasses import dataclass

from stillweb.corpora.tasks.graph import FactGraph, normalize_text
from stillweb.corpora.tasks.query import Constant, Node, Query

__all__ = ["Proof", "prove", "constant_matches"]


@dataclass(frozen=True)
class Proof:
    """Outcome of evaluating a query: its answers and each node's candidate count."""

    answers: frozenset
    candidates: dict[str, int]
    expected: object  # the answer the query was built for (entity id or normalised value)

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
        answers = frozenset(
            normalize_text(graph.facts[i].value)
            for s in root
            for i in graph.literals_of(s)
            if graph.facts[i].relation == query.answer_relation
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
    raise ValueError(f"unknown condition kind {cond.kind!r}")


def _node_candidates(node: Node, query: Query, graph: FactGraph, done: dict[str, set[int]]) -> set[int]:
    sets = [constant_matches(c, graph) for c in node.constants]
    for child_name in node.children:
        child = query.node(child_name)
        lift = graph.subjects_with if child.parent_is_subject else graph.objects_of
        sets.append({p for c in done[child_name] for p in lift(child.relation, c)})
    if not sets:
        raise ValueError(f"node {node.name} has no constraint")
    sets.sort(key=len)
    result = set(sets[0])
    for other in sets[1:]:
        result &= other
        if not result:
            break
    return result
