"""Names a reader takes for names, and the fixed vocabularies of the synthetic world.

People are named from real given and family names of ten locales
(:mod:`~stillweb.corpora.synthetic.name_lists`, copied from Faker's public-domain-derived
lists), places and firms are built from those family names with English place and firm
patterns ("Hartford", "Port Keller", "Aalto & Sons"), so a question reads like one about the
real world while its combinations belong to no real entity: an agent cannot answer from a
language model's memory. Countries keep invented roots from syllables (onset + vowel +
optional coda). Every function takes a :class:`~stillweb.corpora.synthetic.choices.Chooser`
(a ``KeyedRng`` or ``SmallChoices``) and is a pure function of its draws. Vocabularies (occupations, genres, industries...) are
tuples whose order is part of the world's definition: append, never reorder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from stillweb.corpora.errors import UsageError
from stillweb.corpora.synthetic.choices import Chooser
from stillweb.corpora.synthetic.name_lists import FAMILY_NAMES, GIVEN_NAMES, LOCALES

__all__ = [
    "ONSETS",
    "family_name",
    "person_name",
    "place_name",
    "country_root",
    "COUNTRY_SUFFIXES",
    "demonym",
    "work_title",
    "one_of_patterns",
    "OCCUPATIONS",
    "OCCUPATION_WEIGHTS",
    "OCCUPATION_PLURALS",
    "INDUSTRIES",
    "COMPANY_SUFFIXES",
    "BOOK_GENRES",
    "FILM_GENRES",
    "MUSIC_GENRES",
    "INSTRUMENTS",
    "AWARD_FIELDS",
    "EVENT_TYPES",
    "CURRENCY_UNITS",
    "ADJECTIVES",
    "NOUNS",
]

ONSETS = (
    "b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
    "br", "dr", "gr", "kr", "tr", "st", "th", "sh", "", "",
)
VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ei", "ou", "y")
CODAS = ("", "", "", "", "", "n", "r", "l", "s", "m", "th")


# Every (onset, vowel, coda) combination, repeats included, so one draw picks a
# syllable with the same odds as three separate draws would.
SYLLABLES = tuple(onset + vowel + coda for onset in ONSETS for vowel in VOWELS for coda in CODAS)
PLACE_SUFFIXES = ("ton", "field", "ford", "bury", "wick", "ham", "dale", "by", "stead", "haven", "worth", "more")


def _syllable(rng: Chooser) -> str:
    return rng.choice(SYLLABLES)


def family_name(rng: Chooser) -> str:
    """A family name of a locale drawn first (so every locale is as likely, whatever its list's length)."""
    return rng.choice(FAMILY_NAMES[rng.choice(LOCALES)])


def person_name(rng: Chooser) -> tuple[str, str | None, str]:
    """(given name, middle name or None, family name), all of one locale."""
    locale = rng.choice(LOCALES)
    given = rng.choice(GIVEN_NAMES[locale])
    middle = rng.choice(GIVEN_NAMES[locale]) if rng.chance(0.35) else None
    family = rng.choice(FAMILY_NAMES[locale])
    return given, (middle if middle != given else None), family


def place_name(rng: Chooser) -> str:
    """A town's name from a family name: ``Kellerford``, ``Port Aalto``, ``Lake Bernard``..."""
    root = family_name(rng)
    joined = (lambda: root + rng.choice(PLACE_SUFFIXES),) if root.isalpha() and len(root) <= 7 else ()
    return one_of_patterns(rng, (
        *joined, *joined, *joined,
        lambda: f"{rng.choice(('Port', 'New', 'Fort', 'Lake', 'Mount', 'North', 'East'))} {root}",
        lambda: f"{root} {rng.choice(('Falls', 'Springs', 'Harbour', 'Crossing', 'Heights', 'Bay'))}",
    ))


COUNTRY_SUFFIXES = ("ia", "land", "ora", "istan", "ar", "enia", "avia", "mark")
_DEMONYM_ENDINGS = {
    "ia": "ian",
    "land": "lander",
    "ora": "oran",
    "istan": "istani",
    "ar": "ari",
    "enia": "enian",
    "avia": "avian",
    "mark": "markish",
}


def country_root(rng: Chooser) -> tuple[str, str]:
    """(root, suffix) of a country name; the name is ``root + suffix``."""
    root = "".join(_syllable(rng) for _ in range(rng.integer(1, 2)))
    return root[:1].upper() + root[1:], rng.choice(COUNTRY_SUFFIXES)


def demonym(country: str) -> str:
    """The adjective of a country name made by :func:`country_root`: ``Estavia`` -> ``Estavian``."""
    for suffix, ending in _DEMONYM_ENDINGS.items():
        if country.endswith(suffix):
            return country[: -len(suffix)] + ending
    raise UsageError(f"not a synthetic country name: {country!r}")


ADJECTIVES = (
    "Silver", "Hollow", "Quiet", "Burning", "Distant", "Crimson", "Winter", "Golden",
    "Broken", "Last", "Northern", "Hidden", "Pale", "Restless", "Iron", "Glass",
    "Velvet", "Endless", "Bitter", "Bright", "Lonely", "Sleeping", "Salt", "Amber",
    "Second", "Wild", "Narrow", "Summer", "Drowned", "Paper",
)
NOUNS = (
    "Harbor", "River", "Garden", "Lantern", "Orchard", "Mirror", "Road", "Tide",
    "Bell", "Tower", "Season", "Letter", "Crown", "Shadow", "Island", "Bridge",
    "Window", "Forest", "Engine", "Song", "Promise", "Compass", "Voyage", "Station",
    "Hour", "Thread", "Field", "Archive", "Lighthouse", "Meridian",
)


def work_title(rng: Chooser) -> str:
    """A title of a book, film or album: English words, places and people."""
    return one_of_patterns(rng, (
        lambda: f"The {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} of {place_name(rng)}",
        lambda: f"{rng.choice(NOUNS)} of {place_name(rng)}",
        lambda: " ".join(person_name(rng)[::2]),
        lambda: f"{rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}s in {place_name(rng)}",
        lambda: f"The {family_name(rng)} {rng.choice(NOUNS)}",
        lambda: f"{person_name(rng)[0]} and the {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}",
    ))


def one_of_patterns(rng: Chooser, patterns: Sequence[Callable[[], str]], last: bool = False) -> str:
    """The name built by one of ``patterns``, picked by one draw from ``rng`` (``last``: the last
    pattern, without a draw). Each pattern draws what it needs from ``rng`` only when it is built.

    >>> from stillweb.corpora.keyed import KeyedRng
    >>> one_of_patterns(KeyedRng(0, "example"), (lambda: "a", lambda: "b"), last=True)
    'b'
    """
    return patterns[len(patterns) - 1 if last else rng.integer(0, len(patterns) - 1)]()


# Occupations of people; the film director, writer, musician, singer, actor,
# politician and businessperson pools feed other entities' relations.
OCCUPATIONS = (
    "film director", "actor", "writer", "musician", "singer", "painter",
    "politician", "businessperson", "scientist", "architect", "journalist",
)
OCCUPATION_WEIGHTS = (8, 14, 12, 11, 6, 8, 10, 10, 10, 5, 6)
OCCUPATION_PLURALS = {
    "film director": "film directors",
    "actor": "actors",
    "writer": "writers",
    "musician": "musicians",
    "singer": "singers",
    "painter": "painters",
    "politician": "politicians",
    "businessperson": "businesspeople",
    "scientist": "scientists",
    "architect": "architects",
    "journalist": "journalists",
}

# Company industries; the first three are forced on companies 0, 1, 2 so that
# publishers, production companies and record labels always exist.
INDUSTRIES = (
    "Publishing", "Film production", "Music", "Shipbuilding", "Textiles",
    "Banking", "Software", "Mining", "Retail", "Brewing", "Railways", "Pharmaceuticals",
)
COMPANY_SUFFIXES = {
    "Publishing": ("Press", "Books", "Publishing House"),
    "Film production": ("Pictures", "Films", "Studios"),
    "Music": ("Records", "Music", "Sound"),
    "Shipbuilding": ("Shipyards", "Marine Works"),
    "Textiles": ("Mills", "Textiles"),
    "Banking": ("Bank", "Savings Union"),
    "Software": ("Systems", "Software"),
    "Mining": ("Mining Company", "Minerals"),
    "Retail": ("Stores", "Trading Company"),
    "Brewing": ("Brewery", "Breweries"),
    "Railways": ("Railway Company", "Rail"),
    "Pharmaceuticals": ("Laboratories", "Pharma"),
}

BOOK_GENRES = (
    "Novel", "Historical novel", "Science fiction", "Poetry", "Crime fiction",
    "Memoir", "Short stories", "Fantasy", "Essay collection", "Travel writing",
)
FILM_GENRES = (
    "Drama", "Comedy", "Thriller", "Documentary", "Western", "Musical",
    "Science fiction", "Romance", "War film", "Animated film",
)
MUSIC_GENRES = (
    "Jazz", "Folk", "Rock", "Electronic", "Classical", "Pop", "Blues",
    "Ambient", "Hip hop", "Chamber music",
)
INSTRUMENTS = (
    "Piano", "Violin", "Guitar", "Cello", "Clarinet", "Drums", "Accordion",
    "Harp", "Trumpet", "Double bass", "Vocals",
)
# (field of an award, the occupations it honours)
AWARD_FIELDS = (
    ("Literature", ("writer", "journalist")),
    ("Film", ("film director", "actor")),
    ("Music", ("musician", "singer")),
    ("Visual arts", ("painter", "architect")),
    ("Science", ("scientist",)),
    ("Public service", ("politician", "businessperson")),
)
EVENT_TYPES = (
    "Marathon", "Music Festival", "Film Festival", "Summit", "World Fair",
    "Chess Olympiad", "Regatta", "Book Fair", "Exhibition", "Flood",
)
CURRENCY_UNITS = ("kora", "dram", "mark", "talen", "florin", "sol", "real", "crown")
