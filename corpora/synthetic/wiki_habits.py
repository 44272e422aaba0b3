"""The synthetic world's infoboxes written in English Wikipedia's habits.

``wikipedia_style_pages(world)`` yields the world's pages with each infobox
rewritten the way English Wikipedia writes it: real template names
(``Infobox scientist``, ``Infobox musical artist``, ``Infobox officeholder``),
real keys (``released``, ``label``, ``artist``, ``hq_location_city``,
``population_total``...), numbered label pairs (``leader_title1`` /
``leader_name1``, ``established_event1`` / ``established_date1``,
``subdivision_type`` / ``subdivision_name``), date templates with ages
(``{{birth date and age|...}}``), units (``120 minutes``), references after
values, ``{{hlist}}`` and ``<br />`` lists and ``[[City]], [[Country]]`` places.
Ingested, it must give back exactly the world's true facts: a test of the
infobox mapping against Wikipedia's conventions.

Each entity article keeps its prose; only its infobox is rewritten from the
entity's facts (:func:`~stillweb.corpora.synthetic.facts.entity_facts`), so
the true facts stay exactly what the page states. Every choice is a pure
function of the entity (keyed by the world seed), so the dump is deterministic.
"""

from __future__ import annotations

from collections.abc import Iterator

from stillweb.corpora.snapshot.records import RawPage
from stillweb.corpora.synthetic.facts import InfoboxField, entity_facts, format_number
from stillweb.corpora.synthetic.wikitext_pages import render_unit
from stillweb.corpora.wikitext.dates import MONTH_NAMES
from stillweb.corpora.synthetic.dates import decode_date
from stillweb.corpora.synthetic.world import World

__all__ = ["wikipedia_style_pages", "wikipedia_infobox"]

# occupation -> the infobox Wikipedia uses for such a person
_PERSON_TEMPLATES = {
    "scientist": "Infobox scientist", "writer": "Infobox writer", "musician": "Infobox musical artist",
    "singer": "Infobox musical artist", "politician": "Infobox officeholder", "painter": "Infobox artist",
    "architect": "Infobox architect", "journalist": "Infobox journalist",
}  # fmt: skip
_TEMPLATES = {
    "city": "Infobox settlement", "country": "Infobox country", "company": "Infobox company",
    "university": "Infobox university", "award": "Infobox award", "book": "Infobox book",
    "film": "Infobox film", "album": "Infobox album", "event": "Infobox event",
}  # fmt: skip
# (kind, relation) -> the key Wikipedia uses; relations not listed keep their name
_KEYS = {
    ("person", "instrument"): "instruments", ("person", "awards"): "awards",
    ("city", "population"): "population_total", ("city", "area_km2"): "area_total_km2",
    ("city", "founded"): "established_date",
    ("country", "population"): "population_estimate", ("country", "official_language"): "official_languages",
    ("company", "founded_by"): "founders", ("company", "headquarters"): "hq_location_city",
    ("company", "employees"): "num_employees",
    ("university", "founded"): "established", ("university", "located_in"): "city",
    ("university", "founded_by"): "founder",
    ("award", "first_awarded"): "year",
    ("book", "publication_date"): "pub_date",
    ("film", "production_company"): "production companies", ("film", "release_date"): "released",
    ("album", "performer"): "artist", ("album", "record_label"): "label", ("album", "release_date"): "released",
    ("event", "located_in"): "location", ("event", "organizer"): "organised_by",
}  # fmt: skip
# relations written as a numbered label pair: (label key, label text, value key)
_PAIRS = {
    ("country", "head_of_state"): ("leader_title", "President", "leader_name"),
    ("country", "independence_date"): ("established_event", "Independence", "established_date"),
    ("city", "country"): ("subdivision_type", "Country", "subdivision_name"),
    ("city", "mayor"): ("leader_title", "Mayor", "leader_name"),
}  # fmt: skip
# fields Wikipedia writes that state nothing the world's ground truth has (the mapping leaves them unmapped)
_UNMAPPED_LINES = {"city": "| settlement_type = City", "company": "| type = [[Privately held company|Private]]",
                   "film": "| budget = unknown"}
_UNITS = {"runtime": " minutes", "elevation_m": " m"}
_REFERENCED = frozenset({"population", "employees", "students", "attendance", "area_km2"})


def wikipedia_style_pages(world: World) -> Iterator[RawPage]:
    """Every page of the world, as :func:`.wikitext_pages.world_pages` gives them, with infoboxes in Wikipedia's habits."""
    for unit in range(len(world)):
        pages = render_unit(world, unit)
        if unit < world.entity_count:
            pages[0] = _with_infobox(pages[0], wikipedia_infobox(world, unit))
        yield from pages


def wikipedia_infobox(world: World, gid: int) -> str:
    """The infobox of entity ``gid`` as an English Wikipedia editor would write it."""
    kind, index = world.locate(gid)
    facts = entity_facts(world, gid)
    by_relation: dict[str, list[InfoboxField]] = {}
    for fact in facts:
        by_relation.setdefault(fact.relation, []).append(fact)
    template = _TEMPLATES.get(kind, "Infobox person")
    if kind == "person":
        occupation = str(by_relation["occupation"][0].value).lower()
        template = _PERSON_TEMPLATES.get(occupation, "Infobox person")
    lines = [f"{{{{{template}", f"| name = {world.names[gid]}", f"| image = {world.names[gid].replace(' ', '_')}.jpg"]
    if kind in _UNMAPPED_LINES:
        lines.append(_UNMAPPED_LINES[kind])
    numbers: dict[str, int] = {}
    living = "death_date" not in by_relation
    for relation, values in by_relation.items():
        pair = _PAIRS.get((kind, relation))
        if pair is not None:
            label_key, label, value_key = pair
            number = numbers[label_key] = numbers.get(label_key, 0) + 1
            suffix = str(number) if kind == "country" else ("" if number == 1 else str(number))
            lines.append(f"| {label_key}{suffix} = {label}")
            lines.append(f"| {value_key}{suffix} = {_value(world, kind, values[0], by_relation, living)}")
            continue
        key = _KEYS.get((kind, relation), relation)
        written = [_value(world, kind, fact, by_relation, living) for fact in values]
        if (kind, relation) == ("album", "genre"):
            text = "{{hlist|" + "|".join(written) + "}}"
        elif len(written) == 1:
            text = written[0]
        elif relation == "spouse":
            text = "<br />".join(written)
        else:
            text = "{{plainlist|\n" + "\n".join(f"* {item}" for item in written) + "\n}}"
        lines.append(f"| {key} = {text}")
    lines.append("}}")
    return "\n".join(lines)


def _value(world: World, kind: str, fact: InfoboxField, facts: dict[str, list[InfoboxField]], living: bool) -> str:
    relation = fact.relation
    if fact.value_type == "entity":
        link = world.link(fact.value)
        if relation in ("birth_place", "death_place"):  # "[[City]], [[Country]]": single-valued, the city counts
            country = world.gid("country", world.city_country[world.locate(fact.value)[1]])
            return f"{link}, {world.link(country)}"
        if relation == "spouse":
            return f"{{{{marriage|{link}}}}}"
        return link
    if fact.value_type == "date":
        year, month, day = decode_date(fact.value)
        if relation == "birth_date":
            name = "birth date and age" if living else "birth date"
            return f"{{{{{name}|{year}|{month}|{day}}}}}"
        if relation == "death_date":
            born = decode_date(facts["birth_date"][0].value)
            return f"{{{{death date and age|{year}|{month}|{day}|{born[0]}|{born[1]}|{born[2]}}}}}"
        if relation == "publication_date":
            return f"{MONTH_NAMES[month - 1]} {day}, {year}"
        if relation == "release_date" and kind == "film":
            return f"{{{{film date|{year}|{month}|{day}}}}}"
        return f"{{{{start date|{year}|{month}|{day}}}}}"
    if fact.value_type == "number":
        text = format_number(fact.value) + _UNITS.get(relation, "")
        if relation in _REFERENCED:
            text += f'<ref name="census">{{{{cite web |title={world.names[world.gid(kind, 0)]} census |year=2020}}}}</ref>'
        return text
    return str(fact.value)


def _with_infobox(page: RawPage, infobox: str) -> RawPage:
    """The page with its first infobox (which the synthetic renderer writes first) replaced."""
    start = page.text.index("{{Infobox")
    end = page.text.index("\n}}\n\n", start) + 3  # the box's own end, not a list template's inside it
    text = page.text[:start] + infobox + page.text[end:]
    return RawPage(title=page.title, text=text, redirect=page.redirect, url=page.url, is_wikitext=page.is_wikitext,
                   position=page.position)

