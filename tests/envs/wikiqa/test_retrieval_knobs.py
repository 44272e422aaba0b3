"""Retrieval ablations and seeded search noise (sandboxes/tools/retrieval.py): per environment and per
reset, recorded in info and recordings (replay reproduces them), bad values a UsageError naming the
allowed ones (422 over HTTP), noise keyed by blake2b and identical across processes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from stillweb.corpora.errors import UsageError
from stillweb.envs import WikiQAEnv
from stillweb.envs.agents.scripted import write_call
from stillweb.envs.runs.recording import RecordEpisodes, replay
from stillweb.sandboxes.tools.retrieval import RETRIEVAL_MODES, noise_schedule

QUERY = "orchard writer"
SEARCH = write_call("tongyi", "search", {"query": QUERY, "k": 5})


@pytest.fixture()
def env(tiny_world, world_tasks):
    return WikiQAEnv(tiny_world, world_tasks, max_turns=20, max_tool_calls=40)


def hits(env, action=SEARCH, **options):
    """Doc ids the search showed on the first step of the chain task, and the reset's info."""
    _, info = env.reset(seed=0, options={"task_id": "chain", **options})
    _, _, _, _, step_info = env.step(action)
    return [item["doc_id"] for item in step_info["shown_docs"]], info


def test_golden_puts_the_evidence_first_then_the_ranking(env, world_tasks):
    evidence = [item["doc_id"] for item in world_tasks[0]["evidence"]]
    plain, info = hits(env)
    golden, golden_info = hits(env, retrieval="golden")
    assert golden[:4] == evidence and golden[4] == next(doc for doc in plain if doc not in evidence)
    assert info["retrieval"] == {"mode": "default", "search_noise": 0.0}
    assert golden_info["retrieval"] == {"mode": "golden", "search_noise": 0.0}
    assert hits(env, retrieval="bm25")[0] == plain  # the default ranking is BM25
    assert hits(env)[0] == plain  # a reset without the option: the environment's own again


def test_none_returns_no_hits_and_the_env_default_applies_to_every_reset(tiny_world, world_tasks):
    env = WikiQAEnv(tiny_world, world_tasks, max_turns=20, retrieval="none")
    shown, info = hits(env)
    assert shown == [] and info["retrieval"]["mode"] == "none"
    assert hits(env, retrieval="golden")[0][:1] == [world_tasks[0]["evidence"][0]["doc_id"]]


@pytest.mark.parametrize("options, named", [({"retrieval": "gold"}, "golden"), ({"retrieval": 3}, "none"),
                                            ({"retrieval": "dense"}, "dense vectors"),
                                            ({"search_noise": 1.5}, "[0, 1]"), ({"search_noise": "x"}, "search_noise")])
def test_bad_values_are_usage_errors_naming_what_is_allowed(env, options, named):
    env.reset(seed=0, options={"task_id": "born"})
    with pytest.raises(UsageError, match=named.replace("[", r"\[").replace("]", r"\]")):
        env.reset(seed=0, options={"task_id": "chain", **options})
    assert env._episode.task.task_id == "born"  # the failed reset left the episode as it was
    with pytest.raises(UsageError):
        WikiQAEnv(env.snapshot.path, [{"question": "q", "answer": "a"}], **options)


def test_a_knob_without_the_search_tool_is_refused(tiny_world, world_tasks):
    env = WikiQAEnv(tiny_world, world_tasks, tools=["open", "answer"])
    with pytest.raises(UsageError, match="need the search tool"):
        env.reset(seed=0, options={"retrieval": "golden"})


def test_noise_replaces_slots_with_distractors_sharing_terms_but_not_the_answer(env):
    plain, _ = hits(env)
    noisy, info = hits(env, search_noise=1.0)
    assert info["retrieval"]["search_noise"] == 1.0
    assert len(noisy) == len(plain) and not set(noisy) & set(plain)
    for doc_id in noisy:
        text = env.snapshot.text_of(doc_id).casefold()
        assert "ostra" not in text and any(term in text for term in ("orchard", "writer"))
    assert hits(env, search_noise=0.0)[0] == plain
    assert hits(env, search_noise=1.0)[0] == noisy  # keyed: the same episode, the same noise


def test_noise_is_keyed_by_turn_and_query(env):
    env.reset(seed=0, options={"task_id": "chain", "search_noise": 0.5})
    turns = [[item["doc_id"] for item in env.step(SEARCH)[4]["shown_docs"]] for _ in range(6)]
    assert len({tuple(turn) for turn in turns}) > 1  # another turn draws other slots
    other = write_call("tongyi", "search", {"query": "orchards bays", "k": 5})
    env.reset(seed=0, options={"task_id": "chain", "search_noise": 0.5})
    assert [item["doc_id"] for item in env.step(other)[4]["shown_docs"]] != turns[0]


def test_a_recording_with_knobs_replays_identically(env, tiny_world, world_tasks, tmp_path):
    import gymnasium as gym

    path = tmp_path / "knobs.jsonl"
    recorder = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot=str(tiny_world), tasks=world_tasks,
                                       max_turns=20, retrieval="golden"), path)
    for options in ({"task_id": "chain"}, {"task_id": "chain", "retrieval": "none", "search_noise": 0.6},
                    {"task_id": "pop", "search_noise": 0.9}):
        recorder.reset(seed=1, options=options)
        recorder.step(SEARCH)
        recorder.step(write_call("tongyi", "search", {"query": "Marrow Bay", "k": 4}))
    recorder.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["info"]["retrieval"] for line in lines if line["type"] == "reset"] == [
        {"mode": "golden", "search_noise": 0.0}, {"mode": "none", "search_noise": 0.6},
        {"mode": "golden", "search_noise": 0.9}]
    assert replay(path).ok
    tampered = path.read_text().replace('"search_noise":0.9', '"search_noise":0.8', 1)
    (tmp_path / "tampered.jsonl").write_text(tampered)
    assert not replay(tmp_path / "tampered.jsonl").ok  # the recorded options drive the replay


def test_noise_schedules_are_pure_functions_of_the_step():
    linear = [noise_schedule(step, "linear", start=0.1, end=0.5, steps=4) for step in range(6)]
    assert linear == [0.1, 0.2, 0.3, 0.4, 0.5, 0.5]
    staged = [noise_schedule(step, "step", start=0.0, end=0.6, steps=300, stages=3) for step in (0, 99, 100, 299, 900)]
    assert staged == [0.0, 0.0, 0.3, 0.6, 0.6]
    assert noise_schedule(7, "constant", end=0.25) == 0.25
    for bad in ({"kind": "cosine"}, {"step": -1}, {"end": 2.0}, {"steps": 0}):
        with pytest.raises(UsageError):
            noise_schedule(**{"step": 1, **bad})


def test_the_modes_have_one_registry_and_the_docs_list_it():
    from pathlib import Path

    assert list(RETRIEVAL_MODES) == ["golden", "none", "bm25", "dense", "hybrid"]
    page = (Path(__file__).parents[3] / "docs" / "research-knobs.md").read_text(encoding="utf-8")
    table = page.split("| mode | what `search` returns |\n|---|---|\n", 1)[1].split("\n<!-- /registry -->", 1)[0]
    rows = table.splitlines()
    assert [row.split("|")[1:3] for row in rows] == [[f" `{mode}` ", f" {meaning} "]
                                                     for mode, meaning in RETRIEVAL_MODES.items()]


NOISY_EPISODE = """
import json, sys
sys.path.insert(0, {tests!r})
from support.tiny_world import chain_task, simple_tasks
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.envs import WikiQAEnv
from stillweb.envs.agents.scripted import write_call
env = WikiQAEnv({snapshot!r}, [chain_task(Snapshot.open({snapshot!r}))] + simple_tasks(), max_turns=20)
out = []
for options in ({{"search_noise": 0.5}}, {{"search_noise": 0.8, "retrieval": "golden"}}):
    out.append(env.reset(seed=3, options={{"task_id": "chain", **options}}))
    for query in ("orchard writer", "bays", "Ada Quill writer"):
        out.append(env.step(write_call("tongyi", "search", {{"query": query, "k": 6}})))
sys.stdout.write(json.dumps(out, sort_keys=True, default=str))
"""


def test_noise_is_identical_across_processes(tiny_world):
    from pathlib import Path

    script = NOISY_EPISODE.format(tests=str(Path(__file__).parents[2]), snapshot=str(tiny_world))
    outputs = [subprocess.run([sys.executable, "-c", script], capture_output=True, check=True,
                              env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"}).stdout for seed in ("1", "2")]
    assert outputs[0] == outputs[1] and b"Filler" in outputs[0]


def test_bad_knob_over_http_is_a_422_naming_the_modes(small_snapshot):
    from fastapi.testclient import TestClient

    from stillweb.server.app import make_app
    from stillweb.server.plumbing import ServerSettings

    client = TestClient(make_app([small_snapshot], ServerSettings(max_sessions=2)))
    created = client.post("/sessions", json={"env_id": "stillweb/WikiQA-v0",
                                             "kwargs": {"tasks": [{"question": "q", "answer": "a"}]}})
    session = created.json()["session_id"]
    good = client.post(f"/sessions/{session}/reset", json={"seed": 0, "options": {"retrieval": "none"}})
    assert good.status_code == 200 and good.json()["info"]["retrieval"]["mode"] == "none"
    bad = client.post(f"/sessions/{session}/reset", json={"seed": 0, "options": {"retrieval": "grep"}})
    assert bad.status_code == 422 and bad.json()["error"] == "bad_reset"
    assert all(mode in bad.json()["detail"] for mode in RETRIEVAL_MODES)


def test_a_fixed_dense_or_hybrid_ranking_overrides_the_policys_retriever(small_snapshot, tmp_path):
    from dataclasses import replace

    from stillweb.corpora.snapshot.reading import Snapshot
    from stillweb.sandboxes import ToolCall, ToolRegistry
    from stillweb.sandboxes.tools.retrieval import SearchSettings
    from support.dense import DIMENSIONS, dense_copy
    from support.embeddings_stub import serve_embeddings
    from support.network import free_port

    dense = dense_copy(small_snapshot, tmp_path / "dense")
    assert WikiQAEnv(dense, [{"question": "q", "answer": "a"}], retrieval="hybrid").retrieval == "hybrid"
    with serve_embeddings(free_port(), dimensions=DIMENSIONS) as (url, _app):
        snapshot = Snapshot.open(dense)
        snapshot.use_query_embeddings(endpoint=url, store=tmp_path / "q.log")
        registry = ToolRegistry(snapshot)
        search = registry.tool("search")
        for mode in ("dense", "hybrid", "bm25"):
            search.settings = replace(SearchSettings(), retrieval=mode)
            for asked in ({}, {"retriever": "bm25"}, {"retriever": "dense"}):
                result = registry.call(ToolCall("search", {"query": "capital city", "k": 4, **asked}))
                assert [hit["doc_id"] for hit in result.data["queries"][0]["results"]] == \
                    [hit.doc_id for hit in snapshot.search("capital city", 4, mode)]
