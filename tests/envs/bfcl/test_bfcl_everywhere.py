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


def test_mcp_serves_bfcl_functions_with_an_episode_per_client():
    pytest.importorskip("mcp")
    import sys

    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = [sys.executable, "-c", "from stillweb.cli.main import main; raise SystemExit(main())", "mcp", "--bfcl", "multi_turn_base"]
    task = BfclEnv(tasks=TASKS[:1]).tasks[0]

    async def run():
        async with stdio_client(StdioServerParameters(command=command[0], args=command[1:])) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert {"mv", "post_tweet", "place_order", "answer", "start_task"} <= names
            started = await session.call_tool("start_task", {"task_id": task.task_id})
            assert started.content[0].text.startswith("Move 'final_report.pdf'")
            for turn in ground_truth_calls(task):
                for name, arguments in turn:
                    arguments = {("file_name" if key == "#0" else key): value for key, value in arguments.items()}
                    assert not (await session.call_tool(name, arguments)).is_error
                final = await session.call_tool("answer", {"text": "Done."})
            assert final.structured_content["reward"] == 1.0 and final.structured_content["terminated"]

    anyio.run(run)


@pytest.mark.slow
def test_trl_grpo_step_extracts_bfcl_functions_and_earns_the_checkers_reward(tmp_path, monkeypatch):
    """TRL's schema extraction reads each BFCL function as the environment's schemas say; a GRPO step whose model
    makes the ground truth's calls turn by turn (each turn ended by ``answer``, which brings the next user turn) gets
    reward 1 from BFCL's checker in each rollout's environment."""
    pytest.importorskip("trl")
    from transformers.utils import get_json_schema

    from stillweb.envs.integrations.trl import environment_factory, task_dataset
    from support.trl_tiny import grpo_step, logged_env_reward

    short = ["multi_turn_base_100"]  # two user turns of one call each: a short GRPO completion
    factory = environment_factory(None, short, env_id="stillweb/BFCL-v0")
    probe = factory()
    schemas = {schema["function"]["name"]: schema["function"] for schema in probe.episode.env.tool_schemas()}
    assert "answer" in schemas and len(schemas) > 10
    for name, schema in schemas.items():
        extracted = get_json_schema(getattr(factory, name))["function"]
        assert (extracted["name"], sorted(extracted["parameters"]["properties"])) == (name, sorted(schema["parameters"]["properties"]))
        assert sorted(extracted["parameters"].get("required", [])) == sorted(schema["parameters"].get("required", []))
    task = probe.episode.env.tasks.by_id(short[0])
    calls = [{"name": name, "arguments": {("symbol" if key == "#0" else key): value for key, value in arguments.items()}}
             for turn in ground_truth_calls(task) for name, arguments in [*turn, ("answer", {"text": "Done."})]]
    dataset = task_dataset(None, short, env_id="stillweb/BFCL-v0")
    assert len(ground_truth_calls(task)) == 2 and len(calls) == 4
    trainer = grpo_step(factory, dataset, calls, tmp_path, monkeypatch, tool_names_only=True)
    rollouts = trainer._environment_pool[None]
    assert len(rollouts) == 2
    for env in rollouts:
        assert env.episode.info["task_id"] == task.task_id and env.get_reward() == 1.0
    assert logged_env_reward(trainer) == 1.0


@pytest.mark.parametrize("shape", ["openai", "tongyi"])
def test_sft_export_of_reference_episodes(tmp_path, shape):
    import json

    import pyarrow.parquet as pq

    from stillweb.envs.integrations.bfcl_sft import export_bfcl_sft

    written = export_bfcl_sft(tmp_path, ["multi_turn_base", "multi_turn_miss_func"], shape=shape,
                              tasks=["multi_turn_base_0", "multi_turn_miss_func_0"])
    rows = {path.stem: pq.read_table(path).to_pylist() for path in written if path.suffix == ".parquet"}
    assert {name: [row["task_id"] for row in table] for name, table in rows.items()} == {
        "multi_turn_base": ["multi_turn_base_0"], "multi_turn_miss_func": ["multi_turn_miss_func_0"]}
    miss = rows["multi_turn_miss_func"][0]
    assert miss["outcome"] == 1.0 and "sort" not in {tool["function"]["name"] for tool in json.loads(miss["tools"])}
    assert any("I have updated some more functions" in message["content"] for message in miss["messages"])
    if shape == "openai":
        assert any(message.get("tool_calls") for message in miss["messages"])
    assert (tmp_path / "dataset").is_dir()


def test_ray_pool_gives_the_in_process_results(ray_runtime):
    pytest.importorskip("ray")
    from stillweb.envs.bfcl.agents import BfclTextAgent
    from support.ray_env import assert_pool_matches_in_process

    assert_pool_matches_in_process("stillweb/BFCL-v0", {"category": "multi_turn_base", "tasks": TASKS},
                                   lambda seed: BfclTextAgent())


def test_viewer_shows_calls_results_and_state_diff_per_step(tmp_path, small_snapshot):
    from stillweb.server.viewer import ViewerConfig, make_viewer_app

    path = tmp_path / "bfcl.jsonl"
    env = RecordEpisodes(gym.make("stillweb/BFCL-v0", tasks=TASKS[:1]), path)
    assert run_episode(env, lambda task: ReferenceAgent(task), seed=0)["outcome"] == 1.0
    env.close()
    client = TestClient(make_viewer_app(ViewerConfig(small_snapshot, episodes=(path,))))
    page = client.get("/view/episodes/bfcl.jsonl", params={"step": 2}).text  # mkdir(dir_name='temp')
    assert "<b>mkdir</b>" in page and "state diff" in page
    assert "GorillaFileSystem.root.contents.document.contents.temp" in page
    result = client.get("/view/episodes/bfcl.jsonl", params={"step": 3}).text  # mv: its result text
    assert "moved to" in result and "failed_check" in client.get("/view/episodes/bfcl.jsonl", params={"step": 99}).text


def test_verl_tool_agent_loop_rollout_earns_the_reward_of_bfcls_checker(tmp_path):
    """A real ``ToolAgentLoop.run`` (support.verl_rollout: verl builds the prompt, parses the scripted model's hermes
    tool calls, runs the exported tools): the ground truth's calls, turn by turn, earn BFCL's checker reward at the end."""
    pytest.importorskip("verl")
    pytest.importorskip("trl")  # its Qwen3 chat template renders the prompts
    import pyarrow.parquet as pq
    from trl.chat_template_utils import qwen3_chat_template

    from stillweb.envs.integrations.verl import EPISODE_FIELD, compute_score, export_bfcl_verl
    from support.trl_tiny import tiny_tokenizer
    from support.verl_rollout import tool_agent_rollout

    paths = export_bfcl_verl(tmp_path, "multi_turn_base", tasks=TASKS)
    row = next(row for row in pq.read_table(paths[0]).to_pylist() if row["extra_info"]["task_id"] == TASKS[1])
    assert row["prompt"][1]["content"] == BfclEnv(tasks=TASKS).reset(options={"task_id": TASKS[1]})[1]["messages"][1]["content"]
    task = BfclEnv(tasks=TASKS).tasks.by_id(TASKS[1])
    calls = [{"name": name, "arguments": {("symbol" if key == "#0" else key): value for key, value in arguments.items()}}
             for turn in ground_truth_calls(task) for name, arguments in [*turn, ("answer", {"text": "Done."})]]
    output, server = tool_agent_rollout(paths[-1], row, calls, tiny_tokenizer(qwen3_chat_template))
    rewards = output.extra_fields["tool_rewards"]
    assert len(rewards) == len(calls) and rewards[-1] == 1.0 and sum(rewards) == 1.0
    assert len(server.prompts) == len(calls) + 1 and '"name": "place_order"' in server.prompts[0]  # verl's tool list
    assert output.extra_fields[EPISODE_FIELD].info["task_id"] == TASKS[1]
    assert compute_score("stillweb/BFCL-v0", "", {"target": []}, {"tool_rewards": rewards}) == 1.0


def test_verifiers_taskset_lists_the_bfcl_tasks():
    pytest.importorskip("verifiers")
    from stillweb.envs.integrations.verifiers import openenv_config

    config = openenv_config("http://127.0.0.1:1", None, TASKS, split="default", env_id="stillweb/BFCL-v0")
    assert [reset["task_id"] for reset in config.resets] == TASKS


def test_difficulty_profile_and_band(tmp_path):
    import pyarrow.parquet as pq

    from stillweb.envs.bfcl.profile import profile_bfcl, tasks_in_band
    from stillweb.envs.profiles import PolicySpec

    reference = profile_bfcl("multi_turn_base", PolicySpec("reference", "reference"), tmp_path, k=2, tasks=TASKS)
    random = profile_bfcl("multi_turn_base", PolicySpec("random", "random"), tmp_path, k=2, tasks=TASKS)
    rows = pq.read_table(reference).to_pylist()
    assert [(row["task_id"], row["pass_at_1"], row["pass_at_k"]) for row in rows] == [(task, 1.0, 1.0) for task in TASKS]
    assert rows[0]["snapshot_fingerprint"].startswith("bfcl-eval==") and rows[0]["reference_steps"] == 14
    assert tasks_in_band(reference, (0.5, 1.0)) == TASKS and tasks_in_band(random, (0.5, 1.0)) == []
    assert reference.read_bytes() == profile_bfcl("multi_turn_base", PolicySpec("reference", "reference"),
                                                  tmp_path / "again", k=2, tasks=TASKS).read_bytes()


_EXPORTS = """
import sys
from pathlib import Path
from stillweb.envs.bfcl.profile import profile_bfcl
from stillweb.envs.integrations.bfcl_sft import export_bfcl_sft
from stillweb.envs.profiles import PolicySpec
out = Path(sys.argv[1])
export_bfcl_sft(out / "sft", ["multi_turn_miss_func"], tasks=["multi_turn_miss_func_0", "multi_turn_miss_func_1"])
profile_bfcl("multi_turn_base", PolicySpec("random", "random"), out / "profiles", k=2, tasks=["multi_turn_base_0"])
"""


def test_two_processes_write_identical_exports_and_profiles(tmp_path):
    """SFT rows (parquet and the datasets folder) and profiles: the same bytes from two processes (verl's
    data is task_dataset's rows and tool_config's schemas, both covered here and by the verl test)."""
    import os
    import subprocess
    import sys

    trees = []
    for seed in (1, 2):
        out = tmp_path / f"run{seed}"
        subprocess.run([sys.executable, "-c", _EXPORTS, str(out)], check=True, capture_output=True,
                       env={**os.environ, "PYTHONHASHSEED": str(seed)})
        trees.append({path.relative_to(out).as_posix(): path.read_bytes() for path in sorted(out.rglob("*"))
                      if path.is_file()})
    assert trees[0] == trees[1] and len(trees[0]) >= 3


def test_cli_card_and_export(tmp_path, capsys):
    from stillweb.cli.main import main

    assert main(["bfcl", "card", "--category", "multi_turn_miss_func"]) == 0
    printed = capsys.readouterr().out
    assert "multi_turn_miss_func: 200 tasks, default split 199, left out 1" in printed
    assert "multi_turn_miss_func_49: its ground truth calls tail at turn 1" in printed
    assert main(["bfcl", "export", str(tmp_path), "--category", "multi_turn_base", "--tasks", "multi_turn_base_0"]) == 0
    assert (tmp_path / "multi_turn_base.parquet").is_file() and (tmp_path / "dataset").is_dir()


def test_remote_env_over_a_server_process_equals_in_process(small_server_url):
    """Remote-v0 (the client of the session routes) over a real server process: the same observations,
    rewards and state fingerprints as in-process, for the reference agent and the text-only agent."""
    from stillweb.envs.bfcl.agents import BfclTextAgent

    local = gym.make("stillweb/BFCL-v0", tasks=TASKS)
    remote = gym.make("stillweb/Remote-v0", url=small_server_url, env_id="stillweb/BFCL-v0", tasks=TASKS)
    try:
        for seed, task_id in enumerate(TASKS):
            task = local.unwrapped.tasks.by_id(task_id)
            for agent in (ReferenceAgent(task), BfclTextAgent()):
                observation, info = local.reset(seed=seed, options={"task_id": task_id})
                remote_observation, remote_info = remote.reset(seed=seed, options={"task_id": task_id})
                assert remote_observation == observation and remote_info["state_fingerprint"] == info["state_fingerprint"]
                done = False
                while not done:
                    action = agent.act(observation)
                    observation, reward, terminated, truncated, info = local.step(action)
                    got = remote.step(action)
                    assert got[:4] == (observation, reward, terminated, truncated)
                    assert got[4]["state_fingerprint"] == info["state_fingerprint"]
                    done = terminated or truncated
    finally:
        remote.close()
        local.close()
