"""Wikitext -> clean plaintext, links, categories and typed infobox facts.

:func:`parse_page` is the one entry point: it parses a page once with
mwparserfromhell (C tokenizer) and walks the tree once, producing

* readable plaintext: headings become their own lines after a blank line,
  references, files, navboxes, citations and infoboxes are dropped, a few
  inline templates (``{{convert}}``, ``{{lang}}``, ``{{nowrap}}``, date
  templates...) keep their readable content, tables are flattened to one line
  per row with cells joined by `` | ``;
* normalised link targets (first letter uppercase, no anchors, no namespaces)
  and categories;
* the page kind (``"disambiguation"``, ``"list"`` or ``"article"``);
* one :class:`~stillweb.corpora.records.ExtractedFact` per value of each
  infobox field, typed as entity / date / year / number / text.

The function never raises on page content: whatever the wikitext, the result is
a :class:`~stillweb.corpora.records.ParsedPage` whose text holds no wikitext
markup.

>>> page = parse_page("X", "'''X''' was born on {{birth date|1809|2|12}}.")
>>> page.text
'X was born on February 12, 1809.'
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import mwparserfromhell
from mwparserfromhell.nodes import (
    Argument,
    ExternalLink,
    Heading,
    HTMLEntity,
    Node,
    Tag,
    Template,
    Text,
    Wikilink,
)
from mwparserfromhell.parser import ParserError
from mwparserfromhell.wikicode import Wikicode

from stillweb.corpora.records import ExtractedFact, ParsedPage

__all__ = ["parse_page", "normalize_title", "classify_value"]


def parse_page(title: str, wikitext: str) -> ParsedPage:
    """Parse one article's wikitext into plaintext, links, categories and facts.

    ``title`` is the page title (used for the page kind); ``wikitext`` its source.
    Raises :class:`TypeError` only when either argument is not a string.
    """
    if not isinstance(title, str) or not isinstance(wikitext, str):
        raise TypeError(
            f"parse_page(title, wikitext) takes two strings, got {type(title).__name__} "
            f"and {type(wikitext).__name__}"
        )
    try:
        code = mwparserfromhell.parse(wikitext)
    except (ParserError, RecursionError):  # pathological nesting: keep the words
        code = Wikicode([Text(_MARKUP_RE.sub(" ", wikitext))])
    renderer = _Renderer()
    text = clean_text(renderer.render(code))
    facts: list[ExtractedFact] = []
    done = 0
    while done < len(renderer.infoboxes):  # grows when a field holds a nested infobox
        facts.extend(_infobox_facts(renderer.infoboxes[done], renderer))
        done += 1
    if renderer.disambiguation:
        kind = "disambiguation"
    elif title.startswith("List of"):
        kind = "list"
    else:
        kind = "article"
    return ParsedPage(
        title=title,
        text=text,
        kind=kind,
        links=_unique(renderer.links),
        facts=facts,
        categories=_unique(renderer.categories),
    )


def normalize_title(raw: str) -> str:
    """Normalise a link target the way MediaWiki does for namespace-0 titles.

    Drops the ``#anchor`` and a leading colon, turns underscores into spaces,
    collapses whitespace and uppercases the first letter. Returns ``""`` for a
    target that is not a valid title (empty, or with ``<>[]{}|`` in it).
    """
    target = raw.split("#", 1)[0].replace("_", " ").strip().lstrip(":").strip()
    target = _SPACES_RE.sub(" ", target)
    if not target or _INVALID_TITLE_RE.search(target):
        return ""
    return target[0].upper() + target[1:]


def classify_value(text: str, relation: str = "") -> tuple[str, str, float | None, str | None]:
    """Type a plaintext infobox value: ``(value_type, value, number, date)``.

    ISO, ``February 12, 1809`` and ``12 February 1809`` dates become ``"date"``
    with an ISO value; a bare 4-digit year (or up to 4 digits in a date-like
    field such as ``founded``) becomes ``"year"``; ``1,234,567`` or ``123.4``
    becomes ``"number"`` with its canonical string; anything else is ``"text"``.
    """
    value = text.strip()
    parsed = _parse_date_text(value)
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


# --------------------------------------------------------------------------- dates


@dataclass(frozen=True)
class _Date:
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
        month = _MONTH_NAMES[self.month - 1]
        if self.day is None:
            return f"{month} {self.year}"
        return f"{self.day} {month} {self.year}" if self.day_first else f"{month} {self.day}, {self.year}"


_MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_MONTHS = {name.lower(): i for i, name in enumerate(_MONTH_NAMES, 1)}
_MONTHS.update({name[:3].lower(): i for i, name in enumerate(_MONTH_NAMES, 1)})
_MONTHS["sept"] = 9

_ISO_DATE_RE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_MDY_RE = re.compile(r"([A-Za-z]+)\.? (\d{1,2}),? (\d{1,4})")
_DMY_RE = re.compile(r"(\d{1,2}) ([A-Za-z]+)\.?,? (\d{1,4})")
_MY_RE = re.compile(r"([A-Za-z]+)\.?,? (\d{3,4})")
_YEAR_RE = re.compile(r"\d{1,4}")
_NUMBER_RE = re.compile(r"[-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_YEARISH_FIELD_RE = re.compile(r"year|date|founded|established|formed|opened|built|released|born|died")


def _make_date(year: str | int, month: str | int | None, day: str | int | None, day_first: bool = False) -> _Date | None:
    """Validate date parts (month as number or name); ``None`` if not a real date."""
    try:
        y = int(year)
        if month is None or str(month).strip() == "":
            return _Date(y) if 0 < y <= 9999 else None
        m = int(month) if str(month).strip().isdigit() else _MONTHS.get(str(month).strip().lower().rstrip("."))
        if m is None:
            return None
        if day is None or str(day).strip() == "":
            datetime.date(y, m, 1)
            return _Date(y, m)
        d = int(day)
        datetime.date(y, m, d)
        return _Date(y, m, d, day_first)
    except (ValueError, TypeError, OverflowError):
        return None


def _parse_date_text(text: str) -> _Date | None:
    """Read an ISO, month-day-year, day-month-year or month-year date from text."""
    text = text.strip()
    if match := _ISO_DATE_RE.fullmatch(text):
        return _make_date(match[1], match[2], match[3])
    if match := _MDY_RE.fullmatch(text):
        return _make_date(match[3], match[1], match[2])
    if match := _DMY_RE.fullmatch(text):
        return _make_date(match[3], match[2], match[1], day_first=True)
    if match := _MY_RE.fullmatch(text):
        return _make_date(match[2], match[1], None)
    return None


# ------------------------------------------------------------------ template names


def _template_name(template: Template) -> str:
    """Lowercase template name without ``Template:``, underscores or extra spaces."""
    name = _SPACES_RE.sub(" ", str(template.name).replace("_", " ")).strip().lower()
    return name[9:].strip() if name.startswith("template:") else name


def _is_infobox(name: str) -> bool:
    return name.startswith("infobox") or name.endswith(" infobox") or name in _INFOBOX_LIKE


def _is_disambiguation(name: str) -> bool:
    return name in _DISAMBIGUATION or bool(_DISAMBIGUATION_RE.fullmatch(name))


_INFOBOX_LIKE = frozenset({"taxobox", "automatic taxobox", "speciesbox", "chembox", "drugbox", "geobox"})
_DISAMBIGUATION = frozenset({"dab", "disamb", "disambig", "disambiguation", "hndis", "geodis", "numberdis",
                             "mathdab", "letter-numbercombdisambig", "shipindex"})  # fmt: skip
_DISAMBIGUATION_RE = re.compile(r"[a-z]+dis|[a-z -]* disambiguation|[a-z]+ disambig")
_DATE_TEMPLATES = frozenset({
    "birth date", "birth date and age", "bda", "dob", "death date", "death date and age", "dda",
    "start date", "start date and age", "end date", "end date and age", "film date", "date",
    "dts", "birth year and age", "death year and age", "birth year", "death year",
    "birth-date", "death-date", "birth-date and age", "death-date and age", "start-date", "end-date",
})  # fmt: skip
_LIST_TEMPLATES = frozenset({
    "plainlist", "plain list", "flatlist", "flat list", "ubl", "ubil", "unbulleted list", "hlist",
    "bulleted list", "blist", "bulletlist", "ordered list", "collapsible list", "nowrap list",
})  # fmt: skip


# ------------------------------------------------------------------- the renderer


def _positional(template: Template) -> list[Wikicode]:
    return [param.value for param in template.params if not param.showkey]


def _named(template: Template, name: str) -> Wikicode | None:
    return template.get(name).value if template.has(name) else None


class _Renderer:
    """Turns a parsed tree into plaintext, collecting links, dates and infoboxes."""

    def __init__(self) -> None:
        self.links: list[str] = []
        self.categories: list[str] = []
        self.dates: list[_Date] = []
        self.infoboxes: list[Template] = []
        self.disambiguation = False

    def render(self, code: Wikicode | None) -> str:
        """Plaintext of ``code`` (markup dropped or replaced by its readable content)."""
        if code is None:
            return ""
        return "".join([self._node(node) for node in code.nodes])

    def adopt(self, child: _Renderer) -> None:
        """Take over what a renderer of a fragment of this page collected."""
        self.links.extend(child.links)
        self.categories.extend(child.categories)
        self.infoboxes.extend(child.infoboxes)
        self.disambiguation = self.disambiguation or child.disambiguation

    def _node(self, node: Node) -> str:
        if isinstance(node, Text):
            return node.value
        if isinstance(node, Wikilink):
            return self._wikilink(node)
        if isinstance(node, Template):
            return self._template(node)
        if isinstance(node, Tag):
            return self._tag(node)
        if isinstance(node, Heading):
            return "\n" + self.render(node.title).strip()  # its line break follows as text
        if isinstance(node, HTMLEntity):
            return node.normalize()
        if isinstance(node, ExternalLink):
            if node.brackets:
                return self.render(node.title) if node.title is not None else ""
            return str(node.url)
        if isinstance(node, Argument):
            return self.render(node.default)
        return ""  # Comment and anything unknown

    def _wikilink(self, link: Wikilink) -> str:
        raw = str(link.title)
        namespace = _namespace_kind(raw)
        if namespace == "category":
            if category := normalize_title(raw.split(":", 1)[1]):
                self.categories.append(category)
            return ""
        if namespace in ("file", "interlanguage"):
            return ""
        if namespace == "article" and (target := normalize_title(raw)):
            self.links.append(target)
        if link.text is None:
            return raw.lstrip(":").split(":", 1)[1] if namespace == "other" else raw.lstrip(":")
        shown = self.render(link.text)
        if not shown.strip():  # pipe trick [[Paris (France)|]] shows "Paris"
            return _PARENTHETICAL_RE.sub("", raw.lstrip(":").split(":", 1)[-1])
        return shown

    def _template(self, template: Template) -> str:
        name = _template_name(template)
        if _is_infobox(name):
            self.infoboxes.append(template)
            return ""
        if _is_disambiguation(name):
            self.disambiguation = True
            return ""
        if name in _DATE_TEMPLATES:
            date = _template_date(name, template)
            if date is None:
                return ""
            self.dates.append(date)
            return date.readable
        if name in _LIST_TEMPLATES:
            return "\n".join(self.render(item).strip() for item in _positional(template))
        if name.startswith("formatnum:"):
            return str(template.name).split(":", 1)[1].strip()
        if name.startswith("lang-"):
            args = _positional(template)
            return self.render(args[0]) if args else ""
        inline = _INLINE_TEMPLATES.get(name)
        return inline(self, template) if inline is not None else ""

    def _tag(self, tag: Tag) -> str:
        name = str(tag.tag).strip().lower()
        if name in _DROPPED_TAGS:
            return ""
        if name == "br":
            return "\n"
        if name == "table":
            return self._table(tag)
        if tag.wiki_markup:  # list markers, horizontal rules, bold/italic
            if name == "li":
                return "- "
            if name == "hr":
                return "\n"
        prefix = "\n- " if name == "li" else ""
        return prefix + self.render(tag.contents) if tag.contents is not None else ""

    def _table(self, table: Tag) -> str:
        lines: list[str] = []
        cells: list[str] = []  # cells of a first row written without "|-"
        for child in table.contents.nodes if table.contents is not None else ():
            child_name = str(child.tag).strip().lower() if isinstance(child, Tag) else ""
            if child_name in ("td", "th"):
                cells.append(self._cell(child))
                continue
            if cells:
                lines.append(" | ".join(cell for cell in cells if cell))
                cells = []
            if child_name == "tr":
                row = [self._cell(cell) for cell in child.contents.nodes if isinstance(cell, Tag)]
                lines.append(" | ".join(cell for cell in row if cell))
            else:
                lines.append(_SPACES_RE.sub(" ", self._node(child)).strip())
        if cells:
            lines.append(" | ".join(cell for cell in cells if cell))
        return "\n" + "\n".join(line for line in lines if line) + "\n"

    def _cell(self, cell: Tag) -> str:
        text = self._tag(cell).strip()
        if "\n\n" in text:  # a block of paragraphs (or a broken table swallowing them)
            return "\n" + text + "\n"
        return _SPACES_RE.sub(" ", text.replace("\n", " "))


def _namespace_kind(raw: str) -> str:
    """``article``, ``category``, ``file``, ``interlanguage`` or ``other`` (a namespace)."""
    if ":" not in raw:
        return "article"
    colon_first = raw.lstrip().startswith(":")
    prefix = raw.strip().lstrip(":").split(":", 1)[0].strip()
    lowered = prefix.lower().replace("_", " ")
    if lowered in ("file", "image", "media"):
        return "file"
    if lowered == "category":
        return "other" if colon_first else "category"
    if lowered in _NAMESPACES:
        return "other"
    if _LANGUAGE_CODE_RE.fullmatch(prefix):
        return "other" if colon_first else "interlanguage"
    return "article"


_NAMESPACES = frozenset({
    "talk", "user", "user talk", "wikipedia", "wikipedia talk", "wp", "project", "file talk",
    "mediawiki", "template", "template talk", "help", "category talk", "portal", "book",
    "draft", "module", "special", "timedtext", "education program", "gadget", "topic",
    "wikt", "wiktionary", "commons", "c", "wikisource", "s", "wikiquote", "q", "wikinews", "n",
    "wikibooks", "b", "wikiversity", "v", "wikivoyage", "voy", "species", "wikispecies", "meta",
    "m", "mw", "d", "wikidata", "w", "simple", "foundation", "wmf", "phab", "doi", "google",
})  # fmt: skip
_LANGUAGE_CODE_RE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]+)*")
_INVALID_TITLE_RE = re.compile(r"[<>\[\]{}|\x00-\x1f]")
_PARENTHETICAL_RE = re.compile(r"\s*\([^)]*\)\s*$")
_DROPPED_TAGS = frozenset({
    "ref", "references", "math", "chem", "ce", "score", "timeline", "gallery", "imagemap",
    "noinclude", "templatedata", "graph", "mapframe", "maplink", "syntaxhighlight", "source",
    "hiero", "inputbox", "categorytree", "section", "templatestyles", "indicator", "style", "script",
})  # fmt: skip


def _template_date(name: str, template: Template) -> _Date | None:
    """The date a date template shows (``{{birth date|1809|2|12}}`` -> 1809-02-12)."""
    args = [str(arg).strip() for arg in _positional(template)]
    day_first = template.has("df") and str(template.get("df").value).strip().lower() in ("y", "yes", "1")
    if not args:
        return None
    if len(args) == 1 or not args[0].lstrip("-").isdigit():
        return _parse_date_text(args[0]) or _make_date(args[0], None, None)
    if name.startswith(("birth year", "death year")):
        return _make_date(args[0], None, None)
    parts = (args + ["", ""])[:3]
    return _make_date(parts[0], parts[1], parts[2], day_first)


def _first(renderer: _Renderer, template: Template) -> str:
    args = _positional(template)
    return renderer.render(args[0]) if args else ""


def _second(renderer: _Renderer, template: Template) -> str:
    args = _positional(template)
    return renderer.render(args[1]) if len(args) > 1 else ""


def _last(renderer: _Renderer, template: Template) -> str:
    args = _positional(template)
    return renderer.render(args[-1]) if args else ""


def _quote(renderer: _Renderer, template: Template) -> str:
    text = _named(template, "text") or _named(template, "quote")
    return renderer.render(text) if text is not None else _first(renderer, template)


def _convert(renderer: _Renderer, template: Template) -> str:
    """``{{convert|10|km|mi}}`` -> ``10 km``; ``{{convert|1|to|2|km}}`` -> ``1 to 2 km``."""
    args = [renderer.render(arg).strip() for arg in _positional(template)]
    if len(args) >= 4 and args[1] in _RANGE_WORDS:
        return f"{args[0]} {args[1]} {args[2]} {args[3]}"
    return " ".join(args[:2])


def _constant(text: str) -> Callable[[_Renderer, Template], str]:
    return lambda renderer, template: text


def _prefixed(prefix: str) -> Callable[[_Renderer, Template], str]:
    return lambda renderer, template: prefix + _first(renderer, template)


def _joined(separator: str) -> Callable[[_Renderer, Template], str]:
    return lambda renderer, template: separator.join(
        renderer.render(arg).strip() for arg in _positional(template)
    )


_RANGE_WORDS = frozenset({"to", "-", "–", "and", "or", "by", "x", "×", "+", "to(-)"})
_INLINE_TEMPLATES: dict[str, Callable[[_Renderer, Template], str]] = {
    **dict.fromkeys(
        ["nowrap", "nobr", "nobreak", "small", "smaller", "big", "bigger", "large", "larger",
         "smallcaps", "sc", "sic", "noitalic", "nobold", "not a typo", "visible anchor", "unicode",
         "polytonic", "math", "mvar", "abbr", "tooltip", "nihongo", "avoid wrap", "em", "strong",
         "var", "flag", "flagcountry", "flagu", "flag country", "ill", "interlanguage link",
         "marriage", "married", "keep together", "nowrap begin", "linktext", "lang-x", "text",
         "resize", "midsize", "lower", "center", "centre", "sup", "sub", "small caps", "ns",
         "vague", "highlight", "color", "colored link", "proper name", "hebrew", "script/hebrew", "val"],
        _first,
    ),  # fmt: skip
    **dict.fromkeys(["lang", "script", "font color"], _second),
    **dict.fromkeys(["transl", "transliteration"], _last),
    **dict.fromkeys(["quote", "quotation", "blockquote", "cquote", "quote box", "poem quote"], _quote),
    **dict.fromkeys(["convert", "cvt"], _convert),
    **dict.fromkeys(["ndash", "en dash", "–"], _constant("–")),
    **dict.fromkeys(["mdash", "em dash", "—"], _constant("—")),
    **dict.fromkeys(["snd", "spaced ndash", "spaced en dash", "snds"], _constant(" – ")),
    **dict.fromkeys(["'", "apostrophe"], _constant("'")),
    **dict.fromkeys(["nbsp", "space", "sp", "thinsp"], _constant(" ")),
    **dict.fromkeys(["·", "dot", "middot", "dot separator", "bull", "•"], _constant(" · ")),
    **dict.fromkeys(["circa", "c.", "ca."], _prefixed("c. ")),
    **dict.fromkeys(["as of"], _prefixed("As of ")),
    **dict.fromkeys(["us$", "usd"], _prefixed("US$")),
    **dict.fromkeys(["frac", "fraction", "sfrac"], _joined("/")),
    **dict.fromkeys(["sortname"], _joined(" ")),
}


# ------------------------------------------------------------------- text cleanup


def clean_text(text: str) -> str:
    """Tidy rendered text and remove any markup the parser left as plain text.

    Broken tables or unclosed tags are tokenized as text by mwparserfromhell;
    these regular expressions remove what is left of them, so no ``{{``,
    ``[[``, ``'''``, ``<ref`` or table syntax reaches the plaintext.
    """
    text = text.replace("\xa0", " ").replace("\u200b", "")
    text = _COMMENT_RE.sub("", text)
    text = _LEFTOVER_REF_RE.sub("", text)
    text = _strip_leftover_brackets(text)
    text = _POSSESSIVE_AFTER_STYLE_RE.sub("'s", text)
    text = _TABLE_LINE_RE.sub("", text)
    text = _CELL_ATTRIBUTES_RE.sub("", text)
    text = _CELL_SEPARATOR_RE.sub(" | ", text)
    text = _EMPTY_BRACKETS_RE.sub("", text)
    text = _OPEN_BRACKET_PUNCTUATION_RE.sub("(", text)
    while _MARKUP_RE.search(text):  # a removal can join the halves of a new token
        text = _MARKUP_RE.sub("", text)
    text = _SPACES_RE.sub(" ", text)
    text = _SPACE_BEFORE_PUNCTUATION_RE.sub(r"\1", text)
    lines = (line.strip() for line in text.split("\n"))
    text = "\n".join(line for line in lines if line not in ("-", "|"))
    return _BLANK_LINES_RE.sub("\n\n", text).strip()


def _strip_leftover_brackets(text: str) -> str:
    """Resolve ``[[links]]`` and drop ``{{templates}}`` the tokenizer left as text, innermost first."""
    for _ in range(_MAX_LEFTOVER_NESTING):
        resolved = _LEFTOVER_LINK_RE.sub(_leftover_link_text, _LEFTOVER_TEMPLATE_RE.sub("", text))
        if resolved == text:
            break
        text = resolved
    return text


def _leftover_link_text(match: re.Match[str]) -> str:
    target, _, shown = match[1].partition("|")
    if _namespace_kind(target) in ("file", "category", "interlanguage"):
        return ""
    return shown.rsplit("|", 1)[-1] if shown else target.lstrip(":")


def _clean_value(text: str) -> str:
    """A one-line infobox value: clean text with list markers and stray punctuation removed."""
    lines = (line.removeprefix("- ").strip() for line in clean_text(text).split("\n"))
    return " ".join(line for line in lines if line).strip(" ,;:")


_SPACES_RE = re.compile(r"[ \t\r\f\v]+")
_COMMENT_RE = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_LEFTOVER_REF_RE = re.compile(r"<ref\b[^>/]*/>|<ref\b[^>]*>.*?</ref\s*>", re.DOTALL | re.IGNORECASE)
_LEFTOVER_TEMPLATE_RE = re.compile(r"\{\{[^{}]*\}\}")
_LEFTOVER_LINK_RE = re.compile(r"\[\[([^\[\]]*)\]\]")
_MAX_LEFTOVER_NESTING = 8
_POSSESSIVE_AFTER_STYLE_RE = re.compile(r"'''s\b")
_TABLE_LINE_RE = re.compile(r"^[ \t]*(?:\{\||\|\}|\|-|\|\+)[^\n]*$|^[ \t]*[|!](?![|!])[ \t]*", re.MULTILINE)
_CELL_ATTRIBUTES_RE = re.compile(
    r"""(?:\b(?:style|align|class|rowspan|colspan|width|height|bgcolor|valign|scope)\s*=\s*"""
    r"""(?:"[^"\n]*"|'[^'\n]*'|[^\s|]+)\s*)+\|(?!\|)"""
)
_CELL_SEPARATOR_RE = re.compile(r"[ \t]*(?:\|\||!!)[ \t]*")
_MARKUP_RE = re.compile(
    r"\{\{|\}\}|\[\[|\]\]|\{\||\|\}|\|-|\|\||'{2,}|</?ref\b[^>]*>?|</?[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?/?>|__[A-Z]+__"
)
_EMPTY_BRACKETS_RE = re.compile(r"\(\s*[;,:]?\s*\)|\[\s*\]")
_OPEN_BRACKET_PUNCTUATION_RE = re.compile(r"\(\s*[;,]\s*")
_SPACE_BEFORE_PUNCTUATION_RE = re.compile(r" ([,.;:)])")
_BLANK_LINES_RE = re.compile(r"\n{3,}")


# ----------------------------------------------------------------- infobox facts


def _infobox_facts(template: Template, page: _Renderer) -> list[ExtractedFact]:
    """One fact per value of each kept field of an infobox, in document order."""
    template_name = _template_name(template)
    facts: list[ExtractedFact] = []
    for param in template.params:
        if not param.showkey:
            continue
        relation = _relation_name(str(param.name))
        if relation is None:  # not a fact, but may embed a child infobox (module = {{Infobox ...}})
            page.infoboxes.extend(
                child for child in param.value.filter_templates(recursive=False) if _is_infobox(_template_name(child))
            )
            continue
        for item in _split_items(param.value.nodes):
            renderer = _Renderer()
            text = _clean_value(renderer.render(Wikicode(item)))
            page.adopt(renderer)
            facts.extend(_item_facts(relation, text, renderer, template_name))
    return facts


def _relation_name(raw_name: str) -> str | None:
    """Normalised field name, or ``None`` for fields that are not facts (images...)."""
    relation = _SPACES_RE.sub("_", _COMMENT_RE.sub("", raw_name).strip().lower()).replace(" ", "_")
    if not _RELATION_RE.fullmatch(relation):
        return None
    if relation in _SKIPPED_FIELDS:
        return None
    tokens = {token.rstrip("0123456789") for token in relation.split("_")}
    return None if tokens & _SKIPPED_FIELD_TOKENS else relation


_RELATION_RE = re.compile(r"[\w-]+")
_SKIPPED_FIELDS = frozenset({"name"})  # the box's label for its own subject, not a fact about it
_SKIPPED_FIELD_TOKENS = frozenset({
    "image", "img", "photo", "picture", "caption", "alt", "signature", "logo", "footnote",
    "footnotes", "note", "notes", "map", "pushpin", "coordinates", "coord", "coords", "seal",
    "blank", "module", "embed", "size", "imagesize", "width", "upright", "website", "url",
    "homepage", "bgcolor", "color", "colour", "style", "ref", "refs", "reference", "references",
    "mapsize", "caption", "nocat", "qid", "onlysourced", "fetchwikidata", "suppressfields",
})  # fmt: skip


def _split_items(nodes: Iterable[Node]) -> list[list[Node]]:
    """Split a field value into items at ``<br>``, list markers and list templates."""
    items: list[list[Node]] = [[]]
    for node in nodes:
        if isinstance(node, Tag) and str(node.tag).strip().lower() in ("br", "li", "dd", "dt", "p"):
            if node.contents is not None and not node.wiki_markup:
                items.append(list(node.contents.nodes))
            items.append([])
        elif isinstance(node, Template) and _template_name(node) in _LIST_TEMPLATES:
            for value in _positional(node):
                items.extend(_split_items(value.nodes))
            items.append([])
        else:
            items[-1].append(node)
    return [item for item in items if item]


def _item_facts(relation: str, text: str, renderer: _Renderer, template: str) -> list[ExtractedFact]:
    """Facts of one value: its dates, else its linked entities, else its typed text."""
    if renderer.dates:
        return [
            ExtractedFact(relation, date.iso, date.value_type, date=date.iso if date.value_type != "text" else None,
                          template=template)
            for date in renderer.dates
        ]  # fmt: skip
    if renderer.links:
        return [
            ExtractedFact(relation, target, "entity", object_title=target, template=template)
            for target in _unique(renderer.links)
        ]
    if not _WORD_RE.search(text):
        return []
    value_type, value, number, date = classify_value(text, relation)
    return [ExtractedFact(relation, value, value_type, number=number, date=date, template=template)]


_WORD_RE = re.compile(r"\w")


def _unique(values: Iterable[str]) -> list[str]:
    """Values without repeats, in order of first appearance."""
    return list(dict.fromkeys(values))
