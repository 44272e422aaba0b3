"""Rendering a query as a natural-language question.

Each variable becomes a noun phrase ("a film whose director is a person who
was born in the early 1950s"), built from the entity's infobox template (the
noun), its constants and its children (relative clauses); variables deep in
the tree get sentences of their own ("There is a university founded in the
1850s. Which film ... a person who studied at that university?"), so clauses
never nest more than one level deep. Relation phrases
come from a small table for common infobox relations, with a generic
``whose <relation> is <value>`` fallback. Clause order and the sentence frame
are keyed-random, so the same query shape reads in several ways.
"""

from __future__ import annotations

import re

from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.tasks.graph import FactGraph
from stillweb.corpora.tasks.query import Node, Query

__all__ = ["render_question", "noun_of", "relation_words"]

# relation -> (node is subject: "{x}" is the value, node is object: "{x}" is the other side)
_PHRASES = {
    "birth_place": ("who was born in {x}", "that is the birthplace of {x}"),
    "death_place": ("who died in {x}", "that is the place where {x} died"),
    "birth_date": ("who was born {x}", "that is the birth date of {x}"),
    "death_date": ("who died {x}", "that is the death date of {x}"),
    "alma_mater": ("who studied at {x}", "that is the alma mater of {x}"),
    "director": ("directed by {x}", "that directed {x}"),
    "founded_by": ("founded by {x}", "that founded {x}"),
    "founder": ("founded by {x}", "that founded {x}"),
    "headquarters": ("headquartered in {x}", "that hosts the headquarters of {x}"),
    "country": ("located in {x}", "that is the country of {x}"),
    "capital": ("whose capital is {x}", "that is the capital of {x}"),
    "spouse": ("married to {x}", "that is married to {x}"),
    "author": ("written by {x}", "that wrote {x}"),
    "starring": ("starring {x}", "that starred in {x}"),
    "located_in": ("located in {x}", "where {x} is located"),
    "awards": ("who received {x}", "that was received by {x}"),
    "nationality": ("whose nationality is {x}", "that is the home country of {x}"),
    "employer": ("who worked for {x}", "that employed {x}"),
    "performer": ("performed by {x}", "that performed {x}"),
    "publisher": ("published by {x}", "that published {x}"),
    "record_label": ("released by {x}", "that released {x}"),
    "production_company": ("produced by {x}", "that produced {x}"),
    "mayor": ("whose mayor is {x}", "that is the mayor of {x}"),
    "ceo": ("whose CEO is {x}", "that is the CEO of {x}"),
    "genre": ("whose genre is {x}", "that is the genre of {x}"),
    "occupation": ("whose occupation is {x}", "that is the occupation of {x}"),
    # attributes (the node is always the subject): compact forms
    "release_date": ("released {x}", ""),
    "publication_date": ("published {x}", ""),
    "founded": ("founded {x}", ""),
    "students": ("with {x} students", ""),
    "employees": ("with {x} employees", ""),
    "pages": ("with {x} pages", ""),
    "tracks": ("with {x} tracks", ""),
    "population": ("with a population of {x}", ""),
}
_DATE_RELATIONS = ("birth_date", "death_date", "release_date", "publication_date")  # "on <date>" / "in <period>"
_YEAR_RELATIONS = ("founded",)  # "in <year>" / "in <period>"
# relation -> how to name it as an attribute ("the number of tracks of the album")
_ATTRIBUTES = {
    "founded": "founding year",
    "tracks": "number of tracks",
    "pages": "number of pages",
    "employees": "number of employees",
    "students": "number of students",
    "area_km2": "area in square kilometres",
    "elevation_m": "elevation in metres",
    "attendance": "attendance",
    "date": "date",
}
_TEMPLATE_PREFIX = re.compile(r"^\s*infobox[\s_]*", re.IGNORECASE)


def relation_words(relation: str) -> str:
    """A relation name as words: ``alma_mater`` -> ``alma mater``, ``tracks`` -> ``number of tracks``."""
    return _ATTRIBUTES.get(relation, relation.replace("_", " ").strip())


def noun_of(graph: FactGraph, entity: int) -> str:
    """A noun for an entity, from its infobox template (``Infobox film`` -> ``film``)."""
    noun = _TEMPLATE_PREFIX.sub("", graph.template_of(entity)).replace("_", " ").strip().lower()
    return noun or "entity"


def render_question(query: Query, graph: FactGraph, rng: KeyedRng) -> str:
    """The question text of ``query`` (see the module docstring)."""
    text = _Text(query, graph, rng)
    root = query.root
    noun = text.nouns[root.name]
    clauses = text.clauses(root)
    if query.literal_answer:
        attribute = relation_words(query.answer_relation)
        frames = (
            "What is the {a} of the {n} {c}?",
            "Consider the {n} {c}. What is its {a}?",
        )
        question = rng.choice(frames).format(a=attribute, n=noun, c=clauses)
    else:
        frames = ("Which {n} {c}?", "I am looking for the {n} {c}. Which {n} is it?", "Name the {n} {c}.")
        question = rng.choice(frames).format(n=noun, c=clauses)
    return " ".join([*text.intros, question])


class _Text:
    """Noun phrases of one question, with deep variables told in sentences of their own.

    A variable two or more edges below the root (the deepest one of each noun,
    so "that university" is never ambiguous) is introduced first ("There is a university founded in the 1850s.")
    and then named "that university" where its parent mentions it, so relative
    clauses nest at most one level inside another.
    """

    def __init__(self, query: Query, graph: FactGraph, rng: KeyedRng) -> None:
        self.query, self.rng = query, rng
        self.nouns = {n.name: noun_of(graph, n.entity) for n in query.nodes}
        deep = sorted((n for n in query.nodes if n.depth >= 2), key=lambda n: (-n.depth, query.nodes.index(n)))
        first_of_noun = {self.nouns[n.name]: n.name for n in reversed(deep)}  # the deepest node per noun
        self.told_apart = set(first_of_noun.values())
        self.intros: list[str] = []  # sentences introducing deep variables, deepest first

    def noun_phrase(self, node: Node) -> str:
        noun = self.nouns[node.name]
        phrase = f"{'an' if noun[:1] in 'aeio' else 'a'} {noun} {self.clauses(node)}"
        if node.name not in self.told_apart:
            return phrase
        self.intros.append(self.rng.choice(("There is {p}.", "Consider {p}.")).format(p=phrase))
        return f"that {noun}"

    def clauses(self, node: Node) -> str:
        # constants first, then the (possibly nested) child phrases, so no constant
        # trails a nested phrase and reads as if it belonged to it
        constants = [_phrase(c.relation, c.node_is_subject, c.condition.text) for c in node.constants]
        children = []
        for child_name in node.children:
            child = self.query.node(child_name)
            children.append(_phrase(child.relation, child.parent_is_subject, self.noun_phrase(child)))
        parts = self.rng.shuffled(constants) + self.rng.shuffled(children)
        if len(parts) <= 2:
            return " and ".join(parts)
        return ", ".join(parts[:-1]) + ", and " + parts[-1]


def _phrase(relation: str, node_is_subject: bool, value: str) -> str:
    words = relation_words(relation)
    subject_form, object_form = _PHRASES.get(relation, (f"whose {words} is {{x}}", f"that is the {words} of {{x}}"))
    if relation in _DATE_RELATIONS and node_is_subject and not value.startswith("in "):
        value = f"on {value}"
    if relation in _YEAR_RELATIONS and node_is_subject and not value.startswith("in "):
        value = f"in {value}"
    return (subject_form if node_is_subject else object_form).format(x=value)
