"""Snapshots of real Wikipedia and of Hugging Face parquet, through the CLI, with their bad inputs."""

from __future__ import annotations

import bz2
import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stillweb.cli.main import main as cli_main
from stillweb.corpora.snapshot.reading import Snapshot
from support.paths import WIKI_SAMPLE

MARKUP = re.compile(r"\{\{|\}\}|\[\[|\]\]|<ref|'''|\{\||\|\}")


@pytest.fixture(scope="module")
def wiki(wiki_snapshot) -> Snapshot:
    return Snapshot.open(wiki_snapshot)


def test_real_sample_counts_and_search(wiki):
    counts = wiki.manifest["counts"]
    assert counts["docs"] == 106
    assert counts["redirects"] >= 10  # redirects whose target is among the 106 articles
    assert wiki.search("Lincoln president assassination", k=3)[0].title == "Abraham Lincoln"


def test_lincoln_has_a_typed_birth_date_and_entity_facts(wiki):
    lincoln = wiki.get("Abraham Lincoln")
    facts = wiki.facts(subject=lincoln.doc_id)
    births = [f for f in facts if f.relation == "birth_date"]
    assert births and births[0].value_type == "date" and births[0].date == "1809-02-12"
    linked = {f.value for f in facts if f.value_type == "entity"}
    assert {"Hannibal Hamlin", "James Buchanan"} <= linked
    assert "Birth date: 1809-02-12" in lincoln.text  # facts are stated in the evidence text


def test_redirect_titles_find_their_targets(wiki):
    assert wiki.redirects, "the sample has redirects to its own articles"
    for alias, doc_id in list(wiki.redirects.items())[:20]:
        assert wiki.get(alias).doc_id == doc_id


def test_no_markup_leaks_into_any_document(wiki):
    for doc_id in range(len(wiki)):
        text = wiki.get(doc_id).text
        assert not MARKUP.search(text), (wiki.title_of(doc_id), MARKUP.search(text).group(0))


def test_a_dump_cut_off_mid_page_is_an_error_and_skip_bad_counts_and_names_the_cut_page(tmp_path, shared_data, capsys):
    """The real sample cut off inside its third article (page 17, 'Albedo'): without --skip-bad an error naming the page
    and the byte; with it a snapshot of the pages before, the cut page counted and named in the manifest and on the
    console (it once built without a word: skipped_bad_pages=0)."""
    data = bz2.decompress((shared_data / WIKI_SAMPLE).read_bytes())
    end = data.index(b"<title>Albedo</title>") + 2000
    broken = tmp_path / "broken.xml"
    broken.write_bytes(data[:end])
    out = tmp_path / "snap"
    assert cli_main(["build", "wikipedia", str(broken), "--out", str(out), "--workers", "1", "--quiet"]) == 2
    error = capsys.readouterr().err
    assert f"inside page 17 ('Albedo'), near decompressed byte {end}" in error, error
    assert not out.exists()
    assert cli_main(["build", "wikipedia", str(broken), "--out", str(out), "--workers", "1", "--quiet", "--skip-bad"]) == 0
    printed = capsys.readouterr()
    manifest = Snapshot.open(out).manifest
    counts = manifest["counts"]
    assert counts["docs"] == 2 and counts["skipped_bad_pages"] == 1  # Anarchism and Autism; Albedo is cut
    cut = counts["dump_ended_early"]["cut_page"]
    assert cut.startswith(f"page 17 ('Albedo') is cut off near decompressed byte {end}: "), cut
    assert "inside page 17 ('Albedo')" in counts["dump_ended_early"]["reason"]
    assert counts["rows"]["skipped"]["bad_page"] == 1 and counts["rows"]["skipped_examples"]["bad_page"] == [cut]
    assert "page 17 ('Albedo') is cut off: skipped, counted in skipped_bad_pages" in printed.err, printed.err
    assert "skipped_bad_pages=1" in printed.out and "bad_page 1" in printed.out
    assert str(tmp_path) not in json.dumps(manifest)  # the manifest names the dump by its file name only


def test_build_parquet_from_the_huggingface_layout(tmp_path, capsys):
    rows = {
        "id": ["1", "2", "3"],
        "url": [f"https://en.wikipedia.org/wiki/Page_{i}" for i in range(3)],
        "title": ["Alpha river", "Beta mountain", "Gamma lake"],
        "text": ["The Alpha river flows east.", "Beta mountain is tall.", "Gamma lake is deep and cold."],
    }
    source = tmp_path / "wiki.parquet"
    pq.write_table(pa.table(rows), source)
    out = tmp_path / "snap"
    assert cli_main(["build", "parquet", str(source), "--out", str(out), "--workers", "1", "--quiet"]) == 0
    snap = Snapshot.open(out)
    assert len(snap) == 3 and snap.facts_table.num_rows == 0
    assert snap.search("cold lake", k=1)[0].title == "Gamma lake"
    assert snap.get(0).url == rows["url"][0]
    pq.write_table(pa.table({"title": rows["title"]}), tmp_path / "bad.parquet")
    assert cli_main(["build", "parquet", str(tmp_path / "bad.parquet"), "--out", str(tmp_path / "b"), "--quiet"]) == 2
    assert "text" in capsys.readouterr().err


def test_info_and_verify_on_a_missing_snapshot_are_clear_errors(tmp_path, capsys):
    assert cli_main(["info", str(tmp_path / "none")]) == 2
    assert cli_main(["verify", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert "not found" in err and "Traceback" not in err


@pytest.mark.slow  # builds the real-Wikipedia snapshot (~20 s on a loaded 2-core machine)
def test_info_json_has_fingerprint_and_counts(wiki_snapshot, capsys):
    assert cli_main(["info", str(wiki_snapshot), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert len(info["fingerprint"]) == 64 and info["counts"]["docs"] == 106
