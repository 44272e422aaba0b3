"""Wikitext -> clean plaintext, links, categories and typed infobox facts.

:func:`parse_page` is the one entry point: it parses a page once with
mwparserfromhell (C tokenizer) and walks the tree once
(:mod:`~stillweb.corpora.wikitext.plaintext`), producing

* readable plaintext: headings become their own lines after a blank line,
  references, files, navboxes, citations and infoboxes are dropped, tables are
  flattened to one line per row;
* normalised link targets (first letter uppercase, no anchors, no namespaces)
  and categories;
* the page kind (``"disambiguation"``, ``"list"`` or ``"article"``);
* one :class:`~stillweb.corpora.snapshot.records.ExtractedFact` per value of each
  *mapped* infobox field (:mod:`~stillweb.corpora.wikitext.infobox`, through
  the declarative ``corpora/infobox_mapping.toml`` and DBpedia's English mappings), typed as
  entity / date / year / number / text with the ontology's classes; unmapped fields are kept as
  text only, and mapped values that do not fit their relation are counted by reason
  (``ParsedPage.dropped``). An infobox embedded in another belongs to the page's subject; a
  second top-level infobox naming someone else does not (its fields count as ``other_subject``).

The function never raises on page content: whatever the wikitext, the result is
a :class:`~stillweb.corpora.snapshot.records.ParsedPage` whose text holds no wikitext
markup.

>>> page = parse_page("X", "'''X''' was born on {{birth date|1809|2|12}}.")
>>> page.text
'X was born on February 12, 1809.'
"""

from __future__ import annotations

import mwparserfromhell
from mwparserfromhell.nodes import Text
from mwparserfromhell.parser import ParserError
from mwparserfromhell.wikicode import Wikicode

from stillweb.corpora.snapshot.records import ParsedPage
from stillweb.corpora.wikitext.clean import MARKUP_RE, clean_text
from stillweb.corpora.wikitext.dates import classify_value
from stillweb.corpora.wikitext.infobox import about_other_subject, infobox_fields
from stillweb.corpora.wikitext.ontology import ontology
from stillweb.corpora.wikitext.plaintext import Renderer
from stillweb.corpora.wikitext.titles import normalize_title, template_name, unique
from stillweb.corpora.wikitext.variants import convert_page

__all__ = ["parse_page", "normalize_title", "classify_value", "clean_text"]


def parse_page(title: str, wikitext: str, script: str | None = None) -> ParsedPage:
    """Parse one article's wikitext into plaintext, links, categories and facts.

    ``title`` is the page title (used for the page kind); ``wikitext`` its source. ``script``
    (``hans`` or ``hant``) reads a Chinese Wikipedia page: its language-conversion markup resolved and
    its text written in that script (:mod:`~stillweb.corpora.wikitext.variants`; the title stays as
    written), dates written the Chinese way. Raises :class:`TypeError` only when either argument is
    not a string.
    """
    if not isinstance(title, str) or not isinstance(wikitext, str):
        raise TypeError(
            f"parse_page(title, wikitext) takes two strings, got {type(title).__name__} "
            f"and {type(wikitext).__name__}"
        )
    if script is not None:
        wikitext = convert_page(wikitext, script)
    try:
        code = mwparserfromhell.parse(wikitext)
    except (ParserError, RecursionError):  # pathological nesting: keep the words
        code = Wikicode([Text(MARKUP_RE.sub(" ", wikitext))])
    renderer = Renderer(chinese=script is not None)
    text = clean_text(renderer.render(code))
    page = ParsedPage(title=title, text=text, script=script)
    queue = [(box, position == 0) for position, box in enumerate(renderer.infoboxes)]
    done = 0
    while done < len(queue):  # grows when a field holds an embedded infobox (of the same subject)
        box, same_subject = queue[done]
        fields = infobox_fields(box, renderer)
        queue[done + 1:done + 1] = [(child, True) for child in fields.children]
        if not same_subject and about_other_subject(box, title):  # a second infobox about someone else
            fields.dropped += [(key, "other_subject") for key in fields.mapped_keys]
            fields.facts, fields.mapped_keys = [], []
        page.facts.extend(fields.facts)
        page.unmapped.extend(fields.unmapped)
        page.dropped.extend(fields.dropped)
        page.mapped_fields += len(fields.mapped_keys)
        done += 1
    if renderer.infoboxes:
        page.entity_class = ontology().template_class(template_name(renderer.infoboxes[0]))
    if renderer.disambiguation:
        page.kind = "disambiguation"
    elif title.startswith("List of") or title.endswith(("列表", "一览", "一覽")):
        page.kind = "list"
    page.links = unique(renderer.links)
    page.categories = unique(renderer.categories)
    return page
