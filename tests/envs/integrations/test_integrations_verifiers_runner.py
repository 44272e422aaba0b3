"""verifiers' own runner (``vf-eval``) plays WikiQA-v0 tasks: its rewards are the in-process environment's.

The whole of verifiers 0.4's path runs: ``vf-eval``'s ``main`` resolves the taskset id to
:class:`StillwebTaskset` and :class:`StillwebEnv`, the ``null`` harness's chat program is prepared
with ``uv`` (from the ``verifiers`` extra; its few dependencies come from PyPI) and run by the
``subprocess`` runtime, its model calls go through verifiers' interception server to a scripted
OpenAI-compatible endpoint on 127.0.0.1 (the reference agent's replies, streamed), and the traces
it writes carry ``stillweb_reward``. The same tasks played in-process give the same rewards and parts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytestmark = [pytest.mark.extra, pytest.mark.slow]

pytest.importorskip("verifiers.v1")
uv = pytest.importorskip("uv")

from verifiers.v1.cli.eval.main import main as vf_eval  # noqa: E402

from stillweb.envs import ReferenceAgent, WikiQAEnv, play_episode  # noqa: E402
from support.chat_stub import MODEL_ID, chat_stub_app, serve  # noqa: E402
from support.network import free_port  # noqa: E402

# verifiers resolves a taskset id as a top-level module exporting one Taskset (and here one Env)
# subclass in ``__all__``; a dotted path is not an id, so the run names this one-line module.
PLUGIN = '''from stillweb.envs.integrations.verifiers_native import StillwebEnv, StillwebTaskset
__all__ = ["StillwebTaskset", "StillwebEnv"]
'''


def test_vf_eval_runs_stillweb_tasks_with_the_in_process_rewards(tasks_snapshot, tmp_path, monkeypatch):
    (tmp_path / "stillweb_wikiqa_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PATH", f"{Path(uv.find_uv_bin()).parent}{os.pathsep}{os.environ['PATH']}")  # the extra's uv
    monkeypatch.setenv("STILLWEB_STUB_KEY", "stub")
    local = WikiQAEnv(tasks_snapshot, "hard")
    out = tmp_path / "runs"
    with serve(chat_stub_app(list(local.tasks), "reference"), free_port()) as url:
        vf_eval(["stillweb_wikiqa_plugin", "--env.taskset.snapshot", str(tasks_snapshot), "--env.taskset.tasks", "hard",
                 "--env.player.runtime.type", "subprocess", "--env.player.harness.id", "null",
                 "--client.base-url", url, "--client.api-key-var", "STILLWEB_STUB_KEY", "-m", MODEL_ID,
                 "-n", "2", "-r", "1", "--no-rich", "--no-push", "--output-dir", str(out), "--run.dir", "run"])

    episodes = [json.loads(line) for line in (out / "run" / "traces.jsonl").read_text().splitlines()]
    assert len(episodes) == 2 and all(episode["ok"] for episode in episodes)
    assert sorted(episode["task"]["data"]["task_id"] for episode in episodes) == sorted(t.task_id for t in local.tasks[:2])
    for episode in episodes:
        (trace,) = episode["traces"]
        played = play_episode(local, lambda task: ReferenceAgent(task), options={"task_id": episode["task"]["data"]["task_id"]})
        reward, info = played.reward, played.info
        assert trace["rewards"] == {"stillweb_reward": {"score": reward, "weight": 1.0}} and reward == 1.0
        played = trace["info"]["stillweb"]
        assert played["reward_parts"] == json.loads(json.dumps(info["reward_parts"]))
        assert (played["termination_reason"], played["truncation_reason"]) == ("answered", None)
