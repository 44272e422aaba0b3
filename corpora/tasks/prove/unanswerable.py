"""Unanswerable tasks, proven: questions no document of the snapshot answers.

An outcome-only reward teaches that a confident guess beats "the sources do
not say"; training on questions without an answer, and rewarding abstention
only there, is the remedy. Two kinds, each made from a composed, proven query
(:mod:`stillweb.corpora.tasks.compose.operations`) and stored with an
:class:`~stillweb.corpora.tasks.prove.emptiness.EmptinessProof`:

- ``joint_empty``: one constant of the query is swapped for a *decoy*, the
  same relation's value taken from another entity's stated fact. Every
  constraint is still satisfied by some entity (so the question is plausible
  and one search cannot dismiss it), but evaluated together over the fact
  graph they leave no candidate;
- ``missing_attribute``: a literal-answer query whose variable is identified
  uniquely asks instead for a relation the snapshot states for other entities
  of the same kind (infobox template) but never for this one.

Every choice comes from the attempt's ``KeyedRng`` (child ``"unanswerable"``),
so a mixed task set is a pure function of (snapshot, seed, parameters).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import replace

from stillweb.corpora.keyed import KeyedRng, stable_hash
from stillweb.corpora.tasks.compose.assemble import candidates_along_chain, evidence_of, shape_of
from stillweb.corpora.tasks.compose.params import Composition, query_level
from stillweb.corpora.tasks.prove.emptiness import ConstraintCheck, EmptinessProof, UNANSWERABLE_KINDS
from stillweb.corpora.tasks.formalization import canonical_hash, validate_formalization
from stillweb.corpora.tasks.graph import FactGraph
from stillweb.corpora.tasks.phrase.obfuscate import exact_condition
from stillweb.corpora.tasks.prove.uniqueness import Proof, constant_matches, prove
from stillweb.corpora.tasks.query import Constant, Query, formalization
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.corpora.tasks.phrase.verbalize_zh import render_question_in_language
from stillweb.corpora.tasks.store.splits import split_of

__all__ = ["make_unanswerable", "wants_unanswerable"]

_DECOY_TRIES = 8


def wants_unanswerable(seed: int, index: int, share: float) -> bool:
    """Whether attempt ``index`` should become unanswerable (keyed, so any worker count agrees)."""
    return share > 0 and KeyedRng(seed, "task", index, "unanswerable", "share").chance(share)


def make_unanswerable(composition: Composition, graph: FactGraph, rng: KeyedRng, fingerprint: str) -> tuple[TaskRecord | None, str]:
    """An unanswerable task made from a proven composition, or None and the rejection reason."""
    query = composition.query
    if query is None:
        return None, composition.reason
    first = rng.choice(UNANSWERABLE_KINDS)
    for kind in (first, *(k for k in UNANSWERABLE_KINDS if k != first)):
        made = _joint_empty(query, graph, rng.child(kind)) if kind == "joint_empty" else \
            _missing_attribute(query, composition.proof, graph, rng.child(kind))
        if made is not None:
            changed, proof, emptiness = made
            return _record(changed, proof, emptiness, graph, rng.child("render"), fingerprint), "ok"
    return None, "unanswerable:no_decoy"


def _joint_empty(query: Query, graph: FactGraph, rng: KeyedRng) -> tuple[Query, Proof, EmptinessProof] | None:
    """Swap one constant for a decoy so that the constraints, each satisfiable, have no joint answer."""
    spots = [(n, i) for n in query.nodes for i in range(len(n.constants))]
    for node, position in rng.shuffled(spots)[:_DECOY_TRIES]:
        decoy = _decoy(node.constants[position], node.entity, graph, rng)
        if decoy is None:
            continue
        constants = [*node.constants[:position], decoy, *node.constants[position + 1:]]
        changed = _with_constants(query, node.name, constants)
        proof = prove(changed, graph)
        if proof.answers or proof.candidates[changed.root.name]:  # no entity satisfies the constraints together
            continue
        checks = _constraint_checks(changed, graph)
        if all(check.satisfied_by > 0 for check in checks):
            candidates = tuple((n.name, proof.candidates[n.name]) for n in changed.nodes)
            return changed, proof, EmptinessProof("joint_empty", checks, candidates)
    return None


def _decoy(const: Constant, entity: int, graph: FactGraph, rng: KeyedRng) -> Constant | None:
    """The constant's relation with another entity's stated value (one the node's entity lacks)."""
    facts = _facts_by_relation(graph).get((const.relation, const.node_is_subject), [])
    for _ in range(min(_DECOY_TRIES, len(facts))):
        fact = graph.facts[rng.choice(facts)]
        own_end = fact.subject if const.node_is_subject else fact.object
        if own_end == entity or graph.stated_in(fact.index) is None:
            continue
        if fact.is_edge:
            other = fact.object if const.node_is_subject else fact.subject
            condition = exact_condition(fact, graph.label_of(other), other)
        else:
            condition = exact_condition(fact, graph.stated_form(fact.index))
        decoy = Constant(const.relation, const.node_is_subject, condition, fact.index)
        if entity not in constant_matches(decoy, graph):
            return decoy
    return None


def _missing_attribute(query: Query, proof: Proof | None, graph: FactGraph, rng: KeyedRng) -> tuple[Query, Proof, EmptinessProof] | None:
    """Ask a uniquely identified variable for a relation its kind has and it never states."""
    root = query.root
    if not query.literal_answer or proof is None or proof.candidates.get(root.name) != 1:
        return None
    stated = {graph.facts[i].relation for i in (*graph.literals_of(root.entity), *graph.edges_of(root.entity))
              if graph.facts[i].subject == root.entity}
    kind_relations = _literal_relations_by_template(graph).get(graph.template_of(root.entity), {})
    missing = sorted(relation for relation in kind_relations if relation not in stated)
    if not missing:
        return None
    relation = rng.choice(missing)
    changed = replace(query, answer_relation=relation)
    checks = _constraint_checks(changed, graph)
    candidates = tuple((n.name, proof.candidates[n.name]) for n in changed.nodes)
    emptiness = EmptinessProof("missing_attribute", checks, candidates, entity=root.entity, relation=relation,
                               stated_for=kind_relations[relation])
    return changed, proof, emptiness


def _constraint_checks(query: Query, graph: FactGraph) -> tuple[ConstraintCheck, ...]:
    checks = []
    for node in query.nodes:
        for const in node.constants:
            matches = constant_matches(const, graph)
            checks.append(ConstraintCheck(node.name, const.relation, const.condition.text, len(matches),
                                          min(matches) if matches else -1))
    return tuple(checks)


def _with_constants(query: Query, name: str, constants: list[Constant]) -> Query:
    """A copy of ``query`` whose node ``name`` holds ``constants`` (the other nodes shared)."""
    nodes = [replace(node, constants=constants) if node.name == name else node for node in query.nodes]
    return replace(query, nodes=nodes)


def _record(query: Query, proof: Proof, emptiness: EmptinessProof, graph: FactGraph, rng: KeyedRng, fingerprint: str) -> TaskRecord:
    triples = formalization(query)
    validate_formalization(triples)
    question = render_question_in_language(query, graph, rng)
    chash = canonical_hash(triples)
    evidence = evidence_of(replace(query, answer_fact=-1), graph)  # the facts that each satisfy one constraint
    along = candidates_along_chain(query, proof)
    return TaskRecord(
        task_id="sw-" + stable_hash(f"{fingerprint}|{chash}|{question}", 12),
        question=question,
        answer="",
        evidence=evidence,
        evidence_docs=tuple(dict.fromkeys(item.doc_id for item in evidence)),
        formalization=tuple(tuple(triple) for triple in triples),
        hops=query.hops,
        constraints=query.constraint_count,
        candidates_per_hop=tuple(along),
        level=query_level(query),
        shape=shape_of(query) + "+unanswerable",
        split=split_of("entity:" + graph.world.title_of(query.root.entity)),
        canonical_hash=chash,
        answerable=False,
        emptiness_proof=emptiness,
    )


@functools.lru_cache(maxsize=4)
def _facts_by_relation(graph: FactGraph) -> dict[tuple[str, bool], list[int]]:
    """Fact indexes stated in a document, by (relation, whether the constrained node is the subject)."""
    found: defaultdict[tuple[str, bool], list[int]] = defaultdict(list)
    for fact in graph.facts:
        found[fact.relation, True].append(fact.index)
        if fact.is_edge:
            found[fact.relation, False].append(fact.index)
    return dict(found)


@functools.lru_cache(maxsize=4)
def _literal_relations_by_template(graph: FactGraph) -> dict[str, dict[str, int]]:
    """For each infobox template, its entities' literal relations and how many entities state each."""
    subjects: defaultdict[str, defaultdict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    for entity in graph.entities:
        for index in graph.literals_of(entity):
            subjects[graph.template_of(entity)][graph.facts[index].relation].add(entity)
    return {template: {relation: len(found) for relation, found in sorted(relations.items())}
            for template, relations in subjects.items()}
