"""The structured query behind a task: a tree of variables rooted at the answer.

A :class:`Query` is what composition builds, the prover evaluates, the renderer
turns into a question and :func:`formalization` turns into WebShaper triples.
The root is the target ``?`` (entity answers) or a variable whose attribute is
the target (literal answers, ``[V@A, population, ?]``). Every other node is a
variable joined to its parent by one edge fact; constants hang on variables as
:class:`Constant` conditions (possibly obfuscated, possibly a union).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stillweb.corpora.tasks.formalization import TARGET, constant
from stillweb.corpora.tasks.store.record import Obfuscation

__all__ = ["Condition", "Constant", "Node", "Query", "formalization"]


@dataclass(frozen=True)
class Condition:
    """What a constant says about a value.

    ``kind``: ``entity`` (one of ``entities``), ``text`` (normalized value in
    ``keys``), ``date`` (exact ISO date in ``keys``), ``year_range`` or
    ``number_range`` (``low`` <= value <= ``high``). ``labels`` are the surface
    forms used in the formalization and the question; several labels make a
    union.
    """

    kind: str
    labels: tuple[str, ...]
    entities: tuple[int, ...] = ()
    keys: tuple[str, ...] = ()
    low: float = 0.0
    high: float = 0.0
    phrase: str = ""  # how the question says it ("in the early 1990s"); labels joined if empty

    @property
    def text(self) -> str:
        """The condition as question text."""
        return self.phrase or " or ".join(self.labels)


@dataclass(frozen=True)
class Constant:
    """A constraint on a node: ``(node, relation, C)`` or ``(C, relation, node)``."""

    relation: str
    node_is_subject: bool
    condition: Condition
    fact: int  # index of the fact the constant came from (the evidence)


@dataclass
class Node:
    """A variable of the query (or the entity target), with its hidden true entity."""

    name: str
    entity: int
    parent: str | None = None
    relation: str = ""  # relation of the edge to the parent
    parent_is_subject: bool = True  # edge is (parent, relation, node), else (node, relation, parent)
    fact: int = -1  # index of the edge fact to the parent
    depth: int = 0
    constants: list[Constant] = field(default_factory=list)
    children: list[str] = field(default_factory=list)


@dataclass
class Query:
    """A tree of nodes; ``nodes[0]`` is the root. See the module docstring."""

    nodes: list[Node]
    answer_fact: int = -1  # literal answers: the root's fact holding the answer
    answer_relation: str = ""
    obfuscations: list[Obfuscation] = field(default_factory=list)  # in the order they were made
    unions: int = 0

    @property
    def root(self) -> Node:
        """The root node."""
        return self.nodes[0]

    @property
    def literal_answer(self) -> bool:
        """True when the answer is an attribute value, not an entity."""
        return self.answer_fact >= 0

    def node(self, name: str) -> Node:
        """The node called ``name``."""
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(name)

    def solving_order(self) -> list[Node]:
        """Nodes children-first (deepest subtree first), ending at the root."""
        order: list[Node] = []

        def visit(node: Node) -> None:
            children = sorted((self.node(c) for c in node.children), key=lambda n: -self.height(n))
            for child in children:
                visit(child)
            order.append(node)

        visit(self.root)
        return order

    def height(self, node: Node) -> int:
        """Edges from ``node`` down to its farthest constant."""
        below = [self.height(self.node(c)) for c in node.children]
        own = 1 if node.constants else 0
        return max([own] + [h + 1 for h in below])

    @property
    def hops(self) -> int:
        """Edges on the longest path from the target to a constant."""
        return self.height(self.root) + (1 if self.literal_answer else 0)

    @property
    def nonlinear(self) -> bool:
        """True when some node has two or more variable children."""
        return any(len(n.children) >= 2 for n in self.nodes)

    @property
    def constraint_count(self) -> int:
        """Number of constants in the query."""
        return sum(len(n.constants) for n in self.nodes)


def formalization(query: Query) -> list[list[str]]:
    """The WebShaper triples of a query, nodes in creation order."""
    triples: list[list[str]] = []
    if query.literal_answer:
        triples.append([query.root.name, query.answer_relation, TARGET])
    for node in query.nodes:
        if node.parent is not None:
            edge = [node.parent, node.relation, node.name]
            triples.append(edge if node.parent_is_subject else edge[::-1])
        for const in node.constants:
            term = constant(*const.condition.labels)
            triples.append([node.name, const.relation, term] if const.node_is_subject else [term, const.relation, node.name])
    return triples
