"""Format 4 page ranking (issue 43): a page scores as its best passage, exactly, whatever tantivy does with ties."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from stillweb.corpora.search.page_ranking import PAGE_INDEX_PARAMETERS
from stillweb.corpora.search.page_ranking import exact_title, passage_spans
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.search.snippets import SNIPPET_CHARS

QUERIES = ["river city", "Which country has capital", "born", "the of and", "population 1812 founded university",
           "award album director", "x" * 50]


def reference_pages(snapshot: Snapshot, query: str, k: int) -> list[tuple[int, float, int]]:
    """Every matching passage scored, then each page as its best one: the slow, obviously right ranking."""
    index = snapshot._index
    text = query
    parsed = index._parse(text, list(index.fields))
    from stillweb.corpora.search.page_ranking import with_exact_title

    parsed = with_exact_title(index._index.schema, parsed, text, PAGE_INDEX_PARAMETERS["title_exact_boost"])
    hits = index._searcher.search(parsed, index._searcher.num_docs or 1, count=False).hits
    addresses = [address for _score, address in hits]
    best: dict[int, tuple[float, int]] = {}
    for (score, _a), doc_id, start in zip(hits, index._searcher.fast_field_values("doc_id", addresses),
                                         index._searcher.fast_field_values("start", addresses)):
        if doc_id not in best or (score, -start) > (best[doc_id][0], -best[doc_id][1]):
            best[doc_id] = (score, start)
    return sorted(((doc_id, score, start) for doc_id, (score, start) in best.items()), key=lambda h: (-h[1], h[0]))[:k]


def test_a_new_page_snapshot_records_the_format_4_ranking(small_snapshot):
    manifest = Snapshot.open(small_snapshot).manifest
    assert manifest["format"] == "stillweb-snapshot/6"  # formats 5 and 6 changed how rows rank and how all are searched
    assert {key: value for key, value in manifest["index"].items() if key not in ("segments", "impacts")} == PAGE_INDEX_PARAMETERS
    assert manifest["index"]["impacts"]["units"] > len(Snapshot.open(small_snapshot))  # pruned search's postings: passages


@pytest.mark.parametrize("k", [1, 3, 10, 37])
def test_pages_rank_as_their_best_passage(small_snapshot, k):
    snapshot = Snapshot.open(small_snapshot)
    titles = [snapshot.title_of(doc) for doc in range(0, len(snapshot), 29)]
    for query in QUERIES + titles + [f"{title} capital" for title in titles]:
        assert snapshot._index.search_passages(query, k) == reference_pages(snapshot, query, k), query
        assert [(r.doc_id, r.score) for r in snapshot.search(query, k)] == [
            (doc_id, score) for doc_id, score, _start in reference_pages(snapshot, query, k)]


def test_a_hit_shows_the_opening_of_its_best_passage(small_snapshot):
    snapshot = Snapshot.open(small_snapshot)
    for query in ("river city", "Which country has capital", "award album director"):
        for (doc_id, _score, start), result in zip(snapshot._index.search_passages(query, 10), snapshot.search(query, 10)):
            data = snapshot._texts.bytes(doc_id)
            expected = data[start : start + SNIPPET_CHARS].decode("utf-8", errors="ignore").replace("\n", " ")
            assert result.snippet == expected + ("..." if start + SNIPPET_CHARS < len(data) else "")
            assert start == 0 or data[start - 1 : start].isspace()


def test_an_exact_title_finds_its_page_first(small_snapshot):
    snapshot = Snapshot.open(small_snapshot)
    seen: dict[str, int] = {}
    for doc in range(len(snapshot)):
        seen.setdefault(exact_title(snapshot.title_of(doc)), doc)
    for key, doc in list(seen.items())[::7]:
        assert snapshot.search(snapshot.title_of(doc).upper(), 1)[0].doc_id == doc, key


def test_passages_cover_the_text_in_order_without_cutting_words():
    text = ("Capital: Lunor\nArea: 5\n\n" + " ".join(f"w{i}" for i in range(250)) + "\nlast line here\n").encode()
    spans = passage_spans(text, 100)
    assert [len(text[s:e].split()) for s, e in spans] == [4, 100, 100, 50 + 3]
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    assert b" ".join(text[s:e] for s, e in spans).split() == text.split()
    assert passage_spans(b"  \n ", 100) == [(0, 4)]


def test_page_search_is_the_same_in_two_processes(small_snapshot):
    code = ("import json, sys; from stillweb.corpora.snapshot.reading import Snapshot; s = Snapshot.open(sys.argv[1]); "
            f"print(json.dumps([[vars(r) for r in s.search(q, 10)] for q in {QUERIES!r}], ensure_ascii=False))")
    runs = [subprocess.run([sys.executable, "-c", code, str(small_snapshot)], capture_output=True, check=True).stdout
            for _ in range(2)]
    assert runs[0] == runs[1] and json.loads(runs[0])[0]
