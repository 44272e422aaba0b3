"""Words for relations and values: the phrasing data (``corpora/tasks/phrase/phrasing.toml``) and value forms.

:func:`relation_phrase` says a relation from either end with a finite verb ("was
directed by X" on the film, said after "that"; "who directed X" on the person, a
whole relative clause; :func:`is_clause` tells the two apart), per the subject's
class where the data says so ("was published in X" for a book's country); :func:`value_text` writes a literal
constant as a person would (``on March 4, 1992``, ``in 1850``, ``2,392,976``,
``drama`` in lower case); :func:`entity_label` is a title without its
disambiguator (``Springfield (Illinois)`` -> ``Springfield``).

>>> relation_phrase("director", True, "Jane Roe", person=False)
'was directed by Jane Roe'
>>> relation_phrase("director", False, "a film", person=True)
'who directed a film'
>>> relation_phrase("country", True, "Ruritania", person=False, subject_class="book")
'was published in Ruritania'
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from stillweb.corpora.tasks.phrase.value_forms import number_text
from stillweb.corpora.wikitext.dates import MONTH_NAMES
from stillweb.corpora.wikitext.ontology import THING, ontology, relation_type, relation_types

__all__ = ["PHRASING_PATH", "RelationWords", "relation_words", "relation_phrase", "ask_in_year", "relation_range", "is_clause", "is_qualifier",
           "words_after_value",
           "value_text", "entity_label", "with_article", "merge_dated", "known_relations", "date_words", "natural_case",
           "reviewed", "with_unit"]

PHRASING_PATH = Path(__file__).resolve().parent / "phrasing.toml"


@dataclass(frozen=True)
class RelationWords:
    """The phrasing of one relation (see the data file's header)."""

    relation: str
    forward: str
    backward: str
    noun: str = ""
    ask: str = ""
    attribute: str = ""
    lower: bool = False
    by_class: tuple[tuple[str, str], ...] = ()  # (subject class, forward phrase) replacing ``forward``
    range: frozenset[str] | None = None  # the classes the object may have (None: any)
    unit: str = ""  # what an answer's number is counted in ("km²"; "US$" goes before it: ``unit_first``)
    unit_first: bool = False
    dated: str = ""  # ``f`` for a value of one year, said with ``{year}``: "had a population of {x} in {year}"
    dated_ask: str = ""  # ``ask`` for a value of one year, after "In {year}, ": "how many people lived in {np}?"


@cache
def _table() -> dict[str, RelationWords]:
    with open(PHRASING_PATH, "rb") as handle:
        data = tomllib.load(handle)["relations"]
    return {
        relation: RelationWords(relation, spec["f"], spec.get("b", ""), spec.get("noun", ""), spec.get("ask", ""),
                                spec.get("attr", relation.replace("_", " ")), bool(spec.get("lower", False)),
                                tuple(sorted(spec.get("fc", {}).items())),
                                frozenset(spec["range"]) if "range" in spec else None,
                                spec.get("unit", ""), bool(spec.get("prefix", False)), spec.get("fy", ""), spec.get("ay", ""))
        for relation, spec in data.items()
    }


def relation_words(relation: str) -> RelationWords:
    """The phrasing of ``relation``; a relation without an entry is said with its label from the typed
    mapping (:func:`~stillweb.corpora.wikitext.ontology.relation_type`: "whose time zone is X")."""
    found = _table().get(relation)
    if found is not None:
        return found
    kind = relation_type(relation)
    words = kind.label if kind is not None else relation.replace("_", " ").strip()
    words = _CAMEL_WORDS_RE.sub(lambda m: m[1] + " " + m[2].lower(), words)  # DBpedia's "notableIdea" -> "notable idea"
    noun = ontology().class_label(kind.range) if kind is not None and kind.is_entity and kind.range != THING else ""
    return RelationWords(relation, f"whose {words} is {{x}}", f"{{who}} is the {words} of {{x}}", noun=noun,
                         attribute=words)


def is_qualifier(relation: str) -> bool:
    """True for a field that only dates or qualifies another one ("population as of", "ethnic groups
    in year"; relations without phrasing data named ``*_as_of``, ``*_in_year``, or ``<relation>_year``
    for another relation): it says nothing a question can ask or state on its own ("whose gini
    coefficient as of is in 2008"). ``birth_year`` is no qualifier: there is no ``birth`` relation."""
    if relation in _table():
        return False
    base = relation.removesuffix("_year")
    return relation.endswith(("_as_of", "_in_year")) or (base != relation and (base in _table() or relation_type(base) is not None))


def relation_range(relation: str) -> frozenset[str] | None:
    """The classes the object of ``relation`` may have (None: any); see :mod:`stillweb.corpora.tasks.types`."""
    return relation_words(relation).range


def known_relations() -> frozenset[str]:
    """The relations questions can say: those of the phrasing data and every typed relation (by its label)."""
    return frozenset(_table()) | frozenset(relation_types())


def relation_phrase(relation: str, node_is_subject: bool, value: str, person: bool, subject_class: str = "",
                    year: int | None = None) -> str:
    """The phrase saying ``relation`` on a node: forward when the node is the subject, else backward.

    ``value`` is the other end, already in words; ``person`` picks "who" over "that";
    ``subject_class`` (the node's class, forward only) picks a per-class phrase. A forward
    phrase is a verb phrase to say after "who"/"that", or a whole relative clause
    (:func:`is_clause`); a backward phrase is always a whole relative clause. ``year``: the year
    a time-varying value holds for (prove/real_world.py), said with it: "had a population of X in 2016".
    """
    words = relation_words(relation)
    if node_is_subject and year is not None:
        template = (words.dated or words.forward + " in {year}").replace("{year}", str(year))
    elif node_is_subject:
        template = dict(words.by_class).get(subject_class, words.forward)
    else:
        template = words.backward or f"{{who}} is the {words.attribute} of {{x}}"
    a_x = value if value.startswith(("a ", "an ", "that ", "the ")) else with_article(value)
    return template.format(x=value, a_x=a_x, who="who" if person else "that")


def ask_in_year(relation: str, year: int, wh: str) -> str:
    """The question for a value of one year, naming its holder by ``{np}``: "In 2016, how many people lived
    in {np}?" (the year first, so the holder's description may close the sentence)."""
    words = relation_words(relation)
    return f"In {year}, " + (words.dated_ask or f"{wh.lower()} was the {words.attribute} of {{np}}?")


def words_after_value(relation: str, node_is_subject: bool, subject_class: str = "") -> bool:
    """True when the phrase goes on after its value ("where {x} was born"): a described value
    then needs delimiting."""
    words = relation_words(relation)
    if node_is_subject:
        template = dict(words.by_class).get(subject_class, words.forward)
    else:
        template = words.backward or "{x}"
    return not template.rstrip().endswith(("{x}", "{a_x}"))


def is_clause(phrase: str) -> bool:
    """True for a whole relative clause ("whose capital is X", "where X was born", "who wrote X"),
    False for a verb phrase that needs "who"/"that" before it ("was born in X")."""
    return phrase.startswith(_CLAUSE_STARTS)


def with_article(phrase: str) -> str:
    """``a``/``an`` + phrase (``an architect``, ``a university``)."""
    lowered = phrase.lower()
    vowel = lowered[:1] in ("a", "e", "i", "o") or (lowered[:1] == "u" and not lowered.startswith(("uni", "use", "usu", "u.")))
    return ("an " if vowel else "a ") + phrase


def merge_dated(phrases: list[str]) -> list[str]:
    """Join a dated phrase to an undated one with the same verb:
    "was born in Lunor" + "was born in the 1880s" -> "was born in Lunor in the 1880s"."""
    merged = list(phrases)
    for dated in [p for p in phrases if _DATED_RE.match(p)]:
        verb = _DATED_RE.match(dated)[1]
        partner = next((p for p in merged if p != dated and p.startswith(verb + " ") and not _DATED_RE.match(p)), None)
        if partner is not None and dated in merged:
            merged[merged.index(partner)] = partner + dated[len(verb):]
            merged.remove(dated)
    return merged


def entity_label(title: str) -> str:
    """A title as people say it: without a trailing disambiguator in parentheses."""
    return _QUALIFIER_RE.sub("", title).strip() or title


def value_text(relation: str, value: str, value_type: str, date: str | None, number: float | None) -> str:
    """A literal value as a question writes it, with the preposition dates take."""
    if value_type == "date" and date and len(date) == 10:
        year, month, day = (int(part) for part in date.split("-"))
        return f"on {MONTH_NAMES[month - 1]} {day}, {year}"
    if value_type == "year" or (date and len(date) == 4):
        return f"in {int((date or value)[:4])}"
    if value_type == "number" and number is not None:
        return number_text(number)
    if relation_words(relation).lower:
        return natural_case(value)
    return value


def reviewed(relation: str) -> bool:
    """True when the phrasing data says ``relation`` (questions use no other: a DBpedia label such as
    "area water" or "country top level" reads as a raw field name)."""
    return relation in _table()


def with_unit(relation: str, number: float) -> str:
    """A number as an answer states it, with the relation's unit: "131,426 km²", "US$2.565 trillion"."""
    words = relation_words(relation)
    text = number_text(number)
    if not words.unit:
        return text
    return f"{words.unit}{text}" if words.unit_first else f"{text} {words.unit}"


def natural_case(text: str) -> str:
    """Common-noun text in lower case, keeping acronyms and names (a later word capitalised:
    "Jodie Emery" stays as the page writes it)."""
    words = text.split(" ")
    first = words[0]
    if any(word[:1].isupper() for word in words[1:]):
        return text
    if first[:1].isupper() and not (len(first) > 1 and first.isupper()):
        words[0] = first[:1].lower() + first[1:]
    return " ".join(words)


def date_words(iso: str) -> str:
    """``1992-03-04`` -> ``March 4, 1992``; other values unchanged."""
    match = _ISO_RE.fullmatch(iso)
    if match is None:
        return iso
    year, month, day = int(match[1]), int(match[2]), int(match[3])
    return f"{MONTH_NAMES[month - 1]} {day}, {year}" if 1 <= month <= 12 else iso


_CAMEL_WORDS_RE = re.compile(r"([a-z])([A-Z])")
_CLAUSE_STARTS = ("whose ", "where ", "in which ", "who ", "that ")
_DATED_RE = re.compile(r"((?:was )?(?:born|founded|released|published)|died)(?= (?:on |in the |in \d))")
_QUALIFIER_RE = re.compile(r"\s+\([^()]*\)$")
_ISO_RE = re.compile(r"(-?\d{4})-(\d{2})-(\d{2})")
