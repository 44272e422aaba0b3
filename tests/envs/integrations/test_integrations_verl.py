"""verl: the generated tool config loaded by verl, the BaseTool lifecycle through a real ToolAgentLoop rollout."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.extra

pytest.importorskip("verl")

from stillweb.envs.integrations.episode import tool_content  # noqa: E402
from stillweb.envs.integrations.verl import EPISODE_FIELD, compute_score, export_verl  # noqa: E402


def _rollout(tool_config, row, calls):
    """verl's ToolAgentLoop.run over ``row`` whose scripted model makes ``calls`` (support.verl_rollout)."""
    pytest.importorskip("trl")  # its Qwen3 chat template renders the prompts (CI installs every extra)
    from trl.chat_template_utils import qwen3_chat_template

    from support.trl_tiny import tiny_tokenizer
    from support.verl_rollout import tool_agent_rollout

    return tool_agent_rollout(tool_config, row, calls, tiny_tokenizer(qwen3_chat_template))


@pytest.mark.parametrize("split", ["train", "dev"])
def test_reference_episode_through_a_verl_tool_agent_loop_rollout_matches_in_process(tasks_snapshot, tmp_path, reference_trace, split):
    """One tool_config.yaml for every split: a dev row (validation) resolves its task like a train row. verl's own
    loop parses the scripted model's calls and runs the tools: each tool reward and response is the in-process one."""
    import pyarrow.parquet as pq

    paths = export_verl(tasks_snapshot, "hard", tmp_path)
    assert paths[-1].name == "tool_config.yaml"
    rows = pq.read_table(tmp_path / f"{split}.parquet").to_pylist()
    for row in rows[:2]:
        task_id = row["extra_info"]["task_id"]
        steps = reference_trace(tasks_snapshot, "hard", task_id, split=split)
        output, server = _rollout(paths[-1], row, [{"name": name, "arguments": arguments} for name, arguments, *_ in steps])
        tool_rewards = output.extra_fields["tool_rewards"]
        assert tool_rewards == [reward for *_, reward, _info in steps]
        for name, _arguments, observation, _reward, _info in steps:
            if name != "answer":
                assert tool_content(observation) in server.prompts[-1]  # verl's tool message, tokenized and read back
        episode = output.extra_fields[EPISODE_FIELD]
        assert episode.info["task_id"] == task_id and episode.info["reward_parts"] == steps[-1][4]["reward_parts"]
        score = compute_score(row["data_source"], "", row["reward_model"]["ground_truth"], {"tool_rewards": tool_rewards})
        assert score == steps[-1][3] == 1.0


def test_bad_calls_are_observations_and_compute_score_reads_text(tasks_snapshot, tmp_path):
    import pyarrow.parquet as pq

    paths = export_verl(tasks_snapshot, "hard", tmp_path)
    row = pq.read_table(tmp_path / "train.parquet").to_pylist()[0]
    output, server = _rollout(paths[-1], row, [{"name": "open", "arguments": {"doc": -1}}])
    assert output.extra_fields["tool_rewards"] == [0.0] and "Invalid arguments for open" in server.prompts[-1]
    assert output.extra_fields[EPISODE_FIELD].info["tool_flags"] == ["bad_arguments"]
    gold = row["reward_model"]["ground_truth"]
    answer = json.dumps({"name": "answer", "arguments": {"text": gold["target"][0]}})
    assert compute_score(row["data_source"], f"<tool_call>{answer}</tool_call>", gold) == 1.0
    assert compute_score(row["data_source"], "no call", gold) == 0.0
