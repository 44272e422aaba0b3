"""Two-process determinism of the tools and formats: same snapshot and calls, identical bytes.

Each process runs a fixed list of calls (every tool, valid and invalid) and
format operations, and prints the JSON of every result; the two processes get
different ``PYTHONHASHSEED`` values so any dependence on set or dict order shows.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest
from support.snapshots import build_tool_snapshot

SCRIPT = r"""
import json, sys
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.sandboxes import ToolCall, ToolRegistry, ToolResult, get_format

registry = ToolRegistry(Snapshot.open(sys.argv[1]))
calls = [
    ("search", {"query": "river mill", "k": 3}),
    ("search", {"query": ["nobel", "capital poland"], "k": 2}),
    ("search", {"query": "zzzz"}),
    ("search", {"query": "x", "k": 0, "extra": 1}),
    ("open", {"doc": "Long River", "page": 2}),
    ("visit", {"doc": "curie"}),
    ("open", {"doc": 2, "page": 99}),
    ("open", {"doc": "Marie Curi"}),
    ("find", {"doc": 2, "pattern": "river"}),
    ("find", {"doc": "Warsaw", "pattern": "VISTULA"}),
    ("calculator", {"expression": "0.1 + 0.2 * 3 / 7"}),
    ("calculator", {"expression": "sqrt(2) + 1"}),
    ("calculator", {"expression": "2 ** 99999"}),
    ("python", {"code": "print(6 * 7)"}),
    ("answer", {"text": "1867", "citations": [0, "Curie", "nowhere"]}),
    ("browse", {"url": "http://x"}),
]
results = [registry.call(ToolCall(name, args, call_id=f"c{i}")) for i, (name, args) in enumerate(calls)]
out = {"results": [r.to_dict() for r in results], "schemas": registry.schemas(), "mcp": registry.mcp_tools()}
texts = [
    '<think>t</think><tool_call>{"name": "search", "arguments": {"query": "q"}}</tool_call>',
    "<answer>W</answer><citations>1; Warsaw</citations>",
    '{"name": "answer", "arguments": {"text": "W"}}',
    "<search>q</search>",
    "garbage",
]
for name in ("tongyi", "openai", "search_r1"):
    fmt = get_format(name, max_calls_per_turn=2)
    out[name] = {
        "prompt": fmt.system_prompt(registry.schemas()),
        "rendered": fmt.render_results(results),
        "parsed": [repr(fmt.parse(text)) for text in texts],
    }
sys.stdout.write(json.dumps(out, ensure_ascii=False, sort_keys=False))
"""


def run_in_subprocess(snapshot_path: str, hash_seed: str) -> bytes:
    environment = {**os.environ, "PYTHONHASHSEED": hash_seed}
    completed = subprocess.run(
        [sys.executable, "-c", SCRIPT, snapshot_path], capture_output=True, env=environment, check=True
    )
    return completed.stdout


@pytest.fixture(scope="module")
def snapshot_path(tmp_path_factory) -> str:
    return str(build_tool_snapshot(tmp_path_factory.mktemp("determinism") / "snap"))


def test_tools_and_formats_are_identical_across_processes(snapshot_path):
    first = run_in_subprocess(snapshot_path, "1")
    second = run_in_subprocess(snapshot_path, "2")
    assert len(first) > 10_000
    assert hashlib.sha256(first).hexdigest() == hashlib.sha256(second).hexdigest()
