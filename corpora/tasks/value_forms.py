"""Alternative surface forms of values: dates and numbers written several ways.

Used twice: answers get these forms as aliases, and evidence checking accepts
a fact when any form of its value appears in the evidence document.

>>> date_forms("1992-03-04")
['1992-03-04', '4 March 1992', 'March 4, 1992']
>>> number_forms(12000.0)
['12,000', '12000']
"""

from __future__ import annotations

from stillweb.corpora.wikitext.dates import MONTH_NAMES

__all__ = ["date_forms", "number_forms", "value_forms"]



def date_forms(iso: str) -> list[str]:
    """Forms of an ISO date (``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY``), ISO first."""
    parts = iso.split("-")
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        return [iso]
    if len(numbers) == 3 and 1 <= numbers[1] <= 12:
        year, month, day = numbers
        name = MONTH_NAMES[month - 1]
        return [iso, f"{day} {name} {year}", f"{name} {day}, {year}"]
    if len(numbers) == 2 and 1 <= numbers[1] <= 12:
        return [iso, f"{MONTH_NAMES[numbers[1] - 1]} {numbers[0]}"]
    return [iso]


def number_forms(number: float) -> list[str]:
    """Forms of a number: with thousands separators, then plain."""
    if number == int(number):
        whole = int(number)
        forms = [f"{whole:,}", str(whole)]
    else:
        forms = [f"{number:,}", repr(number)]
    return list(dict.fromkeys(forms))


def value_forms(value: str, date: str | None, number: float | None) -> list[str]:
    """The value as written, then its date and number forms, without duplicates."""
    forms = [value]
    if date:
        forms.extend(date_forms(date))
    if number is not None:
        forms.extend(number_forms(number))
    return [f for f in dict.fromkeys(forms) if f]
