"""Tests of the Hugging Face ``wikimedia/wikipedia`` reader (parquet and JSON lines)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stillweb.corpora.sources.hf_wikipedia import read_hf

ROWS = [
    {"id": "12", "url": "https://en.wikipedia.org/wiki?curid=12", "title": "Anarchism", "text": "Anarchism is..."},
    {"id": "25", "url": "https://en.wikipedia.org/wiki?curid=25", "title": "Autism", "text": "Autism is..."},
]


def write_parquet(path: Path, rows: list[dict]) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_parquet_rows_become_plaintext_pages(tmp_path: Path) -> None:
    pages = list(read_hf(write_parquet(tmp_path / "wiki.parquet", ROWS)))
    assert [(p.title, p.text, p.url, p.is_wikitext, p.position) for p in pages] == [
        ("Anarchism", "Anarchism is...", ROWS[0]["url"], False, "wiki.parquet:row 0"),
        ("Autism", "Autism is...", ROWS[1]["url"], False, "wiki.parquet:row 1"),
    ]


def test_jsonl_and_directory_in_name_order(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "b.jsonl", ROWS[1:])
    write_parquet(tmp_path / "a.parquet", ROWS[:1])
    (tmp_path / "README.md").write_text("not data")
    assert [p.title for p in read_hf(tmp_path)] == ["Anarchism", "Autism"]
    assert next(read_hf(tmp_path / "b.jsonl")).position == "b.jsonl:line 1"


def test_url_is_optional(tmp_path: Path) -> None:
    rows = [{"title": "T", "text": "x"}]
    assert next(read_hf(write_parquet(tmp_path / "w.parquet", rows))).url == ""


@pytest.mark.parametrize("writer", [write_parquet, write_jsonl])
def test_missing_column_names_column_and_file(tmp_path: Path, writer) -> None:
    suffix = ".parquet" if writer is write_parquet else ".jsonl"
    path = writer(tmp_path / f"bad{suffix}", [{"id": "1", "url": "u", "title": "T"}])
    with pytest.raises(ValueError, match=rf"bad{suffix}.*missing column 'text'"):
        list(read_hf(path))


def test_bad_values_name_file_and_row(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"w.parquet: row 0: column 'title' holds None"):
        list(read_hf(write_parquet(tmp_path / "w.parquet", [{"title": None, "text": "x"}])))
    broken = tmp_path / "w.jsonl"
    broken.write_text('{"title": "T", "text": "x"}\n{not json\n')
    with pytest.raises(ValueError, match=r"w.jsonl: line 2 is not valid JSON"):
        list(read_hf(broken))


def test_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        list(read_hf(tmp_path / "absent.parquet"))
    with pytest.raises(ValueError, match="holds no"):
        list(read_hf(tmp_path))
    (tmp_path / "data.csv").write_text("title,text\n")
    with pytest.raises(ValueError, match="expected a"):
        list(read_hf(tmp_path / "data.csv"))


READ_SCRIPT = """
import hashlib, sys
from stillweb.corpora.sources.hf_wikipedia import read_hf
sys.stdout.write(hashlib.sha256(repr(list(read_hf(sys.argv[1]))).encode()).hexdigest())
"""


def test_reading_is_identical_across_processes(tmp_path: Path) -> None:
    write_parquet(tmp_path / "a.parquet", ROWS)
    write_jsonl(tmp_path / "b.jsonl", ROWS)
    runs = [
        subprocess.run([sys.executable, "-c", READ_SCRIPT, str(tmp_path)], capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    assert runs[0].stdout == runs[1].stdout and len(runs[0].stdout) == 64
