"""Rendering a parsed wikitext tree as plaintext, collecting links, categories, dates and infoboxes.

:class:`Renderer` walks the tree once: references, files, navboxes and
citations are dropped, a few inline templates (``{{convert}}``, ``{{lang}}``,
``{{nowrap}}``, date templates...) keep their readable content, tables are
flattened to one line per row with cells joined by `` | ``, and infoboxes are
set aside for :mod:`~stillweb.corpora.wikitext.infobox`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

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
from mwparserfromhell.wikicode import Wikicode

from stillweb.corpora.wikitext.dates import DATE_TEMPLATES, Date, template_date
from stillweb.corpora.wikitext.values import country_code
from stillweb.corpora.wikitext.titles import (
    SPACES_RE,
    is_disambiguation,
    is_infobox,
    namespace_kind,
    normalize_title,
    template_name,
)

__all__ = ["Renderer", "LIST_TEMPLATES", "PARENTHETICAL_RE", "positional"]


LIST_TEMPLATES = frozenset({
    "plainlist", "plain list", "flatlist", "flat list", "ubl", "ubil", "unbulleted list", "hlist",
    "bulleted list", "blist", "bulletlist", "ordered list", "collapsible list", "nowrap list",
})  # fmt: skip


def positional(template: Template) -> list[Wikicode]:
    return [param.value for param in template.params if not param.showkey]


def _named(template: Template, name: str) -> Wikicode | None:
    return template.get(name).value if template.has(name) else None


class Renderer:
    """Turns a parsed tree into plaintext, collecting links, dates and infoboxes (``chinese``: dates
    written as Chinese writes them, 1809年2月12日)."""

    def __init__(self, chinese: bool = False) -> None:
        self.chinese = chinese
        self.links: list[str] = []
        self.categories: list[str] = []
        self.dates: list[Date] = []
        self.infoboxes: list[Template] = []
        self.disambiguation = False

    def render(self, code: Wikicode | None) -> str:
        """Plaintext of ``code`` (markup dropped or replaced by its readable content)."""
        if code is None:
            return ""
        return "".join([self._node(node) for node in code.nodes])

    def adopt(self, child: Renderer) -> None:
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
        namespace = namespace_kind(raw)
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
            return PARENTHETICAL_RE.sub("", raw.lstrip(":").split(":", 1)[-1])
        return shown

    def _template(self, template: Template) -> str:
        name = template_name(template)
        if is_infobox(name):
            self.infoboxes.append(template)
            return ""
        if is_disambiguation(name):
            self.disambiguation = True
            return ""
        if name in DATE_TEMPLATES:
            date = template_date(name, template)
            if date is None:
                return ""
            self.dates.append(date)
            return date.chinese if self.chinese else date.readable
        if name in LIST_TEMPLATES:
            return "\n".join(self.render(item).strip() for item in positional(template))
        if name.startswith("formatnum:"):
            return str(template.name).split(":", 1)[1].strip()
        if name.startswith("lang-"):
            args = positional(template)
            return self.render(args[0]) if args else ""
        if name in _FLAG_TEMPLATES or (not template.params and str(template.name).strip().isupper()
                                       and country_code(name)):
            return self._flag(name, template)
        inline = _INLINE_TEMPLATES.get(name)
        return inline(self, template) if inline is not None else ""

    def _flag(self, name: str, template: Template) -> str:
        """``{{flag|France}}``, ``{{flagcountry|USA}}``, ``{{USA}}``: the country's name, linked.

        Codes (``{{flag|USA}}``) name their country through ``corpora/countries.toml``.
        """
        args = positional(template)
        first = self.render(args[0]).strip() if args else name
        country = country_code(first) or first
        shown = _named(template, "name")
        if target := normalize_title(country):
            self.links.append(target)
        return self.render(shown).strip() if shown is not None else country

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
                lines.append(SPACES_RE.sub(" ", self._node(child)).strip())
        if cells:
            lines.append(" | ".join(cell for cell in cells if cell))
        return "\n" + "\n".join(line for line in lines if line) + "\n"

    def _cell(self, cell: Tag) -> str:
        text = self._tag(cell).strip()
        if "\n\n" in text:  # a block of paragraphs (or a broken table swallowing them)
            return "\n" + text + "\n"
        return SPACES_RE.sub(" ", text.replace("\n", " "))


PARENTHETICAL_RE = re.compile(r"\s*\([^)]*\)\s*$")
_DROPPED_TAGS = frozenset({
    "ref", "references", "math", "chem", "ce", "score", "timeline", "gallery", "imagemap",
    "noinclude", "templatedata", "graph", "mapframe", "maplink", "syntaxhighlight", "source",
    "hiero", "inputbox", "categorytree", "section", "templatestyles", "indicator", "style", "script",
})  # fmt: skip


def _first(renderer: Renderer, template: Template) -> str:
    args = positional(template)
    return renderer.render(args[0]) if args else ""


def _second(renderer: Renderer, template: Template) -> str:
    args = positional(template)
    return renderer.render(args[1]) if len(args) > 1 else ""


def _interlanguage(renderer: Renderer, template: Template) -> str:
    """``{{ill|Title|de|Titel}}`` (and the old ``{{ill|de|Title|...}}``) -> ``Title``, linked."""
    args = [renderer.render(arg).strip() for arg in positional(template)]
    if len(args) > 1 and _LANGUAGE_CODE_RE.fullmatch(args[0]):
        args = args[1:]
    if not args:
        return ""
    if target := normalize_title(args[0]):
        renderer.links.append(target)
    shown = _named(template, "lt")
    return renderer.render(shown).strip() if shown is not None else args[0]


def _last(renderer: Renderer, template: Template) -> str:
    args = positional(template)
    return renderer.render(args[-1]) if args else ""


def _quote(renderer: Renderer, template: Template) -> str:
    text = _named(template, "text") or _named(template, "quote")
    return renderer.render(text) if text is not None else _first(renderer, template)


def _convert(renderer: Renderer, template: Template) -> str:
    """``{{convert|10|km|mi}}`` -> ``10 km``; ``{{convert|1|to|2|km}}`` -> ``1 to 2 km``."""
    args = [renderer.render(arg).strip() for arg in positional(template)]
    if len(args) >= 4 and args[1] in _RANGE_WORDS:
        return f"{args[0]} {args[1]} {args[2]} {args[3]}"
    return " ".join(args[:2])


def _constant(text: str) -> Callable[[Renderer, Template], str]:
    return lambda renderer, template: text


def _prefixed(prefix: str) -> Callable[[Renderer, Template], str]:
    return lambda renderer, template: prefix + _first(renderer, template)


def _joined(separator: str) -> Callable[[Renderer, Template], str]:
    return lambda renderer, template: separator.join(
        renderer.render(arg).strip() for arg in positional(template)
    )


_FLAG_TEMPLATES = frozenset({"flag", "flagcountry", "flagu", "flag country", "flagdeco country"})
_LANGUAGE_CODE_RE = re.compile(r"[a-z]{2,3}(?:-[a-z]+)?")
_RANGE_WORDS = frozenset({"to", "-", "–", "and", "or", "by", "x", "×", "+", "to(-)"})
_INLINE_TEMPLATES: dict[str, Callable[[Renderer, Template], str]] = {
    **dict.fromkeys(
        ["nowrap", "nobr", "nobreak", "small", "smaller", "big", "bigger", "large", "larger",
         "smallcaps", "sc", "sic", "noitalic", "nobold", "not a typo", "visible anchor", "unicode",
         "polytonic", "math", "mvar", "abbr", "tooltip", "nihongo", "avoid wrap", "em", "strong",
         "var",
         "marriage", "married", "keep together", "nowrap begin", "linktext", "lang-x", "text",
         "resize", "midsize", "lower", "center", "centre", "sup", "sub", "small caps", "ns",
         "vague", "highlight", "color", "colored link", "proper name", "hebrew", "script/hebrew", "val"],
        _first,
    ),  # fmt: skip
    **dict.fromkeys(["lang", "script", "font color"], _second),
    **dict.fromkeys(["ill", "interlanguage link"], _interlanguage),
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
