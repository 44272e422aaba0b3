"""Wikitext of the synthetic world: entity articles, redirects, disambiguation
pages and list pages, each a pure function of (world, page unit).

An article has an ``{{Infobox ...}}`` holding exactly the entity's facts (in the
forms English Wikipedia uses: ``{{birth date|1950|3|4}}``, ``1,234,567``,
``[[Title (qualifier)|Title]]``, ``{{plainlist|...}}``), a lead sentence with the
name in bold, sections restating the facts in varied prose, filler paragraphs
that state nothing, a "See also" list where one applies, and categories.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import quote

from stillweb.corpora.wikitext.dates import MONTH_NAMES
from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.snapshot.records import RawPage
from stillweb.corpora.synthetic import names as nm
from stillweb.corpora.synthetic.choices import SmallChoices
from stillweb.corpora.synthetic.facts import InfoboxField, entity_facts, format_number
from stillweb.corpora.synthetic.phrases import FILLER, FILLER_ADJECTIVES, RELATION_PHRASES, SECTION_PLANS
from stillweb.corpora.synthetic.dates import decode_date
from stillweb.corpora.synthetic.world import World

__all__ = ["ArticleWriter", "entity_pages", "page", "page_url", "render_unit", "short_description", "world_pages"]

URL_PREFIX = "https://synthetic.stillweb.invalid/wiki/"
INFOBOX_TEMPLATES = {
    "person": "Infobox person", "city": "Infobox settlement", "country": "Infobox country",
    "company": "Infobox company", "university": "Infobox university", "award": "Infobox award",
    "book": "Infobox book", "film": "Infobox film", "album": "Infobox album", "event": "Infobox event",
}
DATE_FIELD_TEMPLATES = {"birth_date": "birth date", "death_date": "death date"}
LOWERCASE_TEXT = frozenset({"occupation", "genre", "industry", "instrument", "awarded_for"})
ITALIC_KINDS = frozenset({"book", "film", "album"})
MAX_LISTED_WORKS = 12
PARAGRAPH_VARIANTS = 48  # pre-composed filler paragraphs per (topic, sentence count)
FACT_SECTION_FILLER = (4, 5, 6)  # filler sentences after the facts of a section
FILLER_SECTION_LENGTHS = (6, 7, 8)  # sentences of a filler-only section


def page_url(title: str) -> str:
    """The (non-resolving, deterministic) URL of a synthetic page."""
    return URL_PREFIX + quote(title.replace(" ", "_"), safe="()_,'")


def world_pages(world: World) -> Iterator[RawPage]:
    """Every page of the world, unit by unit, in a fixed order."""
    for unit in range(len(world)):
        yield from render_unit(world, unit)


def render_unit(world: World, unit: int) -> list[RawPage]:
    """The pages of page unit ``unit``: an entity article with its redirects, a disambiguation
    page, or a list page (see :class:`~stillweb.corpora.synthetic.world.World`). A pure function
    of (world, unit); ``IndexError`` outside ``range(len(world))``."""
    if not 0 <= unit < len(world):
        raise IndexError(f"page unit {unit} out of range [0, {len(world)})")
    if unit < world.entity_count:
        return entity_pages(world, unit)
    unit -= world.entity_count
    if unit < len(world.disambiguations):
        name, members = world.disambiguations[unit]
        return [page(name, _disambiguation_text(world, name, members), unit)]
    list_page = world.list_pages[unit - len(world.disambiguations)]
    return [page(list_page.title, _list_text(world, list_page.intro, list_page.items), unit)]


def page(title: str, text: str, unit: int, redirect: str | None = None) -> RawPage:
    """A synthetic page of unit ``unit`` (its URL from its title)."""
    return RawPage(title=title, text=text, redirect=redirect, url=page_url(title), position=f"synthetic unit {unit}")


def entity_pages(world: World, gid: int, writer: type | None = None, redirect_word: str = "#REDIRECT") -> list[RawPage]:
    """The article of entity ``gid`` (written by ``writer``, default :class:`ArticleWriter`) and its redirect."""
    title = world.titles[gid]
    pages = [page(title, (writer or ArticleWriter)(world, gid).text(), gid)]
    alias = world.aliases.get(gid)
    if alias:
        pages.append(page(alias, f"{redirect_word} [[{title}]]", gid, redirect=title))
    return pages


def short_description(world: World, gid: int) -> str:
    """A few words telling an entity apart from namesakes (for disambiguation pages)."""
    kind, i = world.locate(gid)
    if kind == "person":
        country = world.gid("country", world.city_country[world.birth_city[i]])
        return f"{nm.OCCUPATIONS[world.occupation[i]]} from {world.link(country)} (born {world.birth[i] // 10000})"
    if kind == "city":
        return f"city in {world.link(world.gid('country', world.city_country[i]))}"
    if kind in ITALIC_KINDS:
        creator = world.gid("person", world.creator[kind][i])
        role = {"book": "book by", "film": "film directed by", "album": "album by"}[kind]
        return f"{world.work_date(kind, i) // 10000} {role} {world.link(creator)}"
    return kind


def _disambiguation_text(world: World, name: str, members: tuple[int, ...]) -> str:
    lines = [f"'''{name}''' may refer to:", ""]
    lines += [f"* [[{world.titles[gid]}]], {short_description(world, gid)}" for gid in members]
    lines += ["", "{{disambiguation}}"]
    return "\n".join(lines)


def _list_text(world: World, intro: str, items: tuple[int, ...]) -> str:
    lines = [intro, "", "== List ==", ""]
    for gid in items:
        kind, i = world.locate(gid)
        link = f"''{world.link(gid)}''" if kind in ITALIC_KINDS else world.link(gid)
        lines.append(f"* {link} ({world.work_date(kind, i) // 10000})" if kind in ITALIC_KINDS else f"* {link}")
    noun = world.locate(items[0])[0]
    lines += ["", f"[[Category:Lists of {noun}s]]" if noun != "city" else "[[Category:Lists of cities]]"]
    return "\n".join(lines)


_SLOT = re.compile(r"\{(adj|place|person|work|org)\}")


def _compose_paragraphs(topic: str, count: int) -> list[tuple[str, tuple[str, ...]]]:
    """Filler paragraphs of ``count`` distinct sentences, as positional format
    strings: ``{0}`` the subject, then one numbered slot per ``{adj}``,
    ``{place}``, ``{person}``, ``{work}`` or ``{org}``. Returns (format string,
    slot kinds in order)."""
    paragraphs = []
    for variant in range(PARAGRAPH_VARIANTS):
        sentences = KeyedRng(0, "filler", topic, count, variant).sample(FILLER[topic], min(count, len(FILLER[topic])))
        slots: list[str] = []

        def number_slot(match: re.Match[str]) -> str:
            slots.append(match.group(1))
            return f"{{{len(slots)}}}"

        text = _SLOT.sub(number_slot, " ".join(sentences)).replace("{s}", "{0}")
        paragraphs.append((text, tuple(slots)))
    return paragraphs


# Entity kinds each filler slot links to.
_SLOT_KINDS = {"place": ("city",), "person": ("person",), "work": ("book", "film", "album"), "org": ("company", "university")}
_PARAGRAPHS = {
    (topic, count): _compose_paragraphs(topic, count)
    for topic in FILLER
    for count in sorted(set(FACT_SECTION_FILLER + FILLER_SECTION_LENGTHS))
}


# Phrasings per kind and relation, kind-specific wording first.
_PHRASES_BY_KIND = {
    kind: {
        relation: RELATION_PHRASES.get((kind, relation)) or RELATION_PHRASES[relation]
        for _, relations, _ in plan
        for relation in relations
    }
    for kind, plan in SECTION_PLANS.items()
}


class ArticleWriter:
    """Writes the article of one entity; one instance per article."""

    def __init__(self, world: World, gid: int) -> None:
        self.world = world
        self.gid = gid
        self.kind, self.index = world.locate(gid)
        self.name = world.names[gid]
        self.facts = entity_facts(world, gid)
        self.values: dict[str, list[InfoboxField]] = {}
        for fact in self.facts:
            self.values.setdefault(fact.relation, []).append(fact)
        self.choices = SmallChoices(world.rng(self.kind, self.index, "prose"))
        self.day_first = self.choices.below(2) == 1
        if self.kind == "person":
            self.subject = self.name.rsplit(" ", 1)[-1]
        elif self.kind in ITALIC_KINDS:
            self.subject = f"''{self.name}''"
        else:
            self.subject = self.name

    def text(self) -> str:
        """The whole article."""
        parts = [self.infobox(), self.lead()]
        if self.world.titles[self.gid] != self.name:  # a namesake exists: hatnote to the disambiguation page
            parts.insert(0, f":''For other uses, see [[{self.name}]].''")
        for heading, relations, topic in SECTION_PLANS[self.kind]:
            sentences = [self.sentence(r) for r in relations if r in self.values]
            sentences.append(self.filler(topic, self.choices.choice(FACT_SECTION_FILLER if sentences else FILLER_SECTION_LENGTHS)))
            parts.append(f"== {heading} ==\n{' '.join(sentences)}")
        works = self.world.works_by_creator.get(self.index) if self.kind == "person" else None
        if works:
            parts.append(self.works_section(works))
        see_also = self.world.list_of.get(self.gid)
        if see_also:
            parts.append("== See also ==\n" + "\n".join(f"* [[{title}]]" for title in see_also))
        parts.append("\n".join(f"[[Category:{c}]]" for c in self.categories()))
        return "\n\n".join(parts)

    # ----- values ---------------------------------------------------------------------------
    def date_text(self, value: int) -> str:
        year, month, day = decode_date(value)
        return f"{day} {MONTH_NAMES[month - 1]} {year}" if self.day_first else f"{MONTH_NAMES[month - 1]} {day}, {year}"

    def infobox_value(self, fact: InfoboxField) -> str:
        if fact.value_type == "entity":
            return self.world.link(fact.value)
        if fact.value_type == "date":
            year, month, day = decode_date(fact.value)
            return f"{{{{{DATE_FIELD_TEMPLATES.get(fact.relation, 'start date')}|{year}|{month}|{day}}}}}"
        if fact.value_type == "number":
            return format_number(fact.value)
        return str(fact.value)

    def prose_value(self, fact: InfoboxField) -> str:
        if fact.value_type == "date":
            return self.date_text(fact.value)
        if fact.value_type == "text" and fact.relation in LOWERCASE_TEXT:
            text = fact.value[:1].lower() + fact.value[1:]
            if fact.relation == "occupation":
                return ("an " if text[0] in "aeiou" else "a ") + text
            return text
        return self.infobox_value(fact)

    def joined(self, relation: str) -> str:
        values = [self.prose_value(f) for f in self.values[relation]]
        return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]

    # ----- parts ----------------------------------------------------------------------------
    def infobox(self) -> str:
        lines = [f"{{{{{INFOBOX_TEMPLATES[self.kind]}", f"| name = {self.name}"]
        for relation, facts in self.values.items():
            if len(facts) == 1:
                lines.append(f"| {relation} = {self.infobox_value(facts[0])}")
            else:
                items = "\n".join(f"* {self.infobox_value(f)}" for f in facts)
                lines.append(f"| {relation} = {{{{plainlist|\n{items}\n}}}}")
        lines.append("}}")
        return "\n".join(lines)

    def sentence(self, relation: str) -> str:
        """One sentence stating ``relation`` (templates start with the subject or a capital)."""
        templates = _PHRASES_BY_KIND[self.kind][relation]
        return templates[self.choices.below(len(templates))].format(s=self.subject, v=self.joined(relation))

    def filler(self, topic: str, count: int) -> str:
        """A paragraph of ``count`` filler sentences, naming unrelated entities."""
        template, slots = self.choices.choice(_PARAGRAPHS[topic, count])
        return template.format(self.subject, *(self.slot_value(slot) for slot in slots))

    def slot_value(self, slot: str) -> str:
        if slot == "adj":
            return self.choices.choice(FILLER_ADJECTIVES)
        kind = self.choices.choice(_SLOT_KINDS[slot])
        link = self.world.link(self.world.gid(kind, self.choices.below(self.world.counts[kind])))
        return f"''{link}''" if kind in ITALIC_KINDS else link

    def first(self, relation: str) -> str:
        return self.prose_value(self.values[relation][0])

    def year_of(self, relation: str) -> int:
        return self.values[relation][0].value // 10000

    def lead(self) -> str:
        w, kind = self.world, self.kind
        bold = f"'''{w.full_names.get(self.gid, self.name)}'''"
        if kind == "person":
            country = self.values["nationality"][0].value
            adjective = f"[[{w.titles[country]}|{w.demonyms[w.locate(country)[1]]}]]"
            occupation = self.first("occupation").split(" ", 1)[1]
            article = "an" if w.demonyms[w.locate(country)[1]][0] in "AEIOU" else "a"
            if "death_date" in self.values:
                span = f"{self.first('birth_date')} – {self.first('death_date')}"
                return f"{bold} ({span}) was {article} {adjective} {occupation}."
            return f"{bold} (born {self.first('birth_date')}) is {article} {adjective} {occupation}."
        if kind == "city":
            text = f"{bold} is a city in {self.first('country')}."
            return text + (f" It is the capital of {self.first('country')}." if self.index < w.counts["country"] else "")
        if kind == "country":
            official = w.aliases.get(self.gid)
            officially = f", officially the '''{official}'''," if official else ""
            return f"{bold}{officially} is a sovereign state. Its capital is {self.first('capital')}."
        if kind == "company":
            former = w.aliases.get(self.gid)
            formerly = f" (formerly '''{former}''')" if former else ""
            return f"{bold}{formerly} is a company in {self.first('industry')}, based in {self.first('headquarters')}."
        if kind == "university":
            abbreviation = w.aliases.get(self.gid)
            short = f" ('''{abbreviation}''')" if abbreviation else ""
            return f"{bold}{short} is a university in {self.first('located_in')}, {self.first('country')}."
        if kind == "award":
            return f"The {bold} is an award for {self.first('awarded_for')} presented by {self.first('presenter')}."
        if kind == "event":
            return f"The {bold} was an event held in {self.first('located_in')} on {self.first('date')}."
        creator = {"book": "author", "film": "director", "album": "performer"}[kind]
        date_relation = {"book": "publication_date", "film": "release_date", "album": "release_date"}[kind]
        noun = {"book": "book", "film": "film", "album": "album"}[kind]
        by = "directed by" if kind == "film" else "by"
        return f"''{bold}'' is a {self.year_of(date_relation)} {self.first('genre').lower()} {noun} {by} {self.first(creator)}."

    def works_section(self, works: list[int]) -> str:
        lines = ["== Works =="]
        dated = sorted((self.world.work_date(*self.world.locate(gid)) // 10000, gid) for gid in works)
        for year, gid in dated[:MAX_LISTED_WORKS]:
            lines.append(f"* ''{self.world.link(gid)}'' ({year})")
        return "\n".join(lines)

    def categories(self) -> list[str]:
        w, kind = self.world, self.kind
        def demonym(relation: str) -> str:
            return w.demonyms[w.locate(self.values[relation][0].value)[1]]
        def name_of(relation: str) -> str:
            return w.names[self.values[relation][0].value]
        if kind == "person":
            occupation = nm.OCCUPATION_PLURALS[nm.OCCUPATIONS[w.occupation[self.index]]]
            death = f"{self.year_of('death_date')} deaths" if "death_date" in self.values else "Living people"
            return [f"{demonym('nationality')} {occupation}", f"{self.year_of('birth_date')} births", death]
        if kind == "city":
            return [f"Cities in {name_of('country')}"]
        if kind == "country":
            return ["Countries", f"{w.demonyms[self.index]}-speaking countries"]
        if kind == "company":
            return [f"{self.first('industry').capitalize()} companies", f"Companies established in {self.values['founded'][0].value}"]
        if kind == "university":
            return [f"Universities in {name_of('country')}", f"Educational institutions established in {self.values['founded'][0].value}"]
        if kind == "award":
            return [f"Awards of {name_of('country')}", f"Awards established in {self.values['first_awarded'][0].value}"]
        if kind == "event":
            return [f"{self.year_of('date')} events", f"Events in {name_of('country')}"]
        date_relation = "publication_date" if kind == "book" else "release_date"
        genre = self.values["genre"][0].value
        by_genre = f"{genre}s" if genre.endswith(("novel", "film")) else f"{genre} {kind}s"
        return [f"{self.year_of(date_relation)} {kind}s", by_genre]
