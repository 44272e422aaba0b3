"""Building snapshots from row corpora: no row dropped or merged silently, source ids kept,
dedupe and strict policies, passages, and a failed build of every reader leaving the
previous snapshot intact."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stillweb.cli.main import main as cli_main
from stillweb.corpora.build.from_source import build_rows
from stillweb.corpora.snapshot.manifest import verify_snapshot
from stillweb.corpora.build.accounting import RowSkipError
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.sandboxes.tools.documents import FindTool, OpenTool

# Paragraph rows sharing page titles, as every passage corpus has (the 1,839 -> 1,605 case).
PARAGRAPHS = [
    {"id": "p1", "url": "https://en.wikipedia.org/wiki/Lunor", "title": "Lunor", "text": "Lunor is a river city founded in 1204."},
    {"id": "p2", "url": "https://en.wikipedia.org/wiki/Lunor", "title": "Lunor", "text": "The bridge of Lunor spans the Vell."},
    {"id": "p3", "url": "https://en.wikipedia.org/wiki/Ostra", "title": "Ostra", "text": "Ostra is the capital of Velland."},
    {"id": "p4", "url": "https://en.wikipedia.org/wiki/Lunor", "title": "Lunor", "text": "Lunor has a cathedral and a market."},
]


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def test_every_row_is_a_document_and_keeps_its_id(tmp_path):
    result = build_rows([write_jsonl(tmp_path / "paras.jsonl", PARAGRAPHS)], tmp_path / "snap", progress=False)
    snap = Snapshot.open(result.path)
    assert len(snap) == 4
    assert [snap.get(i).source_id for i in range(4)] == ["p1", "p2", "p3", "p4"]
    assert result.manifest["counts"]["rows"] == {"read": 4, "written": 4, "redirects": 0, "missing_title": 0, "skipped": {},
                                                 "skipped_examples": {}, "dedupe": "none"}
    hit = snap.search("bridge Vell", k=1)[0]
    assert (hit.doc_id, hit.source_id) == (1, "p2")
    assert snap.resolve("Lunor") == 0 and snap.passages_of(3) == [0, 1, 3]


def test_open_a_title_reads_all_its_passages_and_find_searches_them(tmp_path):
    snap = Snapshot.open(build_rows([write_jsonl(tmp_path / "p.jsonl", PARAGRAPHS)], tmp_path / "s", progress=False).path)
    whole = OpenTool(snap).run({"doc": "Lunor"})
    assert whole.text.startswith("[doc 0] Lunor (3 passages)")
    assert whole.text.index("[passage 0 | id p1]") < whole.text.index("[passage 1 | id p2]") < whole.text.index("[passage 3 | id p4]")
    assert [p["source_id"] for p in whole.data["passages"]] == ["p1", "p2", "p4"]
    one = OpenTool(snap).run({"doc": 3})
    assert "passage 3 of 3 with this title" in one.text and "cathedral" in one.text and "bridge" not in one.text
    assert one.data["source_id"] == "p4"
    found = FindTool(snap).run({"doc": "Lunor", "pattern": "cathedral"})
    assert found.data["total"] == 1 and 'open({"doc": "Lunor", "page": 1})' in found.text


def test_cli_reports_rows_read_written_and_skipped(tmp_path, capsys):
    source = write_jsonl(tmp_path / "p.jsonl", PARAGRAPHS + ['{"id": "p5", "text": ""}', "{oops"])
    assert cli_main(["build", "corpus", str(source), "--out", str(tmp_path / "s"), "--quiet", "--workers", "1"]) == 0
    assert "rows: read 6, written 4, skipped 2 (empty_text 1, not_json 1)" in capsys.readouterr().out
    rows = Snapshot.open(tmp_path / "s").manifest["counts"]["rows"]
    assert rows["skipped"] == {"empty_text": 1, "not_json": 1}
    assert rows["skipped_examples"]["not_json"][0].startswith("p.jsonl:row 6: not_json")


def test_strict_fails_on_the_first_skip_naming_row_and_reason(tmp_path, capsys):
    source = write_jsonl(tmp_path / "p.jsonl", PARAGRAPHS[:2] + ['{"id": "p9", "title": "X", "text": " "}'])
    with pytest.raises(RowSkipError, match=r"p.jsonl:row 3: empty_text"):
        build_rows([source], tmp_path / "s", strict=True, progress=False)
    assert cli_main(["build", "corpus", str(source), "--out", str(tmp_path / "s"), "--quiet", "--strict"]) == 2
    assert "p.jsonl:row 3: empty_text" in capsys.readouterr().err


def test_duplicate_ids_are_an_error_naming_both_rows_unless_dedupe_id(tmp_path):
    rows = PARAGRAPHS + [dict(PARAGRAPHS[1], text="A different text under a reused id.")]
    source = write_jsonl(tmp_path / "p.jsonl", rows)
    with pytest.raises(RowSkipError, match=r"duplicate source id 'p2': p.jsonl:row 2 and p.jsonl:row 5.*--dedupe id"):
        build_rows([source], tmp_path / "s", progress=False)
    result = build_rows([source], tmp_path / "s", dedupe="id", progress=False)
    assert result.manifest["counts"]["rows"]["skipped"] == {"duplicate_id": 1} and result.manifest["counts"]["docs"] == 4


@pytest.mark.parametrize("policy,docs", [("title", 2), ("text", 4)])
def test_dedupe_title_and_text(tmp_path, policy, docs):
    rows = PARAGRAPHS + [dict(PARAGRAPHS[2], id="p5")]  # same title and text as p3, new id
    result = build_rows([write_jsonl(tmp_path / "p.jsonl", rows)], tmp_path / "s", dedupe=policy, progress=False)
    assert result.manifest["counts"]["docs"] == docs
    assert result.manifest["counts"]["rows"]["skipped"] == {f"duplicate_{policy}": 5 - docs}


def test_passages_split_pages_into_word_windows(tmp_path):
    page = {"id": "7", "title": "Lunor", "text": " ".join(f"w{i}" for i in range(25))}
    result = build_rows([write_jsonl(tmp_path / "p.jsonl", [page])], tmp_path / "s", passages=10, progress=False)
    snap = Snapshot.open(result.path)
    assert [(snap.get(i).source_id, snap.get(i).title, len(snap.get(i).text.split())) for i in range(len(snap))] == [
        ("7-0", "Lunor", 10), ("7-1", "Lunor", 10), ("7-2", "Lunor", 5)]
    assert result.manifest["parameters"]["passage_words"] == 10 and result.manifest["counts"]["rows"]["written"] == 1


def _truncated_gzip(tmp_path: Path) -> list[str]:
    whole = gzip.compress("".join(json.dumps({"id": str(i), "contents": f'"T{i}"\nword ' * 40}) + "\n" for i in range(3000)).encode())
    (tmp_path / "cut.jsonl.gz").write_bytes(whole[: len(whole) // 2])
    return [str(tmp_path / "cut.jsonl.gz")]


def _kilt_not_json(tmp_path: Path) -> list[str]:
    write_jsonl(tmp_path / "kilt.jsonl", [{"_id": "1", "wikipedia_title": "A", "text": ["a"]}, "{broken"])
    return [str(tmp_path / "kilt.jsonl"), "--strict"]


def _beir_duplicate_ids(tmp_path: Path) -> list[str]:
    (tmp_path / "beir").mkdir()
    write_jsonl(tmp_path / "beir" / "corpus.jsonl", [{"_id": "d", "title": "A", "text": "a"}, {"_id": "d", "title": "B", "text": "b"}])
    return [str(tmp_path / "beir")]


def _csv_missing_column(tmp_path: Path) -> list[str]:
    (tmp_path / "c.csv").write_text("key,words\n1,x\n", encoding="utf-8")
    return [str(tmp_path / "c.csv")]


def _tsv_non_utf8_strict(tmp_path: Path) -> list[str]:
    (tmp_path / "c.tsv").write_bytes(b"0\tgood\n1\tcaf\xe9\n")
    return [str(tmp_path / "c.tsv"), "--strict"]


def _damaged_parquet(tmp_path: Path) -> list[str]:
    (tmp_path / "d.parquet").write_bytes(b"PAR1 not really parquet")
    return [str(tmp_path / "d.parquet")]


def _dataset_dict(tmp_path: Path) -> list[str]:
    import datasets  # a core dependency (pyproject.toml): no skip

    datasets.DatasetDict({"train": datasets.Dataset.from_list(PARAGRAPHS)}).save_to_disk(str(tmp_path / "dd"))
    return [str(tmp_path / "dd")]


@pytest.mark.parametrize("make_bad_input", [_truncated_gzip, _kilt_not_json, _beir_duplicate_ids, _csv_missing_column,
                                            _tsv_non_utf8_strict, _damaged_parquet, _dataset_dict])
def test_a_failed_build_leaves_the_previous_snapshot_intact(tmp_path, capsys, make_bad_input):
    out = tmp_path / "snap"
    before = build_rows([write_jsonl(tmp_path / "good.jsonl", PARAGRAPHS)], out, progress=False).manifest["fingerprint"]
    args = make_bad_input(tmp_path)
    assert cli_main(["build", "corpus", *args, "--out", str(out), "--quiet", "--workers", "1"]) == 2
    error = capsys.readouterr().err
    assert "error:" in error and "Traceback" not in error
    assert Snapshot.open(out).fingerprint == before and verify_snapshot(out) == []
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".snap")) == []


BUILD_SCRIPT = """
import sys
from stillweb.corpora.build.from_source import build_rows
result = build_rows([sys.argv[1]], sys.argv[2], passages=3, workers=int(sys.argv[3]))
sys.stdout.write(result.manifest["fingerprint"] + " " + result.manifest["files"]["docs.parquet"])
"""


def test_row_builds_are_identical_across_processes_and_report_progress_lines(tmp_path):
    source = write_jsonl(tmp_path / "p.jsonl", PARAGRAPHS)
    runs = [subprocess.run([sys.executable, "-c", BUILD_SCRIPT, str(source), str(tmp_path / f"s{n}"), str(n)],
                           capture_output=True, text=True, check=True) for n in (1, 2)]
    assert runs[0].stdout == runs[1].stdout and len(runs[0].stdout) == 129
    # stderr is a pipe here: progress is whole lines, no carriage-return redraws
    assert "\r" not in runs[0].stderr and runs[0].stderr.splitlines()[-1].startswith("building: 4 pages [")


def test_dump_builds_keep_page_ids_as_source_ids(small_snapshot):
    snap = Snapshot.open(small_snapshot)
    ids = [snap.source_id_of(i) for i in range(len(snap))]
    assert all(i.isdigit() for i in ids) and len(set(ids)) == len(ids)
    assert snap.manifest["counts"]["rows"]["written"] == len(snap) and snap.manifest["counts"]["rows"]["redirects"] > 0


def test_reading_a_long_title_pages_on_by_title(tmp_path):
    rows = [{"id": f"p{i}", "title": "Lunor", "text": f"Paragraph {i} of Lunor. " + "word " * 300} for i in range(12)]
    snap = Snapshot.open(build_rows([write_jsonl(tmp_path / "p.jsonl", rows)], tmp_path / "s", progress=False).path)
    first = OpenTool(snap).run({"doc": "Lunor"})
    assert first.data["pages"] > 1 and 'Next page: open({"doc": "Lunor", "page": 2})' in first.text
    assert first.shown_docs == tuple(range(12)) and first.opened_doc == 0
    assert OpenTool(snap).run({"doc": 5}).shown_docs == (5,)
