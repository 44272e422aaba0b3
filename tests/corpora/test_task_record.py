"""The one task record: typed parquet columns, old JSON-string task sets still readable, round trips."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stillweb.corpora.tasks.store.record import TASK_FIELDS, TASKS_SCHEMA, EvidenceItem, Obfuscation, TaskRecord
from stillweb.corpora.tasks.store.files import read_tasks, write_task_set
from stillweb.envs import load_tasks

GENERATED = {
    "task_id": "sw-abc", "question": "Which town?", "answer": "Town", "aliases": ["Town City"],
    "evidence": [{"subject": "Film", "relation": "director", "value": "Ann", "doc_id": 3, "doc_title": "Film"},
                 {"subject": "Ann", "relation": "birth_place", "value": "Town", "doc_id": 5, "doc_title": "Ann"}],
    "evidence_docs": [3, 5], "formalization": [["?", "birth_place", "V@A"], ["V@A", "director", "C@Film"]],
    "hops": 2, "constraints": 1, "candidates_per_hop": [4, 1], "level": 2, "shape": "entity-chain-2",
    "obfuscations": [
        {"kind": "date_to_period", "relation": "born", "original": "1953", "obfuscated": "the early 1950s",
         "low": 1950, "high": 1953},
        {"kind": "number_to_range", "relation": "pop", "original": "1234", "obfuscated": "between 1,000 and 2,000",
         "low": 1000.0, "high": 2000.0},
        {"kind": "entity_to_description", "relation": "director", "original": "C@Ann", "obfuscated": "V@B",
         "variable": "V@B"},
    ],
    "oracle_steps": 7, "split": "train", "canonical_hash": "h1", "answer_doc": 5, "answerable": True,
    "emptiness_proof": None, "source": None, "answer_match": None, "solvability": None,
}
_OLD_JSON_FIELDS = ("aliases", "evidence", "evidence_docs", "formalization", "candidates_per_hop", "obfuscations")
_OLD_INT_FIELDS = ("hops", "constraints", "level", "oracle_steps", "answer_doc")


def _write_old_format(path, records):
    """A split file as task sets were written before the typed columns: list fields as JSON strings."""
    names = [n for n in GENERATED if n not in ("answerable", "emptiness_proof", "source", "answer_match",
                                               "solvability")]  # added after the typed columns
    schema = pa.schema([(n, pa.int32() if n in _OLD_INT_FIELDS else pa.string()) for n in names])
    rows = [{n: json.dumps(r[n], ensure_ascii=False, sort_keys=True) if n in _OLD_JSON_FIELDS else r[n]
             for n in names} for r in records]
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def test_dict_round_trip_is_exact():
    task = TaskRecord.from_dict(GENERATED)
    assert task.to_dict() == GENERATED
    assert json.dumps(task.to_dict(), sort_keys=True) == json.dumps(GENERATED, sort_keys=True)  # 1950 stays an int
    assert task.evidence[1] == EvidenceItem("Ann", "birth_place", "Town", 5, "Ann")
    assert task.obfuscations[2] == Obfuscation("entity_to_description", "director", "C@Ann", "V@B", variable="V@B")
    assert task.golds == ("Town", "Town City")
    assert (*GENERATED, "extra") == TASK_FIELDS == tuple(TASKS_SCHEMA.names)


def test_new_sets_have_arrow_list_columns_and_read_back(tmp_path):
    second = {**GENERATED, "task_id": "sw-def", "split": "test", "oracle_steps": None, "obfuscations": []}
    tasks = [TaskRecord.from_dict(GENERATED), TaskRecord.from_dict(second)]
    directory = write_task_set(tmp_path, "typed", tasks, lambda d: (d / "card.md").write_text("card"))
    schema = pq.read_schema(directory / "train.parquet")
    assert schema.field("aliases").type == pa.list_(pa.string())
    assert schema.field("evidence_docs").type == pa.list_(pa.int32())
    assert pa.types.is_struct(schema.field("evidence").type.value_type)
    assert read_tasks(tmp_path, "typed", "train") == [tasks[0]] and read_tasks(tmp_path, "typed", "test") == [tasks[1]]
    assert read_tasks(tmp_path, "typed", "test")[0].oracle_steps is None
    assert load_tasks("typed", tmp_path, split="train")[0] == tasks[0]


def test_old_json_string_sets_stay_readable(tmp_path):
    directory = tmp_path / "tasks" / "old"
    directory.mkdir(parents=True)
    _write_old_format(directory / "train.parquet", [GENERATED])
    assert pq.read_schema(directory / "train.parquet").field("aliases").type == pa.string()
    old = read_tasks(tmp_path, "old", "train")
    assert old == [TaskRecord.from_dict(GENERATED)] and old[0].to_dict() == GENERATED
    env_task = load_tasks("old", tmp_path, split="train")[0]
    assert env_task.evidence_docs == (3, 5) and env_task.aliases == ("Town City",)


def test_foreign_records_keep_their_other_keys_and_bad_ones_are_named():
    task = TaskRecord.from_dict({"question": "q", "answer": "a", "passage": "p", "urls": ["u"]})
    assert task.extra == {"passage": "p", "urls": ["u"]} and task.to_dict()["passage"] == "p"
    assert task.evidence_docs == () and task.hops is None and len(task.task_id) == 16
    with pytest.raises(ValueError, match="answer"):
        TaskRecord.from_dict({"question": "q"})


@pytest.mark.parametrize("name", ["../escape", ".hidden", "a/b", "-flag", "", "x" * 101, "two words"])
def test_one_task_set_name_rule_for_the_store_and_the_loader(tmp_path, name):
    """`read_tasks`, `write_task_set` and `load_tasks` (a name with a snapshot) apply the same check."""
    with pytest.raises(ValueError, match="bad task set name"):
        read_tasks(tmp_path, name, "train")
    with pytest.raises(ValueError, match="bad task set name"):
        write_task_set(tmp_path, name, [], lambda directory: None)
    with pytest.raises(ValueError, match="bad task set name"):
        load_tasks(name, tmp_path, split="train")
