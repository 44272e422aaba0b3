"""Infobox fields to typed facts, through the declarative mapping.

Each field of an infobox is looked up in the mapping
(:mod:`~stillweb.corpora.wikitext.mapping`). A mapped field is split into
items (``<br>``, list markers, ``{{plainlist}}``/``{{hlist}}``/``{{ubl}}``,
and commas in text values), each item is cleaned (markup, refs, footnote
marks, trailing parentheticals) and read as its relation's value type: dates
from date templates or written dates, numbers with their unit dropped
(``{{convert|120|km}}``, ``120 minutes``), linked entities (the first only,
for single-valued relations such as ``birth_place``), or short text. Items
that do not fit the type are dropped. Unmapped fields become no fact: their
cleaned text is returned for the page text, so it stays searchable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from mwparserfromhell.nodes import Node, Tag, Template
from mwparserfromhell.wikicode import Wikicode

from stillweb.corpora.records import ExtractedFact
from stillweb.corpora.wikitext.clean import COMMENT_RE, clean_value
from stillweb.corpora.wikitext.dates import classify_value
from stillweb.corpora.wikitext.mapping import FieldRule, infobox_mapping
from stillweb.corpora.wikitext.plaintext import LIST_TEMPLATES, Renderer, positional
from stillweb.corpora.wikitext.titles import is_infobox, normalize_title, template_name, unique

__all__ = ["InfoboxFields", "MAX_VALUE_WORDS", "infobox_fields", "tidy_value"]

MAX_VALUE_WORDS = 12  # a longer text value is a sentence, not a value a question can state


@dataclass
class InfoboxFields:
    """What one infobox states: facts of mapped fields, and the text of the others."""

    facts: list[ExtractedFact] = field(default_factory=list)
    unmapped: list[tuple[str, str]] = field(default_factory=list)  # (template|key, cleaned text)
    mapped_fields: int = 0


def infobox_fields(template: Template, page: Renderer) -> InfoboxFields:
    """The facts and unmapped fields of an infobox, in document order.

    A field holding a child infobox (``module = {{Infobox ...}}``) hands it to
    ``page.infoboxes``, which the caller reads in turn.
    """
    name = template_name(template)
    mapping = infobox_mapping()
    params = {_key(param.name): param for param in template.params if param.showkey}
    result = InfoboxFields()
    for key, param in params.items():
        if not key or key in _PRESENTATION_KEYS or _PRESENTATION_TOKENS & set(_tokens(key)):
            page.infoboxes.extend(
                child for child in param.value.filter_templates(recursive=False) if is_infobox(template_name(child))
            )
            continue
        if key.rstrip("0123456789").rstrip("_") in mapping.pair_labels:
            continue  # read with its partner (leader_title1 names the relation of leader_name1)
        pairing = mapping.pairing(key)
        partner = None
        if pairing is not None:
            number = key[len(key.rstrip("0123456789")):]
            label = params.get(pairing.label + number) or params.get(pairing.label + "_" + number)
            partner = tidy_value(_render_text(label.value, page)) if label is not None else None
        rule = mapping.field(name, key, partner)
        items = _split_items(param.value.nodes)
        if rule is None:
            text = "; ".join(filter(None, (tidy_value(_render_text(Wikicode(item), page)) for item in items)))
            if text:
                result.unmapped.append((f"{name}|{key}", text))
            continue
        before = len(result.facts)
        for item in items:
            renderer = Renderer()
            text = tidy_value(clean_value(renderer.render(Wikicode(item))))
            page.adopt(renderer)
            result.facts.extend(_item_facts(rule, text, renderer, name))
        result.mapped_fields += len(result.facts) > before
    return result


def tidy_value(text: str) -> str:
    """A cleaned value without footnote marks, trailing parentheticals or stray punctuation.

    >>> tidy_value("30,000 (total number that served)[a]")
    '30,000'
    """
    text = _FOOTNOTE_RE.sub("", text)
    previous = None
    while previous != text:
        previous, text = text, _TRAILING_PARENTHETICAL_RE.sub("", text)
    return text.strip(" ,;:")


def _key(name: Wikicode) -> str:
    return " ".join(COMMENT_RE.sub("", str(name)).split()).lower().replace(" ", "_")


def _tokens(key: str) -> list[str]:
    return [token.rstrip("0123456789") for token in key.split("_")]


def _render_text(code: Wikicode, page: Renderer) -> str:
    renderer = Renderer()
    text = clean_value(renderer.render(code))
    page.adopt(renderer)
    return text


def _split_items(nodes: Iterable[Node]) -> list[list[Node]]:
    """Split a field value into items at ``<br>``, list markers and list templates."""
    items: list[list[Node]] = [[]]
    for node in nodes:
        if isinstance(node, Tag) and str(node.tag).strip().lower() in ("br", "li", "dd", "dt", "p"):
            if node.contents is not None and not node.wiki_markup:
                items.append(list(node.contents.nodes))
            items.append([])
        elif isinstance(node, Template) and template_name(node) in LIST_TEMPLATES:
            for value in positional(node):
                items.extend(_split_items(value.nodes))
            items.append([])
        else:
            items[-1].append(node)
    return [item for item in items if item]


def _item_facts(rule: FieldRule, text: str, renderer: Renderer, template: str) -> list[ExtractedFact]:
    """Facts of one item, read as the relation's value type (nothing when it does not fit)."""
    relation, kind = rule.relation, rule.value_type
    if kind in ("date", "year"):
        dates = [d for d in renderer.dates if d.value_type != "text"]
        if dates:
            return [ExtractedFact(relation, d.iso, d.value_type, date=d.iso, template=template) for d in dates[:1]]
        if kind == "year" and renderer.dates:  # "March 1861" still states the year
            year = f"{renderer.dates[0].year:04d}"
            return [ExtractedFact(relation, year, "year", date=year, template=template)]
        value_type, value, _, date = classify_value(text, relation)
        if value_type in ("date", "year"):
            return [ExtractedFact(relation, value, value_type, date=date, template=template)]
        year = _LONE_YEAR_RE.fullmatch(text)
        if kind == "year" and year:
            return [ExtractedFact(relation, year[1], "year", date=year[1], template=template)]
        return []
    if kind == "number":
        match = _NUMBER_WITH_UNIT_RE.fullmatch(text)
        if match is None:
            return []
        value_type, value, number, _ = classify_value(match[1], relation)
        if value_type != "number":
            return []
        return [ExtractedFact(relation, value, "number", number=number, template=template)]
    if renderer.links:
        targets = unique(renderer.links)[: 1 if rule.single else None]
        return [ExtractedFact(relation, t, "entity", object_title=t, template=template) for t in targets]
    parts = [p.strip() for p in text.split(",")] if kind == "text" and "," in text else [text]
    if len(parts) > 1 and any(len(p.split()) > 4 for p in parts):
        parts = [text]
    parts = [p for p in parts if _WORD_RE.search(p) and len(p.split()) <= MAX_VALUE_WORDS and not _UNBALANCED_RE.search(p)]
    if kind == "entity":  # an unlinked name still resolves when a page or redirect has that title
        return [ExtractedFact(relation, t, "entity", object_title=t, template=template)
                for t in filter(None, map(normalize_title, parts))]
    return [ExtractedFact(relation, part, "text", template=template) for part in parts]


_PRESENTATION_KEYS = frozenset({"name", "title", "native_name", "common_name", "conventional_long_name",
                                "fullname", "full_name", "birth_name", "other_names", "pseudonym", "conflict"})  # fmt: skip
_PRESENTATION_TOKENS = frozenset({
    "image", "img", "photo", "picture", "caption", "alt", "signature", "logo", "footnote",
    "footnotes", "note", "notes", "map", "pushpin", "coordinates", "coord", "coords", "seal",
    "blank", "module", "embed", "size", "imagesize", "width", "upright", "website", "url",
    "homepage", "bgcolor", "fgcolor", "color", "colour", "style", "ref", "refs", "reference", "references",
    "mapsize", "nocat", "qid", "onlysourced", "fetchwikidata", "suppressfields", "flag", "coa",
    "latd", "latm", "lats", "longd", "longm", "longs", "latns", "longew", "mcaption", "msize",
})  # fmt: skip
_FOOTNOTE_RE = re.compile(r"\[(?:\w{1,3}|note \w+|citation needed|nb \w+)\]")
_TRAILING_PARENTHETICAL_RE = re.compile(r"\s*\([^()]*\)\s*$")
_NUMBER_WITH_UNIT_RE = re.compile(
    r"(?:(?:about|approx\.?|approximately|c\.|ca\.|over|est\.)\s+)?([-\u2212]?\d[\d,]*(?:\.\d+)?)"
    r"\s*(?:%|[a-zA-Z²³]+[23]?(?:\s[a-zA-Z²³]+[23]?)?)?\.?"
)
_LONE_YEAR_RE = re.compile(r"(?:c\.\s*|circa\s+)?(\d{4})(?:\s*(?:AD|CE))?")
_WORD_RE = re.compile(r"\w")
_UNBALANCED_RE = re.compile(r"^[^(]*\)|\([^)]*$|^[^\[]*\]|\[[^\]]*$")
