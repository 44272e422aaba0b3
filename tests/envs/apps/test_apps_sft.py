"""SFT export of app tasks: every task solved, follow-up turns as user messages, identical bytes in two processes."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.extra

pytest.importorskip("datasets")

from stillweb.envs.integrations.apps_sft import export_app_sft  # noqa: E402


@pytest.mark.parametrize("shape", ["openai", "tongyi"])
def test_export_keeps_every_solved_episode(apps_snapshot, tmp_path, shape):
    paths = export_app_sft(apps_snapshot, "core", tmp_path / shape, shape=shape)
    rows = [row for path in paths if path.suffix == ".parquet" for row in pq.read_table(path).to_pylist()]
    assert len(rows) == 72 and all(row["reward"] == 1.0 for row in rows)
    tools = {item["function"]["name"] for item in json.loads(rows[0]["tools"])}
    assert {"list_contacts", "answer"} <= tools
    if shape == "openai":
        longest = max(rows, key=lambda row: sum(m["role"] == "user" for m in row["messages"]))
        assert sum(message["role"] == "user" for message in longest["messages"]) >= 2  # the scripted follow-ups


_EXPORT = """
import hashlib, sys
from stillweb.envs.integrations.apps_sft import export_app_sft
paths = export_app_sft(sys.argv[1], "core", sys.argv[2], shape="openai")
print(" ".join(hashlib.sha256(p.read_bytes()).hexdigest() for p in paths if p.suffix == ".parquet"))
"""


def test_two_processes_export_identical_bytes(apps_snapshot, tmp_path):
    digests = {subprocess.run([sys.executable, "-c", _EXPORT, str(apps_snapshot), str(tmp_path / f"run{i}")],
                              capture_output=True, text=True, check=True).stdout for i in range(2)}
    assert len(digests) == 1 and len(digests.pop().split()) == 3
