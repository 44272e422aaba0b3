"""``build corpus``: a row without a title is titled by its id and counted (``missing_title``); no URL is
made up (empty unless the corpus has one or ``--url-template`` says how); a repeated id names the right rows."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from stillweb.corpora.build.from_source import build_rows


def _write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


ROWS = [{"id": "d3", "title": "Ostra", "text": "Ostra is a capital.", "url": "https://example.org/ostra"},
        {"id": "d1", "title": "Lunor", "text": "Lunor is a river city.", "url": ""},
        {"id": "d2", "text": "A passage without a title."}]


def test_missing_title_is_the_id_and_counted_and_no_url_is_made_up(tmp_path):
    result = build_rows([_write(tmp_path / "rows.jsonl", ROWS)], tmp_path / "snap", progress=False)
    docs = pq.read_table(tmp_path / "snap" / "docs.parquet").to_pylist()
    assert [(doc["title"], doc["url"]) for doc in docs] == [("Ostra", "https://example.org/ostra"), ("Lunor", ""), ("d2", "")]
    assert result.manifest["counts"]["rows"]["missing_title"] == 1


def test_url_template_fills_rows_without_a_url(tmp_path):
    build_rows([_write(tmp_path / "rows.jsonl", ROWS)], tmp_path / "snap", progress=False,
               url_template="https://example.org/doc/{id}?t={title}")
    urls = [doc["url"] for doc in pq.read_table(tmp_path / "snap" / "docs.parquet").to_pylist()]
    assert urls == ["https://example.org/ostra", "https://example.org/doc/d1?t=Lunor", "https://example.org/doc/d2?t=d2"]
    with pytest.raises(ValueError, match="only {id} and {title}"):
        build_rows([tmp_path / "rows.jsonl"], tmp_path / "snap2", progress=False, url_template="https://x/{doc}")


def test_synthetic_documents_get_no_made_up_url(small_snapshot):
    urls = set(pq.read_table(small_snapshot / "docs.parquet", columns=["url"]).column("url").to_pylist())
    assert urls == {""}


def test_repeated_id_after_an_empty_row_names_both_rows_in_one_cli_line(tmp_path):
    rows = _write(tmp_path / "dup.jsonl", [{"id": "z", "text": ""}, {"id": "a", "text": "one"}, {"id": "a", "text": "two"}])
    cli = subprocess.run([sys.executable, "-m", "stillweb.cli.main", "build", "corpus", str(rows), "--out",
                          str(tmp_path / "snap"), "--quiet", "--workers", "1"], capture_output=True, text=True)
    assert cli.returncode == 2 and cli.stderr.count("\n") == 1, cli.stderr
    assert "dup.jsonl:row 2 and" in cli.stderr and "dup.jsonl:row 3" in cli.stderr and "--dedupe id" in cli.stderr
