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

__all__ = ["date_forms", "number_forms", "value_forms", "number_text", "range_text", "grouped_number"]

_MAGNITUDES = ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"))


def number_text(number: float) -> str:
    """A number as a person writes it: separators below a million, magnitude words above.

    >>> number_text(2565000000000.0), number_text(181710000000.0), number_text(12000.0), number_text(36.5)
    ('2.565 trillion', '181.71 billion', '12,000', '36.5')
    """
    for scale, word in _MAGNITUDES:
        if abs(number) >= scale:
            return f"{round(number / scale, 3):,.3f}".rstrip("0").rstrip(".") + f" {word}"
    return grouped_number(number)


def grouped_number(number: float) -> str:
    """A number with thousands separators, a whole one without its ".0": "2,392,976", "36.5"."""
    return f"{int(number):,}" if number == int(number) else f"{number:,}"


def range_text(low: float, high: float) -> str:
    """A range with one magnitude word when both ends share it: "90–140 billion", "50,000–70,000"."""
    for scale, word in _MAGNITUDES:
        if abs(low) >= scale and abs(high) >= scale:
            return f"{number_text(low / scale * 1.0).split(' ')[0]}–{number_text(high / scale)} {word}"
    return f"{number_text(low)}–{number_text(high)}"



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
    if abs(number) >= 1e6:
        forms.append(number_text(number))  # "2.565 trillion"
    return list(dict.fromkeys(forms))


def value_forms(value: str, date: str | None, number: float | None) -> list[str]:
    """The value as written, then its date and number forms, without duplicates."""
    forms = [value]
    if date:
        forms.extend(date_forms(date))
    if number is not None:
        forms.extend(number_forms(number))
    return [f for f in dict.fromkeys(forms) if f]
