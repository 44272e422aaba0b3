"""`stillweb check`: the docs' example environment passes; a broken one (it ignores its seed and leaks
its answer) fails with both named by task and step; a registered environment passes with its
reference agent; the Markdown and JSON reports agree."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from stillweb.cli.main import main
from stillweb.envs.check import EnvTarget, check_environment
from support.doc_blocks import markdown_files

ROOT = Path(__file__).resolve().parents[2]
TASKS = [{"task_id": f"t{a}-{b}", "question": f"What is {a} + {b}?", "answer": str(a + b)}
         for a, b in ((17, 25), (3, 4), (100, 23), (9, 9), (41, 1))]
BROKEN = '''
import random
from docs_add_env import AddEnv


class BrokenAddEnv(AddEnv):
    """The docs' environment, broken twice: its prompt shows the answer and a number it draws unseeded."""

    def reset(self, *, seed=None, options=None):
        observation, info = super().reset(seed=seed, options=options)
        return f"{observation} (episode {random.getrandbits(48)}; hint: {self._episode.task.answer})", info
'''


def docs_example() -> str:
    """The python block of the docs that defines ``AddEnv`` (wherever the docs keep it)."""
    blocks = [code for path in markdown_files(ROOT) if path.is_file()
              for code in re.findall(r"^```python\n(.*?)^```$", path.read_text(encoding="utf-8"), flags=re.S | re.M)
              if "class AddEnv(TextEnv)" in code]
    assert len(blocks) == 1, len(blocks)
    return blocks[0]


@pytest.fixture()
def workdir(tmp_path, monkeypatch):
    (tmp_path / "docs_add_env.py").write_text(docs_example(), encoding="utf-8")
    (tmp_path / "broken_env.py").write_text(BROKEN, encoding="utf-8")
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(task) + "\n" for task in TASKS), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def statuses(report: dict) -> dict[str, str]:
    return {check["name"]: check["status"] for check in report["checks"]}


def test_the_docs_example_environment_passes(workdir, capsys):
    assert main(["check", "--entry-point", "docs_add_env:AddEnv", "--tasks", "tasks.jsonl", "--json", "report.json"]) == 0
    out = capsys.readouterr().out
    report = json.loads((workdir / "report.json").read_text())
    assert report["ok"] and report["tasks"] == 5 and "**PASS** on 5 tasks" in out
    assert statuses(report) == {"check_env": "pass", "reference": "skip", "floor: do_nothing": "pass",
                                "floor: text_only": "pass", "floor: random_calls": "skip", "answer leak": "pass",
                                "endings": "pass", "same seed": "pass", "two processes": "pass", "step cost": "pass"}


def test_a_broken_environment_fails_naming_the_seed_and_the_leak(workdir, capsys):
    assert main(["check", "--entry-point", "broken_env:BrokenAddEnv", "--tasks", "tasks.jsonl", "--json", "-"]) == 1
    report = json.loads(capsys.readouterr().out)
    failed = {check["name"]: check["failures"] for check in report["checks"] if check["status"] == "fail"}
    assert set(failed) == {"answer leak", "same seed", "two processes"}
    assert [(f["task_id"], f["step"]) for f in failed["answer leak"]] == [(task["task_id"], 0) for task in TASKS]
    assert "gold answer '42'" in failed["answer leak"][0]["message"]
    assert [(f["task_id"], f["step"]) for f in failed["two processes"]] == [(task["task_id"], 0) for task in TASKS]
    assert failed["same seed"][0]["step"] == 0
    markdown = check_environment(EnvTarget(entry_point="broken_env:BrokenAddEnv", kwargs={"tasks": TASKS}),
                                 subprocesses=False).markdown()
    assert "**FAIL**" in markdown and "- task t17-25, step 0: the observation shows the gold answer '42'" in markdown


def test_a_registered_environment_passes_with_its_reference_agent(tasks_snapshot, capsys):
    assert main(["check", "stillweb/WikiQA-v0", "--snapshot", str(tasks_snapshot), "--tasks", "hard",
                 "--max-tasks", "4"]) == 0
    out = capsys.readouterr().out
    assert "| reference | pass | the reference agent earned the maximum on 100% of tasks" in out
    assert "| floor: random_calls | pass |" in out and "| two processes | pass | 4 of 4 episodes" in out


def test_lookup_skips_the_leak_check_by_design_and_bad_targets_are_usage_errors(capsys):
    tasks = [{"task_id": "a", "question": "Who wrote it?", "answer": "Ann Lee", "passage": "It was written by Ann Lee."}]
    report = check_environment(EnvTarget("stillweb/Lookup-v0", kwargs={"tasks": tasks}), subprocesses=False)
    assert report.ok and {result.name: result.status for result in report.results}["answer leak"] == "skip"
    assert main(["check", "stillweb/Nope-v0"]) == 2 and "unknown environment" in capsys.readouterr().err
    assert main(["check", "--entry-point", "no_such_module:Env", "--tasks", "x.jsonl"]) == 2
    assert "cannot make no_such_module:Env" in capsys.readouterr().err


def test_a_mixture_is_checked_member_by_member(tiny_world, world_tasks):
    lookup = [{"task_id": "a", "question": "Who wrote it?", "answer": "Ann Lee", "passage": "It was written by Ann Lee."}]
    target = EnvTarget("stillweb/Mixture-v0", kwargs={
        "envs": {"stillweb/WikiQA-v0": 1, "stillweb/Lookup-v0": 1},
        "member_kwargs": {"stillweb/WikiQA-v0": {"snapshot": str(tiny_world), "tasks": world_tasks[:1]},
                          "stillweb/Lookup-v0": {"tasks": lookup}}})
    report = check_environment(target, determinism_tasks=2)
    assert report.ok, report.markdown()
    results = {result.name: result for result in report.results}
    assert report.tasks == 2 and results["answer leak"].summary.startswith("0 of 1 tasks")  # Lookup shows it by design
    assert results["two processes"].summary.startswith("2 of 2 episodes")
