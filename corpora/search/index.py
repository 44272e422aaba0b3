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
from functools import cache, partial
from pathlib import Path

import tantivy

from stillweb.corpora.build.bounded import DigestSet, digest
from stillweb.corpora.search.analyzers import BigramAnalyzer, analyzer_for, analyzer_from_parameters
from stillweb.corpora.errors import DataError
from stillweb.corpora.search.row_ranking import (QUERY_COUNTS, ROW_INDEX_PARAMETERS, ROW_TOKENIZER, counted_clauses, counted_terms_query,
                                                 proximity_pairs, proximity_scores, row_analyzer)
from stillweb.corpora.search.impacts import IMPACTS_DIR, ImpactIndex
from stillweb.corpora.search.page_ranking import (PAGE_INDEX_PARAMETERS, exact_title, page_count, page_documents, page_schema,
                                                  tantivy_passages, top_pages, with_exact_title)

__all__ = ["IndexBuilder", "SearchIndex", "INDEX_PARAMETERS", "PASSAGE_INDEX_PARAMETERS", "QUERY_SYNTAX",
           "QUERY_TERMS", "TITLE_FIRST_PASSAGE", "MAX_QUERY_CHARS", "MAX_K", "matching_spans", "with_language",
           "passage_parameters"]

# Recorded in the manifest and the fingerprint: changing any of these changes rankings. A snapshot
# is searched as its manifest records (SearchIndex), so older snapshots keep their rankings.
# Page snapshots of formats 1-3; format 4 pages are PAGE_INDEX_PARAMETERS (page_ranking.py, issue 43).
INDEX_PARAMETERS = {
    "engine": "tantivy",
    "tokenizer": "en_stem_stop",  # tantivy's en_stem plus its English stop-word list
    "fields": ["title", "body"],
    "title_boost": 2.0,
    "ranking": "bm25, ties by doc_id",
}
# Passage-level snapshots (row corpora, ``--passages``) index "title\ntext" as one body field, as the
# BM25 baselines of DPR, Search-R1 and FlashRAG (pyserini over wiki-18's contents) do. Format 2
# searched that field alone: a title field on every passage lets all passages of a page match its
# title equally, so a page's other passages outrank the passage that answers (issue 10). Format 3
# (issue 37) puts the title field on the first passage of each title only (TITLE_FIRST_PASSAGE) and
# searches it with the body: a question naming a page lifts that page's lead passage, once. And a
# query is read as its terms (QUERY_TERMS), as Pyserini's bag-of-words query generator does, not as
# tantivy query syntax: a word the tokenizer splits ("Kest's", "Saint-Denis") is its terms, not a
# phrase that must match in order, and "-", "+", quotes and "field:" are not operators.
# Chosen on the "tune" half of the HotpotQA/2Wiki questions, checked on the other half and on
# MuSiQue (scripts/bench_retrieval.py; BENCHMARKS.md, issue 37). Format 2 passage snapshots
# recorded fields ["body"] and no "query": they search as before. Format 5 (issue 50) ranks English rows
# with ROW_INDEX_PARAMETERS (row_ranking.py); format 3 and 4 snapshots keep these.
TITLE_FIRST_PASSAGE = "first passage of each title"
PASSAGE_INDEX_PARAMETERS = {
    **INDEX_PARAMETERS,
    "fields": ["body", "title"],
    "body": "title, newline, text",
    "title": TITLE_FIRST_PASSAGE,
    "title_boost": 1.0,
    "query": "terms",
}
QUERY_SYNTAX = "syntax"  # tantivy's query parser (the default, and every snapshot before format 3)
QUERY_TERMS = "terms"  # each distinct analyzed term once, any field may match: no phrases, no operators
PRUNED_QUERIES = (QUERY_TERMS, QUERY_COUNTS)  # query modes a build writes impact postings for (impacts.py)
# The bounds of every search, the one home of both (the search tool and the server's requests allow
# less or cut here; see TOOL_MAX_K in sandboxes/tools/search.py and MAX_REQUEST_QUERY_CHARS in server/models.py):
MAX_QUERY_CHARS = 2_000  # the engine reads this much of a query; the rest is ignored (Snapshot.search)
MAX_K = 100  # the most results one search returns (Snapshot.search, /retrieve's topk)
# tantivy's indexing arena: it grows with the documents added until this budget, then becomes a segment. About
# 770 bytes a 100-word passage, so 512 MB fills at ~650k passages and a build's memory is flat beyond that (issue 48;
# 1 GB grew to ~1.3M). Scores are the same over any segmentation (BM25 statistics are the searcher's, over all segments).
_WRITER_HEAP = 512_000_000
# A language other than English (corpora/search/analyzers.py) is analyzed in Python and indexed as its terms
# joined by spaces, through this tokenizer; its parameters add ``analyzer`` (absent: English).
TERMS_TOKENIZER = "analyzed_terms"


def with_language(parameters: dict, language: str) -> dict:
    """``parameters`` for an index of ``language``: unchanged for English, else with its ``analyzer``
    recorded, the analyzed-terms tokenizer, and queries read as their terms (no tantivy syntax).

    >>> with_language(INDEX_PARAMETERS, "en") is INDEX_PARAMETERS
    True
    >>> with_language(INDEX_PARAMETERS, "zh")["analyzer"]["name"]
    'cjk_bigram'
    """
    analyzer = analyzer_for(language)
    if analyzer is None:
        return parameters
    return {**parameters, "tokenizer": TERMS_TOKENIZER, "query": QUERY_TERMS, "analyzer": analyzer.parameters()}


def passage_parameters(language: str) -> dict:
    """How a passage-level snapshot (row corpora, ``--passages``) of ``language`` is indexed: English rows as
    format 5 ranks them (:data:`ROW_INDEX_PARAMETERS`), other languages as format 3 did
    (:data:`PASSAGE_INDEX_PARAMETERS`, through :func:`with_language`)."""
    return ROW_INDEX_PARAMETERS if analyzer_for(language) is None else PASSAGE_INDEX_PARAMETERS


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
    index.register_tokenizer(ROW_TOKENIZER, row_analyzer())
    index.register_tokenizer(TERMS_TOKENIZER, tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build())


def index_schema(tokenizer: str = INDEX_PARAMETERS["tokenizer"]) -> tantivy.Schema:
    """The tantivy schema: ``doc_id`` (fast, for ranking ties), ``title`` and ``body``."""
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("doc_id", stored=False, indexed=True, fast=True)
    builder.add_text_field("title", stored=False, tokenizer_name=tokenizer)
    builder.add_text_field("body", stored=False, tokenizer_name=tokenizer)
    return builder.build()


def document_fields(title: str, body: str, title_in_body: bool, with_title: bool,
                    analyzer: BigramAnalyzer | None) -> dict[str, str]:
    """The field texts of one (non-page) document: ``title`` when ``with_title``, and ``body`` (``title``,
    newline, ``body`` when ``title_in_body``); a language's ``analyzer`` gives its terms joined by spaces."""
    analyzed = analyzer.stream if analyzer is not None else str
    fields = {"title": analyzed(title)} if with_title else {}
    fields["body"] = analyzed(f"{title}\n{body}" if title_in_body else body)
    return fields


class IndexBuilder:
    """Writes the index of a snapshot being built; documents must come in doc_id order.

    ``title_in_body`` indexes the body as ``title + "\n" + text``; ``title_once`` gives the title
    field to the first document of each title only (:data:`PASSAGE_INDEX_PARAMETERS`). ``language``
    other than English indexes the terms of its analyzer (:func:`with_language`). ``passage_words``
    indexes each (English) page as passages of that many words (:data:`PAGE_INDEX_PARAMETERS`). ``tokenizer``
    names the English analyzer (default ``en_stem_stop``; format 5 rows: ``ROW_TOKENIZER``).
    """

    def __init__(self, directory: Path, threads: int = 1, title_in_body: bool = False, title_once: bool | DigestSet = False,
                 language: str = "en", passage_words: int | None = None, tokenizer: str | None = None) -> None:
        self._title_in_body = title_in_body  # title_once a set: the title digests that had their field (a shard's)
        self._titled = (DigestSet(16) if title_once is True else title_once) if title_once is not False else None
        self.title_flags = bytearray()  # a byte a row document: 1 where it has the title field (for impacts_build.py)
        self._analyzer, self._passage_words = analyzer_for(language), passage_words
        directory.mkdir(parents=True, exist_ok=True)
        if tokenizer is None or self._analyzer is not None:
            tokenizer = INDEX_PARAMETERS["tokenizer"] if self._analyzer is None else TERMS_TOKENIZER
        if passage_words:  # several documents per doc_id: no sort needed (the ranking breaks every tie itself)
            self._index = tantivy.Index(page_schema(tokenizer), path=str(directory), reuse=False)
        else:
            self._index = tantivy.Index(index_schema(tokenizer), path=str(directory), reuse=False, sort_by_field="doc_id")
        _register_analyzer(self._index)
        self._writer = self._index.writer(_WRITER_HEAP * max(1, threads), max(1, threads))
        self.count, self.finished = 0, False

    def add(self, doc_id: int, title: str, body: str) -> None:
        """Add one document."""
        if self._passage_words:
            for document in page_documents(doc_id, title, body, self._passage_words):
                self._writer.add_document(document)
            self.count += 1
            return
        document = tantivy.Document()
        document.add_unsigned("doc_id", doc_id)
        with_title = self._titled is None or self._titled.add(digest(title, 16))
        self.title_flags.append(with_title)
        for field, value in document_fields(title, body, self._title_in_body, with_title, self._analyzer).items():
            document.add_text(field, value)
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
        self.passages = bool(parameters.get("passage_words"))  # format 4 pages: a page is its best passage
        self._boosts = {"title": self._title_boost, "body_terms": parameters.get("body_terms_boost")}
        self._title_exact_boost = parameters.get("title_exact_boost")
        self._query_mode = parameters.get("query", QUERY_SYNTAX)
        self._proximity = parameters.get("proximity")  # format 5 rows: adjacent query terms as sloppy phrases
        self._tokenizer = parameters.get("tokenizer", INDEX_PARAMETERS["tokenizer"])
        self.analyzer = analyzer_from_parameters(parameters)  # None: English (tantivy's analyzer)
        if self._query_mode not in (QUERY_SYNTAX, QUERY_TERMS, QUERY_COUNTS):
            raise DataError(f"unknown query mode {self._query_mode!r} in the index parameters (this stillweb reads "
                             f"{QUERY_SYNTAX!r}, {QUERY_TERMS!r} and {QUERY_COUNTS!r}): upgrade stillweb to search this snapshot")
        self._index = tantivy.Index.open(str(directory))
        _register_analyzer(self._index)
        self._searcher = self._index.searcher()
        self.num_docs = self._searcher.num_docs if not self.passages else page_count(self._searcher)
        self._single_segment = self._searcher.num_segments == 1
        self._address_is_doc_id = self._single_segment and _addresses_are_doc_ids(directory, self._searcher)
        # Pruned exact BM25 (impacts.py, issue 48) where the build wrote impact postings; else tantivy, exhaustive.
        self._impacts = ImpactIndex(directory / IMPACTS_DIR) if parameters.get("impacts") else None

    def _parse(self, query: str, fields: list[str]) -> tantivy.Query:
        if self._query_mode == QUERY_TERMS:
            return self._terms_query(query, fields)
        boosts = {field: boost for field, boost in self._boosts.items() if field in fields and boost}
        if self._query_mode == QUERY_COUNTS:
            terms = _shared_analyzer(self._tokenizer).analyze(query)
            return counted_terms_query(self._index.schema, terms, fields, boosts, self._proximity)
        try:
            return self._index.parse_query(query, fields, field_boosts=boosts)
        except ValueError:
            parsed, _errors = self._index.parse_query_lenient(query, fields, field_boosts=boosts)
            return parsed

    def _clauses(self, query: str, fields: list[str]) -> list[tuple[str, str, float | None]]:
        """``(field, term, boost)`` for each of the query's distinct analyzed terms in each of ``fields``
        (boost ``None``: none). A repeated term counts once (as tantivy's parser also does), or as often
        as it is said in query mode ``"term counts"`` (format 5); a query of stop words alone has none."""
        boosts = {field: boost for field, boost in self._boosts.items() if field in fields and boost}
        if self._query_mode == QUERY_COUNTS:
            return counted_clauses(_shared_analyzer(self._tokenizer).analyze(query), fields, boosts)
        terms = _shared_analyzer().analyze(query) if self.analyzer is None else self.analyzer.terms(query)
        return [(field, term, boosts.get(field)) for term in dict.fromkeys(terms) for field in fields]

    def _terms_query(self, query: str, fields: list[str]) -> tantivy.Query:
        """Any of :meth:`_clauses` (query mode ``"terms"``), as a tantivy query."""
        schema = self._index.schema
        clauses = []
        for field, term, boost in self._clauses(query, fields):
            clause = tantivy.Query.term_query(schema, field, term)
            clauses.append((tantivy.Occur.Should, clause if boost is None else tantivy.Query.boost_query(clause, boost)))
        return tantivy.Query.boolean_query(clauses) if clauses else tantivy.Query.empty_query()

    def search(self, query: str, k: int, fields: tuple[str, ...] | None = None) -> list[tuple[int, float]]:
        """Top ``k`` ``(doc_id, BM25 score)`` pairs for agent text ``query`` (already validated),
        ties by doc_id, over ``fields`` (default: the snapshot's searched fields);
        :meth:`stillweb.corpora.snapshot.reading.Snapshot.search` makes them
        :class:`~stillweb.corpora.snapshot.records.SearchResult` hits.

        With query mode ``"syntax"`` it parses strictly first (faster) and falls back to tantivy's
        lenient parser for text that is not valid query syntax (``don't``, ``alpha (``...); with
        ``"terms"`` every text is read as its terms.
        """
        if self.passages:
            return [(doc_id, score) for doc_id, score, _start in self.search_passages(query, k, fields)]
        text = _rust_safe(query[:MAX_QUERY_CHARS])  # lone surrogates replaced, as a browser would
        if self._impacts is not None:
            return self._pruned(text, list(fields or self.fields), k)
        parsed = self._parse(text, list(fields or self.fields))
        return self._top_single_segment(parsed, k) if self._single_segment else self._top_tie_safe(parsed, k)

    def search_passages(self, query: str, k: int, fields: tuple[str, ...] | None = None) -> list[tuple[int, float, int]]:
        """Format 4 pages: the top ``k`` ``(doc_id, score, byte offset of the best passage)``, as
        :meth:`search` ranks them."""
        text = _rust_safe(query[:MAX_QUERY_CHARS])
        exact = bool(self._title_exact_boost and fields is None)
        if self._impacts is not None:
            clauses = self._clauses(text, list(fields or self.fields))
            if exact and exact_title(text):
                clauses.append(("title_exact", exact_title(text), self._title_exact_boost))
            return top_pages(partial(self._impacts.top_passages, clauses), k)
        parsed = self._parse(text, list(fields or self.fields))
        if exact:
            parsed = with_exact_title(self._index.schema, parsed, text, self._title_exact_boost)
        return top_pages(partial(tantivy_passages, self._searcher, parsed), k)

    def _pruned(self, text: str, fields: list[str], k: int) -> list[tuple[int, float]]:
        """Top ``k`` from the impact postings; format 5's proximity clauses scored by tantivy on the candidates."""
        if self._query_mode != QUERY_COUNTS:
            return self._impacts.top(self._clauses(text, fields), k)
        terms = _shared_analyzer(self._tokenizer).analyze(text)
        pairs = proximity_pairs(terms, self._proximity, fields)
        scores = partial(proximity_scores, self._searcher, self._index.schema, self._proximity, pairs, self._hits)
        return self._impacts.top(self._clauses(text, fields), k, pairs, scores,
                                 *((self._proximity["field"], self._proximity["boost"]) if pairs else ()))

    def _hits(self, hits: list) -> list[tuple[int, float]]:
        """tantivy's ``(score, address)`` hits as ``(doc_id, score)``."""
        if self._address_is_doc_id:  # skip the fast-field read: the segment-local address is the doc_id
            return [(address.doc, score) for score, address in hits]
        ids = self._searcher.fast_field_values("doc_id", [address for _score, address in hits])
        return [(doc_id, score) for (score, _address), doc_id in zip(hits, ids)]

    def _top_single_segment(self, parsed: tantivy.Query, k: int) -> list[tuple[int, float]]:
        """tantivy's own top k: its collector breaks score ties by doc address, which in one
        segment sorted by doc_id is doc_id order (``test_snapshot`` checks this against
        :meth:`_top_tie_safe`)."""
        return self._hits(self._searcher.search(parsed, k, count=False).hits)

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


def matching_spans(text: str, query: str, analyzer: BigramAnalyzer | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` character spans of the words of ``text`` that the index matches
    for ``query``: the words whose analyzed term (the index's own tokenizer, tantivy's
    English stemmer included) is a term of the analyzed query, in text order.

    The viewer marks these words in snippets and documents; no second stemmer. ``analyzer``: the
    snapshot's (``Snapshot.analyzer``; ``None`` is English), whose overlapping bigrams merge into runs.

    >>> text = "The rivers meet; a river runs."
    >>> [text[start:end] for start, end in matching_spans(text, "river")]
    ['rivers', 'river']
    """
    if analyzer is not None:
        return _merged_spans(text, query, analyzer)
    analyzer = _shared_analyzer()
    wanted = set(analyzer.analyze(_rust_safe(query[:MAX_QUERY_CHARS])))
    if not wanted or not text:
        return []
    # Replacing lone surrogates keeps every character in place, so the offsets fit ``text``.
    tokens = analyzer.pre_tokenize(_rust_safe(text)).tokens
    return [(token.char_offset_from, token.char_offset_to) for token in tokens if token.text in wanted]


def _merged_spans(text: str, query: str, analyzer: BigramAnalyzer) -> list[tuple[int, int]]:
    """Spans of ``text``'s terms that are query terms, overlapping ones (bigrams of a run) merged.

    >>> text = "北京是中国的首都"
    >>> [text[start:end] for start, end in matching_spans(text, "中国首都", analyzer_for("zh"))]
    ['中国', '首都']
    """
    wanted = set(analyzer.terms(query[:MAX_QUERY_CHARS]))
    spans: list[tuple[int, int]] = []
    for start, end, term in analyzer.spans(text) if wanted else ():
        if term in wanted:
            if spans and start < spans[-1][1]:
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((start, end))
    return spans


@cache
def _shared_analyzer(tokenizer: str = INDEX_PARAMETERS["tokenizer"]) -> tantivy.TextAnalyzer:
    return row_analyzer() if tokenizer == ROW_TOKENIZER else _analyzer()


def _rust_safe(text: str) -> str:
    """``text`` with lone surrogates (which cannot cross into Rust) replaced by ``?``, one for one."""
    return text.encode("utf-8", "replace").decode("utf-8")
