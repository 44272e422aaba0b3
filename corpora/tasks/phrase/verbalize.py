"""Rendering a query as a question a person would write.

Each variable becomes a noun phrase named by its type (:func:`~stillweb.corpora.tasks.types.variable_noun`:
"a film", "a politician", "a country" for a value its relations agree is one) and
described by relative clauses with finite verbs, read from the phrasing data: one
"who"/"that" before the verb phrases ("a person who was born in Lunor in the 1880s
and died in Ka"), then the whole clauses ("whose capital is X", "where X was
born"). Variables two edges or more below the root whose noun no other variable
shares get sentences of their own ("There is a university that was founded in
1852.") and are then named "that university"; a variable whose noun is shared is
described where it stands, so "that person" never points at one of two people.
The question itself always has a finite verb: "Which film was directed by ...?",
"What is the name of the city where ...?", "Name the award that ...", and for
literal answers "What is the population of the country that ...?" or the
relation's own question ("When was this person born?") after a sentence telling
the subject. Constants read naturally: dates humanised or turned into periods
(SailorFog-style, by obfuscation), numbers with separators and their unit, common
nouns in lower case, entity names without disambiguators. Clause order and the
sentence frame are keyed-random.
"""

from __future__ import annotations

import re

from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.tasks.graph import FactGraph
from stillweb.corpora.tasks.phrase.phrasing import (
    ask_in_year,
    entity_label,
    is_clause,
    merge_dated,
    relation_phrase,
    relation_words,
    value_text,
    with_article,
    words_after_value,
)
from stillweb.corpora.tasks.query import Constant, Node, Query
from stillweb.corpora.tasks.types import entity_classes, is_person, relation_signature, variable_noun

__all__ = ["render_question", "told_apart"]

_NAME_FRAMES = ("What is the name of the {n} {d}?", "Name the {n} {d}.", "Identify the {n} {d}.")
_LEAD_RATE = 0.6  # entity questions that tell their one variable first, then ask
_INTRO_FRAMES = ("There is {p}.", "Consider {p}.", "Take {p}.")
_SUBJECT_FRAMES = ("Consider the {n} {d}.", "There is {a_n} {d}.", "Think of the {n} {d}.")


def render_question(query: Query, graph: FactGraph, rng: KeyedRng) -> str:
    """The question text of ``query`` (see the module docstring)."""
    text = _Text(query, graph, rng)
    root = query.root
    noun = text.nouns[root.name]
    verbs, clauses = text.parts(root)
    if query.literal_answer:
        question = _ask_value(query, noun, (verbs, clauses), text.describe(root, verbs, clauses), rng,
                              graph.year_of(query.answer_fact))
    elif verbs and not clauses and rng.chance(0.4):
        question = f"Which {noun} {_join(verbs)}?"
    else:
        question = rng.choice(_NAME_FRAMES).format(n=noun, d=text.describe(root, verbs, clauses))
    return _tidy(" ".join([*text.intros, question]))


def _tidy(text: str) -> str:
    """No comma or space after a closing dash; none before a question mark or a full stop (a value
    such as ".al" keeps its space)."""
    for before, after in (("\u2014, and ", "\u2014and "), ("\u2014 and ", "\u2014and "), ("\u2014, ", "\u2014"),
                          ("\u2014?", "?"), ("\u2014.", "."), ("\u2014 ", "\u2014"), (" ?", "?")):
        text = text.replace(before, after)
    return _SPACE_STOP_RE.sub(".", text)


_SPACE_STOP_RE = re.compile(r" \.(?=\s|$)")


def _ask_value(query: Query, noun: str, parts: tuple[list[str], list[str]], described: str, rng: KeyedRng,
               year: int | None = None) -> str:
    """A literal answer: the subject told first in a sentence of its own ("A person was born in Lunor
    and wrote Dawn.") and then asked about, as WebShaper and SailorFog write; or asked in one sentence
    ("How many people live in the city where ...?"); a stock frame ("Consider the ...") rarely."""
    words = relation_words(query.answer_relation)
    wh = "Who" if relation_signature(query.answer_relation).range == frozenset({"person"}) else "What"
    ask = words.ask if words.ask and rng.chance(0.7) else f"{wh} is the {words.attribute} of {{np}}?"
    if year is not None:  # a time-varying value: asked with the year its source gives (prove/real_world.py)
        ask = ask_in_year(query.answer_relation, year, wh)
    told = _sentence(noun, *parts)
    if told.count(f" {noun}") > 1:  # "A person was married to a person ...": "this person" would point at two
        told = ""
    if told and rng.chance(0.75):
        return f"{told} {ask.format(np=f'this {noun}')}"
    if rng.chance(0.9):  # one sentence; an ask with words after {np} ("In what year was {np} founded?") would split its verb
        one = ask if ask.rstrip().endswith("{np}?") else f"{wh} is the {words.attribute} of {{np}}?"
        return one.format(np=f"the {noun} {described}")
    frame = rng.choice(_SUBJECT_FRAMES).format(n=noun, a_n=with_article(noun), d=described)
    return f"{frame} {ask.format(np=f'this {noun}')}"


def _sentence(noun: str, verbs: list[str], clauses: list[str]) -> str:
    """A variable told as a sentence of its own, WebShaper's description first: its verb phrases and
    its "who"/"that" clauses as verbs ("A university was founded in 1852 and educated Ann Lee."), or
    its one "whose" clause as a possessive ("A country's national anthem is Kassaman."); "" when it
    has "where" or several "whose" clauses."""
    article = with_article(noun)
    article = article[:1].upper() + article[1:]
    said = verbs + [c.split(" ", 1)[1] for c in clauses if c.startswith(("who ", "that "))]
    rest = [c for c in clauses if not c.startswith(("who ", "that "))]
    if said and not rest:
        return f"{article} {_join(said)}."
    if not said and len(rest) == 1 and rest[0].startswith("whose ") and "\u2014" not in rest[0]:
        return f"{article}'s {rest[0][6:]}."
    return ""


def _join(parts: list[str]) -> str:
    if len(parts) <= 2:
        return " and ".join(parts)
    return ", ".join(parts[:-1]) + ", and " + parts[-1]


def told_apart(query: Query, nouns: dict[str, str]) -> set[str]:
    """The variables told in a sentence of their own first (deep or busy, their noun in ``nouns`` no
    other variable's): the English and Chinese questions pick them alike."""
    said = list(nouns.values())
    return {n.name for n in query.nodes if n.parent is not None and said.count(nouns[n.name]) == 1
            and (n.depth >= 2 or len(n.children) + len(n.constants) >= 3)}


class _Text:
    """Noun phrases of one question, with deep variables told in sentences of their own."""

    def __init__(self, query: Query, graph: FactGraph, rng: KeyedRng) -> None:
        self.query, self.graph, self.rng = query, graph, rng
        self.nouns = {n.name: variable_noun(graph, query, n) for n in query.nodes}
        self.people = {n.name: is_person(graph, query, n) for n in query.nodes}
        nouns = list(self.nouns.values())
        self.told_apart = told_apart(query, self.nouns)
        root = query.root  # an entity asked through one variable: that variable told first (WebShaper's shape)
        self.lead = {root.children[0]} if (not query.literal_answer and len(root.children) == 1 and not root.constants
                                           and nouns.count(self.nouns[root.children[0]]) == 1
                                           and rng.chance(_LEAD_RATE)) else set()
        self.intros: list[str] = []  # sentences introducing deep variables, deepest first

    def noun_phrase(self, node: Node, enclosed: bool) -> str:
        """"a university that ..." (between dashes when more of its parent's words follow), or
        "that university" after a sentence of its own."""
        noun = self.nouns[node.name]
        verbs, clauses = self.parts(node)
        described = self.describe(node, verbs, clauses)
        if node.name in self.lead and (told := _sentence(noun, verbs, clauses)):
            self.intros.append(told)
            return f"that {noun}"
        if node.name in self.told_apart:
            told = _sentence(noun, verbs, clauses)
            self.intros.append(told or self.rng.choice(_INTRO_FRAMES).format(p=f"{with_article(noun)} {described}".strip()))
            return f"that {noun}"
        if enclosed and described:
            return f"{with_article(noun)}\u2014{described}\u2014"
        return f"{with_article(noun)} {described}".strip()

    def describe(self, node: Node, verbs: list[str], clauses: list[str]) -> str:
        """The relative clauses of a node: "who" + its verb phrases, then its whole clauses."""
        who = "who" if self.people[node.name] else "that"
        pieces = ([f"{who} {_join(verbs)}"] if verbs else []) + clauses
        return _join(pieces)  # "whose X is A, whose Y is B, and whose Z is C": never "and whose" stacked

    def parts(self, node: Node) -> tuple[list[str], list[str]]:
        """The node's verb phrases and whole relative clauses: constants first, then children (the
        last of them undelimited, the others between dashes), so no phrase reads as if it belonged
        to a nested one."""
        person = self.people[node.name]
        own = entity_classes(self.graph, node.entity)
        kind = next(iter(own)) if own else ""
        constants = merge_dated(self.rng.shuffled(
            [relation_phrase(c.relation, c.node_is_subject, self._constant_text(c), person, kind,
                             self.graph.year_of(c.fact)) for c in node.constants]))
        children = [self.query.node(name) for name in self.rng.shuffled(list(node.children))]
        shapes = [is_clause(relation_phrase(c.relation, c.parent_is_subject, "X", person, kind)) for c in children]
        order = [c for c, clause in zip(children, shapes) if not clause] + [c for c, clause in zip(children, shapes) if clause]
        last = order[-1] if order and (any(shapes) or not any(is_clause(p) for p in constants)) else None
        phrases = {c.name: relation_phrase(c.relation, c.parent_is_subject, self.noun_phrase(
            c, c is not last or words_after_value(c.relation, c.parent_is_subject, kind)), person, kind) for c in order}
        verbs = [p for p in constants if not is_clause(p)] + [phrases[c.name] for c, cl in zip(children, shapes) if not cl]
        clauses = [p for p in constants if is_clause(p)] + [phrases[c.name] for c, cl in zip(children, shapes) if cl]
        return verbs, clauses

    def _constant_text(self, constant: Constant) -> str:
        condition = constant.condition
        if condition.kind in ("year_range", "number_range"):
            return condition.text
        if condition.kind == "entity":
            return " or ".join(self.graph.said_label(label, e) for label, e in zip(condition.labels, condition.entities))
        fact = self.graph.facts[constant.fact]
        if fact.value_type == "entity":  # a linked name whose page is not in the snapshot
            return " or ".join(entity_label(label) for label in condition.labels)
        if len(condition.labels) == 1:
            return value_text(fact.relation, condition.labels[0], fact.value_type, fact.date, fact.number)
        return " or ".join(value_text(fact.relation, label, "text", None, None) for label in condition.labels)
