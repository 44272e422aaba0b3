"""The facts of each entity: a pure function of (world, entity id).

:func:`entity_facts` returns the infobox facts of an entity in infobox order
(a relation with several values appears once per value, consecutively). The
article renderer writes exactly these facts into the infobox, and
:func:`iter_true_facts` reports exactly these, so the ground truth and the page
never disagree. Relations keep the graph consistent: a film's director is a
film director, released while alive and adult; a company is founded after its
founders were born; a mayor is a living politician of the city's country...
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.synthetic import names as nm
from stillweb.corpora.synthetic.dates import PRESENT_YEAR, decode_date, keyed_date
from stillweb.corpora.synthetic.world import World

T = TypeVar("T")

__all__ = ["InfoboxField", "TrueFact", "canonical_number", "entity_facts", "fact_value_string", "format_number",
           "iter_true_facts"]


@dataclass(frozen=True, slots=True)
class InfoboxField:
    """One infobox field of a synthetic entity, with its value still typed: a gid
    (entity), a YYYYMMDD int (date), an int year, an int or float (number), or a
    str (text). It becomes page text in :mod:`.wikitext_pages` and a
    :class:`TrueFact` (titles and strings, as extraction must recover it) in
    :func:`iter_true_facts`; the snapshot's
    :class:`~stillweb.corpora.snapshot.records.Fact` (doc ids) is what a build extracts."""

    relation: str
    value_type: str
    value: int | float | str


@dataclass(frozen=True, slots=True)
class TrueFact:
    """One ground-truth fact, as the ingestion path should extract it from the infobox.

    ``value`` follows :class:`~stillweb.corpora.snapshot.records.ExtractedFact`: the object
    title for entities, ISO ``YYYY-MM-DD`` for dates, ``YYYY`` for years, the
    canonical number (no thousands separators, no trailing ``.0``) for numbers.
    """

    subject_title: str
    relation: str
    value: str
    value_type: str
    object_title: str | None


def iter_true_facts(world: World) -> Iterator[TrueFact]:
    """The ground truth: every fact an infobox states, entity by entity, in infobox order."""
    for gid in range(world.entity_count):
        subject = world.titles[gid]
        for fact in entity_facts(world, gid):
            obj = world.titles[fact.value] if fact.value_type == "entity" else None
            yield TrueFact(subject, fact.relation, fact_value_string(world, fact), fact.value_type, obj)


def entity_facts(world: World, gid: int) -> list[InfoboxField]:
    """The infobox facts of entity ``gid``, in infobox order."""
    kind, index = world.locate(gid)
    return _FACT_BUILDERS[kind](world, index)


def canonical_number(value: int | float) -> str:
    """A number without thousands separators and without a trailing ``.0``."""
    if isinstance(value, float) and not value.is_integer():
        return repr(value)
    return str(int(value))


def format_number(value: int | float) -> str:
    """A number as an infobox writes it: ``1,234,567`` or ``12,345.6``."""
    if isinstance(value, float) and not value.is_integer():
        whole, _, fraction = repr(value).partition(".")
        return f"{int(whole):,}.{fraction}"
    return f"{int(value):,}"


def fact_value_string(world: World, fact: InfoboxField) -> str:
    """The value of a fact as :class:`~stillweb.corpora.snapshot.records.ExtractedFact` states it."""
    if fact.value_type == "entity":
        return world.titles[fact.value]
    if fact.value_type == "date":
        year, month, day = decode_date(fact.value)
        return f"{year:04d}-{month:02d}-{day:02d}"
    if fact.value_type == "year":
        return f"{fact.value:04d}"
    if fact.value_type == "number":
        return canonical_number(fact.value)
    return str(fact.value)


def _entity(world: World, relation: str, kind: str, index: int) -> InfoboxField:
    return InfoboxField(relation, "entity", world.gid(kind, index))


def _distinct(rng: KeyedRng, items: Sequence[T], count: int) -> list[T]:
    """Up to ``count`` distinct items drawn from a sequence, in sequence order
    (rejection sampling: cheap for a large sequence and a small count)."""
    count = min(count, len(items))
    chosen: set[int] = set()
    while len(chosen) < count:
        chosen.add(rng.integer(0, len(items) - 1))
    return [items[position] for position in sorted(chosen)]


def _log_uniform(rng: KeyedRng, low: int, high: int) -> int:
    """An integer spread evenly over the decades between low and high: a decade
    first, then a uniform integer within it. Integer arithmetic only, so the
    value is the same on every platform (no libm ``pow``)."""
    decades = []
    start = low
    while start < high:
        decades.append((start, min(high, start * 10)))
        start *= 10
    first, last = rng.choice(decades)
    return rng.integer(first, last)


def _area(rng: KeyedRng, low_tenths: int, high_tenths: int) -> float:
    """An area in km² with one decimal, from a range given in tenths of km²."""
    return _log_uniform(rng, low_tenths, high_tenths) / 10


def _person(world: World, i: int) -> list[InfoboxField]:
    facts = [InfoboxField("birth_date", "date", world.birth[i]), _entity(world, "birth_place", "city", world.birth_city[i])]
    rng = world.rng("person", i, "attributes")
    death_city = rng.integer(0, world.counts["city"] - 1)
    if world.death[i]:
        facts.append(InfoboxField("death_date", "date", world.death[i]))
        facts.append(_entity(world, "death_place", "city", death_city))
    facts.append(_entity(world, "nationality", "country", world.city_country[world.birth_city[i]]))
    occupation = nm.OCCUPATIONS[world.occupation[i]]
    facts.append(InfoboxField("occupation", "text", occupation[:1].upper() + occupation[1:]))
    instrument = rng.choice(nm.INSTRUMENTS)
    if occupation in ("musician", "singer"):
        facts.append(InfoboxField("instrument", "text", instrument))
    for university in _distinct(rng, range(world.counts["university"]), rng.weighted_choice((0, 1, 2), (3, 5, 2))):
        facts.append(_entity(world, "alma_mater", "university", university))
    employer = rng.integer(0, world.counts["company"] - 1)
    if rng.chance(0.5) and occupation in ("scientist", "journalist", "businessperson", "architect"):
        facts.append(_entity(world, "employer", "company", employer))
    if world.is_married(i):
        facts.append(_entity(world, "spouse", "person", i ^ 1))
    if rng.chance(0.3):
        pool = next(world.award_pool[f] for f, (_, occs) in enumerate(nm.AWARD_FIELDS) if occupation in occs)
        last_active = world.active_years(i, 20)[1]
        first_awarded = award_first_years(world)
        for award in _distinct(rng, pool, rng.integer(1, 2)):
            if first_awarded[award] <= last_active:
                facts.append(_entity(world, "awards", "award", award))
    return facts


def _city(world: World, i: int) -> list[InfoboxField]:
    rng = world.rng("city", i, "attributes")
    country = world.city_country[i]
    is_capital = i < world.counts["country"]
    population = _log_uniform(rng, 2_000, 3_000_000) * (3 if is_capital else 1)
    facts = [
        _entity(world, "country", "country", country),
        InfoboxField("population", "number", population),
        InfoboxField("area_km2", "number", _area(rng, 50, 9_000)),
        InfoboxField("elevation_m", "number", rng.integer(0, 2500)),
    ]
    if rng.chance(0.7):
        facts.append(InfoboxField("founded", "year", rng.integer(1000, 1900)))
    politicians = world.living_politicians.get(country)
    if politicians and rng.chance(0.6):
        facts.append(_entity(world, "mayor", "person", rng.choice(politicians)))
    return facts


def _country(world: World, i: int) -> list[InfoboxField]:
    rng = world.rng("country", i, "attributes")
    demonym = world.demonyms[i]
    facts = [
        _entity(world, "capital", "city", i),
        InfoboxField("population", "number", _log_uniform(rng, 300_000, 90_000_000)),
        InfoboxField("area_km2", "number", _area(rng, 8_000, 9_000_000)),
        InfoboxField("currency", "text", f"{demonym} {rng.choice(nm.CURRENCY_UNITS)}"),
        InfoboxField("official_language", "text", demonym),
    ]
    if rng.chance(0.7):
        facts.append(InfoboxField("independence_date", "date", keyed_date(rng, 1800, 1995)))
    politicians = world.living_politicians.get(i)
    if politicians and rng.chance(0.6):
        facts.append(_entity(world, "head_of_state", "person", rng.choice(politicians)))
    return facts


def company_founding(world: World, i: int) -> tuple[list[int], int]:
    """(founder person indices, founding year) of a company: founded while every
    founder was alive and at least 22 years old."""
    rng = world.rng("company", i, "founding")
    pool = world.occupation_pool[nm.OCCUPATIONS.index("businessperson")]
    founders = [rng.choice(pool)]
    second = rng.choice(pool)
    if rng.chance(0.3) and second != founders[0]:
        founders.append(second)
    earliest = max(world.active_years(p, 22)[0] for p in founders)
    latest = min(world.active_years(p, 22)[1] for p in founders)
    if latest < earliest:
        founders, (earliest, latest) = founders[:1], world.active_years(founders[0], 22)
    return founders, rng.integer(earliest, min(latest, earliest + 30))


def company_headquarters(world: World, i: int) -> int:
    """The city (index) where a company has its headquarters."""
    return world.rng("company", i, "headquarters").integer(0, world.counts["city"] - 1)


def _company(world: World, i: int) -> list[InfoboxField]:
    founders, year = company_founding(world, i)
    rng = world.rng("company", i, "attributes")
    facts = [_entity(world, "founded_by", "person", p) for p in founders]
    facts += [
        InfoboxField("founded", "year", year),
        _entity(world, "headquarters", "city", company_headquarters(world, i)),
        InfoboxField("industry", "text", nm.INDUSTRIES[world.industry[i]]),
        InfoboxField("employees", "number", _log_uniform(rng, 10, 250_000)),
    ]
    pool = world.occupation_pool[nm.OCCUPATIONS.index("businessperson")]
    ceo = rng.choice(pool)
    if rng.chance(0.5) and ceo not in founders and not world.death[ceo]:
        facts.append(_entity(world, "ceo", "person", ceo))
    return facts


def university_founding(world: World, i: int) -> tuple[int | None, int]:
    """(founder person index or None, founding year) of a university."""
    rng = world.rng("university", i, "founding")
    if rng.chance(0.25):
        founder = rng.choice(world.occupation_pool[nm.OCCUPATIONS.index("politician")])
        first, last = world.active_years(founder, 30)
        return founder, rng.integer(first, min(last, first + 30))
    return None, rng.integer(1450, 1995)


def _university(world: World, i: int) -> list[InfoboxField]:
    founder, year = university_founding(world, i)
    city = world.university_city(i)
    facts = [InfoboxField("founded", "year", year)]
    if founder is not None:
        facts.append(_entity(world, "founded_by", "person", founder))
    facts += [
        _entity(world, "located_in", "city", city),
        _entity(world, "country", "country", world.city_country[city]),
        InfoboxField("students", "number", _log_uniform(world.rng("university", i, "students"), 300, 60_000)),
    ]
    return facts


def award_origin(world: World, i: int) -> tuple[str, int, int, int]:
    """(presenter kind, presenter index, country index, first year awarded) of an
    award; first awarded after its presenter was founded."""
    rng = world.rng("award", i, "origin")
    if rng.chance(0.6):
        presenter = rng.integer(0, world.counts["company"] - 1)
        kind, founded = "company", company_founding(world, presenter)[1]
        country = world.city_country[company_headquarters(world, presenter)]
    else:
        presenter = rng.integer(0, world.counts["university"] - 1)
        kind, founded = "university", university_founding(world, presenter)[1]
        country = world.city_country[world.university_city(presenter)]
    return kind, presenter, country, min(PRESENT_YEAR - 1, max(founded, 1880) + rng.integer(1, 40))


def award_first_years(world: World) -> list[int]:
    """The year each award was first given (computed once per world, then memoised on it)."""
    if world.award_first_year is None:
        world.award_first_year = [award_origin(world, i)[3] for i in range(world.counts["award"])]
    return world.award_first_year


def _award(world: World, i: int) -> list[InfoboxField]:
    presenter_kind, presenter, country, first_year = award_origin(world, i)
    return [
        _entity(world, "presenter", presenter_kind, presenter),
        _entity(world, "country", "country", country),
        InfoboxField("first_awarded", "year", first_year),
        InfoboxField("awarded_for", "text", f"Excellence in {nm.AWARD_FIELDS[world.award_field[i]][0].lower()}"),
    ]


def _company_from(world: World, rng: KeyedRng, industry: str) -> int:
    return rng.choice(world.industry_pool[nm.INDUSTRIES.index(industry)])


def _book(world: World, i: int) -> list[InfoboxField]:
    rng = world.rng("book", i, "attributes")
    author = world.creator["book"][i]
    nationality = world.city_country[world.birth_city[author]]
    return [
        _entity(world, "author", "person", author),
        _entity(world, "publisher", "company", _company_from(world, rng, "Publishing")),
        InfoboxField("publication_date", "date", world.work_date("book", i)),
        InfoboxField("genre", "text", rng.choice(nm.BOOK_GENRES)),
        InfoboxField("pages", "number", rng.integer(80, 900)),
        InfoboxField("language", "text", world.demonyms[nationality]),
    ]


def _film(world: World, i: int) -> list[InfoboxField]:
    rng = world.rng("film", i, "attributes")
    director = world.creator["film"][i]
    actors = world.occupation_pool[nm.OCCUPATIONS.index("actor")]
    facts = [_entity(world, "director", "person", director)]
    facts += [_entity(world, "starring", "person", a) for a in _distinct(rng, actors, rng.integer(2, 3))]
    facts += [
        _entity(world, "production_company", "company", _company_from(world, rng, "Film production")),
        InfoboxField("release_date", "date", world.work_date("film", i)),
        InfoboxField("runtime", "number", rng.integer(72, 195)),
        InfoboxField("genre", "text", rng.choice(nm.FILM_GENRES)),
        _entity(world, "country", "country", world.city_country[world.birth_city[director]]),
    ]
    return facts


def _album(world: World, i: int) -> list[InfoboxField]:
    rng = world.rng("album", i, "attributes")
    return [
        _entity(world, "performer", "person", world.creator["album"][i]),
        _entity(world, "record_label", "company", _company_from(world, rng, "Music")),
        InfoboxField("release_date", "date", world.work_date("album", i)),
        InfoboxField("genre", "text", rng.choice(nm.MUSIC_GENRES)),
        InfoboxField("tracks", "number", rng.integer(6, 22)),
    ]


def _event(world: World, i: int) -> list[InfoboxField]:
    city, date = world.event_place_and_date(i)
    rng = world.rng("event", i, "attributes")
    facts = [
        InfoboxField("date", "date", date),
        _entity(world, "located_in", "city", city),
        _entity(world, "country", "country", world.city_country[city]),
    ]
    organizer = rng.integer(0, world.counts["company"] - 1)
    if rng.chance(0.7) and company_founding(world, organizer)[1] <= date // 10000:
        facts.append(_entity(world, "organizer", "company", organizer))
    facts.append(InfoboxField("attendance", "number", _log_uniform(rng, 200, 400_000)))
    return facts


_FACT_BUILDERS = {
    "person": _person,
    "city": _city,
    "country": _country,
    "company": _company,
    "university": _university,
    "award": _award,
    "book": _book,
    "film": _film,
    "album": _album,
    "event": _event,
}
