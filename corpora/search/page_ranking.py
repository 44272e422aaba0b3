"""Format 4 page ranking: a page scores as its best passage (issue 43).

A page snapshot of format 4 indexes each page as passages of about
:data:`PASSAGE_WORDS` words (whole lines merged while they fit; a longer line cut
into word windows, the DPR / wiki-18 recipe), each passage one tantivy document
carrying its page's ``doc_id`` and its byte offset ``start`` in the page's text.
A query ranks passages with BM25 and a page scores as its best passage (MaxP,
Dai and Callan, "Deeper Text Understanding for IR with Contextual Neural Language
Modeling", SIGIR 2019), so a long page is not penalized for its length and a
fact stated in one place counts as much as a name repeated across the page. Each
passage is indexed twice: ``body`` with term frequencies and ``body_terms``
with term presence only (tantivy's ``basic`` index option), whose BM25 is the
saturated limit of term frequency; their sum is a BM25F-style blend that softens
tantivy's fixed k1 = 1.2 towards the quick saturation of Lucene's defaults in
Anserini (k1 = 0.9, b = 0.4). The title field is on a page's first passage only,
as for format 3 passages. The weights were chosen on the ``tune`` halves of
``scripts/bench_retrieval.py``'s page sets; BENCHMARKS.md (issue 43) lists what
was tried and what each gave.

A query that is a page's whole title (case and spacing aside) also matches that page's
``title_exact`` field (the title as one term), as Wikipedia's search box goes straight to
the page of an exact title: known-page lookups by name find the page first, and no other
query is touched. It is on every passage: a field on few documents has a tiny average
length, and BM25's length normalization then all but erases a match in it.

The snippet of a hit is the opening of its best passage (:func:`passage_snippet`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import tantivy

__all__ = ["PAGE_INDEX_PARAMETERS", "PASSAGE_WORDS", "page_schema", "passage_spans", "page_units", "page_documents", "tantivy_passages", "top_pages", "page_count",
           "passage_snippet", "exact_title", "with_exact_title"]

PASSAGE_WORDS = 100
BEST_PASSAGE = "best passage"
PAGE_INDEX_PARAMETERS = {
    "engine": "tantivy",
    "tokenizer": "en_stem_stop",
    "fields": ["title", "body", "body_terms"],
    "units": f"passages of about {PASSAGE_WORDS} words; a page scores as its best passage",
    "passage_words": PASSAGE_WORDS,
    "title": "first passage of each page",
    "title_boost": 0.5,
    "title_exact": "the whole title, lowercased, on every passage",
    "title_exact_boost": 4.0,
    "body_terms": "body, term presence only",
    "body_terms_boost": 2.0,
    "query": "terms",
    "snippet": BEST_PASSAGE,
    "ranking": "bm25, a page as its best passage, ties by doc_id",
}
FIRST_FETCH = 4  # passages fetched per wanted page at first; four times more until the top k is certain
_SPACE_SEPARATED = re.compile(rb"[^ \t\n\r\f\v]+")


def page_schema(tokenizer: str) -> tantivy.Schema:
    """``doc_id`` (the page) and ``start`` (the passage's byte offset), both fast; ``title``, ``body``
    (frequencies) and ``body_terms`` (presence only)."""
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("doc_id", stored=False, indexed=True, fast=True)
    builder.add_unsigned_field("start", stored=False, indexed=False, fast=True)
    builder.add_text_field("title", stored=False, tokenizer_name=tokenizer, index_option="freq")
    builder.add_text_field("body", stored=False, tokenizer_name=tokenizer, index_option="freq")
    builder.add_text_field("body_terms", stored=False, tokenizer_name=tokenizer, index_option="basic")
    builder.add_text_field("title_exact", stored=False, tokenizer_name="raw", index_option="basic")
    return builder.build()


def exact_title(text: str) -> str:
    """The ``title_exact`` term of a title or query: lowercased, runs of whitespace as one space.

    >>> exact_title("  Massonton   (Veienia) ")
    'massonton (veienia)'
    """
    return " ".join(text.lower().split())


def with_exact_title(schema: tantivy.Schema, query: tantivy.Query, text: str, boost: float) -> tantivy.Query:
    """``query``, or else ``text`` as a whole title (boosted by ``boost``): either may match."""
    key = exact_title(text)
    if not key:
        return query
    title = tantivy.Query.boost_query(tantivy.Query.term_query(schema, "title_exact", key), boost)
    return tantivy.Query.boolean_query([(tantivy.Occur.Should, query), (tantivy.Occur.Should, title)])


def passage_spans(text: bytes, words: int = PASSAGE_WORDS) -> list[tuple[int, int]]:
    """``(start, end)`` byte spans of the passages of UTF-8 ``text``: lines merged while the passage
    stays within ``words`` words, a longer line cut into ``words``-word windows; whitespace-only text
    is one passage.

    >>> text = b"Capital: Lunor\\nArea: 5\\n\\na b c d e"
    >>> [text[s:e] for s, e in passage_spans(text, 4)]
    [b'Capital: Lunor\\nArea: 5', b'a b c d', b'e']
    """
    spans: list[list[int]] = []  # [start, end, words]
    position = 0
    for line in text.split(b"\n"):
        offset, position = position, position + len(line) + 1
        tokens = [match.span() for match in _SPACE_SEPARATED.finditer(line)]
        if not tokens:
            continue
        if spans and spans[-1][2] + len(tokens) <= words:
            spans[-1][1], spans[-1][2] = offset + tokens[-1][1], spans[-1][2] + len(tokens)
            continue
        for first in range(0, len(tokens), words):
            window = tokens[first : first + words]
            spans.append([offset + window[0][0], offset + window[-1][1], len(window)])
    return [(start, end) for start, end, _count in spans] or [(0, len(text))]


def page_units(title: str, text: str, words: int = PASSAGE_WORDS) -> list[tuple[int, dict[str, str]]]:
    """The indexed units of one page: ``(byte offset, {field: text})`` per passage, the title on the first
    (what :func:`page_documents` gives tantivy and the impact postings index, ``impacts_build.py``)."""
    data = text.encode("utf-8")
    units = []
    for number, (start, end) in enumerate(passage_spans(data, words)):
        passage = data[start:end].decode("utf-8")
        fields = {"title": title} if number == 0 else {}
        fields.update(title_exact=exact_title(title), body=passage, body_terms=passage)
        units.append((start, fields))
    return units


def page_documents(doc_id: int, title: str, text: str, words: int = PASSAGE_WORDS) -> list[tantivy.Document]:
    """The tantivy documents of one page: one per passage, the title on the first."""
    documents = []
    for start, fields in page_units(title, text, words):
        document = tantivy.Document()
        document.add_unsigned("doc_id", doc_id)
        document.add_unsigned("start", start)
        for field, value in fields.items():
            document.add_text(field, value)
        documents.append(document)
    return documents


def tantivy_passages(searcher: tantivy.Searcher, query: tantivy.Query, limit: int) -> list[tuple[float, int, int]]:
    """tantivy's best ``limit`` passages for ``query``: ``(score, doc_id, start)``, best first."""
    hits = searcher.search(query, limit, count=False).hits
    addresses = [address for _score, address in hits]
    return list(zip([score for score, _address in hits], searcher.fast_field_values("doc_id", addresses),
                    searcher.fast_field_values("start", addresses)))


def top_pages(passages: Callable[[int], list[tuple[float, int, int]]], k: int) -> list[tuple[int, float, int]]:
    """Top ``k`` pages ``(doc_id, score, start of the best passage)``, by (-score, doc_id); a page's
    passages tied on its best score give the earliest start. ``passages(limit)`` gives the best
    ``limit`` passages ``(score, doc_id, start)``, best first (:func:`tantivy_passages`, or the
    impact postings' :meth:`~stillweb.corpora.search.impacts.ImpactIndex.top_passages`).

    Exact whatever the engine does with ties: passages are fetched best first until the k-th page's
    score is above the last passage fetched (no unfetched passage can then reach it) or none are left.
    """
    limit = FIRST_FETCH * k
    while True:
        hits = passages(limit)
        best: dict[int, tuple[float, int]] = {}
        for score, doc_id, start in hits:
            known = best.get(doc_id)
            if known is None or (-score, start) < (-known[0], known[1]):
                best[doc_id] = (score, start)
        ranked = sorted((-score, doc_id, start) for doc_id, (score, start) in best.items())[:k]
        if len(hits) < limit or (len(ranked) == k and -ranked[-1][0] > hits[-1][0]):
            return [(doc_id, -negative, start) for negative, doc_id, start in ranked]
        limit *= 4


def page_count(searcher: tantivy.Searcher) -> int:
    """Pages of a format 4 index: one past the largest ``doc_id`` (every page has a first passage)."""
    if not searcher.num_docs:
        return 0
    return int(searcher.aggregate(tantivy.Query.all_query(), {"top": {"max": {"field": "doc_id"}}})["top"]["value"]) + 1


def passage_snippet(window: bytes, more: bool) -> str:
    """The snippet of a hit: ``window``, the bytes of its page's text from its best passage's start
    (a word's first byte) on, as text (a character cut at its end dropped), line breaks as spaces,
    ``...`` when ``more`` text follows."""
    return window.decode("utf-8", errors="ignore").replace("\n", " ") + ("..." if more else "")
