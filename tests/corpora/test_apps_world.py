"""The seeded app world: base database, names from the snapshot, task generation and splits."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections import Counter

import pytest

from stillweb.corpora.apps.generate import build_base, world_names
from stillweb.corpora.apps.schema import TABLES
from stillweb.corpora.apps.tasks import TEMPLATES, make_app_tasks, template_splits
from stillweb.corpora.apps.template_kit import CATEGORIES
from stillweb.corpora.snapshot.reading import Snapshot


def test_base_fills_every_table_with_the_snapshots_names(small_snapshot):
    snapshot = Snapshot.open(small_snapshot)
    base = build_base(snapshot, seed=0, users=10)
    connection = base.connect()
    for table in TABLES:
        assert connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0] > 0, table
    names = world_names(snapshot)
    assert base.user_names == names.people[:10]
    contacts = {row[0] for row in connection.execute("SELECT name FROM contacts")}
    assert contacts <= set(names.people)
    products = {row[0] for row in connection.execute("SELECT title FROM products")}
    assert products == {title for _, title, _ in names.works}
    owners = {row[0] for row in connection.execute("SELECT DISTINCT owner FROM messages")}
    assert owners == set(range(1, 11))


def test_a_users_data_does_not_depend_on_the_number_of_users(small_snapshot):
    snapshot = Snapshot.open(small_snapshot)
    small, large = build_base(snapshot, 0, 5).connect(), build_base(snapshot, 0, 20).connect()
    query = "SELECT folder, correspondent, subject, body FROM messages WHERE owner = 3 ORDER BY id"
    assert small.execute(query).fetchall() == large.execute(query).fetchall()


def test_bad_world_parameters_name_the_problem(small_snapshot, tmp_path):
    snapshot = Snapshot.open(small_snapshot)
    with pytest.raises(ValueError, match="users must be an integer"):
        build_base(snapshot, 0, 100_000)
    from support.snapshots import build_tool_snapshot

    with pytest.raises(ValueError, match="too few people"):
        build_base(Snapshot.open(build_tool_snapshot(tmp_path / "tools")), 0, 2)


def test_72_tasks_cover_every_category_and_split_by_template(apps_snapshot):
    records = make_app_tasks(apps_snapshot, 72)
    counts = Counter(record["category"] for record in records)
    assert set(counts) == set(CATEGORIES) and min(counts.values()) >= 6
    splits = template_splits()
    by_split = {split: {record["template"] for record in records if record["split"] == split} for split in ("train", "dev", "test")}
    assert not by_split["test"] & (by_split["train"] | by_split["dev"]) and not by_split["dev"] & by_split["train"]
    assert all(splits[record["template"]] == record["split"] for record in records)
    assert len({record["task_id"] for record in records}) == 72
    card = (apps_snapshot / "apps" / "core" / "card.md").read_text()
    assert all(category in card for category in CATEGORIES)
    assert all(1 <= len(record["turns"]) <= 3 for record in records)
    assert {name for name, _ in TEMPLATES.items()} >= {record["template"] for record in records}
    templates = Counter(category for category, _ in TEMPLATES.values())
    assert set(templates) == set(CATEGORIES) and min(templates.values()) >= 6  # six or more templates per category
    assert {record["template"] for record in records} == set(TEMPLATES)  # 72 tasks use every template
    assert len({record["template"] for record in records if len(record["turns"]) == 3}) >= 2
    assert "User turns per task: " in card and " with 3." in card


_DIGEST = """
import hashlib, json, sys
from stillweb.corpora.apps.generate import build_base
from stillweb.corpora.apps.tasks import make_app_tasks
from stillweb.corpora.snapshot.reading import Snapshot
base = build_base(Snapshot.open(sys.argv[1]), 3, 12)
tasks = make_app_tasks(sys.argv[1], 24, seed=3, users=12)
print(hashlib.sha256(base.data).hexdigest(), hashlib.sha256(json.dumps(tasks, sort_keys=True).encode()).hexdigest())
"""


def test_two_processes_make_identical_worlds_and_tasks(small_snapshot):
    outputs = {subprocess.run([sys.executable, "-c", _DIGEST, str(small_snapshot)], capture_output=True, text=True,
                              check=True).stdout for _ in range(2)}
    assert len(outputs) == 1
    base = build_base(Snapshot.open(small_snapshot), 3, 12)
    assert outputs.pop().split()[0] == hashlib.sha256(base.data).hexdigest()


def test_generation_rejects_bad_counts(apps_snapshot):
    with pytest.raises(ValueError, match="count must be a positive integer"):
        make_app_tasks(apps_snapshot, 0)
    assert json.loads(json.dumps(make_app_tasks(apps_snapshot, 8)))  # plain JSON values
