"""scripts/bench_scale.py: the generated Zipf corpora (issue 48) are seeded wiki-18 rows with the law they claim,
and a timed build of one reads back every row."""

from __future__ import annotations

import collections
import math
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_scale.py"
_spec = importlib.util.spec_from_file_location("bench_scale", SCRIPT)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

WRITE = ("import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; import bench_scale; "
         "print(bench_scale.make_corpus(Path(sys.argv[2]), 3000, seed=4, vocabulary=50000)['sha256'])")


def test_corpus_bytes_are_the_same_in_two_processes(tmp_path):
    hashes = [subprocess.run([sys.executable, "-c", WRITE, str(SCRIPT.parent), str(tmp_path / f"c{i}.jsonl")],
                             check=True, capture_output=True, text=True).stdout.strip() for i in (0, 1)]
    assert hashes[0] == hashes[1] and len(hashes[0]) == 64
    assert (tmp_path / "c0.jsonl").read_bytes() == (tmp_path / "c1.jsonl").read_bytes()
    other = bench.make_corpus(tmp_path / "other.jsonl", 3000, seed=5, vocabulary=50000)
    assert other["sha256"] != hashes[0]


def test_rows_are_wiki18_passages_with_a_zipf_law(tmp_path):
    made = bench.make_corpus(tmp_path / "c.jsonl", 2000, vocabulary=50000)
    rows = [json.loads(line) for line in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert [row["id"] for row in rows] == [str(i) for i in range(2000)] and made["passages"] == 2000
    titles, texts = zip(*(row["contents"].split("\n") for row in rows))
    assert all(title.startswith('"') and title.endswith('"') and len(title) > 2 for title in titles)
    assert all(len(text.split()) == bench.PASSAGE_WORDS for text in texts)
    assert made["articles"] == 1 + sum(a != b for a, b in zip(titles, titles[1:]))  # consecutive passages share one
    assert 2000 / 5 < made["articles"] < 2000 / 2.5  # 3.6 passages per article on average
    counts = collections.Counter(word for text in texts for word in text.split())
    ranked = [count for _word, count in counts.most_common()]
    total = sum(ranked)
    # p(r) = ln((r + 1 + q) / (r + q)) / ln((V + q) / q) ~ 1 / (r + q + 0.5), the discrete law the CDF inversion draws
    def share(rank: int) -> float:
        return math.log((rank + 1 + 2.7) / (rank + 2.7)) / math.log((50000 + 2.7) / 2.7)

    for rank in (0, 1, 9):
        assert abs(ranked[rank] / total - share(rank)) < 0.1 * share(rank), rank
    assert counts.most_common(1)[0][0] == "ba"  # rank 0 spells 'ba'


def test_queries_come_from_the_same_law_with_their_own_stream():
    three, eight = bench.make_queries(500, 3, vocabulary=50000), bench.make_queries(500, 8, vocabulary=50000)
    assert [len(q.split()) for q in three] == [3] * 500 and [len(q.split()) for q in eight] == [8] * 500
    assert three == bench.make_queries(500, 3, vocabulary=50000) and three != bench.make_queries(500, 3, seed=1,
                                                                                               vocabulary=50000)
    assert collections.Counter(" ".join(eight).split()).most_common(1)[0][0] == "ba"


def test_time_build_measures_a_real_build(tmp_path):
    bench.make_corpus(tmp_path / "c.jsonl", 1500, vocabulary=20000)
    figures = bench.time_build(tmp_path / "c.jsonl", tmp_path / "snap", workers=1)
    manifest = json.loads((tmp_path / "snap" / "manifest.json").read_text())
    assert manifest["counts"]["docs"] == 1500 and figures["fingerprint"] == manifest["fingerprint"]
    assert figures["tree_mib"] > 0 and figures["largest_mib"] > 0 and figures["wall"] > 0 and figures["cpu"] > 0  # sampled: a spike may fall between samples
    rows = [("this checkout", 1000, dict(figures, tree_mib=100.0)), ("this checkout", 2000, dict(figures, tree_mib=150.0))]
    assert bench.memory_slope(rows, target=4000)[-1].endswith("250 MiB")  # +50 MiB per 1,000 passages
