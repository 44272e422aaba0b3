"""corpora/build/bounded.py (issue 48): a pool fed through InFlight never runs more than its window ahead of the
consumer, and DigestSet answers as a Python set would, across its merges."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stillweb.corpora.build import bounded
from stillweb.corpora.build.accounting import RowSkipError
from stillweb.corpora.build.bounded import DigestSet, InFlight
from stillweb.corpora.build.from_source import build_rows
from stillweb.corpora.processes import process_context


def _square(n: int) -> int:
    return n * n


def test_a_pool_fed_through_the_window_stays_within_it():
    window, produced = InFlight(3), []

    def items():
        for n in range(40):
            produced.append(n)
            yield n

    with process_context().Pool(2) as pool:
        ahead = []
        for taken, result in enumerate(pool.imap(_square, window.feed(items())), 1):
            window.taken()
            assert result == (taken - 1) ** 2
            time.sleep(0.01)  # a slow consumer: without the window the feeder reads all 40 at once
            ahead.append(len(produced) - taken)
    assert max(ahead) <= 3 + 1 and len(produced) == 40  # the window, and the item read while waiting for a slot


def test_closing_the_window_lets_a_terminated_pool_stop():
    window = InFlight(2)
    pool = process_context().Pool(2)
    results = pool.imap(_square, window.feed(iter(range(10**9))))
    assert next(results) == 0
    window.close()  # the feeder waits for a slot; terminate() joins it
    pool.terminate()
    pool.join()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.binary(min_size=4, max_size=4), max_size=200), st.integers(1, 9))
def test_digest_set_is_a_set(keys, recent):
    keys += [key[:3] + b"\x00" for key in keys[:20]]  # digests ending in NUL, which numpy's bytes would strip
    seen, reference = DigestSet(4, recent=recent), set()
    for key in keys:
        assert seen.add(key) == (key not in reference)
        reference.add(key)
        assert key in seen and len(seen) == len(reference)
    assert all((bytes([b]) * 4 in seen) == (bytes([b]) * 4 in reference) for b in range(256))


def test_a_repeated_id_is_named_after_the_sets_merged(tmp_path, monkeypatch):
    monkeypatch.setattr(bounded, "RECENT", 4)  # merge after every 4 new ids
    rows = [{"id": f"p{i}", "contents": f'"T{i}"\nword {i}'} for i in range(30)] + [{"id": "p2", "contents": '"X"\nx'}]
    source = tmp_path / "p.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(RowSkipError, match=r"duplicate source id 'p2': p.jsonl:row 3 and p.jsonl:row 31"):
        build_rows([source], tmp_path / "s", progress=False)
    result = build_rows([source], tmp_path / "s", dedupe="id", progress=False)
    assert result.manifest["counts"]["docs"] == 30 and result.manifest["counts"]["rows"]["skipped"] == {"duplicate_id": 1}
    source.write_text("".join(json.dumps({"id": str(i), "contents": f'"T{i % 7}"\nword {i}'}) + "\n" for i in range(30)))
    titled = build_rows([source], tmp_path / "t", dedupe="title", progress=False, workers=2)
    assert titled.manifest["counts"]["docs"] == 7 and titled.manifest["counts"]["rows"]["skipped"] == {"duplicate_title": 23}


def test_a_build_in_several_segments_searches_as_one(tmp_path, monkeypatch):
    """The indexing arena's budget decides where segments end; rankings and scores do not depend on it."""
    import importlib.util

    from stillweb.corpora.search import index as index_module
    from stillweb.corpora.snapshot.reading import Snapshot
    from support.paths import REPO

    spec = importlib.util.spec_from_file_location("bench_scale", REPO / "scripts" / "bench_scale.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.make_corpus(tmp_path / "c.jsonl", 30_000, vocabulary=30_000)
    one = Snapshot.open(build_rows([tmp_path / "c.jsonl"], tmp_path / "one", progress=False).path)
    monkeypatch.setattr(index_module, "_WRITER_HEAP", 15_000_000)  # tantivy's smallest arena
    many = Snapshot.open(build_rows([tmp_path / "c.jsonl"], tmp_path / "many", progress=False).path)
    assert one.manifest["index"]["segments"] == 1 < many.manifest["index"]["segments"]
    assert one.fingerprint == many.fingerprint
    for query in bench.make_queries(40, 3, vocabulary=30_000) + bench.make_queries(40, 8, vocabulary=30_000):
        assert [(hit.doc_id, hit.score) for hit in one.search(query, 10)] == \
               [(hit.doc_id, hit.score) for hit in many.search(query, 10)], query
