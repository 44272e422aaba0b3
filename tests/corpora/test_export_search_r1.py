"""The verl export is what Search-R1's ``scripts/data_process/nq_search.py`` writes for the same FlashRAG
questions, column for column, with a ``data_source`` its reward selector (``_select_rm_score_fn``) accepts."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from stillweb.corpora.errors import UsageError
from stillweb.corpora.tasks.store.export import SEARCH_R1_DATA_SOURCES, SEARCH_R1_PREFIX, export_tasks, verl_row
from stillweb.corpora.tasks.importers import FORMAT_NAMES
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.corpora.tasks.importers import ImportOptions, import_tasks
from support.wiki18 import NQ_ROWS, build_wiki18, write_rows


@pytest.fixture(scope="module")
def wiki18(tmp_path_factory):
    return build_wiki18(tmp_path_factory.mktemp("export"))[0]


def nq_search_rows(rows: list[dict], split: str, out) -> list[dict]:
    """What nq_search.py writes for ``rows`` (its process_fn, step for step, through datasets' map and
    to_parquet, read back as Search-R1's RLHFDataset reads it: pandas)."""
    import datasets
    import pandas

    def process_fn(example, idx):
        example["question"] = example["question"].strip()
        if example["question"][-1] != "?":
            example["question"] += "?"
        prompt = SEARCH_R1_PREFIX + example["question"] + "\n"  # make_prefix's 'base' template
        return {"data_source": "nq", "prompt": [{"role": "user", "content": prompt}], "ability": "fact-reasoning",
                "reward_model": {"style": "rule", "ground_truth": {"target": example["golden_answers"]}},
                "extra_info": {"split": split, "index": idx}}

    datasets.Dataset.from_list(rows).map(function=process_fn, with_indices=True).to_parquet(str(out))
    return _plain(pandas.read_parquet(out).to_dict("records"))


def _plain(value):
    """numpy arrays (pandas' lists) as lists, at every depth."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def test_the_verl_export_is_what_nq_search_writes(wiki18, tmp_path):
    import pandas

    nq = tmp_path / "nq"
    nq.mkdir()
    write_rows(nq / "test.jsonl", NQ_ROWS)  # FlashRAG_datasets/nq/test.jsonl: the folder names the source
    import_tasks(wiki18, [nq / "test.jsonl"], "nq", ImportOptions(progress=False))
    export_tasks(wiki18, "nq", "verl", tmp_path / "out")
    ours = _plain(pandas.read_parquet(tmp_path / "out" / "test.parquet").to_dict("records"))
    theirs = nq_search_rows(NQ_ROWS, "test", tmp_path / "nq_search.parquet")
    assert len(ours) == len(theirs) == len(NQ_ROWS)
    for mine, expected in zip(ours, theirs):
        assert set(expected) <= set(mine)
        for column, value in expected.items():
            if column == "extra_info":  # stillweb adds keys (task id, evidence docs, the snapshot's fingerprint)
                assert {key: mine[column][key] for key in value} == value
            else:
                assert mine[column] == value, column
        assert mine["data_source"] in SEARCH_R1_DATA_SOURCES


@pytest.mark.parametrize(("file_name", "import_source", "export_source", "expected"), [
    ("qa.jsonl", None, None, "stillweb/qa"),
    ("qa.jsonl", "popqa", None, "popqa"),
    ("qa.jsonl", None, "triviaqa", "triviaqa"),
    ("nq_test.jsonl", None, None, "nq"),
    ("nq_test.jsonl", None, "bamboogle", "bamboogle"),
])
def test_the_data_source_comes_from_the_flag_or_the_file(wiki18, tmp_path, file_name, import_source, export_source,
                                                          expected):
    path = write_rows(tmp_path / file_name, NQ_ROWS)
    import_tasks(wiki18, [path], "qa", ImportOptions(progress=False, data_source=import_source, retrieval=False))
    export_tasks(wiki18, "qa", "verl", tmp_path / "out", data_source=export_source)
    rows = [row for split in ("train", "dev", "test") for row in pq.read_table(tmp_path / "out" / f"{split}.parquet").to_pylist()]
    assert {row["data_source"] for row in rows} == {expected}
    assert sorted(row["id"] for row in rows) == sorted(row["id"] for row in NQ_ROWS)
    assert all(row["golden_answers"] == row["reward_model"]["ground_truth"]["target"] for row in rows)


@pytest.mark.parametrize("format_name", FORMAT_NAMES)
def test_an_import_format_named_as_a_data_source_gives_it(format_name):
    task = TaskRecord(task_id="t", question="who?", answer="x", source=format_name)
    expected = format_name if format_name in SEARCH_R1_DATA_SOURCES else "stillweb/qa"
    assert verl_row(task, "qa", 0)["data_source"] == expected
    assert {"hotpotqa", "2wikimultihopqa", "musique"} <= set(FORMAT_NAMES) & set(SEARCH_R1_DATA_SOURCES)


def test_an_unknown_data_source_is_refused_naming_the_known_ones(wiki18, tmp_path):
    with pytest.raises(UsageError, match="nq, triviaqa, popqa"):
        export_tasks(wiki18, "qa", "verl", tmp_path / "out", data_source="stillweb")
    with pytest.raises(UsageError, match="reward selector"):
        import_tasks(wiki18, [write_rows(tmp_path / "q.jsonl", NQ_ROWS)], "q", ImportOptions(data_source="NQ"))


def test_import_and_export_are_identical_across_processes(wiki18, tmp_path):
    import os
    import subprocess
    import sys

    write_rows(tmp_path / "nq_test.jsonl", NQ_ROWS)
    script = ("import sys; from stillweb.corpora.tasks.importers import ImportOptions, import_tasks; "
              "from stillweb.corpora.tasks.store.export import export_tasks; "
              "import_tasks(sys.argv[1], [sys.argv[2]], 'nq' + sys.argv[4], ImportOptions(progress=False, workers=1)); "
              "export_tasks(sys.argv[1], 'nq' + sys.argv[4], 'verl', sys.argv[3])")
    outputs = []
    for seed in ("1", "2"):
        subprocess.run([sys.executable, "-c", script, str(wiki18), str(tmp_path / "nq_test.jsonl"), str(tmp_path / seed),
                        seed], check=True, env={**os.environ, "PYTHONHASHSEED": seed})
        tasks = pq.read_table(wiki18 / "tasks" / f"nq{seed}" / "test.parquet").to_pylist()  # with the fit check
        outputs.append(json.dumps([pq.read_table(tmp_path / seed / "test.parquet").to_pylist(), tasks], sort_keys=True))
    assert outputs[0] == outputs[1].replace('"nq2"', '"nq1"') and '"answer_in_top_k": true' in outputs[0]
