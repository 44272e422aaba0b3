"""Data for the viewer tests: a task set on the small snapshot, a snapshot whose
document and task text is hostile HTML, and a recorded reference-agent episode."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym

HOSTILE_DOC = "<script>window.__pwned = 1</script>Script Page talks about <b>bold tags</b> & ampersands."
HOSTILE_QUESTION = "<script>window.__pwned = 2</script>Which page talks about <b>bold tags</b>?"
HOSTILE_TASK_ID = "t-script"


def viewer_snapshot(source: Path, directory: Path, name: str = "viewer") -> Path:
    """A copy of the snapshot ``source`` in ``directory`` with a small task set ``name``
    (a copy, so the shared session snapshot keeps its task sets)."""
    import shutil

    from stillweb.corpora.tasks.compose.generate import generate_tasks
    from stillweb.corpora.tasks.compose.attempts import GenerationParams

    snapshot = directory / source.name
    shutil.copytree(source, snapshot)
    generate_tasks(snapshot, name, GenerationParams(count=12, seed=1))
    return snapshot


def hostile_snapshot(directory: Path) -> Path:
    """A snapshot (Hugging Face rows) whose first document and only task carry ``<script>`` text."""
    from stillweb.corpora.build.from_source import build_rows
    from stillweb.corpora.tasks.store.record import TaskRecord
    from stillweb.corpora.tasks.store.files import write_task_set

    rows = [
        {"title": "Script Page", "text": HOSTILE_DOC},
        {"title": "River Ostra", "text": "The River Ostra flows past Script Page and the old mill."},
        {"title": "Old Mill", "text": "The old mill stands on the River Ostra."},
    ]
    source = directory / "hostile.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = directory / "hostile"
    build_rows([source], out, workers=1, progress=False)
    task = {
        "task_id": HOSTILE_TASK_ID, "question": HOSTILE_QUESTION, "answer": "Script Page",
        "aliases": ["<img src=x onerror=\"window.__pwned = 3\">"],
        "evidence": [{"subject": "Script Page", "relation": "<mentions>", "value": "<b>bold tags</b>", "doc_id": 0, "doc_title": "Script Page"}],
        "evidence_docs": [0], "formalization": [["?", "<script>mentions</script>", "C@<b>bold tags</b>"]],
        "hops": 1, "constraints": 1, "candidates_per_hop": [1], "level": 1, "shape": "entity-chain-1",
        "obfuscations": [], "oracle_steps": None, "split": "train", "canonical_hash": "h", "answer_doc": 0,
    }
    write_task_set(out, "hostile", [TaskRecord.from_dict(task)], lambda folder: (folder / "card.md").write_text("hostile\n", encoding="utf-8"))
    return out


def record_reference_episode(snapshot: Path, tasks: str, task: dict, path: Path, **kwargs) -> Path:
    """Record the reference agent solving ``task`` to ``path`` (the RecordEpisodes format)."""
    import stillweb.envs  # noqa: F401
    from stillweb.envs import RecordEpisodes, ReferenceAgent, run_episode
    from stillweb.envs.wikiqa.solvability import reference_budget

    budget = reference_budget(task)
    env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot=str(snapshot), tasks=tasks, split=task["split"],
                                  max_turns=budget, max_tool_calls=budget, **kwargs), path)
    try:
        run_episode(env, ReferenceAgent(task, kwargs.get("tool_format", "tongyi")), seed=0, options={"task_id": task["task_id"]})
    finally:
        env.close()
    return path


def record_actions(snapshot: Path, tasks: str, task: dict, path: Path, actions: list[str]) -> Path:
    """Record ``actions`` played on ``task`` to ``path`` with the reference agent's limits (stopping
    when the episode ends), e.g. the reference agent's actions with one changed."""
    import stillweb.envs  # noqa: F401
    from stillweb.envs import RecordEpisodes
    from stillweb.envs.wikiqa.solvability import reference_budget

    budget = reference_budget(task)
    env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot=str(snapshot), tasks=tasks, split=task["split"],
                                  max_turns=budget, max_tool_calls=budget), path)
    try:
        env.reset(seed=0, options={"task_id": task["task_id"]})
        for action in actions:
            *_, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
    finally:
        env.close()
    return path


def recorded_actions(path: Path) -> list[str]:
    """The actions of the steps of a recording, in order."""
    return [record["action"] for record in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if record.get("type") == "step"]
