"""Reading one infobox item as its relation's type: what is kept, converted or dropped, and why.

An entity relation (``nationality``, ``capital``) expects a page of its range class; a value
that is not one is converted when its meaning is clear (a demonym where a country is expected:
``[[Americans|American]]`` -> United States) or dropped with a reason the build counts:

* ``label_as_value``: a word that names the field instead of filling it (``largest_city = capital``);
* ``number_for_entity``: a number where a place or person is expected (a population under the city);
* ``cross_reference``: ``See: [[Abraham Lincoln and religion]]`` points to a page, it is no value;
* ``not_a_name``: unlinked text with digits or too many words to be a title;
* ``country_for_city``: a country where a city or settlement is expected (``capital = [[France]]``).

Parentheticals of a value are asides (``[[Robert J. Bentley]] ([[Republican Party (United States)|R]])``)
and never give the object: :func:`strip_parentheticals` removes them from the wikitext first,
keeping links whose targets hold parentheses.

>>> strip_parentheticals("[[Robert J. Bentley]] ([[Republican Party (United States)|R]])")
'[[Robert J. Bentley]]'
>>> country_of("American"), country_of("Demography of Afghanistan"), country_code("usa")
('United States', 'Afghanistan', 'United States')
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path

from stillweb.corpora.wikitext.ontology import ontology, relation_type

__all__ = ["COUNTRIES_PATH", "LABEL_VALUES", "strip_parentheticals", "country_of", "country_code",
           "expects_country", "expects_settlement", "is_country", "is_label", "entity_problem", "is_cross_reference"]

COUNTRIES_PATH = Path(__file__).resolve().parent.parent / "countries.toml"
# Words that name a field or say "see elsewhere" rather than give a value (English Wikipedia habits).
LABEL_VALUES = frozenset({
    "capital", "capital city", "none", "n/a", "na", "unknown", "various", "see below", "see above", "see text",
    "see list", "list", "tba", "tbd", "yes", "no", "other", "others", "multiple", "disputed", "de facto",
    "de jure", "official", "national", "regional", "total", "estimate", "census", "—", "-", "–", "?",
})  # fmt: skip


def strip_parentheticals(wikitext: str) -> str:
    """The wikitext without ``( ... )`` asides; ``[[links (with parentheses)]]`` and ``{{templates}}`` stay whole.

    A link with a trail (``[[constitution]]al``) is a word of the text, not an object: it is unlinked.
    """
    wikitext = _LINK_TRAIL_RE.sub(lambda m: (m[2] or m[1]) + m[3], wikitext)
    out: list[str] = []
    depth = 0
    for token in _TOKEN_RE.findall(wikitext):
        if token == "(":
            depth += 1
        elif token == ")" and depth:
            depth -= 1
        elif depth == 0:
            out.append(token)
    return "".join(out).strip()


def country_of(name: str) -> str | None:
    """The country a demonym, a people's page title or a flag code names (None when it is none of these)."""
    key = " ".join(name.split()).strip(" .,;:").lower()
    for prefix in _DEMOGRAPHY_PREFIXES:
        if key.startswith(prefix):
            key = key[len(prefix):]
            break
    return _country_table().get(key)


def country_code(code: str) -> str | None:
    """The country of a flag-template code (``USA`` -> United States), else None."""
    return _code_table().get(code.strip().lower())


def expects_country(relation: str) -> bool:
    """True when the relation's range is a country (``nationality``, ``citizenship``, ``country``)."""
    kind = relation_type(relation)
    return kind is not None and kind.is_entity and kind.range == "Country" or relation in _COUNTRY_RELATIONS


def expects_settlement(relation: str) -> bool:
    """True when the relation's range is a city or settlement (``capital``, ``largest_city``)."""
    kind = relation_type(relation)
    return kind is not None and kind.is_entity and ontology().is_a(kind.range, "Settlement")


def is_country(title: str) -> bool:
    """True for a country's own title (not a city-state, which is its own city too)."""
    return country_of(title) == title and title not in _city_states()


def is_cross_reference(text: str) -> bool:
    """True for ``See: ...`` / ``see below`` pointers."""
    return bool(_SEE_RE.match(text))


def is_label(text: str) -> bool:
    """True for a word that names a field or a list instead of filling it ("capital", "List of languages")."""
    lowered = " ".join(text.lower().split())
    return lowered in LABEL_VALUES or lowered.startswith(("list of ", "...", "…", "full list", "see also"))


def entity_problem(relation: str, text: str, linked: bool) -> str | None:
    """Why an entity item cannot be the relation's object (a drop reason), or None when it can.

    ``text`` is the item's shown text; ``linked`` says whether it links a page.
    """
    lowered = text.strip().lower()
    if is_cross_reference(text):
        return "cross_reference"
    if is_label(text) or lowered == relation.replace("_", " ") or lowered == _label(relation):
        return "label_as_value"
    if _QUANTITY_RE.fullmatch(text.strip()):
        return "number_for_entity"
    if not linked and (_DIGIT_RE.search(text) or len(text.split()) > _MAX_NAME_WORDS or _NOT_NAME_RE.search(text)):
        return "not_a_name"  # "1931–82 American", "D†"
    return None


def _label(relation: str) -> str:
    kind = relation_type(relation)
    return kind.label.lower() if kind else ""


@cache
def _countries() -> dict[str, dict]:
    with open(COUNTRIES_PATH, "rb") as handle:
        return tomllib.load(handle)["countries"]


@cache
def _city_states() -> frozenset[str]:
    with open(COUNTRIES_PATH, "rb") as handle:
        return frozenset(tomllib.load(handle)["city_states"])


@cache
def _country_table() -> dict[str, str]:
    table: dict[str, str] = {}
    for country, spec in _countries().items():
        for name in (country, *spec["demonyms"], *spec["peoples"]):
            table.setdefault(name.lower(), country)
    return table


@cache
def _code_table() -> dict[str, str]:
    return {code.lower(): country for country, spec in _countries().items() for code in spec["codes"]}


_COUNTRY_RELATIONS = frozenset({"nationality", "citizenship", "allegiance", "country"})
_DEMOGRAPHY_PREFIXES = ("demography of ", "demographics of ", "culture of ", "people of ", "list of ")
_LINK_TRAIL_RE = re.compile(r"\[\[([^\[\]|]+)(?:\|([^\[\]]*))?\]\]([a-z]+)")
_TOKEN_RE = re.compile(r"\[\[.*?\]\]|\{\{.*?\}\}|[()]|[^()\[{]+|[\[{]", re.DOTALL)
_SEE_RE = re.compile(r"\s*(?:see|cf\.)\b\s*:?", re.IGNORECASE)
_QUANTITY_RE = re.compile(r"[-\u2212~≈]?\s*\d[\d,.\s]*(?:%|\s*(?:million|billion))?")
_DIGIT_RE = re.compile(r"\d")
_NOT_NAME_RE = re.compile(r"[^\w\s.,'’&()\-–]|^\W*\w?\W*$")
_MAX_NAME_WORDS = 8
