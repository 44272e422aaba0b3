"""Tests of the row-corpus readers: formats, detection, compression, globs, column
mappings, and every bad-input case named by the issue (a clear error or a counted skip)."""

from __future__ import annotations

import bz2
import gzip
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stillweb.corpora.snapshot.records import RawPage, SkippedRow
from stillweb.corpora.sources.files import CorpusFileError, expand_inputs
from stillweb.corpora.sources.corpus_formats import ColumnMap, CorpusSpec, detect_format

HF_ROWS = [
    {"id": "12", "url": "https://en.wikipedia.org/wiki?curid=12", "title": "Anarchism", "text": "Anarchism is..."},
    {"id": "25", "url": "https://en.wikipedia.org/wiki?curid=25", "title": "Autism", "text": "Autism is..."},
]


def write_jsonl(path: Path, rows: list, opener=open) -> Path:
    with opener(path, "wt", encoding="utf-8") as handle:
        handle.write("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows))
    return path


def read(inputs, **kwargs) -> list[RawPage | SkippedRow]:
    return list(CorpusSpec.detect([str(i) for i in (inputs if isinstance(inputs, list) else [inputs])], **kwargs).read())


def pages(items) -> list[tuple[str, str, str]]:
    return [(p.source_id, p.title, p.text) for p in items if isinstance(p, RawPage)]


def test_wiki18_jsonl_keeps_ids_and_splits_the_title(tmp_path):
    path = write_jsonl(tmp_path / "wiki18.jsonl", [{"id": "0", "contents": '"Aaron"\nAaron is a prophet.'},
                                                  {"id": "1", "contents": '"Aaron"\nHe was the brother of Moses.'}])
    assert detect_format([path]) == "wiki18"
    items = read(path)
    assert pages(items) == [("0", "Aaron", "Aaron is a prophet."), ("1", "Aaron", "He was the brother of Moses.")]
    assert items[1].position == "wiki18.jsonl:row 2" and not items[0].is_wikitext


def test_beir_folder_reads_corpus_jsonl(tmp_path):
    folder = tmp_path / "scifact"
    folder.mkdir()
    write_jsonl(folder / "corpus.jsonl", [{"_id": "d1", "title": "Cells", "text": "Cells divide.", "metadata": {}}])
    write_jsonl(folder / "queries.jsonl", [{"_id": "q1", "text": "do cells divide"}])
    assert detect_format([folder]) == "beir"
    assert pages(read(folder)) == [("d1", "Cells", "Cells divide.")]


def test_kilt_paragraph_lists_become_one_page(tmp_path):
    row = {"_id": "290", "wikipedia_id": "290", "wikipedia_title": "A", "text": ["A\n", "A is a letter.\n", "It is a vowel."]}
    path = write_jsonl(tmp_path / "kilt.jsonl", [row])
    assert detect_format([path]) == "kilt"
    assert pages(read(path)) == [("290", "A", "A\n\nA is a letter.\n\nIt is a vowel.")]


def test_parquet_hf_layout_and_url(tmp_path):
    pq.write_table(pa.Table.from_pylist(HF_ROWS), tmp_path / "wiki.parquet")
    items = read(tmp_path / "wiki.parquet")
    assert pages(items) == [("12", "Anarchism", "Anarchism is..."), ("25", "Autism", "Autism is...")]
    assert items[0].url == HF_ROWS[0]["url"] and items[0].position == "wiki.parquet:row 1"


def test_parquet_row_groups_are_shards_with_file_row_numbers(tmp_path):
    rows = [{"id": str(i), "text": f"passage {i}"} for i in range(10)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "p.parquet", row_group_size=4)
    spec = CorpusSpec.detect([tmp_path / "p.parquet"])
    shards = spec.shards()
    assert [shard.part for shard in shards] == [0, 1, 2]
    second = list(spec.read_shard(shards[1]))
    assert [p.source_id for p in second] == ["4", "5", "6", "7"] and second[0].position == "p.parquet:row 5"


def test_save_to_disk_folder(tmp_path):
    import datasets  # a core dependency (pyproject.toml): no skip

    datasets.Dataset.from_list(HF_ROWS).save_to_disk(str(tmp_path / "saved"))
    assert detect_format([tmp_path / "saved"]) == "hf-disk"
    assert pages(read(tmp_path / "saved")) == pages(read(write_jsonl(tmp_path / "same.jsonl", HF_ROWS)))
    datasets.DatasetDict({"train": datasets.Dataset.from_list(HF_ROWS)}).save_to_disk(str(tmp_path / "dict"))
    with pytest.raises(CorpusFileError, match=r"DatasetDict with splits train; pass one split folder"):
        read(tmp_path / "dict")


def test_csv_and_tsv_with_and_without_header(tmp_path):
    (tmp_path / "c.csv").write_text('doc,body,title\nx1,"Text, with comma",T\n', encoding="utf-8")
    columns = ColumnMap(id="doc", text="body")
    assert pages(read(tmp_path / "c.csv", columns=columns)) == [("x1", "T", "Text, with comma")]
    (tmp_path / "collection.tsv").write_text("0\tThe presence of communication.\n1\tManhattan project.\n", encoding="utf-8")
    assert pages(read(tmp_path / "collection.tsv")) == [("0", "0", "The presence of communication."), ("1", "1", "Manhattan project.")]  # untitled: the id
    (tmp_path / "psgs.tsv").write_text('id\ttext\ttitle\n1\t"Aaron is a prophet"\tAaron\n', encoding="utf-8")
    assert pages(read(tmp_path / "psgs.tsv")) == [("1", "Aaron", "Aaron is a prophet")]


@pytest.mark.parametrize("suffix,opener", [(".gz", gzip.open), (".bz2", bz2.open), (".zst", None)])
def test_compressed_inputs_read_like_plain(tmp_path, suffix, opener):
    path = tmp_path / f"c.jsonl{suffix}"
    if opener is None:
        with pa.CompressedOutputStream(str(path), "zstd") as out:
            out.write("".join(json.dumps(row) + "\n" for row in HF_ROWS).encode())
    else:
        write_jsonl(path, HF_ROWS, opener)
    assert pages(read(path)) == pages(read(write_jsonl(tmp_path / "plain.jsonl", HF_ROWS)))


def test_several_inputs_and_globs_in_stated_order(tmp_path):
    for name, row in (("b.jsonl", HF_ROWS[1]), ("a.jsonl", HF_ROWS[0])):
        write_jsonl(tmp_path / name, [row])
    (tmp_path / "README.md").write_text("not data")
    assert [p.name for p in expand_inputs([tmp_path / "b.jsonl", tmp_path / "a.jsonl"])] == ["b.jsonl", "a.jsonl"]
    assert [p.name for p in expand_inputs([str(tmp_path / "*.jsonl")])] == ["a.jsonl", "b.jsonl"]
    assert [p.name for p in expand_inputs([tmp_path])] == ["a.jsonl", "b.jsonl"]
    with pytest.raises(FileNotFoundError, match="matches no"):
        expand_inputs([str(tmp_path / "*.parquet")])
    with pytest.raises(FileNotFoundError, match="not found"):
        expand_inputs([tmp_path / "absent.jsonl"])


def test_bad_rows_are_counted_skips_with_reasons(tmp_path):
    path = tmp_path / "bad.jsonl"
    lines = [json.dumps({"id": "1", "title": "T", "text": "fine"}), json.dumps({"id": "", "title": "T", "text": "no id"}),
             json.dumps({"id": "3", "title": "T", "text": "  "}), json.dumps({"id": "4", "title": "T"}),
             json.dumps({"id": "5", "title": "T", "text": "x" * 50}), json.dumps({"id": "6", "title": 7, "text": "y"}),
             "{not json", "[1, 2]"]
    data = ("\n".join(lines) + "\n").encode() + b'{"id": "9", "text": "caf\xe9"}\n'
    path.write_bytes(data)
    items = read(path, max_row_chars=40)
    skips = [(s.reason, s.position) for s in items if isinstance(s, SkippedRow)]
    assert pages(items) == [("1", "T", "fine")]
    assert skips == [("missing_id", "bad.jsonl:row 2"), ("empty_text", "bad.jsonl:row 3"), ("empty_text", "bad.jsonl:row 4"),
                     ("too_large", "bad.jsonl:row 5"), ("bad_value", "bad.jsonl:row 6"), ("not_json", "bad.jsonl:row 7"),
                     ("not_object", "bad.jsonl:row 8"), ("bad_utf8", "bad.jsonl:row 9")]


def test_non_utf8_in_csv_is_a_skip(tmp_path):
    (tmp_path / "c.csv").write_bytes(b"id,text\n1,good\n2,caf\xe9\n")
    assert [type(i).__name__ for i in read(tmp_path / "c.csv")] == ["RawPage", "SkippedRow"]


def test_truncated_gzip_is_an_error_naming_the_file(tmp_path):
    whole = gzip.compress("".join(json.dumps({"id": str(i), "text": "x" * 200}) + "\n" for i in range(2000)).encode())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(CorpusFileError, match=r"cut.jsonl.gz: cannot read past line \d+ \(truncated or damaged gzip\)"):
        read(path)


def test_missing_column_names_file_columns_and_flag(tmp_path):
    path = write_jsonl(tmp_path / "rows.jsonl", [{"key": "1", "passage_text": "x"}])
    with pytest.raises(ValueError, match=r"rows.jsonl: no text column .*columns found: key, passage_text\. .*--text-column"):
        read(path)
    assert pages(read(path, columns=ColumnMap(id="key", text="passage_text"))) == [("1", "1", "x")]
    with pytest.raises(ValueError, match=r"no column 'doc' .*columns found: key, passage_text.*--id-column"):
        read(path, columns=ColumnMap(id="doc", text="passage_text"))


def test_a_wrong_format_guess_names_the_columns(tmp_path):
    path = write_jsonl(tmp_path / "beir.jsonl", [{"_id": "1", "title": "T", "text": "x"}])
    with pytest.raises(ValueError, match=r"no column 'wikipedia_title' for the kilt format; columns found: _id, title, text"):
        read(path, format="kilt")
    with pytest.raises(ValueError, match="cannot tell the format"):
        detect_format([write_jsonl(tmp_path / "rows.txt", HF_ROWS)])


def test_beir_folder_without_corpus_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a BEIR folder"):
        read(tmp_path, format="beir")


READ_SCRIPT = """
import hashlib, sys
from stillweb.corpora.sources.corpus_formats import CorpusSpec
sys.stdout.write(hashlib.sha256(repr(list(CorpusSpec.detect(sys.argv[1:]).read())).encode()).hexdigest())
"""


def test_reading_is_identical_across_processes(tmp_path):
    write_jsonl(tmp_path / "b.jsonl", HF_ROWS + ["{bad"])
    pq.write_table(pa.Table.from_pylist(HF_ROWS), tmp_path / "a.parquet")
    args = [str(tmp_path / "b.jsonl"), str(tmp_path / "a.parquet")]
    runs = [subprocess.run([sys.executable, "-c", READ_SCRIPT, *args], capture_output=True, text=True, check=True)
            for _ in range(2)]
    assert runs[0].stdout == runs[1].stdout and len(runs[0].stdout) == 64
