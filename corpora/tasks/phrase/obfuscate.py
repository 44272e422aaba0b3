"""WebSailor-style obfuscation of constants, seeded and recorded as reversible transforms.

- exact dates and years become periods ("in the early 1990s", "in the 1870s",
  "in the first decade of the 21st century");
- quantities become ranges ("50,000–100,000", read with the relation's unit);
- names of intermediate entities become descriptions (done by composition,
  which replaces the constant by a described variable; see ``compose.py``).

Each obfuscating function returns the :class:`Condition` the proof will use and
the :class:`~stillweb.corpora.tasks.store.record.Obfuscation` (kind, relation, original,
obfuscated, bounds) from which the original constant can be restored.
"""

from __future__ import annotations

import math

from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.snapshot.records import Fact
from stillweb.corpora.tasks.graph import fact_year, normalize_text
from stillweb.corpora.tasks.query import Condition
from stillweb.corpora.tasks.store.record import Obfuscation
from stillweb.corpora.tasks.phrase.value_forms import grouped_number, range_text

__all__ = ["exact_condition", "obfuscated_condition", "year_period", "number_range"]

_ORDINALS = {1: "first", 2: "second"}


def exact_condition(fact: Fact, label: str, entity: int = -1) -> Condition:
    """The unobfuscated condition stating ``fact``'s value: the ``entity`` at the
    fact's other end (edges), an exact date, or the text value."""
    if fact.is_edge:
        return Condition("entity", (label,), entities=(entity,))
    if fact.date and len(fact.date) == 10:
        return Condition("date", (label,), keys=("date:" + fact.date,))
    return Condition("text", (label,), keys=(normalize_text(fact.value),))


def obfuscated_condition(fact: Fact, rng: KeyedRng) -> tuple[Condition, Obfuscation] | None:
    """A period or range condition for a date/year/number fact, with its transform; else None."""
    year = fact_year(fact)
    if year is not None and year > 0:
        low, high, phrase = year_period(year, rng)
        cond = Condition("year_range", (phrase,), low=low, high=high, phrase=f"in {phrase}")
        return cond, _transform("date_to_period", fact, phrase, low, high)
    if fact.value_type == "number" and fact.number is not None and fact.number > 0:
        low, high, label = number_range(fact.number, rng)  # the formalization keeps digits the verifier reads
        cond = Condition("number_range", (label,), low=low, high=high, phrase=range_text(low, high))
        return cond, _transform("number_to_range", fact, label, low, high)
    return None


def year_period(year: int, rng: KeyedRng) -> tuple[int, int, str]:
    """A period containing ``year``: (first year, last year, phrase)."""
    decade = year - year % 10
    style = rng.integer(0, 2)
    if style == 0:
        part = year % 10
        name, low, high = (("early", 0, 3), ("mid", 4, 6), ("late", 7, 9))[0 if part <= 3 else 1 if part <= 6 else 2]
        return decade + low, decade + high, f"the {name} {decade}s"
    if style == 1:
        return decade, decade + 9, f"the {decade}s"
    if year >= 2000 and year < 2020:  # "the first decade of the 21st century"
        index = (year - 2000) // 10 + 1
        return 2000 + (index - 1) * 10, 2000 + index * 10 - 1, f"the {_ORDINALS[index]} decade of the 21st century"
    century = year // 100 + 1
    half = "first" if year % 100 < 50 else "second"
    low = (century - 1) * 100 + (0 if half == "first" else 50)
    return low, low + 49, f"the {half} half of the {_ordinal(century)} century"


def number_range(number: float, rng: KeyedRng) -> tuple[float, float, str]:
    """A rounded range containing ``number``, at most twice as wide as its low end: (low, high, phrase)."""
    magnitude = 10 ** max(0, math.floor(math.log10(number)) - rng.integer(0, 1))
    low = math.floor(number / magnitude) * magnitude
    widths = [k for k in (1, 2, 5) if low + magnitude * k <= 2 * low] or [1]  # at most 2x wide: still a clue
    high = low + magnitude * rng.choice(widths)  # low >= magnitude, so width 1 always fits and high > number
    phrase = f"{grouped_number(low)}–{grouped_number(high)}"  # questions say range_text: "90–140 billion"
    return float(low), float(high), phrase


def _transform(kind: str, fact: Fact, phrase: str, low: float, high: float) -> Obfuscation:
    return Obfuscation(kind, fact.relation, fact.value, phrase, low=low, high=high)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
