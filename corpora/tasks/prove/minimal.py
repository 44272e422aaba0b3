"""Minimal questions: drop every branch the answer does not need.

A *branch* hangs off the query's **pivot**: the target itself, or, when the
answer is reached through one variable only (a literal answer's holder, or an
entity answer whose single triple is ``[V@A, relation, ?]``, "the city where a
person ... was born"), that variable. A branch is a child subtree or a constant
of the pivot. Each branch is dropped in turn when the answer stays unique without
it (one proof per branch); the pivot's last branch is always kept.

This is exactly the reading of ``stillweb tasks verify --minimal``
(:mod:`stillweb.corpora.tasks.prove.resolve`): the solver pivots on the variable
holding ``?`` whenever ``?`` has a single triple and is its object. The generator
used to prune the target's own branches only, so every entity question of the
form "the <noun> where/that <one variable> ..." kept all of that variable's
branches, and the verifier found one of them redundant in 24 of 33 such tasks
(12% of a 200-task synthetic set; issue 35 item 7).

>>> # proof = drop_redundant_branches(query, graph, proof)
"""

from __future__ import annotations

from collections.abc import Callable

from stillweb.corpora.tasks.graph import FactGraph
from stillweb.corpora.tasks.prove.uniqueness import Proof, prove
from stillweb.corpora.tasks.query import Node, Query

__all__ = ["pivot_of", "drop_redundant_branches", "branches_off"]


def pivot_of(query: Query) -> Node:
    """The node whose branches decide the answer (see the module docstring)."""
    root = query.root
    if not query.literal_answer and len(root.children) == 1 and not root.constants:
        only = query.node(root.children[0])
        if not only.parent_is_subject:  # the triple is [V@A, relation, ?]: the answer is V@A's value
            return only
    return root


def drop_redundant_branches(query: Query, graph: FactGraph, proof: Proof,
                            keep: Callable[[Query], bool] | None = None) -> Proof:
    """Drop, in order, each branch off the pivot whose removal leaves the answer unique (and, given
    ``keep``, ``keep(query)`` true: the generator keeps its key); returns the proof of the pruned query
    (``query`` is changed in place). Pruning the target can leave it a single child, which then
    becomes the pivot: it is pruned too."""
    pivot = pivot_of(query)
    proof = _prune(query, graph, proof, pivot, keep)
    if pivot_of(query) is not pivot:
        proof = _prune(query, graph, proof, pivot_of(query), keep)
    _keep_live_obfuscations(query)
    return proof


def _prune(query: Query, graph: FactGraph, proof: Proof, pivot: Node, keep: Callable[[Query], bool] | None) -> Proof:
    for branch in [*pivot.children, *range(len(pivot.constants) - 1, -1, -1)]:
        if len(pivot.children) + len(pivot.constants) <= 1:
            break
        nodes, children, constants = list(query.nodes), list(pivot.children), list(pivot.constants)
        if isinstance(branch, str):
            gone = _subtree(query, branch)
            pivot.children.remove(branch)
            query.nodes = [n for n in query.nodes if n.name not in gone]
        else:
            del pivot.constants[branch]
        pruned = prove(query, graph)
        if pruned.unique and (keep is None or keep(query)):
            proof = pruned
        else:
            query.nodes, pivot.children, pivot.constants = nodes, children, constants
    return proof


def branches_off(query: Query, pivot: Node | None, spine: list[Node]) -> set[str]:
    """The variables of ``pivot``'s child subtrees off ``spine`` (a keyed chain from the root): the key pins the
    pivot, so pruning drops them all (the generator spends no constant on them); none off the spine."""
    if pivot is None or pivot not in spine[:-1]:
        return set()
    kept = spine[spine.index(pivot) + 1].name
    return set().union(*(_subtree(query, child) for child in pivot.children if child != kept))


def _subtree(query: Query, name: str) -> set[str]:
    node = query.node(name)
    return {name}.union(*(_subtree(query, child) for child in node.children))


def _keep_live_obfuscations(query: Query) -> None:
    """Forget the obfuscation records of constants and variables no longer in the query."""
    names = {n.name for n in query.nodes}
    live = {(c.relation, label) for n in query.nodes for c in n.constants for label in c.condition.labels}
    query.obfuscations = [o for o in query.obfuscations
                          if (o.variable in names if o.variable else (o.relation, o.obfuscated) in live)]
