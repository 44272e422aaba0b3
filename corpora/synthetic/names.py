"""Invented, pronounceable names and the fixed vocabularies of the synthetic world.

Names are built from syllables (onset + vowel + optional coda), so they look like
names but belong to no real entity: an agent cannot answer from a language model's
memory. Every function takes a :class:`~stillweb.corpora.synthetic.choices.Chooser`
(a ``KeyedRng`` or ``SmallChoices``) and is a pure function of its draws. Vocabularies (occupations, genres, industries...) are
tuples whose order is part of the world's definition: append, never reorder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from stillweb.corpora.errors import UsageError
from stillweb.corpora.synthetic.choices import Chooser

__all__ = [
    "ONSETS",
    "word",
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
NAME_ENDINGS = ("", "", "", "a", "o", "in", "en", "an", "is", "or", "el", "ar")


# Every (onset, vowel, coda) combination, repeats included, so one draw picks a
# syllable with the same odds as three separate draws would.
SYLLABLES = tuple(onset + vowel + coda for onset in ONSETS for vowel in VOWELS for coda in CODAS)


def _syllable(rng: Chooser) -> str:
    return rng.choice(SYLLABLES)


def word(rng: Chooser, syllables: int) -> str:
    """A capitalised invented word of ``syllables`` syllables plus a name ending."""
    text = "".join(_syllable(rng) for _ in range(syllables)) + rng.choice(NAME_ENDINGS)
    return text[:1].upper() + text[1:]


def person_name(rng: Chooser) -> tuple[str, str | None, str]:
    """(given name, middle name or None, family name)."""
    given = word(rng, rng.integer(1, 2))
    middle = word(rng, 2) if rng.chance(0.35) else None
    family = word(rng, rng.integer(2, 3))
    return given, middle, family


def place_name(rng: Chooser) -> str:
    """A city name: one invented word, sometimes with a place-like suffix."""
    base = word(rng, rng.integer(1, 2))
    suffix = rng.choice(("", "", "", "", "", "", "vik", "heim", "ford", "grad", "mouth", "port"))
    return base + suffix


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
    """A title of a book, film or album, mixing English words and invented names."""
    return one_of_patterns(rng, (
        lambda: f"The {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} of {word(rng, 2)}",
        lambda: f"{rng.choice(NOUNS)} of {word(rng, rng.integer(2, 3))}",
        lambda: word(rng, rng.integer(2, 3)),
        lambda: f"{rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}s in {word(rng, 2)}",
        lambda: f"The {word(rng, 2)} {rng.choice(NOUNS)}",
        lambda: f"{word(rng, 2)} and the {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}",
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
