"""Pruned exact BM25 (issue 48): the impact postings answer exactly what exhaustive scoring answers.

Three answers to each query over the same snapshot must be identical, documents and float32 scores:
the pruned path (block-max MaxScore over the impact postings, what ``Snapshot.search`` uses), the
exhaustive scoring of the same postings (``exhaustive_top``), and tantivy's exhaustive search of
the snapshot's tantivy index (the path of snapshots without impact postings).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stillweb.corpora.build.from_source import build_rows
from stillweb.corpora.search.impacts import IMPACTS_DIR, exhaustive_top
from stillweb.corpora.search.index import SearchIndex, _shared_analyzer
from stillweb.corpora.search.row_ranking import proximity_pairs, proximity_query
from stillweb.corpora.snapshot.reading import Snapshot
from support.chinese import build_chinese_snapshot
from support.rankings import same_as_tantivy

ROWS, VOCABULARY, WORDS = 3000, 4000, 40


def zipf_words(seed: int, count: int) -> list[str]:
    """``count`` words drawn by a Zipf law (exponent 1.05) over a made-up vocabulary, seeded."""
    ranks = np.arange(1, VOCABULARY + 1)
    weights = 1.0 / ranks ** 1.05
    drawn = np.random.default_rng(seed).choice(VOCABULARY, size=count, p=weights / weights.sum())
    return [f"w{rank}x" for rank in drawn]


def write_rows(folder: Path) -> Path:
    """Row-corpus passages whose words follow a Zipf law: common words in nearly every passage, most rare."""
    words = zipf_words(1, ROWS * WORDS)
    titles = zipf_words(2, ROWS)
    path = folder / "corpus.jsonl"
    with path.open("w") as out:
        for row in range(ROWS):
            text = " ".join(words[row * WORDS:(row + 1) * WORDS])
            out.write(json.dumps({"id": f"r{row}", "contents": f'"{titles[row // 3]} {row % 7}"\n{text}'}) + "\n")
    return path


def queries() -> list[str]:
    words = zipf_words(3, 400)
    return [" ".join(words[i:i + 3]) for i in range(0, 150, 3)] + [" ".join(words[i:i + 8]) for i in range(150, 400, 8)]


@pytest.fixture(scope="module")
def passages(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("zipf")
    return build_rows([write_rows(folder)], folder / "snap", progress=False).path


def tantivy_index(path: Path) -> SearchIndex:
    """The snapshot's tantivy index searched as snapshots without impact postings are (exhaustively)."""
    parameters = {key: value for key, value in Snapshot.open(path).manifest["index"].items() if key != "impacts"}
    return SearchIndex(path / "index", parameters)


def exhaustive(snapshot: Snapshot, query: str, k: int) -> list[tuple[int, float]]:
    """Every posting of every clause scored (format 5: every proximity match too, by tantivy), no pruning."""
    index = snapshot._index
    terms = _shared_analyzer(index._tokenizer).analyze(query)
    extra = []
    for pair in proximity_pairs(terms, index._proximity, list(index.fields)):
        hits = index._searcher.search(proximity_query(index._index.schema, pair, index._proximity), ROWS, count=False).hits
        found = index._hits(hits)
        extra.append((np.asarray([doc for doc, _ in found], dtype=np.int64), np.asarray([s for _, s in found], dtype=np.float32)))
    return exhaustive_top(index._impacts, index._clauses(query, list(index.fields)), k, extra)


@pytest.mark.parametrize("k", [1, 10, 100])
def test_pruned_equals_exhaustive_and_tantivy(passages, k):
    snapshot = Snapshot.open(passages)
    index, reference = snapshot._index, tantivy_index(passages)
    assert index._impacts is not None and reference._impacts is None
    assert snapshot.manifest["index"]["proximity"]  # format 5 rows: proximity clauses bounded, then scored by tantivy
    pruned_some = 0
    for query in queries():
        pruned = index.search(query, k)
        assert pruned == exhaustive(snapshot, query, k), query
        assert same_as_tantivy(pruned, reference.search(query, k)), query
        assert [(hit.doc_id, hit.score) for hit in snapshot.search(query, k)] == pruned
        clauses = index._clauses(query, list(index.fields))
        index._impacts.top(clauses, k)
        pruned_some += index._impacts.last_scored < len(exhaustive_top(index._impacts, clauses, ROWS))
    assert pruned_some > len(queries()) // 2  # the bounds skipped documents: pruning was exercised, not bypassed


def test_title_only_search_uses_the_title_postings(passages):
    snapshot = Snapshot.open(passages)
    title = snapshot.title_of(30)
    assert snapshot._index.search(title, 5, fields=("title",)) == tantivy_index(passages).search(title, 5, fields=("title",))
    assert snapshot.nearest_titles(title, 3)[0] == title


def test_chinese_bigrams_search_the_same_through_the_impact_postings(tmp_path):
    path = build_chinese_snapshot(tmp_path).path
    index, reference = Snapshot.open(path)._index, tantivy_index(path)
    assert index._impacts is not None
    for query in ("北京", "中國的首都", "首都 capital", "上海 经济 中心", "the"):
        pruned = index.search(query, 10)
        assert pruned == exhaustive_top(index._impacts, index._clauses(query, list(index.fields)), 10), query
        assert same_as_tantivy(pruned, reference.search(query, 10)), query


def test_an_old_snapshot_without_the_record_searches_with_tantivy(passages, tmp_path):
    """A snapshot whose manifest records no impact postings (every snapshot before issue 48) is searched by tantivy."""
    assert tantivy_index(passages)._impacts is None
    assert Snapshot.open(passages).manifest["index"]["impacts"]["postings"] > ROWS


@pytest.mark.slow
def test_the_impact_postings_are_the_same_bytes_in_two_processes(passages, tmp_path):
    rows = next((passages.parent).glob("corpus.jsonl"))
    script = ("import sys; from stillweb.corpora.build.from_source import build_rows; "
              "build_rows([sys.argv[1]], sys.argv[2], progress=False, workers=2)")
    digests = []
    for name in ("one", "two"):
        subprocess.run([sys.executable, "-c", script, str(rows), str(tmp_path / name)], check=True)
        folder = tmp_path / name / "index" / IMPACTS_DIR
        digests.append({file.name: hashlib.sha256(file.read_bytes()).hexdigest() for file in sorted(folder.iterdir())})
    assert digests[0] == digests[1]
    built_here = passages / "index" / IMPACTS_DIR
    assert digests[0] == {file.name: hashlib.sha256(file.read_bytes()).hexdigest() for file in sorted(built_here.iterdir())}
