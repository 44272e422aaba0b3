"""The seeded fictional world: entities, their names and titles, and the pools that
keep the knowledge graph consistent.

``generate_world(articles, seed)`` builds a :class:`World`. Construction does the
few things that need a global view, once: invented names and unique titles
(with deliberate name collisions, told apart by qualified titles and
disambiguation pages), redirect aliases, and compact per-entity arrays (person
occupations, birth and death dates, city countries, creators of works) from
which the pools of eligible related entities are built (film directors for films,
record labels for albums, living politicians of a country for mayors...).

Everything else about an entity (its facts, its article) is a pure function of
(world, entity index), computed on demand by :mod:`.facts` and
:mod:`.wikitext_pages`, so a builder can render shards in parallel and memory
stays small: about 0.5 kB per entity. Every random choice uses
``KeyedRng(seed, kind, index, what)``. Names come from :mod:`.naming`, dates
from :mod:`.dates`.

Page units: ``render_unit(world, unit)`` (:mod:`.wikitext_pages`) for
``unit in range(len(world))`` renders, in order, one unit per entity (its article plus its alias redirects), then one per
disambiguation page, then one per list page. Disambiguation and list pages count
within ``articles``: the number of entities is chosen so that entities +
disambiguation + list pages is close to ``articles`` (within a few percent, for
``articles`` of a few hundred and more).
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable
from dataclasses import dataclass

from stillweb.corpora.errors import UsageError
from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.synthetic import names as nm
from stillweb.corpora.synthetic.choices import Chooser, SmallChoices
from stillweb.corpora.synthetic.dates import PRESENT_YEAR, encode_date, keyed_date
from stillweb.corpora.synthetic.naming import NAMERS, work_name

__all__ = ["KINDS", "World", "ListPage", "generate_world", "MIN_ARTICLES"]

# Entity kinds, in generation order (a kind may use the names of earlier kinds).
KINDS = ("country", "city", "person", "university", "company", "award", "book", "film", "album", "event")
# Share of entities per kind, and the minimum count that keeps every pool non-empty.
_SHARES = {
    "country": 0.004, "city": 0.10, "person": 0.42, "university": 0.03, "company": 0.08,
    "award": 0.016, "book": 0.10, "film": 0.10, "album": 0.10, "event": 0.05,
}
_MINIMUMS = {
    "country": 4, "city": 12, "person": 40, "university": 3, "company": len(nm.INDUSTRIES),
    "award": len(nm.AWARD_FIELDS), "book": 3, "film": 3, "album": 3, "event": 2,
}
# Disambiguation and list pages come to about this fraction of the entities.
_EXTRA_PAGE_RATIO = 0.05
MIN_ARTICLES = 1  # below ~100 the world is the smallest one that fills every pool (~80 pages)
WORK_KINDS = ("book", "film", "album")
WORK_QUALIFIERS = {"book": "book", "film": "film", "album": "album"}
CREATOR_OCCUPATIONS = {"book": ("writer",), "film": ("film director",), "album": ("musician", "singer")}
FILMS_FOR_LIST_PAGE = 3


@dataclass(frozen=True)
class ListPage:
    """A "List of ..." page: its title, an introduction and the listed entities."""

    title: str
    intro: str
    items: tuple[int, ...]


def generate_world(articles: int, seed: int) -> "World":
    """Build the fictional world with about ``articles`` article pages.

    ``articles`` counts entity articles plus disambiguation and list pages
    (redirects are extra); below about 100 the result is the smallest world in
    which every role has candidates (about 80 pages). Raises ``ValueError`` for
    ``articles < 1`` and ``TypeError`` for non-integer arguments.
    """
    if isinstance(articles, bool) or not isinstance(articles, int):
        raise TypeError(f"articles must be an int, got {articles!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {seed!r}")
    if articles < MIN_ARTICLES:
        raise UsageError(f"articles must be >= {MIN_ARTICLES}, got {articles}")
    return World(articles, seed)


def _kind_counts(articles: int) -> dict[str, int]:
    entities = articles / (1.0 + _EXTRA_PAGE_RATIO)
    return {kind: max(_MINIMUMS[kind], round(entities * _SHARES[kind])) for kind in KINDS}


class World:
    """A generated world. Use :func:`generate_world` to build one.

    ``len(world)`` is the number of page units; ``render_unit(world, unit)`` and
    ``world_pages(world)`` (:mod:`.wikitext_pages`) render them, and
    ``iter_true_facts(world)`` (:mod:`.facts`) is the ground truth stated by the infoboxes.
    """

    def __init__(self, articles: int, seed: int) -> None:
        self.seed = seed
        self.articles = articles
        self.counts = _kind_counts(articles)
        self.offsets: dict[str, int] = {}
        total = 0
        for kind in KINDS:
            self.offsets[kind] = total
            total += self.counts[kind]
        self._offset_list = [self.offsets[kind] for kind in KINDS]
        self.entity_count = total
        self.names: list[str] = []  # display name per global entity id (gid)
        self.titles: list[str] = []  # page title per gid
        self.full_names: dict[int, str] = {}  # persons with a middle name
        self.aliases: dict[int, str] = {}  # gid -> redirect title
        self.award_first_year: list[int] | None = None  # memo of facts.award_first_years
        self._build_core_arrays()
        self._build_pools()
        self._name_entities()
        self._assign_titles()
        self._assign_aliases()
        self._build_list_pages()

    # ----- addressing -------------------------------------------------------------------
    def gid(self, kind: str, index: int) -> int:
        """The global entity id of entity ``index`` of ``kind``."""
        return self.offsets[kind] + index

    def locate(self, gid: int) -> tuple[str, int]:
        """(kind, index within the kind) of a global entity id."""
        position = bisect.bisect_right(self._offset_list, gid) - 1
        kind = KINDS[position]
        return kind, gid - self._offset_list[position]

    def rng(self, kind: str, index: int, what: str) -> KeyedRng:
        """The keyed random stream of one decision about one entity."""
        return KeyedRng(self.seed, kind, index, what)

    def link(self, gid: int) -> str:
        """A wikitext link to an entity, piped to its name when the title is qualified."""
        title, name = self.titles[gid], self.names[gid]
        return f"[[{title}]]" if title == name else f"[[{title}|{name}]]"

    # ----- page units --------------------------------------------------------------------
    def __len__(self) -> int:
        return self.entity_count + len(self.disambiguations) + len(self.list_pages)

    # ----- construction --------------------------------------------------------------------
    def _build_core_arrays(self) -> None:
        """Per-entity attributes that other entities' relations depend on."""
        counts = self.counts
        n_countries, n_cities = counts["country"], counts["city"]
        self.city_country = array("l", range(n_countries))  # city i < n_countries is country i's capital
        for i in range(n_countries, n_cities):
            self.city_country.append(self.rng("city", i, "country").integer(0, n_countries - 1))
        self.occupation = array("b")
        self.birth = array("l")
        self.death = array("l")
        self.birth_city = array("l")
        for i in range(counts["person"]):
            self._add_person_core(i)
        n_industries = len(nm.INDUSTRIES)
        self.industry = array(
            "b",
            (i if i < n_industries else self.rng("company", i, "industry").integer(0, n_industries - 1)
             for i in range(counts["company"])),
        )
        n_fields = len(nm.AWARD_FIELDS)
        self.award_field = array(
            "b",
            (i if i < n_fields else self.rng("award", i, "field").integer(0, n_fields - 1)
             for i in range(counts["award"])),
        )

    def _add_person_core(self, i: int) -> None:
        rng = self.rng("person", i, "life")
        drawn_occupation = rng.weighted_choice(range(len(nm.OCCUPATIONS)), nm.OCCUPATION_WEIGHTS)
        self.occupation.append(i if i < len(nm.OCCUPATIONS) else drawn_occupation)
        birth_year = rng.integer(1860, 2002)
        if i % 2 == 1 and self.is_married(i):  # spouses are of about the same age
            birth_year = min(2002, max(1860, self.birth[i - 1] // 10000 + rng.integer(-8, 8)))
        self.birth.append(encode_date(birth_year, rng.integer(1, 12), rng.integer(1, 28)))
        death_year = min(birth_year + rng.integer(30, 95), PRESENT_YEAR - 1)
        dies = birth_year < 1930 or rng.chance(0.15)
        self.death.append(keyed_date(rng, death_year, death_year) if dies and death_year - birth_year >= 30 else 0)
        self.birth_city.append(rng.integer(0, self.counts["city"] - 1))

    def is_married(self, person: int) -> bool:
        """Persons 2k and 2k+1 are married to each other when this keyed draw says so."""
        partner = person ^ 1
        if partner >= self.counts["person"]:
            return False
        return self.rng("person", person & ~1, "married").chance(0.3)

    def _build_pools(self) -> None:
        """Indices of entities eligible for each role, each list in index order."""
        self.occupation_pool: list[list[int]] = [[] for _ in nm.OCCUPATIONS]
        for i, occupation in enumerate(self.occupation):
            self.occupation_pool[occupation].append(i)
        politician = nm.OCCUPATIONS.index("politician")
        self.living_politicians: dict[int, list[int]] = {}
        for i in self.occupation_pool[politician]:
            if not self.death[i]:
                self.living_politicians.setdefault(self.city_country[self.birth_city[i]], []).append(i)
        self.industry_pool: list[list[int]] = [[] for _ in nm.INDUSTRIES]
        for i, industry in enumerate(self.industry):
            self.industry_pool[industry].append(i)
        self.award_pool: list[list[int]] = [[] for _ in nm.AWARD_FIELDS]
        for i, field in enumerate(self.award_field):
            self.award_pool[field].append(i)
        self.creator_pool: dict[str, list[int]] = {
            kind: sorted(i for occ in occupations for i in self.occupation_pool[nm.OCCUPATIONS.index(occ)])
            for kind, occupations in CREATOR_OCCUPATIONS.items()
        }
        self.creator: dict[str, array] = {}
        self.works_by_creator: dict[int, list[int]] = {}  # person index -> work gids
        for kind in WORK_KINDS:
            pool = self.creator_pool[kind]
            creators = array("l", (self.rng(kind, i, "creator").choice(pool) for i in range(self.counts[kind])))
            self.creator[kind] = creators
            for i, person in enumerate(creators):
                self.works_by_creator.setdefault(person, []).append(self.gid(kind, i))

    def _name_entities(self) -> None:
        """Names, unique except for the deliberate collisions."""
        self._groups: dict[str, list[int]] = {}
        for kind in KINDS:
            namer = NAMERS.get(kind, work_name)
            for i in range(self.counts[kind]):
                gid = self.gid(kind, i)
                name = self._collision_name(kind, i) or self._fresh_name(namer, kind, i)
                self.names.append(name)
                self._groups.setdefault(name, []).append(gid)
        self.demonyms = [nm.demonym(self.names[self.gid("country", i)]) for i in range(self.counts["country"])]

    def _fresh_name(self, namer: Callable[["World", Chooser, int, int], str], kind: str, i: int) -> str:
        rng = SmallChoices(self.rng(kind, i, "name"))
        attempt = 0
        while True:
            name = namer(self, rng, i, attempt)
            if name not in self._groups:
                return name
            attempt += 1

    def _collision_name(self, kind: str, i: int) -> str | None:
        """The name of an earlier entity this one deliberately shares, or None."""
        chance = {"person": 0.03, "city": 0.06, "film": 0.03, "album": 0.03}.get(kind)
        if chance is None or i == 0:
            return None
        rng = self.rng(kind, i, "collision")
        if not rng.chance(chance):
            return None
        if kind in ("film", "album"):  # share the title of an earlier work of another kind
            earlier = WORK_KINDS[: WORK_KINDS.index(kind)]
            other = rng.choice(earlier)
            target = self.gid(other, rng.integer(0, self.counts[other] - 1))
        else:
            target = self.gid(kind, rng.integer(0, i - 1))
        name = self.names[target]
        group = self._groups[name]
        own = self._qualifier(self.gid(kind, i))
        if len(group) >= 3 or any(self._qualifier(member) == own for member in group):
            return None
        return name

    def _qualifier(self, gid: int) -> str:
        """What tells an entity apart from namesakes: occupation, country or work type."""
        kind, i = self.locate(gid)
        if kind == "person":
            return nm.OCCUPATIONS[self.occupation[i]]
        if kind == "city":
            return self.names[self.gid("country", self.city_country[i])]
        return WORK_QUALIFIERS.get(kind, kind)

    def _assign_titles(self) -> None:
        self.disambiguations: list[tuple[str, tuple[int, ...]]] = []
        self.titles = list(self.names)
        for name, group in self._groups.items():
            if len(group) > 1:
                for gid in group:
                    self.titles[gid] = f"{name} ({self._qualifier(gid)})"
                self.disambiguations.append((name, tuple(group)))
        self.disambiguations.sort(key=lambda item: item[1][0])

    def _assign_aliases(self) -> None:
        """Redirect titles: full names, official names, former names, abbreviations."""
        taken = set(self.titles) | set(self._groups)
        for gid in range(self.entity_count):
            alias = self._alias_candidate(gid)
            if alias and alias not in taken:
                taken.add(alias)
                self.aliases[gid] = alias

    def _alias_candidate(self, gid: int) -> str | None:
        kind, i = self.locate(gid)
        if kind == "person":
            return self.full_names.get(gid)
        if kind == "country":
            form = self.rng(kind, i, "official_name").choice(("Republic", "Kingdom", "Federation", "Commonwealth"))
            return f"{form} of {self.names[gid]}"
        if kind == "university":
            initials = "".join(part[0] for part in self.names[gid].split() if part[0].isupper())
            return initials if len(initials) >= 3 else None
        if kind in ("company", "city"):
            rng = self.rng(kind, i, "former_name")
            if rng.chance(0.2):
                return nm.place_name(rng) if kind == "city" else f"{nm.family_name(rng)} {rng.choice(('Works', 'Union', 'Brothers'))}"
        return None

    def _build_list_pages(self) -> None:
        self.list_pages: list[ListPage] = []
        self.list_of: dict[int, list[str]] = {}  # gid -> titles of list pages about it
        cities_in: dict[int, list[int]] = {}
        for i, country in enumerate(self.city_country):
            cities_in.setdefault(country, []).append(self.gid("city", i))
        universities_in: dict[int, list[int]] = {}
        for i in range(self.counts["university"]):
            universities_in.setdefault(self.city_country[self.university_city(i)], []).append(self.gid("university", i))
        for country in range(self.counts["country"]):
            name = self.names[self.gid("country", country)]
            for noun, members in (("cities", cities_in.get(country, [])), ("universities", universities_in.get(country, []))):
                if len(members) >= 2:
                    self._add_list_page(
                        self.gid("country", country),
                        f"List of {noun} in {name}",
                        f"This is a list of {noun} in [[{name}]].",
                        members,
                    )
        for person in self.creator_pool["film"]:
            films = self.works_by_creator.get(person, [])
            if len(films) >= FILMS_FOR_LIST_PAGE:
                films = sorted(films, key=lambda gid: (self.work_date("film", gid - self.offsets["film"]), gid))
                gid = self.gid("person", person)
                self._add_list_page(
                    gid,
                    f"List of films directed by {self.names[gid]}",
                    f"This is a list of feature films directed by {self.link(gid)}, in order of release.",
                    films,
                )

    def _add_list_page(self, about: int, title: str, intro: str, items: list[int]) -> None:
        self.list_pages.append(ListPage(title, intro, tuple(items)))
        self.list_of.setdefault(about, []).append(title)

    # ----- keyed attributes shared by naming and facts --------------------------------------
    def university_city(self, i: int) -> int:
        """The city (index) a university is located in."""
        return self.rng("university", i, "city").integer(0, self.counts["city"] - 1)

    def active_years(self, person: int, start_age: int) -> tuple[int, int]:
        """(first, last) year a person could have produced work or founded something."""
        birth_year = self.birth[person] // 10000
        last = self.death[person] // 10000 if self.death[person] else PRESENT_YEAR - 1
        return birth_year + start_age, max(birth_year + start_age, last)

    def work_date(self, kind: str, i: int) -> int:
        """The YYYYMMDD publication or release date of book, film or album ``i``:
        while its creator was alive and at least 20."""
        first, last = self.active_years(self.creator[kind][i], 20)
        return keyed_date(self.rng(kind, i, "date"), first, last)

    def event_place_and_date(self, i: int) -> tuple[int, int]:
        """(city index, YYYYMMDD date) of an event."""
        rng = self.rng("event", i, "when_where")
        return rng.integer(0, self.counts["city"] - 1), keyed_date(rng, 1850, PRESENT_YEAR - 1)

    def event_type(self, i: int) -> str:
        """The kind of event (Marathon, Summit...)."""
        return self.rng("event", i, "type").choice(nm.EVENT_TYPES)
