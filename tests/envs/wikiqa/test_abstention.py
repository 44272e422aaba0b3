"""Abstaining is an action: the answer tool, the three call formats, and the reward parts it earns."""

from __future__ import annotations

import json

import pytest

from stillweb.envs import WikiQAEnv
from stillweb.envs.scoring.rewards import RewardConfig
from stillweb.envs.wikiqa.citations import EpisodeTrace, score_episode
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.sandboxes.formats import get_format

ABSTAIN = {
    "tongyi": "<think>Nothing says it.</think>\n<abstain>No document states it.</abstain>",
    "openai": json.dumps({"name": "answer", "arguments": {"abstain": True, "text": "No document states it."}}),
    "search_r1": "<think>Nothing says it.</think><abstain>No document states it.</abstain>",
}
UNANSWERABLE = {"task_id": "nowhere", "question": "What is the moon's favourite orchard?", "answer": "", "answerable": False}


@pytest.mark.parametrize("tool_format", sorted(ABSTAIN))
def test_each_format_parses_its_abstention(tool_format):
    parsed = get_format(tool_format).parse(ABSTAIN[tool_format])
    assert parsed.error is None and parsed.abstained and parsed.answer == "No document states it." and not parsed.calls


def test_the_answer_tool_call_abstains_in_tongyi_too():
    call = '<tool_call>{"name": "answer", "arguments": {"abstain": true, "text": ""}}</tool_call>'
    parsed = get_format("tongyi").parse(call)
    assert parsed.abstained and parsed.answer == ""


@pytest.mark.parametrize(
    ("tool_format", "text", "expected"),
    [
        ("tongyi", "<abstain>a</abstain><abstain>b</abstain>", "more than one <abstain>"),
        ("tongyi", '<abstain>x</abstain><tool_call>{"name": "search", "arguments": {"query": "q"}}</tool_call>', "whole turn"),
        ("tongyi", "<answer>Ostra</answer><abstain>x</abstain>", "whole turn"),
        ("search_r1", "<search>q</search><abstain>x</abstain>", "whole turn"),
        ("search_r1", "<abstain>never closed", "never closed"),
        ("openai", '{"name": "answer", "arguments": {"abstain": "yes", "text": "x"}}', '"abstain" must be true or false'),
    ],
)
def test_malformed_abstentions_are_format_errors_that_say_how(tool_format, text, expected):
    parsed = get_format(tool_format, **({"parser": "strict"} if tool_format == "search_r1" else {})).parse(text)
    assert parsed.error is not None and expected in parsed.error and "abstain" in parsed.error
    assert not parsed.abstained


@pytest.mark.parametrize("tool_format", ["tongyi", "openai"])
def test_the_schema_and_prompt_show_how_to_abstain(tiny_world, world_tasks, tool_format):
    env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks, tool_format=tool_format)
    (answer,) = [schema for schema in env.registry.schemas() if schema["function"]["name"] == "answer"]
    assert answer["function"]["parameters"]["properties"]["abstain"]["type"] == "boolean"
    assert "abstain" in env.system_prompt


@pytest.mark.parametrize("tool_format", sorted(ABSTAIN))
def test_abstaining_on_an_unanswerable_task_earns_the_outcome(tiny_world, world_tasks, tool_format):
    env = WikiQAEnv(snapshot=tiny_world, tasks=[*world_tasks, UNANSWERABLE], tool_format=tool_format)
    env.reset(options={"task_id": "nowhere"})
    _, reward, terminated, truncated, info = env.step(ABSTAIN[tool_format])
    parts = info["reward_parts"]
    assert terminated and not truncated and reward == 1.0 and info["outcome"] == 1.0
    assert parts["abstention"] == 1.0 and parts["abstained"] and not parts["fabricated_answer"]
    assert parts["counts"]["unsupported_answer"] == 0


@pytest.mark.parametrize("tool_format", sorted(ABSTAIN))
def test_answering_an_unanswerable_task_is_a_fabrication(tiny_world, world_tasks, tool_format):
    env = WikiQAEnv(snapshot=tiny_world, tasks=[*world_tasks, UNANSWERABLE], tool_format=tool_format,
                    reward={"penalty_fabricated_answer": 0.5})
    env.reset(options={"task_id": "nowhere"})
    answer = {"openai": '{"name": "answer", "arguments": {"text": "Ostra"}}'}.get(tool_format, "<answer>Ostra</answer>")
    _, reward, terminated, _, info = env.step(answer)
    parts = info["reward_parts"]
    assert terminated and info["outcome"] == 0.0 and reward == -0.5
    assert parts["fabricated_answer"] and not parts["abstained"] and parts["abstention"] == 0.0


@pytest.mark.parametrize("tool_format", sorted(ABSTAIN))
def test_abstaining_on_an_answerable_task_earns_nothing(tiny_world, world_tasks, tool_format):
    env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks, tool_format=tool_format)
    env.reset(options={"task_id": "chain"})
    _, reward, terminated, _, info = env.step(ABSTAIN[tool_format])
    parts = info["reward_parts"]
    assert terminated and reward == 0.0 and info["outcome"] == 0.0
    assert parts["abstained"] and not parts["fabricated_answer"] and parts["abstention"] == 0.0


def test_abstention_weight_and_default_reward():
    task = TaskRecord.from_dict(UNANSWERABLE)
    assert task.golds == () and not task.answerable
    abstained = EpisodeTrace(answer="not stated", abstained=True, steps=2)
    assert score_episode(task, abstained, RewardConfig()).total == 1.0
    weighted = score_episode(task, EpisodeTrace(answer="x", abstained=True, steps=2), RewardConfig(outcome=0.0, abstention=0.5))
    assert weighted.total == 0.5 and weighted.outcome == 1.0
    truncated = score_episode(task, EpisodeTrace(answer=None, steps=9), RewardConfig())
    assert truncated.outcome == 0.0 and not truncated.fabricated_answer and not truncated.abstained


def test_unanswerable_records_are_checked():
    with pytest.raises(ValueError, match="has no answer"):
        TaskRecord.from_dict({**UNANSWERABLE, "answer": "Ostra"})
    with pytest.raises(ValueError, match="answer"):
        TaskRecord.from_dict({"question": "q", "answer": ""})
