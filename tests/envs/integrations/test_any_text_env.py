"""A text environment the adapters have never heard of: registered with Gymnasium in this module, it runs
through TRL's, verl's, SkyRL's, OpenEnv's and verifiers' adapters with no adapter code of its own."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from stillweb.envs.agents.scripted import write_call
from stillweb.envs.core.episode import EpisodeState, TextEnv
from stillweb.envs.core.limits import EpisodeLimits
from stillweb.envs.scoring.rewards import score_outcome
from stillweb.envs.core.task_loader import TaskPicker, load_tasks
from stillweb.envs.integrations.episode import ToolEpisode, text_env, text_env_ids
from stillweb.corpora.errors import UsageError
from stillweb.sandboxes.formats import get_format
from stillweb.sandboxes.formats.base import PromptWords
from stillweb.sandboxes.tools.types import ToolResult
from support.chat_stub import serve
from support.network import free_port

pytestmark = pytest.mark.extra

ENV_ID = "tests/Units-v0"
TO_METERS = {"type": "function", "function": {
    "name": "to_meters", "description": "A length in meters.",
    "parameters": {"type": "object", "properties": {"value": {"type": "number", "description": "the length"},
                                                    "unit": {"type": "string", "description": "km, m or cm"}},
                   "required": ["value", "unit"]}}}
ANSWER = {"type": "function", "function": {
    "name": "answer", "description": "Give the final answer.",
    "parameters": {"type": "object", "properties": {"text": {"type": "string", "description": "the answer"}},
                   "required": ["text"]}}}
WORDS = PromptWords("You convert lengths to meters with the to_meters tool.")
FACTORS = {"km": 1000, "m": 1, "cm": 0.01}
TASKS = [{"task_id": "u1", "question": "How many meters are 3 km?", "answer": "3000"},
         {"task_id": "u2", "question": "How many meters are 250 cm?", "answer": "2.5"}]
CALLS = {"u1": {"value": 3, "unit": "km"}, "u2": {"value": 250, "unit": "cm"}}


class UnitsEnv(TextEnv):
    """Convert lengths with a ``to_meters`` tool (no snapshot, no registry: its own schemas)."""

    def __init__(self, tasks, tool_format="tongyi", max_turns=4):
        limits = EpisodeLimits(max_turns=max_turns, max_tool_calls=4)
        self.setup_core(limits, get_format(tool_format, **limits.format_options()), actions=None, mask_truncated=True)
        self.tasks = load_tasks(tasks)
        self.picker = TaskPicker(self.tasks, "units")
        self.prompt = self.format.system_prompt([TO_METERS, ANSWER], words=WORDS)

    def tool_schemas(self):
        return [TO_METERS, ANSWER]

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed, options=options)
        task = self.picker.pick(seed, options)
        self.start_episode(EpisodeState(task, [{"role": "system", "content": self.prompt},
                                               {"role": "user", "content": task.question}]))
        return f"{self.prompt}\n\n{task.question}", self.base_info()

    def run_call(self, call, episode):
        value, unit = call.arguments.get("value"), call.arguments.get("unit")
        if call.name != "to_meters":
            return ToolResult(name=str(call.name), text="No such tool: call to_meters.", flag="unknown_tool")
        if not isinstance(value, (int, float)) or unit not in FACTORS:
            return ToolResult(name="to_meters", text='to_meters needs {"value": <number>, "unit": "km"|"m"|"cm"}',
                              flag="bad_arguments")
        return ToolResult(name="to_meters", text=f"{value * FACTORS[unit]:g}")

    def score(self, step, episode, ending):
        return score_outcome(episode.task, step.answer, steps=episode.steps, counts=episode.counts)


if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point=UnitsEnv, disable_env_checker=True)


def _script(task_id: str, tool_format: str) -> list[str]:
    answer = {task["task_id"]: task["answer"] for task in TASKS}[task_id]
    return [write_call(tool_format, "to_meters", CALLS[task_id]), write_call(tool_format, "answer", {"text": answer})]


def test_the_new_env_is_a_text_env_of_the_registry_and_an_unknown_id_is_refused():
    assert ENV_ID in text_env_ids() and "stillweb/WikiQA-v0" in text_env_ids()
    assert "stillweb/Remote-v0" not in text_env_ids()  # not a TextEnv: the adapters cannot step it by calls
    assert isinstance(text_env(None, TASKS, env_id=ENV_ID), UnitsEnv)
    with pytest.raises(UsageError, match="tests/Units-v0"):
        text_env(None, TASKS, env_id="tests/Nothing-v0")


def test_trl_factory_extracts_the_env_s_tools_and_plays_an_episode():
    pytest.importorskip("trl")
    from transformers.utils import get_json_schema

    from stillweb.envs.integrations.trl import environment_factory, task_dataset

    factory = environment_factory(None, TASKS, env_id=ENV_ID)
    assert get_json_schema(factory.to_meters)["function"]["parameters"]["required"] == ["value", "unit"]
    env = factory()
    env.reset(task_id="u1", prompt=[])
    assert env.to_meters(value=3, unit="km") == "3000" and env.get_reward() == 0.0
    assert env.to_meters(value=3, unit="parsec").startswith("to_meters needs")
    env.answer(text="3000")
    assert env.get_reward() == 1.0
    rows = task_dataset(None, TASKS, env_id=ENV_ID)
    assert [row["task_id"] for row in rows] == ["u1", "u2"]
    assert rows[0]["prompt"][1]["content"] == TASKS[0]["question"]
    assert rows[0]["prompt"][0]["content"] == WORDS.role  # the env's own words, not the research assistant's


def test_verl_tools_step_the_env(tmp_path):
    pytest.importorskip("verl")
    import anyio
    import yaml
    from verl.experimental.agent_loop.tool_agent_loop import AgentData
    from verl.tools.tool_registry import initialize_tools_from_config

    from stillweb.envs.integrations.verl import EPISODE_FIELD, tool_config

    path = tmp_path / "tool_config.yaml"
    path.write_text(yaml.safe_dump(tool_config(None, TASKS, "train", tools=(), env_id=ENV_ID), sort_keys=False))
    tools = {tool.name: tool for tool in initialize_tools_from_config(str(path))}
    assert sorted(tools) == ["answer", "to_meters"]
    data = AgentData(messages=[], image_data=None, video_data=None, audio_data=None, mm_processor_kwargs=None,
                     metrics={}, request_id="units", tools_kwargs={})

    async def run():
        rewards = []
        for name, arguments in (("to_meters", CALLS["u2"]), ("answer", {"text": "2.5"})):
            instance, _ = await tools[name].create(create_kwargs={"task_id": "u2"})
            response, reward, _ = await tools[name].execute(instance, arguments, agent_data=data)
            rewards.append((response.text, reward))
        return rewards

    rewards = anyio.run(run)
    assert rewards[0] == ("2.5", 0.0) and rewards[1][1] == 1.0
    assert data.extra_fields[EPISODE_FIELD].info["task_id"] == "u2"


def test_skyrl_make_plays_the_env():
    skyrl_gym = pytest.importorskip("skyrl_gym")
    from stillweb.envs.integrations.skyrl import SKYRL_ENV_ID

    env = skyrl_gym.make(SKYRL_ENV_ID, env_config={"snapshot": None, "tasks": TASKS, "env_id": ENV_ID},
                         extras={"extra_info": {"task_id": "u1"}})
    prompt, metadata = env.init([])
    assert metadata["task_id"] == "u1" and prompt[-1]["content"] == TASKS[0]["question"]
    first, last = (env.step(action) for action in _script("u1", "tongyi"))
    assert first["observations"][0]["content"].count("3000") == 1 and not first["done"]
    assert last["done"] and last["reward"] == 1.0


def test_openenv_server_and_verifiers_taskset_play_the_env():
    pytest.importorskip("openenv.core")
    pytest.importorskip("verifiers.v1")
    import anyio
    import httpx
    from openenv import GenericEnvClient
    from verifiers.v1.tasksets.openenv.taskset import parse_action

    from stillweb.envs.integrations.openenv import StillwebAction, StillwebEnvClient, create_app
    from stillweb.envs.integrations.verifiers import openenv_taskset

    with serve(create_app(None, TASKS, env_id=ENV_ID), free_port()) as v1:
        url = v1.removesuffix("/v1")
        with StillwebEnvClient(base_url=url).sync() as client:  # OpenEnv's own client
            result = client.reset(task_id="u1")
            assert result.observation.text.endswith(TASKS[0]["question"])
            for action in _script("u1", "tongyi"):
                result = client.step(StillwebAction(text=action))
            assert result.done and result.reward == 1.0
        tasks = list(openenv_taskset(url, None, TASKS, env_id=ENV_ID))
        assert [task.data.reset for task in tasks] == [{"task_id": "u1"}, {"task_id": "u2"}]

        async def run(task):
            schema = httpx.get(f"{url}/schema").json()["action"]
            async with GenericEnvClient(base_url=task.data.base_url) as client:
                await client.reset(**task.data.reset)
                for action in _script(task.data.reset["task_id"], "tongyi"):
                    result = await client.step(parse_action(action, schema))  # verifiers' own reply -> action
            return result.reward

        assert [anyio.run(run, task) for task in tasks] == [1.0, 1.0]


def test_an_env_without_tool_format_is_refused_by_the_adapters():
    class Fixed(UnitsEnv):
        def __init__(self, tasks):
            super().__init__(tasks)

    with pytest.raises(UsageError, match="takes no tool_format"):
        Fixed.for_adapters(None, TASKS, "train", tool_format="openai")
    assert json.dumps(ToolEpisode(None, TASKS, env_id=ENV_ID).schemas()) == json.dumps([TO_METERS, ANSWER])
