"""Rendering viewer pages: one autoescaping Jinja2 environment over the package's
templates, and the error page every route uses instead of a JSON error or a 500."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection
from typing import Any
from urllib.parse import urlencode

from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from stillweb.corpora.search.analyzers import BigramAnalyzer
from stillweb.corpora.search.index import matching_spans

__all__ = ["render", "error_page", "pretty_json", "link_docs", "short_number", "num", "highlight", "FIRST_MATCH", "DOC_REFERENCE"]

FIRST_MATCH = "first-match"  # the id of a page's first <mark>, the target of its "jump to the first match" link

DOC_REFERENCE = re.compile(r"\[doc (\d{1,10})\]")  # how tools name documents in their text

_ENVIRONMENT = Environment(
    loader=PackageLoader("stillweb.server.viewer", "templates"),
    autoescape=True,  # every {{ value }} is HTML-escaped: document and task text never becomes markup
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def pretty_json(value: Any) -> str:
    """Indented JSON (sorted keys, non-ASCII kept) for showing structured values."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=repr)


def _query(**params: Any) -> str:
    """``?a=1&b=2`` of the non-empty params (for links in templates)."""
    kept = {key: value for key, value in params.items() if value not in (None, "")}
    return "?" + urlencode(kept) if kept else ""


def link_docs(text: str, evidence: Collection[int] = ()) -> Markup:
    """``text`` escaped, with every ``[doc 12]`` (how tools name documents) linked to its page;
    links to the ``evidence`` doc ids get ``class="evidence"`` (styled as a badge).

    >>> str(link_docs("<b> [doc 3] [doc 4]", evidence={4}))
    '&lt;b&gt; <a href="/view/doc/3">[doc 3]</a> <a href="/view/doc/4" class="evidence">[doc 4]</a>'
    """
    def link(match: re.Match) -> str:
        marked = ' class="evidence"' if int(match.group(1)) in evidence else ""
        return f'<a href="/view/doc/{match.group(1)}"{marked}>[doc {match.group(1)}]</a>'

    return Markup(DOC_REFERENCE.sub(link, str(escape(text))))


def highlight(text: str, query: str | None, anchor: str | None = None, analyzer: BigramAnalyzer | None = None) -> Markup:
    """``text`` escaped, with the words the index matches for ``query`` (English stemming:
    "rivers" marks "river"; with a language's ``analyzer``, its terms: 首都 marks 首都 in 北京是中国的首都)
    wrapped in ``<mark>``; the first mark gets ``id=anchor`` if given.

    Every character of ``text`` is escaped and marks only wrap whole words, so removing
    the ``<mark>`` tags gives exactly the escaped text.

    >>> str(highlight("<i>Rivers</i> & a river", "river"))
    '&lt;i&gt;<mark>Rivers</mark>&lt;/i&gt; &amp; a <mark>river</mark>'
    """
    if not query:
        return escape(text)
    pieces: list[str] = []
    done = 0
    for number, (start, end) in enumerate(matching_spans(text, query, analyzer)):
        opening = f'<mark id="{escape(anchor)}">' if anchor and number == 0 else "<mark>"
        pieces += [str(escape(text[done:start])), opening, str(escape(text[start:end])), "</mark>"]
        done = end
    pieces.append(str(escape(text[done:])))
    return Markup("".join(pieces))


def short_number(value: Any) -> str:
    """A number for reading: integers (and integral floats) whole, others to 3 significant
    digits (no exponent from 1000 up); lists and dicts with every number inside shortened.

    >>> short_number(0.9509900498999999), short_number(2.0), short_number(1234.56), short_number([0.32353, True])
    ('0.951', '2', '1235', '[0.324, true]')
    """
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.3g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(short_number(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(key), ensure_ascii=False)}: {short_number(item)}" for key, item in value.items()) + "}"
    return str(value)


def num(value: Any) -> Markup:
    """``value`` shortened by :func:`short_number`, with the full value on hover (a ``title``);
    text that is not a number is shown as it is.

    >>> str(num(0.9509900498999999))
    '<span class="num" title="0.9509900498999999">0.951</span>'
    """
    if isinstance(value, str):
        return escape(value)
    short = short_number(value)
    full = repr(value) if isinstance(value, float) else json.dumps(value, ensure_ascii=False, default=repr)
    return Markup('<span class="num" title="{}">{}</span>').format(full, short)


_ENVIRONMENT.filters["json"] = pretty_json
_ENVIRONMENT.filters["num"] = num
_ENVIRONMENT.filters["link_docs"] = link_docs
_ENVIRONMENT.filters["highlight"] = highlight
_ENVIRONMENT.globals["query"] = _query


def render(template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """The HTML page of ``template`` filled with ``context``, as UTF-8 (a lone surrogate, which JSON
    can escape but UTF-8 cannot encode, shows as its ``\\udXXX`` escape instead of failing the page)."""
    page = _ENVIRONMENT.get_template(template).render(**context)
    return HTMLResponse(page.encode("utf-8", errors="backslashreplace"), status_code=status_code)


def error_page(status_code: int, title: str, message: str, back: tuple[str, str] | None = None) -> HTMLResponse:
    """A page that says what went wrong and what to do (never a stack trace); ``back``: (url, label) of
    a better way back than the start page (linked first; the start page is always linked too)."""
    return render("error.html", status_code, title=title, message=message, back=back)
