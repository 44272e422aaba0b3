"""Infobox fields to typed facts, through the declarative mapping.

Each field of an infobox is looked up in the mapping
(:mod:`~stillweb.corpora.wikitext.mapping`). A mapped field is split into
items (``<br>``, list markers, ``{{plainlist}}``/``{{hlist}}``/``{{ubl}}``,
and commas in text values), each item is cleaned (markup, refs, footnote
marks, trailing parentheticals) and read as its relation's value type: dates
from date templates or written dates, numbers with their unit dropped
(``{{convert|120|km}}``, ``120 minutes``), linked entities (the first only,
for single-valued relations such as ``birth_place``), or short text. A figure's
trailing aside is no value, but the one year it gives ("4,858,979 (2015 est.)")
becomes the figure's ``<relation>_as_of`` fact (DBpedia's ``populationAsOf``), and
a PPP figure under a nominal GDP relation is dropped (``ppp_for_nominal``). Items
that do not fit the type are dropped. Unmapped fields become no fact: their
cleaned text is returned for the page text, so it stays searchable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import mwparserfromhell
from dataclasses import dataclass, field, replace

from mwparserfromhell.nodes import Node, Tag, Template, Text, Wikilink
from mwparserfromhell.wikicode import Wikicode

from stillweb.corpora.snapshot.records import ExtractedFact
from stillweb.corpora.wikitext.clean import COMMENT_RE, clean_value
from stillweb.corpora.wikitext.dates import classify_value
from stillweb.corpora.wikitext.mapping import FieldRule, infobox_mapping, zh_field_key
from stillweb.corpora.wikitext.ontology import relation_type
from stillweb.corpora.wikitext.plaintext import LIST_TEMPLATES, Renderer, positional
from stillweb.corpora.wikitext.titles import is_infobox, normalize_title, template_name, unique
from stillweb.corpora.wikitext.values import (
    country_of,
    entity_problem,
    expects_country,
    expects_settlement,
    is_country,
    is_cross_reference,
    is_label,
    strip_parentheticals,
)

__all__ = ["InfoboxFields", "about_other_subject", "MAX_VALUE_WORDS", "infobox_fields", "entity_facts", "read_number",
           "tidy_value", "trailing_asides", "aside_year"]

MAX_VALUE_WORDS = 12  # a longer text value is a sentence, not a value a question can state


@dataclass
class InfoboxFields:
    """What one infobox states: facts of mapped fields, the text of the others, and the mapped
    fields whose values did not fit their relation (with the reason)."""

    facts: list[ExtractedFact] = field(default_factory=list)
    unmapped: list[tuple[str, str]] = field(default_factory=list)  # (template|key, cleaned text)
    mapped_keys: list[str] = field(default_factory=list)  # template|key of fields that gave facts
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (template|key, reason)
    children: list[Template] = field(default_factory=list)  # infoboxes embedded in this one's fields


def infobox_fields(template: Template, page: Renderer) -> InfoboxFields:
    """The facts and unmapped fields of an infobox, in document order.

    An infobox embedded in a field (``module = {{Infobox scientist | embed = yes ...}}``, or
    written as an unnamed parameter) is returned in ``children``; the caller reads it in turn
    as more of the same subject.
    """
    name = template_name(template)
    mapping = infobox_mapping()
    result = InfoboxFields()
    for param in template.params:
        result.children.extend(
            child for child in param.value.filter_templates(recursive=False) if is_infobox(template_name(child))
        )
    params = {_field_key(param.name): param for param in template.params if param.showkey}
    for key, param in params.items():
        if not key or key in _PRESENTATION_KEYS or _PRESENTATION_TOKENS & set(_tokens(key)):
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
        items = _split_items(node for node in param.value.nodes if not _is_child(node))
        if rule is None:
            text = "; ".join(filter(None, (tidy_value(_render_text(Wikicode(item), page)) for item in items)))
            if text:
                result.unmapped.append((f"{name}|{key}", text))
            continue
        facts, reasons, linked = [], [], False
        for item in items:
            item_linked = any(isinstance(node, Wikilink) for node in item) or "[[" in str(Wikicode(item))
            if rule.single and linked and not item_linked:
                continue  # ''[[Kassaman]]''<br>{{small|We Pledge}}: an unlinked gloss of the linked value
            found, reason = _item_facts(rule, item, page, name)
            facts.extend(replace(fact, field=key) for fact in found)
            reasons.append(reason)
            linked = linked or (bool(found) and item_linked)
        result.facts.extend(facts)
        if facts:
            result.mapped_keys.append(f"{name}|{key}")
        elif any(r != "empty" for r in reasons):  # an empty field states nothing: neither read nor dropped
            result.dropped.append((f"{name}|{key}", next(r for r in reasons if r != "empty")))
    return result


def about_other_subject(template: Template, title: str) -> bool:
    """True when an infobox names a subject other than the page's (``| name = Mary Todd Lincoln``
    in a second infobox of "Abraham Lincoln"); an unnamed one is taken to be about the page."""
    name = next((p.value for p in template.params if p.showkey and _key(p.name) == "name"), None)
    shown = tidy_value(clean_value(Renderer().render(name))).lower() if name is not None else ""
    subject = _TRAILING_PARENTHETICAL_RE.sub("", title).strip().lower()
    return bool(shown) and subject not in shown and shown not in subject


def trailing_asides(text: str) -> list[str]:
    """The trailing parentheticals of a value, last first (what :func:`tidy_value` drops).

    >>> trailing_asides("$130.4 billion (PPP) (2012 est.)[3]")
    ['2012 est.', 'PPP']
    """
    text, asides = _FOOTNOTE_RE.sub("", text).strip(" ,;:"), []
    while (match := _TRAILING_PARENTHETICAL_RE.search(text)) is not None:
        asides.append(match[0].strip()[1:-1].strip())
        text = text[:match.start()].strip(" ,;:")
    return asides


def aside_year(asides: list[str]) -> str | None:
    """The one year the asides of a figure give ("(PPP, 2015 est.)", "(2010)"), else None: none, two
    ("(2010-2015)"), or a price base ("(in 2010 US dollars)") is no year of the figure.

    >>> aside_year(["PPP, 2015 est."]), aside_year(["2010–2015"]), aside_year(["2nd"])
    ('2015', None, None)
    """
    if any(_PRICE_BASE_RE.search(aside) for aside in asides):
        return None
    years = {year for aside in asides for year in _ASIDE_YEAR_RE.findall(aside)}
    return years.pop() if len(years) == 1 else None


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


def _field_key(name: Wikicode) -> str:
    """The folded key; a Chinese field name as the English key it stands for (``corpora/infobox_mapping_zh.toml``)."""
    key = _key(name)
    return key if key.isascii() else zh_field_key(key)


def _tokens(key: str) -> list[str]:
    return [token.rstrip("0123456789") for token in key.split("_")]


def _render_text(code: Wikicode, page: Renderer) -> str:
    return _render(code, page)[0]


def _render(code: Wikicode, page: Renderer) -> tuple[str, Renderer]:
    """Cleaned text of a value and the renderer that saw it (its links and dates go to the page;
    infoboxes inside a value are read as children, not again)."""
    renderer = Renderer(page.chinese)
    text = clean_value(renderer.render(code))
    renderer.infoboxes.clear()
    page.adopt(renderer)
    return text, renderer


def _is_child(node: Node) -> bool:
    return isinstance(node, Template) and is_infobox(template_name(node))


def _split_items(nodes: Iterable[Node]) -> list[list[Node]]:
    """Split a field value into items at ``<br>``, list markers and list templates."""
    items: list[list[Node]] = [[]]
    for node in nodes:
        if isinstance(node, Tag) and str(node.tag).strip().lower() == "sup" and _FOOTNOTE_MARK_RE.fullmatch(
                str(node.contents or "").strip()):
            continue  # [[Euro]]<sup>d</sup>: a footnote mark, not part of the value
        if isinstance(node, Tag) and str(node.tag).strip().lower() == "br" and _open_phrase(items[-1]):
            items[-1].append(Text(" "))  # "recognition of the <br />[[United States]]": one item, wrapped
            continue
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


def _open_phrase(item: list[Node]) -> bool:
    """True when an item's text so far ends in a word that cannot end a value ("of the")."""
    last = next((node for node in reversed(item) if not (isinstance(node, Text) and not node.value.strip())), None)
    return isinstance(last, Text) and bool(_OPEN_PHRASE_RE.search(last.value))


def _item_facts(rule: FieldRule, item: list[Node], page: Renderer, template: str) -> tuple[list[ExtractedFact], str]:
    """Facts of one item, read as the relation's value type, or none and the reason it does not fit."""
    relation, kind = rule.relation, rule.value_type
    if kind == "entity":
        return entity_facts(rule, str(Wikicode(item)), page, template)
    rendered, renderer = _render(Wikicode(item), page)
    text = tidy_value(rendered)
    if not text and not renderer.dates:
        return [], "empty"
    if kind in ("date", "year"):
        dates = [d for d in renderer.dates if d.value_type != "text"]
        if dates:
            return [ExtractedFact(relation, d.iso, d.value_type, date=d.iso, template=template) for d in dates[:1]], ""
        if kind == "year" and renderer.dates:  # "March 1861" still states the year
            year = f"{renderer.dates[0].year:04d}"
            return [ExtractedFact(relation, year, "year", date=year, template=template)], ""
        value_type, value, _, date = classify_value(text, relation)
        if value_type in ("date", "year"):
            return [ExtractedFact(relation, value, value_type, date=date, template=template)], ""
        year = _LONE_YEAR_RE.fullmatch(text)
        if kind == "year" and year:
            return [ExtractedFact(relation, year[1], "year", date=year[1], template=template)], ""
        return [], "not_a_date"
    if kind == "number":
        number = read_number(text)
        if number is None:
            return [], "not_a_number"
        asides = trailing_asides(rendered)
        if relation in _NOMINAL and any(_PPP_RE.search(aside) for aside in asides):
            return [], "ppp_for_nominal"  # Infobox economy's gdp = "$36.947 billion (PPP, 2015 est.)"
        facts = [ExtractedFact(relation, number[0], "number", number=number[1], template=template)]
        year, qualifier = aside_year(asides), f"{relation}_as_of"
        if year is not None and relation_type(qualifier) is not None:  # DBpedia's populationAsOf and the like
            facts.append(ExtractedFact(qualifier, year, "year", date=year, template=template))
        return facts, ""
    if is_cross_reference(text):
        return [], "cross_reference"
    parts = [p.strip() for p in _COMMA_RE.split(text)]  # not inside numbers: 30,000
    if len(parts) > 1 and any(len(p.split()) > 4 for p in parts):
        parts = [text]
    parts = [p for p in parts if _WORD_RE.search(p) and not _UNBALANCED_RE.search(p)]
    labels = [p for p in parts if is_label(p)]  # languages = [[Languages of Asia|List of languages]]
    kept = [p for p in parts if len(p.split()) <= MAX_VALUE_WORDS and not _PERCENT_RE.search(p) and p not in labels]
    if not kept:
        return [], "label_as_value" if labels else "too_long" if parts else "empty"
    return [ExtractedFact(relation, part, "text", template=template) for part in kept], ""


def entity_facts(rule: FieldRule, wikitext: str, page: Renderer, template: str) -> tuple[list[ExtractedFact], str]:
    """The linked (or named) entities of one item: asides dropped, demonyms turned into their country."""
    relation = rule.relation
    text, renderer = _render(mwparserfromhell.parse(strip_parentheticals(wikitext)), page)
    text = tidy_value(text)
    targets = unique(renderer.links)
    if not text and not targets:
        return [], "empty"
    problem = entity_problem(relation, text, linked=bool(targets)) if text else None
    if problem:
        return [], problem
    if not targets:  # an unlinked name still resolves when a page or redirect has that title
        parts = [p.strip() for p in text.split(",")] if "," in text else [text]
        targets = [t for t in map(normalize_title, parts) if t and entity_problem(relation, t, linked=False) is None]
        if not targets:
            return [], "not_a_name"
    targets = [t for t in targets if not t.startswith("List of ")]  # [[List of Andorrans|Andorran]]: no entity
    if not targets or any(entity_problem(relation, t, linked=True) == "label_as_value" for t in targets[:1]):
        return [], "label_as_value" if targets else "not_a_name"  # family = [[Language family|...]]
    lead = _unlinked_lead(wikitext)
    if lead and rule.single:  # "Zavrazhye, [[Russian SFSR]]": the place is the unlinked name before the links
        targets = [lead]
    if expects_country(relation):  # [[Americans|American]] -> United States
        targets = unique(country_of(target) or target for target in targets)
    if expects_settlement(relation):  # a country where a city is expected is no reading of the field
        targets = [t for t in targets if not is_country(t)] or [""]
        if targets == [""]:
            return [], "country_for_city"
    targets = targets[: 1 if rule.single else None]
    return [ExtractedFact(relation, t, "entity", object_title=t, template=template) for t in targets], ""


def _unlinked_lead(wikitext: str) -> str | None:
    """The name written before an item's first link ("Zavrazhye, [[...]]"), when there is one."""
    code = mwparserfromhell.parse(strip_parentheticals(wikitext))
    lead = []
    for node in code.nodes:
        if isinstance(node, Wikilink):
            break
        lead.append(node)
    else:
        return None
    text = tidy_value(clean_value(Renderer().render(Wikicode(lead))))
    if not text or entity_problem("", text, linked=False) or not text[0].isupper():
        return None
    return normalize_title(text)


def read_number(text: str) -> tuple[str, float] | None:
    """``(canonical, value)`` of a number written with its unit, scale word or currency sign, else None.

    A 4-digit number is a number here, never a year: ``1500 m`` is an elevation.

    >>> read_number("US$20.815 billion")
    ('20815000000', 20815000000.0)
    >>> read_number("1,500 m")
    ('1500', 1500.0)
    """
    match = _NUMBER_WITH_UNIT_RE.fullmatch(text.strip())
    if match is None:
        return None
    number = float(match[1].replace(",", "").replace("\u2212", "-"))
    number *= _SCALES.get((match[2] or "").lower(), 1)
    canonical = str(int(number)) if number.is_integer() and abs(number) < 1e15 else repr(number)
    return canonical, number


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
_OPEN_PHRASE_RE = re.compile(r"\b(?:the|of|and|a|an|to|for|in|by|with)\s*$")
_COMMA_RE = re.compile(r",(?!\d{3}\b)")
_FOOTNOTE_MARK_RE = re.compile(r"\[?(?:\w{1,2}|note \w+|nb \w+)\]?")
_FOOTNOTE_RE = re.compile(r"\[(?:\w{1,3}|note \w+|citation needed|nb \w+)\]")
_TRAILING_PARENTHETICAL_RE = re.compile(r"\s*\([^()]*\)\s*$")
_ASIDE_YEAR_RE = re.compile(r"(?<![\d.,])(1[5-9]\d\d|20\d\d)(?![\d,]|\.\d)")
_PRICE_BASE_RE = re.compile(r"dollars|prices|constant", re.IGNORECASE)
_PPP_RE = re.compile(r"\bPPP\b|purchasing power parity", re.IGNORECASE)
_NOMINAL = frozenset({"gross_domestic_product", "gdp_per_capita"})  # nominal figures: a PPP figure is another one
_NUMBER_WITH_UNIT_RE = re.compile(
    r"(?:(?:about|approx\.?|approximately|c\.|ca\.|over|est\.)\s+)?(?:US\$|\$|€|£|¥)?\s?"
    r"([-\u2212]?\d[\d,]*(?:\.\d+)?)\s*(million|billion|trillion)?"
    r"\s*(?:%|[a-zA-Z²³]+[23]?(?:\s[a-zA-Z²³]+[23]?)?)?\.?"
)
_SCALES = {"million": 1e6, "billion": 1e9, "trillion": 1e12}
_PERCENT_RE = re.compile(r"\d\s*%|^as of\b", re.IGNORECASE)
_LONE_YEAR_RE = re.compile(r"(?:c\.\s*|circa\s+)?(\d{4})(?:\s*(?:AD|CE))?")
_WORD_RE = re.compile(r"\w")
_UNBALANCED_RE = re.compile(r"^[^(]*\)|\([^)]*$|^[^\[]*\]|\[[^\]]*$")
