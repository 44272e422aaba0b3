"""TRL: the environment factory and dataset through TRL's own tool-schema extraction and GRPO loop."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.extra

trl = pytest.importorskip("trl")
transformers = pytest.importorskip("transformers")

from stillweb.envs.integrations.episode import DEFAULT_TOOLS, tool_content  # noqa: E402
from stillweb.envs.integrations.trl import environment_factory, task_dataset  # noqa: E402
from stillweb.sandboxes import ToolRegistry  # noqa: E402
from stillweb.corpora import Snapshot  # noqa: E402
from support.trl_tiny import grpo_step, logged_env_reward, tiny_tokenizer  # noqa: E402


def test_tool_schemas_from_trl_extraction_match_the_registry(tasks_snapshot):
    from transformers.utils import get_json_schema

    env = environment_factory(tasks_snapshot, "hard")()
    ours = {item["function"]["name"]: item["function"] for item in ToolRegistry(Snapshot.open(tasks_snapshot), tools=DEFAULT_TOOLS).schemas()}
    for name, function in ours.items():
        extracted = get_json_schema(getattr(env, name))["function"]
        assert extracted["name"] == name
        assert extracted["description"] == function["description"]
        assert sorted(extracted["parameters"]["properties"]) == sorted(function["parameters"]["properties"])
        assert sorted(extracted["parameters"].get("required", [])) == sorted(function["parameters"].get("required", []))
    assert {"reset", "get_reward"} <= set(dir(env))


def test_dataset_rows_reset_the_env_and_the_reference_episode_matches_in_process(tasks_snapshot, reference_trace):
    dataset = task_dataset(tasks_snapshot, "hard")
    assert dataset.column_names == ["prompt", "task_id", "answer"]
    env = environment_factory(tasks_snapshot, "hard")()  # default limits: every task solved
    for row in dataset:
        assert env.reset(**row) is None
        assert row["prompt"][-1]["content"] == env.episode.env.tasks.by_id(row["task_id"]).question
        steps = reference_trace(tasks_snapshot, "hard", row["task_id"])
        for name, arguments, observation, reward, info in steps:
            text = getattr(env, name)(**arguments)
            if name != "answer":
                assert text == tool_content(observation)
        assert env.get_reward() == steps[-1][3] == 1.0
        # same actions and observations: the history equals the reference's steps' new messages, in order
        assert env.episode.env.unwrapped.messages[2:] == [message for *_, info in steps for message in info["messages"]]
        assert env.episode.info["reward_parts"] == steps[-1][4]["reward_parts"]


def test_bad_tool_arguments_reach_the_registry_as_error_observations(tasks_snapshot):
    env = environment_factory(tasks_snapshot, "hard")()
    env.reset(**task_dataset(tasks_snapshot, "hard")[0])
    assert env.search(qery="x").startswith("Invalid arguments for search: unexpected argument(s) 'qery'")
    assert "Invalid arguments for open" in env.open(doc=-5)
    assert env.get_reward() == 0.0
    with pytest.raises(ValueError, match="task_id"):
        env.reset(prompt=[])


@pytest.mark.slow
def test_qwen3_chat_template_renders_the_tools(tasks_snapshot):
    from trl.chat_template_utils import qwen3_chat_template

    tokenizer = tiny_tokenizer(qwen3_chat_template)
    env = environment_factory(tasks_snapshot, "hard")()
    tools = [getattr(env, name) for name in DEFAULT_TOOLS]
    text = tokenizer.apply_chat_template(task_dataset(tasks_snapshot, "hard")[0]["prompt"], tools=tools, tokenize=False,
                                         add_generation_prompt=True)
    for name in DEFAULT_TOOLS:
        assert f'"name": "{name}"' in text


@pytest.mark.slow
def test_grpo_trainer_step_runs_the_tools_and_takes_the_env_reward(tasks_snapshot, tmp_path, monkeypatch):
    dataset = task_dataset(tasks_snapshot, "hard").select([0])
    task = dataset[0]
    factory = environment_factory(tasks_snapshot, "hard")
    query = {"query": task["prompt"][-1]["content"][:60], "k": 1}
    calls = [{"name": "search", "arguments": query}, {"name": "answer", "arguments": {"text": task["answer"], "citations": []}}]
    trainer = grpo_step(factory, dataset, calls, tmp_path, monkeypatch)

    expected = factory()
    expected.reset(**task)
    search_text = expected.search(**query)
    expected.answer(**calls[1]["arguments"])
    rollouts = trainer._environment_pool[None]
    assert len(rollouts) == 2
    for env in rollouts:
        assert env.episode.info["task_id"] == task["task_id"]
        assert env.episode.info["tool_calls"] == 1 and env.episode.info["answer"] == task["answer"]
        assert env.episode.env.unwrapped.messages[2:] == expected.episode.env.unwrapped.messages[2:]
        assert env.get_reward() == expected.get_reward() == 1.0
    assert logged_env_reward(trainer) == 1.0
    assert search_text.startswith("[doc ") or "result" in search_text.lower()
