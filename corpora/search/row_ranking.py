"""Format 5 row ranking: English row corpora and passages, each row indexed whole (issue 50).

A row corpus (``stillweb build corpus``: BEIR abstracts, wiki-18 passages, HotpotQA paragraphs) and a
dump cut with ``--passages`` are indexed one tantivy document per row, as formats 3 and 4 did
(:data:`~stillweb.corpora.search.index.PASSAGE_INDEX_PARAMETERS`: ``title + "\\n" + text`` as the body,
the title field on the first row of each title). Format 5 changes how they rank:

- **Query term counts.** A term the query repeats weighs as many times, as Anserini's bag-of-words
  query generator (Pyserini's default) and bm25s score a query: a long, verbose request ("What
  problems ... in retrieving titles ... titles?") says what matters by repeating it.
- **Single letters are stop words**, as bm25s's token pattern (two word characters or more) drops them:
  tantivy's tokenizer cuts ``DDC's`` into ``ddc`` and ``s``, and initials into letters that match
  half the corpus.
- **Proximity.** Each pair of adjacent query terms also matches as a phrase with up to
  :data:`PROXIMITY_SLOP` positions between them, weighted :data:`PROXIMITY_BOOST`: the ordered-window
  part of Metzler and Croft's sequential dependence model ("A Markov random field model for term
  dependencies", SIGIR 2005), which Anserini and Terrier ship as SDM.
- The title field (first row of each title) weighs 0.5 instead of 1.

Chosen on the dev collections of ``scripts/bench_collections.py`` (Cranfield, CISI, and the tune half
of the HotpotQA / 2Wiki paragraphs), by the rule of issues 37 and 43: the candidate whose worst ratio
to the better of bm25s and Pyserini over recall@10 and nDCG@10 of the dev sets is highest; held-out
sets were evaluated once, after the choice (BENCHMARKS.md, issue 50). Tantivy's BM25 keeps k1 = 1.2
and b = 0.75: its Python binding does not expose them. Other languages keep the format 3 ranking.
"""

from __future__ import annotations

import string
from collections.abc import Callable

import numpy as np
import tantivy

__all__ = ["ROW_INDEX_PARAMETERS", "ROW_TOKENIZER", "QUERY_COUNTS", "PROXIMITY_SLOP", "PROXIMITY_BOOST",
           "row_analyzer", "counted_clauses", "proximity_pairs", "counted_terms_query", "proximity_query", "proximity_scores"]

ROW_TOKENIZER = "en_stem_stop_letters"  # en_stem_stop, and single letters dropped as stop words
QUERY_COUNTS = "term counts"  # each distinct analyzed term, weighted by how often the query says it
PROXIMITY_SLOP = 16  # positions of the indexed text, stop words included
PROXIMITY_BOOST = 0.2
ROW_INDEX_PARAMETERS = {
    "engine": "tantivy",
    "tokenizer": ROW_TOKENIZER,
    "fields": ["body", "title"],
    "body": "title, newline, text",
    "title": "first passage of each title",
    "title_boost": 0.5,
    "query": QUERY_COUNTS,
    "proximity": {"pairs": "adjacent query terms, in order", "slop": PROXIMITY_SLOP, "boost": PROXIMITY_BOOST,
                  "field": "body"},
    "units": "one document per row",
    "ranking": "bm25 + proximity, ties by doc_id",
}


def row_analyzer() -> tantivy.TextAnalyzer:
    """tantivy's ``en_stem_stop`` analyzer (simple tokens, long ones dropped, lowercased, English stop
    words, English stemmer) with the 26 single letters as stop words too.

    >>> row_analyzer().analyze("DDC's 18 editions by J. Comaromi")
    ['ddc', '18', 'edit', 'comaromi']
    """
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stopword("english"))
        .filter(tantivy.Filter.custom_stopword(list(string.ascii_lowercase)))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def counted_clauses(terms: list[str], fields: list[str], boosts: dict[str, float]) -> list[tuple[str, str, float | None]]:
    """``(field, term, weight)`` for each distinct term of ``terms`` (in order) in each of ``fields``: the
    term's count times the field's boost (``None`` for a weight of 1: no boost)."""
    counts: dict[str, int] = {}
    for term in terms:
        counts[term] = counts.get(term, 0) + 1
    clauses = []
    for term, count in counts.items():
        for field in fields:
            weight = count * boosts.get(field, 1.0)
            clauses.append((field, term, None if weight == 1 else weight))
    return clauses


def proximity_pairs(terms: list[str], proximity: dict | None, fields: list[str]) -> list[tuple[str, str]]:
    """The distinct pairs of adjacent different terms, in order, when ``proximity`` applies to ``fields``."""
    if not proximity or proximity["field"] not in fields:
        return []
    return list(dict.fromkeys((first, second) for first, second in zip(terms, terms[1:]) if first != second))


def counted_terms_query(schema: tantivy.Schema, terms: list[str], fields: list[str], boosts: dict[str, float],
                        proximity: dict | None) -> tantivy.Query:
    """Each distinct term of ``terms`` (in order) in any of ``fields``, weighted by its count (times the
    field's boost), and, with ``proximity``, each distinct pair of adjacent terms as a phrase in its
    ``field`` with ``slop`` positions, weighted ``boost``. No terms: a query that matches nothing."""
    clauses = []
    for field, term, weight in counted_clauses(terms, fields, boosts):
        clause = tantivy.Query.term_query(schema, field, term)
        clauses.append((tantivy.Occur.Should, clause if weight is None else tantivy.Query.boost_query(clause, weight)))
    for pair in proximity_pairs(terms, proximity, fields):
        clauses.append((tantivy.Occur.Should, proximity_query(schema, pair, proximity)))
    return tantivy.Query.boolean_query(clauses) if clauses else tantivy.Query.empty_query()


def proximity_query(schema: tantivy.Schema, pair: tuple[str, str], proximity: dict) -> tantivy.Query:
    """One proximity clause: ``pair`` as a phrase in ``proximity``'s field with its slop, weighted by its boost."""
    phrase = tantivy.Query.phrase_query(schema, proximity["field"], list(pair), proximity["slop"])
    return tantivy.Query.boost_query(phrase, proximity["boost"])


def proximity_scores(searcher: tantivy.Searcher, schema: tantivy.Schema, proximity: dict, pairs: list[tuple[str, str]],
                     doc_ids_of: Callable[[list], list[tuple[int, float]]], units) -> list[np.ndarray]:
    """tantivy's float32 score of each proximity clause (a row a pair) for the doc_ids ``units`` alone (the
    candidates of pruned search, ``impacts.py``); ``doc_ids_of`` turns tantivy's hits into ``(doc_id, score)``."""
    ids = [int(unit) for unit in units]
    only = tantivy.Query.const_score_query(tantivy.Query.term_set_query(schema, "doc_id", ids), 0.0)
    rows = []
    for pair in pairs:  # the candidates' filter scores 0: each score is the clause's own, to the bit
        query = tantivy.Query.boolean_query([(tantivy.Occur.Must, only), (tantivy.Occur.Must, proximity_query(schema, pair, proximity))])
        found = dict(doc_ids_of(searcher.search(query, len(ids), count=False).hits))
        rows.append(np.asarray([found.get(unit, 0.0) for unit in ids], dtype=np.float32))
    return rows
