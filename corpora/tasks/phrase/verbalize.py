"""Rendering a query as a question a person would write: one sentence per entity, then the ask.

SailorFog-QA tells each entity of a question in a sentence of its own and then asks about the last
("A symbolic structure in a northern European capital features an epic character ... This monument
was highlighted online ... How was this monument visually presented?"); so does this renderer, in
the order of :func:`~stillweb.corpora.tasks.phrase.plan.plan_question` (children first, the root asked
last; issue 49 item 1):

- a variable is told in a sentence whose subject names it through its anchor ("The city where that
  painter was born covers 30–50 square kilometres and is where Ann Lee died.", "That painter's
  spouse received the Harley Medal."), or, with nothing before it, by its noun ("A painter was born
  in Lunor on March 4, 1902."); its other facts are verb phrases ("whose capital is X" becomes "has
  X as its capital", "where X was born" becomes "is where X was born"), a few to a sentence, so no
  sentence runs long;
- after that it goes by a short handle: "that city" when no other variable is a city, else its role
  ("the spouse") or its place among its namesakes ("the second person", told as "Another person");
- a variable with nothing of its own to tell is named inside the next sentence ("the city where that
  painter's spouse was born"), once, and only where nothing follows its name, so no clause ever
  stands between a question word and its verb, and no clause is set between dashes;
- the ask has a finite verb right after its question word: "Which film was directed by that
  person?", "Name the city where the spouse died.", "How many people live in that city?".

Constants read naturally: dates humanised or turned into periods (SailorFog-style, by obfuscation),
numbers with separators and their unit, common nouns in lower case, entity names without
disambiguators. Every choice of wording is keyed-random.
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
from stillweb.corpora.tasks.phrase.plan import Part, TellingStep, Telling
from stillweb.corpora.tasks.prove.keys import functional
from stillweb.corpora.tasks.query import Constant, Query
from stillweb.corpora.tasks.types import relation_signature

__all__ = ["render_question", "constant_text"]

_NAME_FRAMES = ("What is the name of the {n} {d}?", "Name the {n} {d}.", "Identify the {n} {d}.")
_MAX_SENTENCE_WORDS = 18  # a sentence takes another verb phrase while it stays this short
_ENGLISH_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
_ANOTHER = ("a", "another", "a third", "a fourth", "a fifth", "a sixth", "a seventh", "an eighth")
_DATED_CLAUSE_RE = re.compile(r"((?:was )?(?:born|founded|released|published)|died) (on .+|in the .+|in \d.*)$")
_CLAUSE_WORDS_RE = re.compile(r"\b(?:who|that|where|whose|which)\b")
_HAS_AS_ITS_RE = re.compile(r"^whose ((?:\w+ ){0,3}\w+) is (.+)$")


def render_question(query: Query, graph: FactGraph, rng: KeyedRng) -> str:
    """The question text of ``query`` (see the module docstring)."""
    return _English(query, graph, rng).question()


class _English(Telling):
    """The sentences of one question, told step by step."""

    def question(self) -> str:
        return _tidy(" ".join(self.parts_of_question()))

    def only(self, name: str) -> str:
        return f"the {self.nouns[name]}"

    def numbered(self, name: str, place: int) -> str:
        return f"the {_ENGLISH_ORDINALS[min(place, len(_ENGLISH_ORDINALS)) - 1]} {self.nouns[name]}"

    # --- telling a variable ------------------------------------------------------------------------
    def tell(self, step: TellingStep) -> None:
        """The sentences of one variable, or its description folded into the next sentence."""
        name = step.node.name
        predicates = [self.predicate(step, part) for part in step.parts]
        if self.folds(step, bool(predicates)):
            return
        if not predicates:  # nothing of its own: told from its anchor's side ("That painter was born in a city.")
            anchor = step.anchor
            said = relation_phrase(anchor.relation, not anchor.node_is_subject, self.indefinite(name),
                                   self.plan.people[anchor.child], self.plan.kinds[anchor.child])
            kind, text = _predicate(said, self.plan.people[anchor.child])
            subject = self.name_of(anchor.child)
            self.sentences.append(f"{_capital(subject)} {text}." if kind == "verb" else _capital(text.format(obj=subject)) + ".")
            self.handles[name] = self.handle(step)
            return
        subject = self.introduce(step)
        verbs = merge_dated([text for kind, text in predicates if kind == "verb"])
        subject, verbs = _dated_subject(subject, verbs)
        others = [text for kind, text in predicates if kind != "verb"]
        again = self.name_of(name) if self.plan.people[name] else "it"
        first = True
        for chunk in _chunks(verbs, len(subject.split())):
            said = _join(chunk) if first else _also(chunk)
            self.sentences.append(f"{_capital(subject if first else again)} {said}.")
            first = False
        for text in others:
            self.sentences.append(_capital(text.format(obj=subject if first else self.name_of(name))) + ".")
            first = False

    def foldable(self, step: TellingStep, ref: str) -> bool:
        """A variable with nothing of its own may be named inside its parent's words (``ref``), once: not
        when its anchor was folded already, nor with a clause where words follow its name ("where ... was born")."""
        node = step.node
        if step.anchor.child in self.folded or node.parent is None:
            return False
        parent = self.query.node(node.parent)
        if self.query.literal_answer and parent is self.query.root and not parent.constants and len(parent.children) == 1:
            return False  # the root is asked about through this one variable: said in a sentence first
        return not (_CLAUSE_WORDS_RE.search(ref)
                    and words_after_value(node.relation, node.parent_is_subject, self.plan.kinds[parent.name]))

    def ref(self, step: TellingStep) -> tuple[str, bool]:
        """The variable named through its anchor, and whether it is then called by its role: "the city
        where that painter was born", "that painter's spouse" (a role: "the spouse"), "the capital of that
        country", "a film that was directed by the spouse"."""
        name, anchor = step.node.name, step.anchor
        noun, person = self.plan.nouns[name], self.plan.people[name]
        namesake = self.plan.nouns[anchor.child] == noun or name in self.ordinal
        if ((not anchor.node_is_subject and functional(anchor.relation)) or _symmetric(anchor.relation)) \
                and anchor.child not in self.folded and name not in self.plan.occupations:
            attribute = relation_words(anchor.relation).attribute
            if len(attribute.split()) <= 2 and attribute != noun and (namesake or self.rng.chance(0.6)):
                role = f"the {attribute}" not in self.handles.values() and attribute not in self.plan.nouns.values()
                told = self.told
                self.told = [n for n in told if n != name]  # the anchor may still be "the person"
                x = self.name_of(anchor.child)
                self.told = told
                return f"{_possessive(x)} {attribute}", role
        x = self.name_of(anchor.child)
        phrase = relation_phrase(anchor.relation, anchor.node_is_subject, x, person, self.plan.kinds[name])
        article = "the" if step.pinned else "another" if self.place(name) > 1 else with_article(noun).split(" ")[0]
        if article == "the" and (the := re.match(r"(?:who|that) is (the .+)", phrase)):
            return the[1], False
        if not is_clause(phrase):
            phrase = f"{'who' if person else 'that'} {phrase}"
        return f"{article} {noun} {phrase}", False

    def handle(self, step: TellingStep) -> str:
        """How the variable is said once told: "that city", "the spouse" (numbered ones: :meth:`name_of`)."""
        name = step.node.name
        noun = self.plan.nouns[name]
        alone = not self.plan.shared(name) and not self.plan.shared_with_root(name)
        if name in self.roles and alone and not self.plan.people[name]:
            self.roles.discard(name)  # "that painter's birthplace", then "that city"
        if name in self.roles:  # told as "that painter's spouse": "the spouse"
            return f"the {relation_words(step.anchor.relation).attribute}"
        if alone:
            return f"{self.rng.choice(('that', 'the', 'this'))} {noun}"
        if not self.plan.shared(name):  # only the root, asked about, goes by its noun: "Who was married to this person?"
            return f"this {noun}"
        return f"the {noun}"

    def indefinite(self, name: str) -> str:
        """"a painter"; among namesakes "another person", "a third person" (numbered as :meth:`name_of` says)."""
        noun = self.plan.nouns[name]
        place = self.place(name)
        return with_article(noun) if place <= 1 else f"{_ANOTHER[min(place, len(_ANOTHER)) - 1]} {noun}"

    def predicate(self, step: TellingStep, part: Part) -> tuple[str, str]:
        """One fact of the variable as ("verb", a verb phrase) or ("sentence", a sentence with {obj})."""
        name = step.node.name
        value = constant_text(part.constant, self.graph) if part.constant is not None else self.name_of(part.child)
        year = self.graph.year_of(part.constant.fact) if part.constant is not None else None  # "in 2016"
        phrase = relation_phrase(part.relation, part.node_is_subject, value, self.plan.people[name], self.plan.kinds[name],
                                 year)
        return _predicate(phrase, self.plan.people[name])

    # --- the ask -----------------------------------------------------------------------------------
    def ask_entity(self, root: TellingStep) -> str:
        """"Which film was directed by that person?", "Name the city where the spouse died."."""
        name = root.node.name
        noun, person = self.plan.nouns[name], self.plan.people[name]
        clauses = []
        for part in ([root.anchor] if root.anchor is not None else []) + root.parts:
            value = constant_text(part.constant, self.graph) if part.constant is not None else self.name_of(part.child)
            clauses.append(relation_phrase(part.relation, part.node_is_subject, value, person, self.plan.kinds[name]))
        verbs = [c if not is_clause(c) else c.split(" ", 1)[1] for c in clauses if not is_clause(c) or c.startswith(("who ", "that "))]
        if len(verbs) == len(clauses) and (person or self.rng.chance(0.5)):
            return f"Who {_join(verbs)}?" if person else f"Which {noun} {_join(verbs)}?"
        who = "who" if person else "that"
        described = _join([c if is_clause(c) else f"{who} {c}" for c in clauses])
        return self.rng.choice(_NAME_FRAMES).format(n=noun, d=described)

    def ask_value(self, root: TellingStep) -> str:
        """A literal answer, asked of the root told before ("How many people live in that city?") or
        named in the ask ("When was the spouse of that painter born?")."""
        words = relation_words(self.query.answer_relation)
        wh = "Who" if relation_signature(self.query.answer_relation).range == frozenset({"person"}) else "What"
        ask = words.ask if words.ask and self.rng.chance(0.7) else f"{wh} is the {words.attribute} of {{np}}?"
        if (year := self.graph.year_of(self.query.answer_fact)) is not None:  # a time-varying value: with its year
            ask = ask_in_year(self.query.answer_relation, year, wh)
        if not root.parts and root.anchor is not None and root.anchor.child not in self.folded:
            ref, role = self.ref(root)  # a namesake told before is "the second city" after a sentence, unless a role
            if (role or root.node.name not in self.ordinal) and (ask.endswith("{np}?") or not _CLAUSE_WORDS_RE.search(ref)):
                return ask.format(np=ref)
        self.tell(root)
        return ask.format(np=self.name_of(root.node.name))


def constant_text(constant: Constant, graph: FactGraph) -> str:
    """A constant as the question says it: a period or range, a name, or a value with its preposition."""
    condition = constant.condition
    if condition.kind in ("year_range", "number_range"):
        return condition.text
    if condition.kind == "entity":
        return " or ".join(graph.said_label(label, e) for label, e in zip(condition.labels, condition.entities))
    fact = graph.facts[constant.fact]
    if fact.value_type == "entity":  # a linked name whose page is not in the snapshot
        return " or ".join(entity_label(label) for label in condition.labels)
    if len(condition.labels) == 1:
        return value_text(fact.relation, condition.labels[0], fact.value_type, fact.date, fact.number)
    return " or ".join(value_text(fact.relation, label, "text", None, None) for label in condition.labels)


def _predicate(phrase: str, person: bool) -> tuple[str, str]:
    """A relation phrase said of a sentence's subject: a verb phrase ("was born in X"; "who directed X"
    -> "directed X"; "whose capital is X" -> "has X as its capital"; "where X was born" -> "is where X
    was born"), or a sentence of its own ("in which X fought" -> "X fought in {obj}")."""
    if not is_clause(phrase):
        return "verb", phrase
    head, rest = phrase.split(" ", 1)
    if head in ("who", "that"):
        return "verb", rest
    if head == "whose" and (match := _HAS_AS_ITS_RE.match(phrase)):
        return "verb", f"has {match[2]} as {'their' if person else 'its'} {match[1]}"
    if head == "where":  # "where X was born" -> "X was born in {obj}"
        return "sentence", f"{rest} in {{obj}}"
    if phrase.startswith("in which "):
        return "sentence", phrase[len("in which "):] + " in {obj}"
    return "sentence", "{obj} is one " + phrase  # a clause the data has no other shape for


def _dated_subject(subject: str, verbs: list[str]) -> tuple[str, list[str]]:
    """A date said with the subject's own verb: "A person who was born in that city" + "was born on May 4,
    1900" -> "A person who was born in that city on May 4, 1900" (one birth, said once)."""
    for verb in verbs:
        dated = _DATED_CLAUSE_RE.match(verb)
        if dated and re.search(rf"\b(?:who|that) {dated[1]} in \S", subject) and len(verbs) > 1:
            return f"{subject} {dated[2]}", [v for v in verbs if v is not verb]
    return subject, verbs


def _also(verbs: list[str]) -> str:
    """Verb phrases said again of the same subject: "was also born in X", "also received Y"."""
    first = verbs[0]
    head, _, rest = first.partition(" ")
    first = f"{head} also {rest}" if head in ("is", "was", "are", "were") and rest else f"also {first}"
    return _join([first, *verbs[1:]])


def _chunks(verbs: list[str], subject_words: int) -> list[list[str]]:
    """Verb phrases grouped into sentences of at most :data:`_MAX_SENTENCE_WORDS` words (one phrase at least)."""
    chunks: list[list[str]] = []
    words = 0
    for verb in verbs:
        size = len(verb.split())
        if chunks and words + size + 1 <= _MAX_SENTENCE_WORDS and len(chunks[-1]) < 3:
            chunks[-1].append(verb)
            words += size + 1
        else:
            chunks.append([verb])
            words = (subject_words if len(chunks) == 1 else 3) + size
    return chunks


def _symmetric(relation: str) -> bool:
    """True when the relation reads the same both ways ("was married to"): "X's spouse" from either end."""
    words = relation_words(relation)
    return words.backward == "{who} " + words.forward


def _possessive(phrase: str) -> str:
    return phrase + "'s"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _join(parts: list[str]) -> str:
    if len(parts) <= 2:
        return " and ".join(parts)
    return ", ".join(parts[:-1]) + ", and " + parts[-1]


def _tidy(text: str) -> str:
    """No space before a question mark or a full stop (a value such as ".al" keeps its space)."""
    return _SPACE_STOP_RE.sub(".", text.replace(" ?", "?"))


_SPACE_STOP_RE = re.compile(r" \.(?=\s|$)")
