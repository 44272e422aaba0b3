"""Rendering a query as a question a person would write.

Each variable becomes a noun phrase named by its entity's class ("a film",
"a philosopher"; from the infobox mapping, else from the relation that reaches
it: the object of ``birth_place`` is "a place"), followed by its constants and
children as short phrases from the phrasing data ("directed by a person born in
the early 1950s"). Variables two edges or more below the root get sentences of
their own ("Consider a university founded in 1852.") and are then named "that
university", so no clause nests more than one level inside another. Literal
answers are asked with the relation's own question ("When was the film ...
released?"). Constants read naturally: dates humanised or turned into periods
(SailorFog-style, by obfuscation), numbers with separators and their unit,
common nouns in lower case, entity names without disambiguators. Clause order
and the sentence frame are keyed-random.
"""

from __future__ import annotations

from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.tasks.graph import FactGraph
from stillweb.corpora.tasks.phrasing import (
    entity_label,
    merge_dated,
    relation_phrase,
    relation_words,
    value_text,
    with_article,
)
from stillweb.corpora.tasks.query import Constant, Node, Query
from stillweb.corpora.wikitext.mapping import infobox_mapping

__all__ = ["render_question", "noun_of", "is_person"]

_FALLBACK_NOUN = "entity"
_ENTITY_FRAMES = ("Which {n} {c}?", "Name the {n} {c}.", "What {n} {c}?")
_INTRO_FRAMES = ("Consider {p}.", "There is {p}.", "Take {p}.")
_SUBJECT_FRAMES = ("Consider the {n} {c}.", "Think of the {n} {c}.", "Take the {n} {c}.")


def noun_of(graph: FactGraph, entity: int, incoming: str = "") -> str:
    """The class noun of an entity: its infobox template's noun, else the noun the relation
    ``incoming`` gives its objects, else "entity"."""
    noun = infobox_mapping().noun(graph.template_of(entity))
    if not noun and incoming:
        noun = relation_words(incoming).noun
    return noun or _FALLBACK_NOUN


def is_person(graph: FactGraph, entity: int, noun: str) -> bool:
    """True when the entity is a person (for "who" rather than "that")."""
    return infobox_mapping().class_of(graph.template_of(entity)) == "person" or noun == "person"


def render_question(query: Query, graph: FactGraph, rng: KeyedRng) -> str:
    """The question text of ``query`` (see the module docstring)."""
    text = _Text(query, graph, rng)
    root = query.root
    noun = text.nouns[root.name]
    clauses = text.clauses(root)
    if query.literal_answer:  # the subject told first, then asked about (WebShaper: "... this match?")
        words = relation_words(query.answer_relation)
        told = rng.choice(_SUBJECT_FRAMES).format(n=noun, c=clauses)
        this = f"this {noun}"
        ask = words.ask.format(np=this) if words.ask and rng.chance(0.7) else f"What is the {words.attribute} of {this}?"
        question = f"{told} {ask}"
    else:
        question = rng.choice(_ENTITY_FRAMES).format(n=noun, c=clauses).replace(" ?", "?").replace(" .", ".")
    return " ".join([*text.intros, question])


class _Text:
    """Noun phrases of one question, with deep variables told in sentences of their own.

    A variable two or more edges below the root (the deepest one of each noun,
    so "that university" is never ambiguous) is introduced first and then named
    "that university" where its parent mentions it.
    """

    def __init__(self, query: Query, graph: FactGraph, rng: KeyedRng) -> None:
        self.query, self.graph, self.rng = query, graph, rng
        self.nouns = {n.name: noun_of(graph, n.entity, self._incoming(n)) for n in query.nodes}
        self.people = {n.name: is_person(graph, n.entity, self.nouns[n.name]) for n in query.nodes}
        deep = sorted((n for n in query.nodes if n.depth >= 2), key=lambda n: (-n.depth, query.nodes.index(n)))
        first_of_noun = {self.nouns[n.name]: n.name for n in reversed(deep)}  # the deepest node per noun
        self.told_apart = set(first_of_noun.values())
        self.intros: list[str] = []  # sentences introducing deep variables, deepest first

    def _incoming(self, node: Node) -> str:
        """A relation of which the node is the object (to name it when its page has no class)."""
        if node.parent is not None and node.parent_is_subject:
            return node.relation
        for child_name in node.children:
            child = self.query.node(child_name)
            if not child.parent_is_subject:
                return child.relation
        return ""

    def noun_phrase(self, node: Node) -> str:
        noun = self.nouns[node.name]
        phrase = f"{with_article(noun)} {self.clauses(node)}".strip()
        if node.name not in self.told_apart:
            return phrase
        self.intros.append(self.rng.choice(_INTRO_FRAMES).format(p=phrase))
        return f"that {noun}"

    def clauses(self, node: Node) -> str:
        # constants first, then the (possibly nested) child phrases, so no constant
        # trails a nested phrase and reads as if it belonged to it
        person = self.people[node.name]
        noun = self.nouns[node.name]
        constants = [relation_phrase(c.relation, c.node_is_subject, text, person)
                     for c in node.constants if (text := self._constant_text(c)) != noun]  # no "a writer working as a writer"
        children = []
        for child_name in node.children:
            child = self.query.node(child_name)
            children.append(relation_phrase(child.relation, child.parent_is_subject, self.noun_phrase(child), person))
        parts = merge_dated(self.rng.shuffled(constants)) + self.rng.shuffled(children)
        if len(parts) <= 2:
            return " and ".join(parts)
        return ", ".join(parts[:-1]) + ", and " + parts[-1]

    def _constant_text(self, constant: Constant) -> str:
        condition = constant.condition
        if condition.kind in ("year_range", "number_range"):
            return condition.text
        if condition.kind == "entity":
            return " or ".join(entity_label(label) for label in condition.labels)
        fact = self.graph.facts[constant.fact]
        if fact.value_type == "entity":  # a linked name whose page is not in the snapshot
            return " or ".join(entity_label(label) for label in condition.labels)
        if len(condition.labels) == 1:
            return value_text(fact.relation, condition.labels[0], fact.value_type, fact.date, fact.number)
        return " or ".join(value_text(fact.relation, label, "text", None, None) for label in condition.labels)
