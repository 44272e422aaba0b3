"""Dates in wikitext: date templates, written dates, and typing a plain value.

>>> classify_value("February 12, 1809")
('date', '1809-02-12', None, '1809-02-12')
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

from mwparserfromhell.nodes import Template

__all__ = ["Date", "DATE_TEMPLATES", "MONTH_NAMES", "MONTH_NUMBERS", "classify_value", "make_date", "parse_date_text", "template_date"]


def classify_value(text: str, relation: str = "") -> tuple[str, str, float | None, str | None]:
    """Type a plaintext infobox value: ``(value_type, value, number, date)``.

    ISO, ``February 12, 1809`` and ``12 February 1809`` dates become ``"date"``
    with an ISO value; a bare 4-digit year (or up to 4 digits in a date-like
    field such as ``founded``) becomes ``"year"``; ``1,234,567`` or ``123.4``
    becomes ``"number"`` with its canonical string; anything else is ``"text"``.
    """
    value = text.strip()
    parsed = parse_date_text(value)
    if parsed is not None:
        return parsed.value_type, parsed.iso, None, parsed.iso
    if _YEAR_RE.fullmatch(value) and (len(value) == 4 or _YEARISH_FIELD_RE.search(relation)):
        year = f"{int(value):04d}"
        return "year", year, None, year
    if _NUMBER_RE.fullmatch(value):
        number = float(value.replace(",", "").replace("\u2212", "-"))
        canonical = str(int(number)) if number.is_integer() and abs(number) < 1e15 else repr(number)
        return "number", canonical, number, None
    return "text", value, None, None


@dataclass(frozen=True)
class Date:
    """A date read from a template or text; month and day may be unknown."""

    year: int
    month: int | None = None
    day: int | None = None
    day_first: bool = False

    @property
    def value_type(self) -> str:
        if self.day is not None:
            return "date"
        return "year" if self.month is None else "text"

    @property
    def iso(self) -> str:
        """``YYYY-MM-DD`` for full dates, ``YYYY`` for years, readable otherwise."""
        if self.day is not None:
            return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"
        return f"{self.year:04d}" if self.month is None else self.readable

    @property
    def readable(self) -> str:
        if self.month is None:
            return str(self.year)
        month = MONTH_NAMES[self.month - 1]
        if self.day is None:
            return f"{month} {self.year}"
        return f"{self.day} {month} {self.year}" if self.day_first else f"{month} {self.day}, {self.year}"

    @property
    def chinese(self) -> str:
        """As Chinese writes it: ``1809年2月12日``, ``1861年3月``, ``1852年``."""
        return f"{self.year}年" + (f"{self.month}月" if self.month else "") + (f"{self.day}日" if self.day else "")


MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
# Month names and abbreviations (lower case) -> month number: what dates in wikitext and answers use.
MONTH_NUMBERS = {name.lower(): i for i, name in enumerate(MONTH_NAMES, 1)}
MONTH_NUMBERS.update({name[:3].lower(): i for i, name in enumerate(MONTH_NAMES, 1)})
MONTH_NUMBERS["sept"] = 9

_ISO_DATE_RE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_MDY_RE = re.compile(r"([A-Za-z]+)\.? (\d{1,2}),? (\d{1,4})")
_DMY_RE = re.compile(r"(\d{1,2}) ([A-Za-z]+)\.?,? (\d{1,4})")
_MY_RE = re.compile(r"([A-Za-z]+)\.?,? (\d{3,4})")
_CHINESE_DATE_RE = re.compile(r"(?:公元)?(\d{1,4})\s*年(?:\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号號])?)?")
_TIME_OF_DAY_RE = re.compile(r",?\s*\d{1,2}:\d{2}(?::\d{2})?(?:\s*(?:UTC|GMT|[AP]M))?\s*$", re.IGNORECASE)
_YEAR_RE = re.compile(r"\d{1,4}")
_NUMBER_RE = re.compile(r"[-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_YEARISH_FIELD_RE = re.compile(r"year|date|founded|established|formed|opened|built|released|born|died")


def make_date(year: str | int, month: str | int | None, day: str | int | None, day_first: bool = False) -> Date | None:
    """Validate date parts (month as number or name); ``None`` if not a real date."""
    try:
        y = int(year)
        if month is None or str(month).strip() == "":
            return Date(y) if 0 < y <= 9999 else None
        m = int(month) if str(month).strip().isdigit() else MONTH_NUMBERS.get(str(month).strip().lower().rstrip("."))
        if m is None:
            return None
        if day is None or str(day).strip() == "":
            datetime.date(y, m, 1)
            return Date(y, m)
        d = int(day)
        datetime.date(y, m, d)
        return Date(y, m, d, day_first)
    except (ValueError, TypeError, OverflowError):
        return None


def parse_date_text(text: str) -> Date | None:
    """Read an ISO, month-day-year, day-month-year, month-year or Chinese (``1809年2月12日``) date from text."""
    text = text.strip()
    if match := _ISO_DATE_RE.fullmatch(text):
        return make_date(match[1], match[2], match[3])
    if match := _MDY_RE.fullmatch(text):
        return make_date(match[3], match[1], match[2])
    if match := _DMY_RE.fullmatch(text):
        return make_date(match[3], match[2], match[1], day_first=True)
    if match := _MY_RE.fullmatch(text):
        return make_date(match[2], match[1], None)
    if match := _CHINESE_DATE_RE.fullmatch(text):
        return make_date(match[1], match[2], match[3])
    return None


DATE_TEMPLATES = frozenset({
    "birth date", "birth date and age", "bda", "dob", "death date", "death date and age", "dda",
    "start date", "start date and age", "end date", "end date and age", "film date", "date",
    "dts", "birth year and age", "death year and age", "birth year", "death year",
    "birth-date", "death-date", "birth-date and age", "death-date and age", "start-date", "end-date",
})  # fmt: skip


def template_date(name: str, template: Template) -> Date | None:
    """The date a date template shows (``{{birth date|1809|2|12}}`` -> 1809-02-12)."""
    args = [str(param.value).strip() for param in template.params if not param.showkey]
    day_first = template.has("df") and str(template.get("df").value).strip().lower() in ("y", "yes", "1")
    if not args:
        return None
    if len(args) == 1 or not args[0].lstrip("-").isdigit():
        text = _TIME_OF_DAY_RE.sub("", args[0])  # {{start-date|July 16, 1969, 13:32:00}}
        return parse_date_text(text) or make_date(text, None, None)
    if name.startswith(("birth year", "death year")):
        return make_date(args[0], None, None)
    parts = (args + ["", ""])[:3]
    return make_date(parts[0], parts[1], parts[2], day_first)
