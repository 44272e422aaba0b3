"""The snapshot's full-text index: a tantivy BM25 index over title and body.

Tantivy keeps schema, writer and searcher apart, and so does this module:
:func:`index_schema` says what is indexed, :class:`IndexBuilder` writes the
index of a snapshot being built, and :class:`SearchIndex` answers queries.

Determinism: documents are stored sorted by ``doc_id``; the writer is merged
into as few segments as tantivy allows; and :meth:`SearchIndex.search` fetches
past score ties and sorts by ``(-score, doc_id)``, so thread counts and segment
layout never change a ranking.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import tantivy

__all__ = ["IndexBuilder", "SearchIndex", "INDEX_PARAMETERS", "PASSAGE_INDEX_PARAMETERS", "MAX_QUERY_CHARS", "MAX_K", "matching_spans"]

# Recorded in the manifest and the fingerprint: changing any of these changes rankings.
INDEX_PARAMETERS = {
    "engine": "tantivy",
    "tokenizer": "en_stem_stop",  # tantivy's en_stem plus its English stop-word list
    "fields": ["title", "body"],
    "title_boost": 2.0,
    "ranking": "bm25, ties by doc_id",
}
# Passage-level snapshots (row corpora, ``--passages``) index "title\ntext" as one body field and
# search it alone, as the BM25 baselines of DPR, Search-R1 and FlashRAG (pyserini over wiki-18's
# contents) do. With a separate, boosted title field, every passage of a page matches its title
# equally, so a page's other passages outrank the passage that answers: on HotpotQA passages
# recall@10 fell below bm25s (0.80 against 0.82); one body field lifts it to 0.84 (BENCHMARKS.md).
PASSAGE_INDEX_PARAMETERS = {
    **{key: value for key, value in INDEX_PARAMETERS.items() if key != "title_boost"},
    "fields": ["body"],
    "body": "title, newline, text",
}
# The bounds of every search, the one home of both (the search tool and the server's requests allow
# less or cut here; see TOOL_MAX_K in sandboxes/tools/search.py and MAX_REQUEST_QUERY_CHARS in server/models.py):
MAX_QUERY_CHARS = 2_000  # the engine reads this much of a query; the rest is ignored (Snapshot.search)
MAX_K = 100  # the most results one search returns (Snapshot.search, /retrieve's topk)
_WRITER_HEAP = 1_000_000_000


def _analyzer() -> tantivy.TextAnalyzer:
    """tantivy's ``en_stem`` (simple tokens, long ones dropped, lowercased, stemmed) without stop words.

    Dropping stop words at index and query time keeps long natural-language
    questions cheap: their "the", "of", "a" no longer walk posting lists that
    cover nearly every document, and BM25 gave them almost no weight anyway.
    """
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stopword("english"))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _register_analyzer(index: tantivy.Index) -> None:
    index.register_tokenizer("en_stem_stop", _analyzer())


def index_schema() -> tantivy.Schema:
    """The tantivy schema: ``doc_id`` (fast, for ranking ties), ``title`` and ``body``."""
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("doc_id", stored=False, indexed=True, fast=True)
    builder.add_text_field("title", stored=False, tokenizer_name=INDEX_PARAMETERS["tokenizer"])
    builder.add_text_field("body", stored=False, tokenizer_name=INDEX_PARAMETERS["tokenizer"])
    return builder.build()


class IndexBuilder:
    """Writes the index of a snapshot being built; documents must come in doc_id order.

    ``title_in_body`` indexes the body as ``title + "\n" + text`` (:data:`PASSAGE_INDEX_PARAMETERS`).
    """

    def __init__(self, directory: Path, threads: int = 1, title_in_body: bool = False) -> None:
        self._title_in_body = title_in_body
        directory.mkdir(parents=True, exist_ok=True)
        self._index = tantivy.Index(index_schema(), path=str(directory), reuse=False, sort_by_field="doc_id")
        _register_analyzer(self._index)
        self._writer = self._index.writer(_WRITER_HEAP * max(1, threads), max(1, threads))
        self.count = 0
        self.finished = False

    def add(self, doc_id: int, title: str, body: str) -> None:
        """Add one document."""
        document = tantivy.Document()
        document.add_unsigned("doc_id", doc_id)
        document.add_text("title", title)
        document.add_text("body", f"{title}\n{body}" if self._title_in_body else body)
        self._writer.add_document(document)
        self.count += 1

    def abort(self) -> None:
        """Drop everything added and stop the writer's threads (a failed build, before its directory is removed)."""
        self._writer.rollback()
        self._writer.wait_merging_threads()

    def finish(self) -> int:
        """Commit, wait for merges, and return the number of segments."""
        self.finished = True
        self._writer.commit()
        self._writer.wait_merging_threads()
        self._index.reload()
        return self._index.searcher().num_segments


class SearchIndex:
    """Read-only access to a snapshot's index, searched as its recorded ``parameters`` say."""

    def __init__(self, directory: Path, parameters: dict = INDEX_PARAMETERS) -> None:
        self.fields = tuple(parameters.get("fields", INDEX_PARAMETERS["fields"]))
        self._title_boost = parameters.get("title_boost")
        self._index = tantivy.Index.open(str(directory))
        _register_analyzer(self._index)
        self._searcher = self._index.searcher()
        self.num_docs = self._searcher.num_docs
        self._single_segment = self._searcher.num_segments == 1
        self._address_is_doc_id = self._single_segment and _addresses_are_doc_ids(directory, self._searcher)

    def _parse(self, query: str, fields: list[str]) -> tantivy.Query:
        boosts = {"title": self._title_boost} if "title" in fields and self._title_boost else {}
        try:
            return self._index.parse_query(query, fields, field_boosts=boosts)
        except ValueError:
            parsed, _errors = self._index.parse_query_lenient(query, fields, field_boosts=boosts)
            return parsed

    def search(self, query: str, k: int, fields: tuple[str, ...] | None = None) -> list[tuple[int, float]]:
        """Top ``k`` ``(doc_id, BM25 score)`` pairs for agent text ``query`` (already validated),
        ties by doc_id, over ``fields`` (default: the snapshot's searched fields);
        :meth:`stillweb.corpora.snapshot.Snapshot.search` makes them
        :class:`~stillweb.corpora.records.SearchResult` hits.

        Parses strictly first (faster) and falls back to tantivy's lenient parser
        for text that is not valid query syntax (``don't``, ``alpha (``...).
        """
        # Lone surrogates cannot cross into Rust: replace them, as a browser would.
        text = query[:MAX_QUERY_CHARS].encode("utf-8", "replace").decode("utf-8")
        parsed = self._parse(text, list(fields or self.fields))
        if self._single_segment:
            return self._top_single_segment(parsed, k)
        return self._top_tie_safe(parsed, k)

    def _top_single_segment(self, parsed: tantivy.Query, k: int) -> list[tuple[int, float]]:
        """tantivy's own top k: its collector breaks score ties by doc address, which in one
        segment sorted by doc_id is doc_id order (``test_snapshot`` checks this against
        :meth:`_top_tie_safe`)."""
        hits = self._searcher.search(parsed, k, count=False).hits
        if self._address_is_doc_id:  # skip the fast-field read: the segment-local address is the doc_id
            return [(address.doc, score) for score, address in hits]
        ids = self._searcher.fast_field_values("doc_id", [address for _score, address in hits])
        return [(doc_id, score) for (score, _address), doc_id in zip(hits, ids)]

    def _top_tie_safe(self, parsed: tantivy.Query, k: int) -> list[tuple[int, float]]:
        """Top k for any segment layout: fetch past score ties and sort by (-score, doc_id)."""
        limit = k + 1  # one past k shows whether a score tie crosses the cut
        while True:
            hits = self._searcher.search(parsed, limit, count=False).hits
            if not hits:
                return []
            ids = self._searcher.fast_field_values("doc_id", [address for _score, address in hits])
            ranked = sorted((-score, doc_id) for (score, _addr), doc_id in zip(hits, ids))
            if len(hits) < limit or ranked[k - 1][0] != -hits[-1][0]:
                return [(doc_id, -neg) for neg, doc_id in ranked[:k]]
            limit *= 4


def _addresses_are_doc_ids(directory: Path, searcher: tantivy.Searcher) -> bool:
    """True when a document's address in the (single) segment equals its ``doc_id``.

    A snapshot's builder adds each document once, with ``doc_id`` 0..n-1, and sorts
    the index by ``doc_id`` ascending; n distinct ascending ids from 0 to n-1 leave
    no room for a gap, so the sort order, the absence of deletes and a few sampled
    addresses confirm it without reading n values.
    """
    try:
        meta = json.loads((directory / "meta.json").read_text())
    except (OSError, ValueError):
        return False
    sort = (meta.get("index_settings") or {}).get("sort_by_field") or {}
    segments = meta.get("segments") or []
    if sort != {"field": "doc_id", "order": "Asc"} or len(segments) != 1 or segments[0].get("deletes"):
        return False
    count = searcher.num_docs
    samples = sorted({0, 1, count // 3, count // 2, count - 2, count - 1} & set(range(count)))
    values = searcher.fast_field_values("doc_id", [tantivy.DocAddress(0, doc) for doc in samples])
    return values == samples


def matching_spans(text: str, query: str) -> list[tuple[int, int]]:
    """``(start, end)`` character spans of the words of ``text`` that the index matches
    for ``query``: the words whose analyzed term (the index's own tokenizer, tantivy's
    English stemmer included) is a term of the analyzed query, in text order.

    The viewer marks these words in snippets and documents; no second stemmer.

    >>> text = "The rivers meet; a river runs."
    >>> [text[start:end] for start, end in matching_spans(text, "river")]
    ['rivers', 'river']
    """
    analyzer = _shared_analyzer()
    wanted = set(analyzer.analyze(_rust_safe(query[:MAX_QUERY_CHARS])))
    if not wanted or not text:
        return []
    # Replacing lone surrogates keeps every character in place, so the offsets fit ``text``.
    tokens = analyzer.pre_tokenize(_rust_safe(text)).tokens
    return [(token.char_offset_from, token.char_offset_to) for token in tokens if token.text in wanted]


@cache
def _shared_analyzer() -> tantivy.TextAnalyzer:
    return _analyzer()


def _rust_safe(text: str) -> str:
    """``text`` with lone surrogates (which cannot cross into Rust) replaced by ``?``, one for one."""
    return text.encode("utf-8", "replace").decode("utf-8")


MAX_SNIPPET_TERMS = 12


def query_terms(query: str) -> list[str]:
    """Lowercase word terms of a query for snippets: in order, without duplicates or
    stop words, at most ``MAX_SNIPPET_TERMS`` (a long question's first content words)."""
    seen: dict[str, None] = {}
    for term in re.findall(r"\w+", query[:MAX_QUERY_CHARS].lower()):
        if len(term) > 1 and term not in _STOPWORDS:
            seen.setdefault(term, None)
            if len(seen) == MAX_SNIPPET_TERMS:
                break
    return list(seen)


_STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were which who with what when where".split()
)
