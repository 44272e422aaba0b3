"""Keys: a question pins its answer in the real world, not only in the snapshot that proved it unique.

The uniqueness proof (:mod:`~stillweb.corpora.tasks.prove.uniqueness`) counts answers in the snapshot; on a
few hundred pages "the person born in the early 1890s" is unique, in Wikipedia it has thousands of
answers. WebShaper and SailorFog questions instead name their answer in the world: every variable
they ask about is reached from named constants through relations that allow one value ("the
capital of X", "the author of B"), or carries an identifying condition ("whose spouse is X").

A variable is **keyed** when one of these holds:

- a constant pins it: an exact constant (one name or one exact value, no range, no union) at the
  end of a relation that determines the variable from that end (:func:`determines`): the
  constant is the subject of a *functional* relation (``C@B author V``: the author of B) or the
  object of an *inverse-functional* one (``V capital C@Paris``: the country whose capital is Paris);
- a keyed neighbour pins it the same way, through the triple joining them (the key flows over the
  formalization's triples until nothing changes: :func:`keyed_terms`);
- an exact full date and an entity of a reviewed pair (``[pairs]`` of ``keys.toml``: born on March
  4, 1902 in Lunor) hold on it together, the entity a constant or a keyed child.

The question is keyed when its target is: the root for an entity answer, and, for a literal answer,
the root and a functional answer relation ("the population of X", never "the genre of X").
Ranges, periods, decades and class shares ("a person from the United States") never key anything;
they only add difficulty. Functionality comes from the reviewed table (``keys.toml``), else from
DBpedia's ontology (``owl:FunctionalProperty``); unknown is not functional.

>>> functional("birth_place"), inverse_functional("birth_place"), functional("genre")
(True, False, False)
>>> determines("author", known_is_subject=True), determines("capital", known_is_subject=False)
(True, True)
>>> functional("population_total"), functional("weight_kg")  # DBpedia: owl:FunctionalProperty
(True, True)
>>> formalization_key_reason([["V@A", "birth_place", "?"], ["C@Some Novel", "author", "V@A"]])
>>> formalization_key_reason([["?", "birth_date", "C@the 1890s"]], inexact=["the 1890s"])
'no_key'
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

from stillweb.corpora.tasks.formalization import TARGET, is_constant, is_variable
from stillweb.corpora.tasks.query import Query, formalization
from stillweb.corpora.wikitext.ontology import ontology, relation_type

__all__ = ["KEYS_PATH", "functional", "inverse_functional", "determines", "pins", "names", "key_pairs", "keyed_terms",
           "formalization_key_reason", "inexact_labels", "key_reason"]

KEYS_PATH = Path(__file__).resolve().parent / "keys.toml"
_QUALIFIER_RE = re.compile(r"\s+\([^()]*\)$")
_FULL_DATE_RE = re.compile(r"-?\d{4}-\d{2}-\d{2}")


@cache
def _table() -> tuple[dict[str, dict], tuple[tuple[str, str], ...]]:
    with open(KEYS_PATH, "rb") as handle:
        data = tomllib.load(handle)
    return data["relations"], tuple((d, e) for d, e in data["pairs"]["pairs"])


@cache
def functional(relation: str) -> bool:
    """True when a subject has one value of ``relation`` (the reviewed table, else DBpedia's ontology)."""
    spec = _table()[0].get(relation)
    if spec is not None:
        return bool(spec.get("f", False))
    kind = relation_type(relation)
    return kind is not None and bool(kind.dbpedia_property) and ontology().is_functional(kind.dbpedia_property)


@cache
def inverse_functional(relation: str) -> bool:
    """True when a value of ``relation`` belongs to one subject (the reviewed table only)."""
    return bool(_table()[0].get(relation, {}).get("i", False))


def determines(relation: str, known_is_subject: bool) -> bool:
    """True when knowing one end of ``relation`` (its subject, or else its object) pins the other."""
    return functional(relation) if known_is_subject else inverse_functional(relation)


def pins(fact, entity: int) -> bool:
    """True when knowing the other end of ``fact`` pins ``entity`` (one of its ends)."""
    return determines(fact.relation, known_is_subject=fact.subject != entity)


def names(label: str, other: str) -> bool:
    """True when ``label`` names ``other`` in passing ("Angolan Armed Forces" names Angola, "Economy of
    Angola" too): a constant that does so gives its variable away.

    >>> names("Angolan Armed Forces", "Angola"), names("Alaska Legislature", "Alaska"), names("Luanda", "Angola")
    (True, True, False)
    """
    short = " ".join(_QUALIFIER_RE.sub("", other).split()).lower()
    return len(short) >= 4 and short in " ".join(label.split()).lower()


def key_pairs() -> tuple[tuple[str, str], ...]:
    """(date relation, entity relation) pairs that pin their subject together."""
    return _table()[1]


def keyed_terms(triples: Sequence[Sequence[str]], inexact: Iterable[str] = ()) -> set[str]:
    """The terms of a formalization that are pinned in the world (see the module docstring).

    A constant ``C@label`` is exact unless it is a union (``C@a | b``) or its label is one of
    ``inexact`` (the periods and ranges obfuscation wrote). The key flows from exact constants
    through functional relations forward and inverse-functional ones backward, and through the
    reviewed date pairs, until nothing changes; the walk is over the triples, so the generator and
    the independent verifier read one definition.
    """
    vague = set(inexact)
    keyed = {t for triple in triples for t in (triple[0], triple[2])
             if is_constant(t) and " | " not in t and t[2:] not in vague}
    pairs = key_pairs()
    changed = True
    while changed:
        changed = False
        for subject, relation, obj in triples:
            if subject in keyed and obj not in keyed and functional(relation):
                keyed.add(obj)
                changed = True
            elif obj in keyed and subject not in keyed and inverse_functional(relation):
                keyed.add(subject)
                changed = True
        for date_relation, entity_relation in pairs:
            for subject, relation, obj in triples:
                if (relation == date_relation and subject not in keyed and obj in keyed and _FULL_DATE_RE.fullmatch(obj[2:])
                        and any(s == subject and r == entity_relation and o in keyed for s, r, o in triples)):
                    keyed.add(subject)
                    changed = True
    return keyed


def formalization_key_reason(triples: Sequence[Sequence[str]], inexact: Iterable[str] = ()) -> str | None:
    """None when the target ``?`` is keyed, else ``answer_not_functional`` (a keyed variable's
    relation to ``?`` allows several values: "the genre of X") or ``no_key``."""
    keyed = keyed_terms(triples, inexact)
    if TARGET in keyed:
        return None
    if any(o == TARGET and s in keyed and is_variable(s) for s, _, o in triples):
        return "answer_not_functional"
    return "no_key"


def inexact_labels(obfuscations: Iterable) -> list[str]:
    """The constant labels obfuscation wrote as periods and ranges (a description keeps its name exact):
    the ``inexact`` of :func:`formalization_key_reason`, for the generator and the verifier alike."""
    return [o.obfuscated for o in obfuscations if o.kind != "entity_to_description"]


def key_reason(query: Query) -> str | None:
    """:func:`formalization_key_reason` of a composed query (its obfuscated periods and ranges inexact)."""
    if query.literal_answer and not functional(query.answer_relation):
        return "answer_not_functional"
    return formalization_key_reason(formalization(query), inexact_labels(query.obfuscations))
