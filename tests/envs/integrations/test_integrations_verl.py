"""verl: the generated tool config loaded by verl, the BaseTool lifecycle through ToolAgentLoop's own dispatch."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.extra

pytest.importorskip("verl")

import anyio  # noqa: E402

from stillweb.envs.integrations.episode import tool_content  # noqa: E402
from stillweb.envs.integrations.verl import EPISODE_FIELD, compute_score, export_verl  # noqa: E402


def _tool_loop(tools):
    """verl's ToolAgentLoop with only what ``_call_tool`` reads (no model, no rollout server)."""
    from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop

    loop = object.__new__(ToolAgentLoop)
    loop.tools = {tool.name: tool for tool in tools}
    loop.max_tool_response_length = 100_000
    loop.tool_response_truncate_side = "middle"
    return loop


def _agent_data(prompt, tools_kwargs):
    from verl.experimental.agent_loop.tool_agent_loop import AgentData

    return AgentData(messages=list(prompt), image_data=None, video_data=None, audio_data=None, mm_processor_kwargs=None,
                     metrics={}, request_id="test", tools_kwargs=tools_kwargs)


@pytest.mark.parametrize("split", ["train", "dev"])
def test_reference_episode_through_verl_tool_dispatch_matches_in_process(tasks_snapshot, tmp_path, reference_trace, split):
    """One tool_config.yaml for every split: a dev row (validation) resolves its task like a train row."""
    import pyarrow.parquet as pq
    from verl.experimental.agent_loop.tool_parser import FunctionCall
    from verl.tools.tool_registry import initialize_tools_from_config

    paths = export_verl(tasks_snapshot, "hard", tmp_path)
    assert paths[-1].name == "tool_config.yaml"
    tools = initialize_tools_from_config(str(paths[-1]))
    assert [tool.name for tool in tools] == ["search", "open", "find", "calculator", "answer"]
    loop = _tool_loop(tools)
    rows = pq.read_table(tmp_path / f"{split}.parquet").to_pylist()
    for row in rows[:2]:
        task_id = row["extra_info"]["task_id"]
        agent_data = _agent_data(row["prompt"], row["extra_info"]["tools_kwargs"])
        steps = reference_trace(tasks_snapshot, "hard", task_id, split=split)
        tool_rewards = []

        async def run():
            for name, arguments, observation, reward, info in steps:
                call = FunctionCall(name=name, arguments=json.dumps(arguments))
                response, tool_reward, metrics = await loop._call_tool(call, agent_data.tools_kwargs, agent_data)
                tool_rewards.append(tool_reward)
                if name != "answer":
                    assert response.text == tool_content(observation)
                assert tool_reward == reward

        anyio.run(run)
        episode = agent_data.extra_fields[EPISODE_FIELD]
        assert episode.info["task_id"] == task_id and episode.info["reward_parts"] == steps[-1][4]["reward_parts"]
        score = compute_score(row["data_source"], "", row["reward_model"]["ground_truth"], {"tool_rewards": tool_rewards})
        assert score == steps[-1][3] == 1.0


def test_bad_calls_are_observations_and_compute_score_reads_text(tasks_snapshot, tmp_path):
    import pyarrow.parquet as pq
    from verl.experimental.agent_loop.tool_parser import FunctionCall
    from verl.tools.tool_registry import initialize_tools_from_config

    paths = export_verl(tasks_snapshot, "hard", tmp_path)
    loop = _tool_loop(initialize_tools_from_config(str(paths[-1])))
    row = pq.read_table(tmp_path / "train.parquet").to_pylist()[0]
    agent_data = _agent_data(row["prompt"], row["extra_info"]["tools_kwargs"])

    async def run():
        bad = await loop._call_tool(FunctionCall(name="open", arguments='{"doc": -1}'), agent_data.tools_kwargs, agent_data)
        assert "Invalid arguments for open" in bad[0].text and bad[2]["flag"] == "bad_arguments"

    anyio.run(run)
    gold = row["reward_model"]["ground_truth"]
    answer = json.dumps({"name": "answer", "arguments": {"text": gold["target"][0]}})
    assert compute_score(row["data_source"], f"<tool_call>{answer}</tool_call>", gold) == 1.0
    assert compute_score(row["data_source"], "no call", gold) == 0.0
