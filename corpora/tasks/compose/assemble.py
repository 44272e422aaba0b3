"""Turning a proven query into a :class:`~stillweb.corpora.tasks.store.record.TaskRecord`.

The record carries the question, answer and aliases, the evidence in solving
order (each fact with the doc whose plaintext states it), the formalization
and its canonical hash, and the difficulty descriptors: hops, constraints,
candidates per hop, level and shape.
"""

from __future__ import annotations

from stillweb.corpora.errors import UsageError
from stillweb.corpora.keyed import KeyedRng, stable_hash
from stillweb.corpora.tasks.compose.params import query_level
from stillweb.corpora.tasks.formalization import canonical_hash, validate_formalization
from stillweb.corpora.tasks.phrase.value_forms import number_forms, value_forms
from stillweb.corpora.tasks.graph import FactGraph, normalize_text
from stillweb.corpora.tasks.phrase.phrasing import date_words, entity_label, natural_case, relation_words, with_unit
from stillweb.corpora.tasks.prove.uniqueness import Proof
from stillweb.corpora.tasks.query import Node, Query, formalization
from stillweb.corpora.tasks.store.record import EvidenceItem, TaskRecord
from stillweb.corpora.tasks.phrase.verbalize_zh import question_language, render_question_in_language, zh_date
from stillweb.corpora.tasks.store.splits import split_of

__all__ = ["build_record", "shape_of", "answer_key", "evidence_of", "candidates_along_chain"]


def build_record(query: Query, proof: Proof, graph: FactGraph, rng: KeyedRng, fingerprint: str) -> TaskRecord:
    """The task record of a proven query (``oracle_steps`` is None until a verifier runs)."""
    world = graph.world
    triples = formalization(query)
    validate_formalization(triples)
    if query.literal_answer:
        fact = graph.facts[query.answer_fact]
        forms = [graph.stated_form(fact.index), *value_forms(fact.value, fact.date, fact.number)]
        if fact.date and len(fact.date) == 10:
            answer = date_words(fact.date)  # "March 4, 1992", the ISO form an alias
        elif fact.value_type == "number" and fact.number is not None:
            answer = with_unit(fact.relation, fact.number)  # "131,426 km²", "US$2.565 trillion"; "33,073" an alias
            forms.extend(number_forms(fact.number))
        elif fact.is_edge:  # a named value without a page: the name people say, the full one an alias
            answer = entity_label(forms[0])
        elif relation_words(fact.relation).lower:  # a common noun as the question says it: "right", not "Right"
            answer = natural_case(forms[0])
        else:
            answer = forms[0]
        answer_doc = graph.stated_in(fact.index)
    else:  # the name people say; the full title and the redirects are aliases
        title = world.title_of(query.root.entity)
        answer = entity_label(title)
        forms = [title, *world.aliases_of(query.root.entity)]
        answer_doc = query.root.entity
    key = answer_key(query, answer, world.title_of)
    if query.literal_answer and question_language(graph) == "zh" and len(graph.facts[query.answer_fact].date or "") == 10:
        forms, answer = [answer, *forms], zh_date(graph.facts[query.answer_fact].date)  # 1992年3月4日; same split
    aliases = [form for form in dict.fromkeys(forms) if form != answer]
    evidence = evidence_of(query, graph)
    question = render_question_in_language(query, graph, rng)
    chash = canonical_hash(triples)
    return TaskRecord(
        task_id="sw-" + stable_hash(f"{fingerprint}|{chash}|{question}", 12),
        question=question,
        answer=answer,
        aliases=tuple(aliases),
        evidence=evidence,
        evidence_docs=tuple(dict.fromkeys(e.doc_id for e in evidence)),
        formalization=tuple(tuple(triple) for triple in triples),
        hops=query.hops,
        constraints=query.constraint_count,
        candidates_per_hop=tuple(candidates_along_chain(query, proof)),
        level=query_level(query),
        shape=shape_of(query),
        obfuscations=tuple(query.obfuscations),
        oracle_steps=None,
        split=split_of(key),
        canonical_hash=chash,
        answer_doc=answer_doc,
    )


def answer_key(query: Query, answer: str, title_of) -> str:
    """The key that decides the split: the answer entity's title, else the literal value."""
    if query.literal_answer:
        return "value:" + normalize_text(answer)
    return "entity:" + title_of(query.root.entity)


def shape_of(query: Query) -> str:
    """A canonical shape name: answer kind, then ``chain-<hops>`` or the variable tree."""
    kind = "value" if query.literal_answer else "entity"
    if query.nonlinear:
        shape = f"{kind}-tree-{_signature(query.root, query)}"
    else:
        shape = f"{kind}-chain-{query.hops}"
    return shape + ("+union" if query.unions else "")


def _signature(node: Node, query: Query) -> str:
    children = sorted(_signature(query.node(c), query) for c in node.children)
    return "v" + (f"({','.join(children)})" if children else "")


def evidence_of(query: Query, graph: FactGraph) -> tuple[EvidenceItem, ...]:
    """The facts of the query in solving order (constants, then the edge up), each with the doc stating it."""
    indexes: list[int] = []
    for node in query.solving_order():
        indexes.extend(c.fact for c in node.constants)
        if node.fact >= 0:
            indexes.append(node.fact)
    if query.literal_answer:
        indexes.append(query.answer_fact)
    items = []
    for index in indexes:
        fact = graph.facts[index]
        doc = graph.stated_in(index)
        if doc is None:
            raise UsageError(f"fact {index} has no document stating it")
        items.append(EvidenceItem(
            subject=graph.world.title_of(fact.subject),
            relation=fact.relation,
            value=graph.stated_form(index),
            doc_id=doc,
            doc_title=graph.world.title_of(doc),
        ))
    return tuple(items)


def candidates_along_chain(query: Query, proof: Proof) -> list[int]:
    """Candidate counts along the longest chain, deepest variable first, ending at the root."""
    deepest = max(query.nodes, key=lambda n: (n.depth, -query.nodes.index(n)))
    path = [deepest]
    while path[-1].parent is not None:
        path.append(query.node(path[-1].parent))
    return [proof.candidates[n.name] for n in path]
