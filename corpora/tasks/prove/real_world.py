"""What a fact must be for a question to say it of the real world (issue 49 item 2).

The uniqueness proof holds over the snapshot; a question must also be true of the world its reader
knows. The reviewed table ``corpora/tasks/prove/real_world.toml`` says:

- **time-varying relations** (population, GDP, HDI, a head of state, an anthem) are said only with the year
  their source gives, read from the infobox's qualifier field on the same page (``GDP_nominal_year`` is read
  as ``gross_domestic_product_as_of``): :func:`dated_years` pairs each such fact with its year, and
  :func:`refusal` refuses the ones without (``time_varying_without_year``);
- **placeholders** ("Unknown first wife", "N/A", "?") and **compound values** ("GBP; Pound sign£") are never
  constants or answers (``placeholder``, ``compound_value``);
- a **backward verb** holds only of some subjects (a country is "home to" a city, not to a novel):
  :func:`backward_fits`;
- a **named work** is said with its kind and year ("the 1992 novel Deep Trouble", :func:`titled_work`), since
  several works share most titles, or not at all (``ambiguous_title``).

Refusals are counted by reason on the task card (``fact refused: ...``), as the fact graph's others are.
DBpedia's ``populationAsOf`` / ``grossDomesticProductAsOf`` properties are the same pairing of a figure and
its year.

>>> is_placeholder("Unknown first wife"), is_placeholder("N/A"), is_placeholder("Kabul")
(True, True, False)
>>> is_compound("GBP; Pound sign£"), is_compound("Pound sterling")
(True, False)
"""

from __future__ import annotations

import re
import tomllib
from collections import defaultdict
from functools import cache
from pathlib import Path

from stillweb.corpora.tasks.types import entity_classes, role_classes
from stillweb.corpora.wikitext.mapping import infobox_mapping

__all__ = ["PLAUSIBLE", "REAL_WORLD_PATH", "time_varying", "dated_years", "is_placeholder", "is_compound", "value_refusal",
           "backward_fits", "titled_work", "work_kind_and_year", "constant_refusal"]

REAL_WORLD_PATH = Path(__file__).resolve().parent / "real_world.toml"
# The largest values the real world has (world population 8.1 billion, Russia's 17.1 million km², the
# world's GDP about US$105 trillion, HDI and Gini in [0, 1] or [0, 100]): a value beyond is a misread
# ("2,565,000,000,000,000" for the UK's GDP) and never stated in a question (graph.refusal: implausible_value).
PLAUSIBLE = {
    "population": (0, 9e9), "population_total": (0, 9e9), "area_km2": (0, 1.5e8), "area_land_km2": (0, 1.5e8),
    "area_water_km2": (0, 1.5e8), "gross_domestic_product": (1e6, 1.2e14), "gdp_per_capita": (50, 3e5),
    "human_development_index": (0, 1), "gini_coefficient": (0, 100), "percentage_of_area_water": (0, 100),
    "population_density_per_km2": (0, 1e5), "elevation_m": (-500, 9000), "weight_kg": (0.5, 700),
    "height_m": (0.3, 3), "employees": (1, 1e7), "students": (1, 1e6), "runtime": (1, 1500), "pages": (1, 1e5),
}
_FOUR_DIGIT_YEAR_RE = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")


@cache
def _data() -> dict:
    with open(REAL_WORLD_PATH, "rb") as handle:
        return tomllib.load(handle)


def time_varying() -> dict[str, tuple[str, ...]]:
    """Time-varying relation -> the qualifier relations that may give its year (empty: none can)."""
    return {relation: tuple(qualifiers) for relation, qualifiers in _data()["time_varying"].items()}


def _year_of_qualifier(fact) -> int | None:
    """The one year a qualifier or date fact gives ("2016", "2016 estimate", a date), else None."""
    if fact.date and fact.date[:4].isdigit():
        return int(fact.date[:4])
    years = set(_FOUR_DIGIT_YEAR_RE.findall(fact.value))
    return int(years.pop()) if len(years) == 1 else None


def dated_years(facts) -> dict[int, int]:
    """Fact index -> the year its source gives, for the facts of time-varying relations that have one:
    the subject's first listed qualifier present, with a single year, and the relation stated once on the
    page (two population figures beside one year say nothing of which the year dates)."""
    table = time_varying()
    wanted = {q for qualifiers in table.values() for q in qualifiers}
    qualifiers: defaultdict[tuple[int, str], set[int | None]] = defaultdict(set)
    stated: defaultdict[tuple[int, str], list[int]] = defaultdict(list)
    for fact in facts:
        if fact.relation in wanted:
            qualifiers[fact.subject, fact.relation].add(_year_of_qualifier(fact))
        if fact.relation in table:
            stated[fact.subject, fact.relation].append(fact.index)
    years: dict[int, int] = {}
    for (subject, relation), indexes in sorted(stated.items()):
        found = next((qualifiers[subject, q] for q in table[relation] if (subject, q) in qualifiers), None)
        if len(indexes) == 1 and found is not None and len(found) == 1 and None not in found:
            years[indexes[0]] = next(iter(found))
    return years


def is_placeholder(value: str) -> bool:
    """True for a value standing for no value ("Unknown", "N/A", "none", "?", "Unknown first wife")."""
    text = " ".join(value.split()).lower()
    spec = _data()["placeholders"]
    return not text or text in spec["values"] or text.startswith(tuple(spec["prefixes"])) or "?" in text


def is_compound(value: str) -> bool:
    """True for two values read as one ("GBP; Pound sign£")."""
    return any(mark in value for mark in _data()["compound"]["marks"])


def value_refusal(fact, year: int | None, real: bool = True) -> str | None:
    """Why the fact's value cannot be said of the real world (``year``: the one :func:`dated_years` gave it;
    ``real``: False for a synthetic world, whose figures are timeless: only placeholders and compounds count)."""
    if fact.value_type in ("text", "entity") and is_placeholder(fact.value):
        return "placeholder"
    if fact.value_type in ("text", "entity") and is_compound(fact.value):
        return "compound_value"
    if real and fact.relation in _data()["time_varying"] and year is None:
        return "time_varying_without_year"
    return None


def backward_fits(relation: str, subject_classes: frozenset[str] | None) -> bool:
    """True when the relation's backward phrase holds of a subject of these classes (see the table)."""
    domain = _data()["backward_domain"].get(relation)
    if domain is None:
        return True
    return bool(subject_classes) and bool(subject_classes & frozenset(domain))


def _is_work(classes: frozenset[str] | None) -> bool:
    return bool(classes) and classes <= frozenset(_data()["named"]["work_classes"])


def work_kind_and_year(graph, entity: int) -> tuple[str, int | None] | None:
    """(its kind, its first year) for a work page ("novel", 1992; the year None when no fact gives one), None
    for anything that is not a work: what a question names a work by, in any language."""
    if not graph.is_page(entity) or not _is_work(entity_classes(graph, entity)):
        return None
    relations = _data()["named"]["work_years"]
    years = sorted({y for i in graph.all_literals_of(entity) if graph.facts[i].relation in relations
                    and (y := _year_of_qualifier(graph.facts[i])) is not None})
    return infobox_mapping().noun(graph.template_of(entity)) or "work", years[0] if years else None


def titled_work(graph, entity: int, label: str) -> str | None:
    """"the 1992 novel Deep Trouble" for a work page with a year among its facts; the label unchanged for
    anything that is not a work; None for a work no year tells apart (see the module docstring)."""
    work = work_kind_and_year(graph, entity)
    if work is None:
        return label
    noun, year = work
    return None if year is None else f"the {year} {noun} {label}"


def constant_refusal(graph, relation: str, other: int, other_is_subject: bool) -> str | None:
    """Why ``other``, one end of a ``relation`` edge, cannot be named as a constant: ``placeholder`` and
    ``compound_value`` (its name), ``ambiguous_title`` (a work without a year, or a named work without a
    page), else None. Common personal names are not detected: the snapshot has no list of them."""
    label = graph.label_of(other)
    if is_placeholder(label):
        return "placeholder"
    if is_compound(label):
        return "compound_value"
    if not graph.real:  # a synthetic world's titles name one thing each
        return None
    if graph.is_page(other):
        return "ambiguous_title" if titled_work(graph, other, label) is None else None
    classes = role_classes(relation, other_is_subject) or entity_classes(graph, other)
    return "ambiguous_title" if _is_work(classes) else None
