"""``stillweb/BFCL-v0`` where the other environments go: HTTP sessions (equal to in-process),
Mixture-v0 members, recording and replay, the tool-call episode of the adapters, OpenEnv and
SkyRL-gym. Needs the ``bfcl`` extra."""

from __future__ import annotations

import gymnasium as gym
import pytest
from fastapi.testclient import TestClient

pytest.importorskip("bfcl_eval", reason="the bfcl extra: pip install -e '.[bfcl]' && bash scripts/install_bfcl.sh")

import stillweb.envs  # noqa: E402,F401 - registers the environments
from stillweb.envs import RecordEpisodes, ReferenceAgent, replay, run_episode  # noqa: E402
from stillweb.envs.bfcl.check import ground_truth_calls  # noqa: E402
from stillweb.envs.bfcl.env import BfclEnv  # noqa: E402
from stillweb.envs.mixture import MixtureEnv  # noqa: E402

pytestmark = pytest.mark.extra
TASKS = ["multi_turn_base_0", "multi_turn_base_103"]


def test_http_sessions_equal_in_process(small_snapshot):
    from stillweb.server.app import make_app
    from stillweb.server.plumbing import ServerSettings

    client = TestClient(make_app([small_snapshot], ServerSettings(max_sessions=2)))
    local = BfclEnv(tasks=TASKS)
    created = client.post("/sessions", json={"env_id": "stillweb/BFCL-v0", "kwargs": {"tasks": TASKS}})
    assert created.status_code == 201, created.text
    session = created.json()["session_id"]
    for number, task in enumerate(local.tasks):
        observation, info = local.reset(seed=number, options={"task_id": task.task_id})
        remote = client.post(f"/sessions/{session}/reset", json={"seed": number, "options": {"task_id": task.task_id}}).json()
        assert remote["observation"] == observation and remote["info"]["state_fingerprint"] == info["state_fingerprint"]
        agent, done = ReferenceAgent(task), False
        while not done:
            action = agent.act(observation)
            observation, reward, terminated, truncated, info = local.step(action)
            answer = client.post(f"/sessions/{session}/step", json={"action": action}).json()
            assert (answer["observation"], answer["reward"], answer["info"]["state_diff"]) == (observation, reward, info["state_diff"])
            done = terminated or truncated
        assert reward == 1.0
    assert client.get(f"/sessions/{session}/tasks/multi_turn_base_0").json()["category"] == "multi_turn_base"


def test_a_mixture_member(small_snapshot):
    env = MixtureEnv({"stillweb/BFCL-v0": 1.0, "stillweb/Lookup-v0": 1.0}, snapshot=str(small_snapshot),
                     member_kwargs={"stillweb/BFCL-v0": {"tasks": TASKS, "category": "multi_turn_base"},
                                    "stillweb/Lookup-v0": {"tasks": [{"question": "q", "answer": "a", "passage": "a"}]}})
    summary = run_episode(env, lambda task: ReferenceAgent(task), seed=0, options={"env_id": "stillweb/BFCL-v0"})
    assert summary["outcome"] == 1.0 and summary["task_id"] in TASKS


def test_recording_replays_identically(tmp_path):
    path = tmp_path / "bfcl.jsonl"
    env = RecordEpisodes(gym.make("stillweb/BFCL-v0", category="multi_turn_miss_func", tasks=["multi_turn_miss_func_0"]), path)
    assert run_episode(env, lambda task: ReferenceAgent(task), seed=4)["outcome"] == 1.0
    env.close()
    assert "bfcl_version" in path.read_text() and replay(path).ok


def test_the_adapters_tool_episode_runs_bfcl_calls():
    from stillweb.envs.integrations.episode import ToolEpisode

    episode = ToolEpisode(None, TASKS[:1], env_id="stillweb/BFCL-v0")
    question = episode.reset(task_id=TASKS[0], seed=0)
    assert question.startswith("Move 'final_report.pdf'")
    assert {"mv", "answer"} <= {schema["function"]["name"] for schema in episode.schemas()}
    for turn in ground_truth_calls(episode.env.tasks[0]):
        for name, arguments in turn:
            arguments = {("file_name" if key == "#0" else key): value for key, value in arguments.items()}
            assert episode.call(name, arguments).info["tool_flags"] == [None]
        step = episode.call("answer", {"text": "Done."})
    assert step.done and episode.reward == 1.0


def test_openenv_and_skyrl_run_bfcl_tasks():
    pytest.importorskip("openenv.core")
    pytest.importorskip("skyrl_gym")
    from stillweb.envs.integrations.openenv import StillwebAction, StillwebEnvironment
    from stillweb.envs.integrations.skyrl import StillwebTextEnv

    env = StillwebEnvironment(None, TASKS, env_id="stillweb/BFCL-v0")
    observation, agent = env.reset(seed=0, task_id=TASKS[1]), ReferenceAgent(env.env.tasks.by_id(TASKS[1]))
    while not observation.done:
        observation = env.step(StillwebAction(text=agent.act(observation.text)))
    assert observation.reward == 1.0 and observation.info["reward_parts"]["failed_check"] is None
    text_env = StillwebTextEnv({"snapshot": "unused", "tasks": TASKS, "env_id": "stillweb/BFCL-v0"}, {"task_id": TASKS[0]})
    messages, _ = text_env.init([])
    agent, observation, done = ReferenceAgent(BfclEnv(tasks=TASKS).tasks[0]), messages[-1]["content"], False
    while not done:
        output = text_env.step(agent.act(observation))
        done = output["done"]
        observation = output["observations"][-1]["content"] if output["observations"] else ""
    assert output["reward"] == 1.0
