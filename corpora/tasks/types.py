"""Types for questions that are true of their nouns: entity classes and relation signatures.

An entity's **class** is its infobox template's class in the mapping (``person``,
``settlement``, ``country``, ``organisation`` ...); a value without a page (or a page
without a mapped infobox) has none of its own. A relation's **signature** says which
classes its subject may have (the *domain*: the mapping's classes whose keys state
it) and which its object may have (the *range*: ``range`` in ``phrasing.toml``, with
value classes such as ``language`` or ``field`` for things that have no infobox).

A query variable's classes are its entity's class narrowed by every relation that
touches it (:func:`node_classes`); composition joins a variable to a fact only when
that set stays non-empty (:func:`fits`), so "a city that granted citizenship to X"
cannot be composed (``citizenship`` ranges over countries), and the verbalizer names
a variable without a class of its own by what its relations agree on (:func:`class_noun`:
the object of both ``headquarters`` and ``citizenship`` is "a country").

:func:`relation_signature` is the one place that reads domains and ranges: the
reviewed ones first, else the typed mapping's DBpedia domain and range
(:func:`~stillweb.corpora.wikitext.ontology.relation_type`; ``City`` stands for
``settlement``), so composition and rendering never read either source directly.

>>> relation_signature("citizenship").range
frozenset({'country'})
>>> fits(frozenset({"settlement", "country"}), relation_signature("citizenship").range)
frozenset({'country'})
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache

from stillweb.corpora.wikitext.mapping import MAPPING_PATH, infobox_mapping
from stillweb.corpora.wikitext.ontology import ontology, relation_type

__all__ = ["Signature", "relation_signature", "entity_classes", "fits", "role_classes", "node_classes",
           "class_noun", "variable_noun", "is_person", "restates_class", "CLASS_NOUNS"]

# The noun a question uses for a variable known only by its classes (a single class, or these sets).
CLASS_NOUNS = {
    frozenset({"person"}): "person", frozenset({"settlement"}): "place", frozenset({"country"}): "country",
    frozenset({"settlement", "country"}): "place", frozenset({"organisation"}): "organization",
    frozenset({"organisation", "university"}): "institution", frozenset({"university"}): "university",
    frozenset({"award"}): "award", frozenset({"book"}): "book", frozenset({"film"}): "film",
    frozenset({"album"}): "album", frozenset({"event"}): "event", frozenset({"disease"}): "disease",
    frozenset({"language"}): "language", frozenset({"religion"}): "religion", frozenset({"field"}): "field",
    frozenset({"office"}): "office", frozenset({"occupation"}): "occupation", frozenset({"genre"}): "genre",
    frozenset({"currency"}): "currency", frozenset({"government"}): "form of government",
    frozenset({"book", "film", "album", "work"}): "work",
}


@dataclass(frozen=True)
class Signature:
    """The classes a relation's subject (``domain``) and object (``range``) may have; None: any."""

    domain: frozenset[str] | None
    range: frozenset[str] | None


@cache
def relation_signature(relation: str) -> Signature:
    """The signature of ``relation`` (see the module docstring)."""
    from stillweb.corpora.tasks.phrase.phrasing import relation_range  # phrasing reads the same data file

    kind = relation_type(relation)
    domain = _domains().get(relation) or (_from_ontology(kind.domain) if kind is not None else None)
    range_ = relation_range(relation)
    if range_ is None and kind is not None and kind.is_entity:
        range_ = _from_ontology(kind.range)
    return Signature(domain, range_)


# DBpedia ontology classes (most specific first) and the classes of this module they stand for.
_ONTOLOGY_CLASSES = (
    ("Person", {"person"}), ("Country", {"country"}), ("Settlement", {"settlement"}),
    ("PopulatedPlace", {"settlement", "country"}), ("EducationalInstitution", {"university"}),
    ("Organisation", {"organisation", "university"}), ("Award", {"award"}), ("WrittenWork", {"book"}),
    ("Film", {"film"}), ("Album", {"album"}), ("MusicalWork", {"album"}), ("Event", {"event"}),
    ("Disease", {"disease"}), ("Language", {"language"}),
)


def _from_ontology(name: str) -> frozenset[str] | None:
    """The classes a DBpedia class stands for (None: any, for classes as general as Place or Thing)."""
    tree = ontology()
    for dbpedia, classes in _ONTOLOGY_CLASSES:
        if name and tree.has_class(name) and tree.has_class(dbpedia) and tree.is_a(name, dbpedia):
            return frozenset(classes)
    return None


@cache
def _domains() -> dict[str, frozenset[str]]:
    """Relation -> the mapping's classes whose keys state it; relations of [common] keys and of
    [pairs] (any template may carry them) are left out: their domain is any class."""
    with open(MAPPING_PATH, "rb") as handle:
        data = tomllib.load(handle)
    anywhere = set(data.get("common", {}).get("keys", {}).values())
    anywhere |= {r for pair in data.get("pairs", {}).values() for r in pair.get("relations", {}).values()}
    anywhere |= {pair.get("default", "") for pair in data.get("pairs", {}).values()}
    domains: dict[str, set[str]] = {}
    for name, spec in data["classes"].items():
        for relation in spec.get("keys", {}).values():
            domains.setdefault(relation, set()).add(name)
    return {relation: frozenset(classes) for relation, classes in domains.items() if relation not in anywhere}


def entity_classes(graph, entity: int) -> frozenset[str] | None:
    """The class of an entity's infobox template, as a set; None when it has none."""
    found = infobox_mapping().class_of(graph.template_of(entity)) if graph.is_page(entity) else None
    return frozenset({found}) if found else None


def fits(current: frozenset[str] | None, required: frozenset[str] | None) -> frozenset[str] | None:
    """``current`` narrowed by ``required`` (None stands for any class; an empty set: no fit)."""
    if required is None:
        return current
    if current is None:
        return required
    return current & required


def role_classes(relation: str, as_subject: bool) -> frozenset[str] | None:
    """The classes an end of ``relation`` may have: its domain for the subject, else its range."""
    signature = relation_signature(relation)
    return signature.domain if as_subject else signature.range


def node_classes(graph, query, node) -> frozenset[str] | None:
    """A variable's classes: its entity's class narrowed by every relation of the query touching it."""
    classes = entity_classes(graph, node.entity)
    if node.parent is not None:
        classes = fits(classes, role_classes(node.relation, not node.parent_is_subject))
    for child_name in node.children:
        child = query.node(child_name)
        classes = fits(classes, role_classes(child.relation, child.parent_is_subject))
    for const in node.constants:
        classes = fits(classes, role_classes(const.relation, const.node_is_subject))
    if query.literal_answer and node is query.root:
        classes = fits(classes, role_classes(query.answer_relation, True))
    return classes


def class_noun(classes: frozenset[str] | None) -> str:
    """The noun for a set of classes ("" when no single noun covers it)."""
    if not classes:
        return ""
    return CLASS_NOUNS.get(classes, "")


def variable_noun(graph, query, node) -> str:
    """The noun naming a variable: its page's infobox noun ("politician"), else the noun of the
    classes its relations agree on ("country"), else the noun its incoming relation gives its
    objects ("place"), else "entity"."""
    from stillweb.corpora.tasks.phrase.phrasing import relation_words

    noun = infobox_mapping().noun(graph.template_of(node.entity)) if graph.is_page(node.entity) else ""
    noun = noun or class_noun(node_classes(graph, query, node))
    if not noun:
        incoming = _incoming(query, node)
        noun = relation_words(incoming).noun if incoming else ""
    return noun or "entity"


def _incoming(query, node) -> str:
    """A relation of which the node is the object (to name it when nothing else does)."""
    if node.parent is not None and node.parent_is_subject:
        return node.relation
    for child_name in node.children:
        child = query.node(child_name)
        if not child.parent_is_subject:
            return child.relation
    for const in node.constants:
        if not const.node_is_subject:
            return const.relation
    return ""


def is_person(graph, query, node) -> bool:
    """True when the variable is a person (said "who", not "that")."""
    return node_classes(graph, query, node) == frozenset({"person"})


RESTATED_SHARE = 0.5  # a value that half the entities at that end of the edge share says nothing new


def restates_class(graph, query, node, fact) -> bool:
    """True when a text fact would only restate what the variable's noun or its edge already says:
    "a musician who worked as a musician", or "worked as a musician" for the performer of an album
    (at least :data:`RESTATED_SHARE` of all performers do)."""
    if fact.is_edge or fact.value_type != "text":
        return False
    value = " ".join(fact.value.split()).lower()
    noun = variable_noun(graph, query, node).lower()
    if value == noun or value.endswith(" " + noun) or noun.endswith(" " + value):
        return True
    if node.parent is None:
        return False
    return graph.value_share(node.relation, not node.parent_is_subject, fact.relation, value) >= RESTATED_SHARE
