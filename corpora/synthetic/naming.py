"""Names of the synthetic world's entities, one namer per kind: ``(world, rng, index, attempt) -> name``.

A namer draws from ``rng`` (the entity's keyed ``"name"`` stream) and may read
what the world already holds (the city a university is in, an event's year);
``attempt`` counts retries after a name was taken, so later attempts can fall
back to freer patterns. :class:`~stillweb.corpora.synthetic.world.World` calls
them in kind order while naming its entities.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from stillweb.corpora.synthetic import names as nm
from stillweb.corpora.synthetic.choices import Chooser

if TYPE_CHECKING:  # type names only: world.py imports this module
    from stillweb.corpora.synthetic.world import World

__all__ = ["NAMERS", "work_name"]


def country_name(world: World, rng: Chooser, i: int, attempt: int) -> str:
    """A country: an invented root and a country suffix."""
    root, suffix = nm.country_root(rng)
    return root + suffix


def city_name(world: World, rng: Chooser, i: int, attempt: int) -> str:
    """A city: a place name built from a family name."""
    return nm.place_name(rng)


def person_name(world: World, rng: Chooser, i: int, attempt: int) -> str:
    """A person's display name (given and family); a middle name goes to ``world.full_names``."""
    given, middle, family = nm.person_name(rng)
    gid = world.gid("person", i)
    if middle:
        world.full_names[gid] = f"{given} {middle} {family}"
    else:
        world.full_names.pop(gid, None)
    return f"{given} {family}"


def university_name(world: World, rng: Chooser, i: int, attempt: int) -> str:
    """A university, mostly named after its city."""
    city = world.names[world.gid("city", world.university_city(i))]
    return nm.one_of_patterns(rng, (
        lambda: f"University of {city}",
        lambda: f"{city} Institute of Technology",
        lambda: f"{city} {rng.choice(('State', 'Polytechnic', 'Technical', 'Open'))} University",
        lambda: f"{city} College of {rng.choice(('Arts', 'Music', 'Medicine', 'Engineering', 'Law'))}",
        lambda: f"{nm.family_name(rng)} {rng.choice(('University', 'College', 'Academy'))}",
    ), last=attempt >= 3)


def company_name(world: World, rng: Chooser, i: int, attempt: int) -> str:
    """A company: a founder's family name (two after a clash) and a suffix of its industry."""
    industry = nm.INDUSTRIES[world.industry[i]]
    founders = nm.family_name(rng) if attempt < 2 else f"{nm.family_name(rng)} & {nm.family_name(rng)}"
    return f"{founders} {rng.choice(nm.COMPANY_SUFFIXES[industry])}"


def award_name(world: World, rng: Chooser, i: int, attempt: int) -> str:
    """An award: a prize, award or medal of its field."""
    field = nm.AWARD_FIELDS[world.award_field[i]][0]
    return nm.one_of_patterns(rng, (
        lambda: f"{nm.family_name(rng)} Prize for {field}",
        lambda: f"{rng.choice(nm.ADJECTIVES)} {rng.choice(nm.NOUNS)} Award for {field}",
        lambda: f"{nm.family_name(rng)} Medal",
    ))


def event_name(world: World, rng: Chooser, i: int, attempt: int) -> str:
    """An event: its year, city and type (another place's name after a clash)."""
    city, date = world.event_place_and_date(i)
    base = f"{date // 10000} {world.names[world.gid('city', city)]} {world.event_type(i)}"
    return base if attempt == 0 else f"{date // 10000} {nm.place_name(rng)} {world.event_type(i)}"


def work_name(world: World, rng: Chooser, i: int, attempt: int) -> str:
    """A book, film or album title."""
    return nm.work_title(rng)


NAMERS: dict[str, Callable[["World", Chooser, int, int], str]] = {
    "country": country_name,
    "city": city_name,
    "person": person_name,
    "university": university_name,
    "company": company_name,
    "award": award_name,
    "event": event_name,
}  # books, films and albums: work_name
