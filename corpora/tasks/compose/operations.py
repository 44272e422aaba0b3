"""Composing a query: WebShaper's operations over the fact graph.

Starting from a keyed-random answer entity, composition grows a tree outward,
layer by layer (WebShaper's layer-wise expansion):

- **composition**: a chain of variables, each joined to the previous by an edge fact, so the
  constants sit 2 to 6 hops away from the target;
- **intersection**: several constants on one variable; queries are first enriched to
  ``constants_per_variable`` per variable and at least ``min_constants`` constants (WebShaper's
  500 released tasks average 7.06 constants on 4.33 variables), with "born in X" rather than
  "the birthplace of X" facts, on the variables pruning keeps; then constants are added until
  the uniqueness proof passes (so no single fact suffices);
- **branching**: when the target alone stays ambiguous (a person directed several films), a new
  one-hop variable with its own constant joins it;
- **union**: a constant widened to "X or Y" when the answer stays unique;
- **description** (obfuscation of names, at any hop up to ``max_hops``, in every query not forced to
  level 1): an entity constant replaced by a variable described by its own facts, which pin it
  (WebShaper's and SailorFog's "a club founded in 1873 in ..."; a key prefers a name it can describe);
  a question tells each in a sentence (issue 49), so its length comes from these.

Every question is **keyed** (:mod:`stillweb.corpora.tasks.prove.keys`): the spine from the deepest
constant up to the target walks relations that pin the next variable ("the author of B", "the city
where she was born"), and the deepest variable carries a key constant, so the answer is one in the
world, not only in the snapshot. Forks, extra constants, periods and ranges add difficulty on top;
a query whose target is not keyed after pruning is rejected (``no_key``, ``answer_not_functional``).

By default no constant is attached to the target and constants never attach to each other, so a
single lookup cannot shortcut the chain. Every random choice is drawn from the ``KeyedRng`` handed
in (one stream per attempt).
"""

from __future__ import annotations

import math

from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.tasks.compose.params import ComposeParams, Composition, query_level
from stillweb.corpora.tasks.formalization import TARGET, variable
from stillweb.corpora.snapshot.records import Fact
from stillweb.corpora.tasks.graph import FactGraph
from stillweb.corpora.tasks.prove.keys import functional, key_pairs, key_reason, names, pins
from stillweb.corpora.tasks.prove.minimal import branches_off, drop_redundant_branches, pivot_of
from stillweb.corpora.tasks.prove.real_world import constant_refusal
from stillweb.corpora.tasks.phrase.obfuscate import exact_condition, obfuscated_condition
from stillweb.corpora.tasks.prove.uniqueness import Proof, prove
from stillweb.corpora.tasks.query import Condition, Constant, Node, Query
from stillweb.corpora.tasks.types import entity_classes, fits, node_classes, restates_class, role_classes
from stillweb.corpora.tasks.store.record import Obfuscation

__all__ = ["compose_query"]

_EDGE_TRIES = 12
_WALK_TRIES = 4
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def compose_query(graph: FactGraph, rng: KeyedRng, params: ComposeParams) -> Composition:
    """Build one query from ``rng``'s choices and prove it unique; see the module docstring."""
    if not graph.entities:
        return Composition(None, None, "no_entities")
    level = params.level
    max_hops = min(params.max_hops, 2) if level == 1 else params.max_hops
    hops = rng.integer(params.min_hops, max_hops)
    if hops == params.min_hops < max_hops and rng.chance(0.4):  # the fewest hops less often: longer questions
        hops = rng.integer(params.min_hops + 1, max_hops)
    literal = hops >= 2 and rng.chance(params.literal_answer_rate)
    fork = level != 1 and (level == 3 or rng.chance(params.fork_rate))
    obfuscate = level != 1 and (level == 3 or rng.chance(params.obfuscate_rate))
    builder = _Builder(graph, rng, params, hops, literal, obfuscate)
    spine = hops - 1 - (1 if literal else 0)
    roots = graph.keyable(spine) if params.require_key else graph.entities
    if not roots:  # no keyed chain is that long anywhere in the world
        return Composition(None, None, "no_chain")
    answer = rng.choice(roots)
    if (reason := builder.build(answer, fork)) != "ok":
        return Composition(None, None, reason, answer)
    query = builder.query
    proof = prove(query, graph)
    while not proof.unique and proof.expected in proof.answers:
        if not builder.tighten(proof):
            return Composition(None, proof, "not_unique", answer)
        proof = prove(query, graph)
    if proof.expected not in proof.answers:
        return Composition(None, proof, "inconsistent", answer)
    keep = (lambda q: key_reason(q) is None) if params.require_key else None
    proof = drop_redundant_branches(query, graph, proof, keep)
    if rng.chance(params.union_rate):
        proof = builder.try_union(proof, keep)
    if params.require_key and (missing := key_reason(query)) is not None:
        return Composition(None, proof, missing, answer)
    if not params.min_hops <= query.hops <= max_hops:
        return Composition(None, proof, "hops_out_of_range", answer)
    if level is not None and query_level(query) != level:
        return Composition(None, proof, "level_mismatch", answer)
    return Composition(query, proof, "ok", answer)


class _Builder:
    """Mutable state of one composition attempt."""

    def __init__(self, graph: FactGraph, rng: KeyedRng, params: ComposeParams, hops: int, literal: bool, obfuscate: bool):
        self.graph, self.rng, self.params = graph, rng, params
        self.hops, self.literal, self.obfuscate, self.describe = hops, literal, obfuscate, params.level != 1
        self.query = Query(nodes=[])
        self.used_entities: set[int] = set()
        self.used_facts: set[int] = set()

    # --- structure ---------------------------------------------------------
    def build(self, answer: int, fork: bool) -> str:
        root = self._new_node(answer, parent=None, fact=None)
        if self.literal:
            fact = self._pick(self.graph.literals_of(answer) + self.graph.edges_of(answer), self._attribute_ok(answer))
            if fact is None:
                return "no_literal_answer"
            self.query.answer_fact, self.query.answer_relation = fact.index, fact.relation
            self.used_facts.add(fact.index)
        spine_length = self.hops - 1 - (1 if self.literal else 0)
        keyed = self.params.require_key
        described = keyed and self.describe and spine_length >= (1 if self.literal else 2) \
            and self.rng.chance(self.params.describe_rate)
        chain = self._walk(root, spine_length - described, keyed)
        if chain is None:
            return "no_chain"
        self.spine = chain  # the keyed chain from the root to the deepest variable
        deepest = chain[-1]
        if described and self._describe_key(deepest):
            pass
        elif keyed and not self._add_key(deepest, describe=True):
            return "no_key"
        if not keyed and not self._add_constant(deepest, allow_describe=False):
            return "no_constant"
        if self.rng.chance(self.params.second_constant_rate):  # intersection from the start
            self._add_constant(deepest, allow_describe=False)
        for node in chain[:-1]:
            if node.name != TARGET and self.rng.chance(self.params.intermediate_constant_rate):
                self._add_constant(node, allow_describe=True)
        if fork and not self._add_fork(chain):
            return "no_fork"
        if self.hops >= self.params.enrich_from_hops or fork:
            self._enrich()
        return "ok"

    def _enrich(self) -> None:
        """Intersection up front: constants on the least constrained variables until there
        are ``constants_per_variable`` per variable and ``min_constants`` (or none can be added)."""
        variables = sum(1 for n in self.query.nodes if n.name != TARGET)
        ratio = math.ceil(self.params.constants_per_variable * variables)
        wanted = min(self.params.max_constraints, max(ratio, self.params.min_constants if ratio else 0))
        pivot = pivot_of(self.query) if self.params.require_key else None  # keyed: its extras would be pruned
        doomed = branches_off(self.query, pivot, self.spine)  # and so would its branches off the keyed spine
        while self.query.constraint_count < wanted:
            open_nodes = [n for n in self.query.nodes if n.name != TARGET and n is not pivot and n.name not in doomed]
            open_nodes.sort(key=lambda n: (len(n.constants), -n.depth, self.query.nodes.index(n)))
            if not any(self._add_constant(n, allow_describe=True, forward_only=True) for n in open_nodes):
                return

    def _walk(self, start: Node, length: int, keyed: bool = False) -> list[Node] | None:
        """A chain of ``length`` new variables below ``start``; ``keyed``: each pins its parent."""
        for _ in range(2 * _WALK_TRIES if keyed else _WALK_TRIES):
            chain, ok = [start], True
            for step in range(length):
                nxt = self._extend(chain[-1], last=step == length - 1, keyed=keyed, below=length - step - 1)
                if nxt is None:
                    ok = False
                    break
                chain.append(nxt)
            if ok and (chain[-1].name != TARGET or self.params.target_constants):
                return chain
            self._discard(chain[1:])
        return None

    def _add_fork(self, chain: list[Node]) -> bool:
        offset, pivot = (1 if self.literal else 0), pivot_of(self.query) if self.params.require_key else chain[-1]
        points = [n for n in chain if n.depth + 1 + offset < self.hops and (n is not pivot or n is chain[-1])]  # pruned there
        if not points:
            return False
        point = self.rng.choice(points)
        length = self.rng.integer(1, self.hops - 1 - offset - point.depth)
        branch = self._walk(point, length)
        if branch is None:
            return False
        if not self._add_constant(branch[-1], allow_describe=False):
            return False
        if self.rng.chance(self.params.second_constant_rate):
            self._add_constant(branch[-1], allow_describe=False)
        return True

    def _extend(self, node: Node, last: bool = False, keyed: bool = False, below: int = 0) -> Node | None:
        """A new variable joined to ``node`` by a typed edge; the ``last`` of a chain must reach an
        entity with another fact, which can hold its constant; ``keyed``: the new variable pins ``node``
        through the edge (keys.py), itself pinned by another of its facts, with a keyed chain ``below``
        edges long possible under it (:meth:`FactGraph.key_depth`)."""
        graph = self.graph
        edges = graph.edges_of(node.entity)
        if keyed:  # the new variable pins ``node`` and is itself pinned by another of its facts
            edges = [i for i in edges if pins(graph.facts[i], node.entity)
                     and graph.key_depth(self._other(graph.facts[i], node.entity), node.entity) >= below + 1]
        fact = self._pick(edges, lambda f: (o := self._other(f, node.entity)) not in self.used_entities and self._typed(node, f)
                          and (not last or len(graph.edges_of(o)) + len(graph.literals_of(o)) > 1)
                          and (not keyed or any(i != f.index and pins(graph.facts[i], o)
                                                for i in graph.edges_of(o) + graph.literals_of(o))))
        if fact is None:
            return None
        return self._new_node(self._other(fact, node.entity), parent=node, fact=fact)

    def _new_node(self, entity: int, parent: Node | None, fact: Fact | None) -> Node:
        index = len(self.query.nodes) - (0 if self.literal else 1)
        name = TARGET if parent is None and not self.literal else variable(_LETTERS[index % 26] + ("" if index < 26 else str(index // 26)))
        node = Node(name=name, entity=entity)
        if parent is not None and fact is not None:
            node.parent, node.relation, node.fact = parent.name, fact.relation, fact.index
            node.parent_is_subject = fact.subject == parent.entity
            node.depth = parent.depth + 1
            parent.children.append(name)
            self.used_facts.add(fact.index)
        self.query.nodes.append(node)
        self.used_entities.add(entity)
        return node

    def _discard(self, nodes: list[Node]) -> None:
        for node in reversed(nodes):
            self.query.nodes.remove(node)
            self.used_entities.discard(node.entity)
            self.used_facts.discard(node.fact)
            if node.parent is not None:
                self.query.node(node.parent).children.remove(node.name)

    # --- constants -----------------------------------------------------------
    def _add_constant(self, node: Node, allow_describe: bool, forward_only: bool = False) -> bool:
        """Attach one new constant to ``node``: a literal, an entity, or a described entity
        (``forward_only``: only facts whose subject is the node, "born in X" not "the birthplace of X")."""
        if node.name == TARGET and not self.params.target_constants:
            return False
        taken = {c.relation for c in node.constants}
        options = self.graph.literals_of(node.entity) + self.graph.edges_of(node.entity)
        fact = self._pick(options, lambda f: f.relation not in taken and self._constant_ok(f, node.entity)
                          and (not forward_only or f.subject == node.entity) and self._typed(node, f)
                          and not restates_class(self.graph, self.query, node, f))
        if fact is None:
            return False
        if fact.is_edge:
            other = self._other(fact, node.entity)
            room = node.depth + 2 + (1 if self.literal else 0) <= self.params.max_hops
            if allow_describe and room and self.describe and self.rng.chance(self.params.describe_rate):
                if self._describe(node, fact, other):
                    return True
            label = self.graph.label_of(other)
            node.constants.append(Constant(fact.relation, fact.subject == node.entity, exact_condition(fact, label, other), fact.index))
        else:
            node.constants.append(Constant(fact.relation, True, self._literal_condition(fact), fact.index))
        self.used_facts.add(fact.index)
        return True

    def _add_key(self, node: Node, describe: bool) -> bool:
        """Attach constants that pin ``node`` (keys.py): one exact constant at the pinning end of its
        relation, or an exact full date with its paired entity; ``describe``: the constant may be
        replaced by a variable keyed by its own facts (WebShaper's description of a name)."""
        entity, graph = node.entity, self.graph
        room = node.depth + 2 + (1 if self.literal else 0) <= self.params.max_hops  # a name that can be described
        if describe and room and self.describe and self.rng.chance(self.params.describe_rate) and self._describe_key(node):
            return True
        pinning = [i for i in graph.literals_of(entity) + graph.edges_of(entity) if pins(graph.facts[i], entity)]
        fact = self._pick(pinning, lambda f: self._constant_ok(f, entity) and self._typed(node, f))
        if fact is not None:
            other = self._other(fact, entity) if fact.is_edge else -1
            label = graph.label_of(other) if fact.is_edge else graph.stated_form(fact.index)
            node.constants.append(Constant(fact.relation, fact.subject == entity, exact_condition(fact, label, other), fact.index))
            self.used_facts.add(fact.index)
            return True
        for date_relation, entity_relation in key_pairs():
            date = self._pick(graph.literals_of(entity), lambda f: f.relation == date_relation and len(f.date or "") == 10)
            partner = date and self._pick(graph.edges_of(entity), lambda f: f.relation == entity_relation and f.subject == entity
                                          and self._constant_ok(f, entity) and self._typed(node, f))
            if date and partner:
                for f in (date, partner):
                    label = graph.label_of(f.object) if f.is_edge else graph.stated_form(f.index)
                    node.constants.append(Constant(f.relation, True, exact_condition(f, label, f.object), f.index))
                    self.used_facts.add(f.index)
                return True
        return False

    def _describe_key(self, node: Node) -> bool:
        """Pin ``node`` by an entity that is itself described by its own key, one hop further down."""
        graph, entity = self.graph, node.entity
        pinning = [i for i in graph.edges_of(entity) if pins(graph.facts[i], entity)
                   and graph.key_depth(self._other(graph.facts[i], entity), entity) >= 1]
        fact = self._pick(pinning, lambda f: self._constant_ok(f, entity) and self._typed(node, f))
        return fact is not None and self._describe(node, fact, self._other(fact, entity))

    def _describe(self, node: Node, fact: Fact, other: int) -> bool:
        """Replace the constant ``other`` by a variable described by its own facts, which pin it."""
        child = self._new_node(other, parent=node, fact=fact)
        if not self._add_key(child, describe=False):
            self._discard([child])
            return False
        self.query.obfuscations.append(Obfuscation(
            "entity_to_description", fact.relation, "C@" + self.graph.label_of(other), child.name,
            variable=child.name,
        ))
        return True

    def _attribute_ok(self, holder: int):
        """Facts that can hold a value answer: the holder's literals, and its entity values
        without a page of their own ("Psychiatry" as a disease's specialty), which no entity
        question can ask for."""
        graph = self.graph
        return lambda f: (f.subject == holder and (not f.is_edge or not graph.is_page(f.object))
                          and (not self.params.require_key or functional(f.relation)) and self._typed(self.query.root, f))

    def _typed(self, node: Node, fact: Fact) -> bool:
        """The fact's relation fits the node's classes so far, and its other end's class
        (types.py: no "city that granted citizenship to X")."""
        as_subject = fact.subject == node.entity
        if (not as_subject and fact.index in self.graph.forward_only  # "a country that is home to <a novel>"
                or fits(node_classes(self.graph, self.query, node), role_classes(fact.relation, as_subject)) == frozenset()):
            return False
        other = self._other(fact, node.entity)
        return not fact.is_edge or fits(entity_classes(self.graph, other), role_classes(fact.relation, not as_subject)) != frozenset()

    def _literal_condition(self, fact: Fact) -> Condition:
        if self.obfuscate and self.rng.chance(0.8):
            made = obfuscated_condition(fact, self.rng)
            if made is not None:
                condition, transform = made
                self.query.obfuscations.append(transform)
                return condition
        return exact_condition(fact, self.graph.stated_form(fact.index))

    def _constant_ok(self, fact: Fact, entity: int) -> bool:
        """An unused constant that does not name the variable it constrains ("Angolan Armed Forces"
        for Angola, "Alaska Legislature" for Alaska), nor names many things (real_world.constant_refusal)."""
        if fact.is_edge:
            other = self._other(fact, entity)
            return other not in self.used_entities and other != self.query.root.entity \
                and not names(self.graph.label_of(other), self.graph.label_of(entity)) \
                and constant_refusal(self.graph, fact.relation, other, other == fact.subject) is None
        return bool(fact.value.strip())

    def tighten(self, proof: Proof) -> bool:
        """Add one constant to the most ambiguous node that can take one (intersection)."""
        if self.query.constraint_count >= self.params.max_constraints:
            return False
        nodes = sorted(self.query.nodes, key=lambda n: (-proof.candidates[n.name], n.name))
        return any(self._add_constant(n, allow_describe=False) or self._add_branch(n) for n in nodes)

    def _add_branch(self, node: Node) -> bool:
        """Intersection on the target, which takes no constant: a new one-hop variable
        below it, holding one constant (the layer-wise rule stays intact)."""
        if node.name != TARGET or self.params.target_constants:
            return False
        child = self._extend(node)
        if child is None:
            return False
        if not self._add_constant(child, allow_describe=False):
            self._discard([child])
            return False
        return True

    def try_union(self, proof: Proof, keep=None) -> Proof:
        """Widen one entity constant to "X or Y"; keep it only if the answer stays unique (and ``keep(query)``)."""
        spots = [(n, i) for n in self.query.nodes for i, c in enumerate(n.constants) if c.condition.kind == "entity"]
        if not spots:
            return proof
        node, i = self.rng.choice(spots)
        const = node.constants[i]
        alternatives = self.graph.objects_of(const.relation, self.rng.choice(self.graph.entities)) if const.node_is_subject else []
        required = role_classes(const.relation, False)
        alternatives = [a for a in alternatives if a not in const.condition.entities and a not in self.used_entities
                        and fits(entity_classes(self.graph, a), required) != frozenset()
                        and constant_refusal(self.graph, const.relation, a, False) is None]
        if not alternatives:
            return proof
        extra = self.rng.choice(alternatives)
        pairs = sorted(zip(const.condition.labels + (self.graph.label_of(extra),), const.condition.entities + (extra,)))
        widened = Condition("entity", tuple(p[0] for p in pairs), entities=tuple(p[1] for p in pairs))
        node.constants[i] = Constant(const.relation, const.node_is_subject, widened, const.fact)
        widened_proof = prove(self.query, self.graph)
        if widened_proof.unique and (keep is None or keep(self.query)):
            self.query.unions += 1
            return widened_proof
        node.constants[i] = const
        return proof

    # --- helpers -------------------------------------------------------------
    def _pick(self, indexes: list[int], accept) -> Fact | None:
        """A keyed-random fact among ``indexes`` that is unused, stated in a doc and accepted."""
        if not indexes:
            return None
        for _ in range(min(_EDGE_TRIES, 2 * len(indexes))):
            fact = self.graph.facts[indexes[self.rng.integer(0, len(indexes) - 1)]]
            if fact.index in self.used_facts or not accept(fact):
                continue
            if self.graph.stated_in(fact.index) is not None:
                return fact
        return None

    @staticmethod
    def _other(fact: Fact, entity: int) -> int:
        return fact.object if fact.subject == entity else fact.subject
