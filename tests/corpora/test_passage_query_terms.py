"""Passage snapshots of format 3 (issue 37) read a query as its distinct terms over the body (title,
newline, text) and a title field that only the first passage of each title has; format 2 passage
snapshots keep tantivy query syntax over the body alone. Format 5 (issue 50) builds rank English rows
with query term counts, single letters as stop words and adjacent-term proximity; a format 3-4 row index
(``copy_with_index`` with ``PASSAGE_INDEX_PARAMETERS``, as those formats built it) still ranks as before."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stillweb.corpora.build.from_source import build_rows
from stillweb.corpora.build.snapshot_writer import copy_with_index
from stillweb.corpora.search.index import PASSAGE_INDEX_PARAMETERS, QUERY_TERMS
from stillweb.corpora.search.row_ranking import QUERY_COUNTS, ROW_INDEX_PARAMETERS
from stillweb.corpora.snapshot.manifest import SnapshotError
from stillweb.corpora.snapshot.reading import Snapshot

ROWS = [
    ("p1", "Lunor", "Lunor is a river city founded in 1204 on the Vell."),
    ("p2", "Lunor", "The river port of Lunor trades salt and film stock."),
    ("p3", "Vell", "The Vell is a river that flows to the sea."),
    ("p4", "Kest", "Kest is a mountain village known for cheese and film festivals."),
    ("p5", "Film in Ostra", "Ostra's film studios opened in 1931."),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """This code's build of ROWS (format 5)."""
    folder = tmp_path_factory.mktemp("rows")
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in ROWS))
    return build_rows([folder / "corpus.jsonl"], folder / "snap", progress=False).path


@pytest.fixture(scope="module")
def passages(built) -> tuple[Snapshot, Snapshot]:
    """The rows as a format 3-4 snapshot indexed them, and the same rows and index as a format 2 snapshot recorded them."""
    new = copy_with_index(built, built.parent / "snap4", PASSAGE_INDEX_PARAMETERS, "stillweb-snapshot/4")
    old = built.parent / "snap2"
    shutil.copytree(new, old)
    manifest = json.loads((old / "manifest.json").read_text())
    manifest.update(format="stillweb-snapshot/2", index={"engine": "tantivy", "tokenizer": "en_stem_stop", "fields": ["body"],
                                                          "body": "title, newline, text", "ranking": "bm25, ties by doc_id"})
    (old / "manifest.json").write_text(json.dumps(manifest))
    return Snapshot.open(new), Snapshot.open(old)


def ranked(snapshot: Snapshot, query: str) -> list[tuple[str, float]]:
    return [(hit.source_id, hit.score) for hit in snapshot.search(query, 10)]


def test_the_manifest_records_how_queries_are_read(passages, built):
    new, old = passages
    assert new.manifest["format"] == "stillweb-snapshot/4" and new.manifest["index"]["query"] == QUERY_TERMS
    manifest = Snapshot.open(built).manifest
    assert manifest["format"] == "stillweb-snapshot/6" and manifest["index"]["query"] == QUERY_COUNTS
    assert {k: v for k, v in manifest["index"].items() if k not in ("segments", "impacts")} == ROW_INDEX_PARAMETERS
    assert {k: v for k, v in new.manifest["index"].items() if k not in ("segments", "impacts")} == PASSAGE_INDEX_PARAMETERS
    assert "query" not in old.manifest["index"] and old.fingerprint == new.fingerprint  # the manifest was edited only


def test_a_repeated_term_counts_once(passages):
    new, old = passages
    assert ranked(new, "film film film studios") == ranked(new, "film studios")
    assert ranked(old, "film film film studios") == ranked(old, "film studios")  # as tantivy's parser did


def test_a_word_the_tokenizer_splits_is_terms_not_a_phrase(passages):
    new, old = passages
    assert ranked(old, "Kest's") == []  # format 2: the phrase "kest s", in no passage
    assert [source for source, _ in ranked(new, "Kest's")][:1] == ["p4"]
    assert [source for source, _ in ranked(new, "Vell-river")][:1] == ["p3"]


def test_query_syntax_is_read_as_words(passages):
    new, old = passages
    assert {source for source, _ in ranked(new, "-river Lunor")} == {"p1", "p2", "p3"}  # '-' is not "must not"
    assert {source for source, _ in ranked(old, "-river Lunor")} == set()  # format 2: Lunor's passages both say river
    assert ranked(new, 'title:Vell "sea river"') == ranked(new, "title Vell sea river")
    assert ranked(new, "the of and") == [] and ranked(new, "AND OR NOT") == []


def test_the_title_lifts_the_first_passage_of_its_page_once(passages):
    new, old = passages
    lunor_new, lunor_old = dict(ranked(new, "Lunor river")), dict(ranked(old, "Lunor river"))
    assert lunor_new["p1"] > lunor_old["p1"]  # Lunor's first passage: body and title match
    assert lunor_new["p2"] == lunor_old["p2"] and lunor_new["p3"] == lunor_old["p3"]  # the body alone, as before
    assert [source for source, _ in ranked(new, "film")][:1] == ["p5"]  # "Film in Ostra"
    assert new.nearest_titles("Lunor", 3) == ["Lunor"]  # one title hit per page


def test_an_unknown_query_mode_says_to_upgrade(passages, tmp_path):
    new, _old = passages
    copy = tmp_path / "snap"
    shutil.copytree(new.path, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["index"]["query"] = "semantic"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SnapshotError, match="unknown query mode 'semantic'.*upgrade stillweb"):
        Snapshot.open(copy)


def test_format_5_counts_repeated_terms_drops_single_letters_and_rewards_adjacent_terms(built):
    """Issue 50: a term said three times weighs more; "s" of "Ostra's" is no term; and two query words
    near each other in a passage add a proximity score to their own."""
    new = Snapshot.open(built)
    assert ranked(new, "film film film studios")[0][1] > ranked(new, "film studios")[0][1]
    assert ranked(new, "Ostra's") == ranked(new, "Ostra") and ranked(new, "s t") == []
    alone = dict(ranked(new, "cheese"))["p4"] + dict(ranked(new, "mountain"))["p4"]
    assert dict(ranked(new, "mountain cheese"))["p4"] > alone + 1e-3  # near each other in p4: the pair adds
    assert abs(dict(ranked(new, "Kest sea"))["p3"] - dict(ranked(new, "sea"))["p3"]) < 1e-6  # no Kest in p3
    assert {k: v for k, v in new.manifest["index"]["proximity"].items()} == ROW_INDEX_PARAMETERS["proximity"]


def test_a_newer_format_is_refused_by_name(passages, tmp_path):
    copy = tmp_path / "snap"
    shutil.copytree(passages[0].path, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["format"] = "stillweb-snapshot/7"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SnapshotError, match="format 'stillweb-snapshot/7'; this stillweb reads .*stillweb-snapshot/6"):
        Snapshot.open(copy)


@pytest.mark.parametrize("which", ["format 4", "format 5"])
def test_same_passage_query_same_bytes_in_two_processes(passages, built, which):
    path = passages[0].path if which == "format 4" else built
    script = textwrap.dedent(f"""
        from stillweb.corpora.snapshot.reading import Snapshot
        snap = Snapshot.open({str(path)!r})
        for q in ["river city", "film film Ostra", "-river (Lunor", "Kest's cheese?"]:
            print([(r.doc_id, r.title, repr(r.score), r.snippet) for r in snap.search(q, k=5)])
        """)
    outputs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
               for _ in range(2)]
    assert outputs[0] == outputs[1] and outputs[0].count("[(") == 4
