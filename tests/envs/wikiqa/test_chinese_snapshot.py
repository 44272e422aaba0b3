"""WikiQA-v0 on a Chinese snapshot everywhere the English one goes: an episode in each tool format,
the find tool on traditional text, recording and replay, HTTP sessions equal to in-process,
Search-R1's /retrieve, MCP, and the viewer's pages (the search marks Chinese terms). The
snapshot and its one question are written for the tests (tests/support/chinese.py)."""

from __future__ import annotations

import json
import sys

import gymnasium as gym
import pytest
from fastapi.testclient import TestClient

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.envs import RecordEpisodes, ReferenceAgent, WikiQAEnv, replay, run_episode
from stillweb.envs.agents.scripted import write_answer, write_call
from stillweb.server.app import make_app
from stillweb.server.plumbing import ServerSettings
from support.chinese import CAPITAL_TASK, chinese_task_snapshot

TASK_ID = CAPITAL_TASK["task_id"]
FORMATS = ["tongyi", "openai", "search_r1"]


@pytest.fixture(scope="module")
def zh(tmp_path_factory):
    return chinese_task_snapshot(tmp_path_factory.mktemp("zh-tasks"))


@pytest.mark.parametrize("tool_format", FORMATS)
def test_the_reference_agent_answers_a_chinese_question_in_each_format(zh, tool_format):
    env = gym.make("stillweb/WikiQA-v0", snapshot=str(zh), tasks="zh", tool_format=tool_format)
    summary = run_episode(env, lambda task: ReferenceAgent(task, tool_format), options={"task_id": TASK_ID})
    assert summary["terminated"] and summary["outcome"] == 1.0 and summary["answer"] == "北京"


@pytest.mark.parametrize("tool_format", ["tongyi", "openai"])
def test_a_played_episode_searches_finds_and_answers_in_chinese(zh, tool_format):
    env = WikiQAEnv(str(zh), "zh", tool_format=tool_format)
    observation, info = env.reset(options={"task_id": TASK_ID})
    assert observation.endswith(CAPITAL_TASK["question"]) and info["snapshot_fingerprint"] == env.snapshot.fingerprint
    observation, *_ = env.step(write_call(tool_format, "search", {"query": "中國的首都"}))  # traditional: the same terms
    assert "[doc 0] 北京" in observation.split("2.")[0] and "首都" in observation
    observation, *_ = env.step(write_call(tool_format, "find", {"doc": 2, "pattern": "中国"}))  # 長城 writes 中國
    assert "1 line(s)" in observation and "長城是中國古代" in observation
    _, reward, terminated, _, info = env.step(write_answer(tool_format, "北京。", [0]))  # full-width stop: the same answer
    assert terminated and reward == 1.0 and info["reward_parts"]["citation_recall"] == 1.0


def test_a_recording_replays_identically(zh, tmp_path):
    path = tmp_path / "zh.jsonl"
    env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot=str(zh), tasks="zh"), path)
    assert run_episode(env, lambda task: ReferenceAgent(task, "tongyi"), seed=0, options={"task_id": TASK_ID})["outcome"] == 1.0
    env.close()
    steps = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert any("北京" in json.dumps(record, ensure_ascii=False) for record in steps)
    assert replay(path).ok
    from stillweb.server.viewer import ViewerConfig, make_viewer_app

    viewer = TestClient(make_viewer_app(ViewerConfig(zh, tasks="zh", episodes=(path,))))
    step = viewer.get("/view/episodes/zh.jsonl", params={"step": 1})
    assert step.status_code == 200 and "北京" in step.text and CAPITAL_TASK["question"] in viewer.get(
        "/view/episodes/zh.jsonl", params={"view": "all"}).text


def test_http_sessions_equal_in_process(zh):
    client = TestClient(make_app([zh], ServerSettings(max_sessions=2)))
    created = client.post("/sessions", json={"env_id": "stillweb/WikiQA-v0", "kwargs": {"tasks": "zh"}})
    assert created.status_code == 201, created.text
    session = created.json()["session_id"]
    local = WikiQAEnv(str(zh), "zh")
    observation, _ = local.reset(seed=0, options={"task_id": TASK_ID})
    remote = client.post(f"/sessions/{session}/reset", json={"seed": 0, "options": {"task_id": TASK_ID}}).json()
    assert remote["observation"] == observation
    agent, done = ReferenceAgent(local.tasks.by_id(TASK_ID), "tongyi"), False
    while not done:
        action = agent.act(observation)
        observation, reward, terminated, truncated, _ = local.step(action)
        answer = client.post(f"/sessions/{session}/step", json={"action": action}).json()
        assert (answer["observation"], answer["reward"]) == (observation, reward)
        done = terminated or truncated
    assert reward == 1.0


def test_retrieve_serves_chinese_passages(zh):
    client = TestClient(make_app([zh]))
    body = client.post("/retrieve", json={"queries": ["中国的首都", "長江入海口"], "topk": 2, "return_scores": True}).json()
    first, second = ([item["document"] for item in result] for result in body["result"])
    assert first[0]["contents"].startswith("北京\n北京是中华人民共和国的首都")
    assert second[0]["contents"].startswith("上海\n") and body["result"][0][0]["score"] > 0


def test_the_viewer_marks_chinese_terms(zh):
    from stillweb.server.viewer import ViewerConfig, make_viewer_app

    client = TestClient(make_viewer_app(ViewerConfig(zh, tasks="zh")))
    page = client.get("/view/search", params={"q": "中國首都"}).text
    assert "<mark>北京</mark>" not in page and "<mark>首都</mark>" in page and "北京" in page
    assert page.startswith('<!doctype html>\n<html lang="zh">')  # browsers pick Chinese glyphs
    document = client.get("/view/doc/2", params={"q": "中国"}).text  # marks the traditional form the text writes
    assert '<mark id="first-match">中國</mark>' in document and "1 match of" in document and "character pairs" in document
    assert CAPITAL_TASK["question"] in client.get(f"/view/tasks/{TASK_ID}").text


@pytest.mark.extra
@pytest.mark.slow  # an MCP server process
def test_mcp_serves_a_chinese_episode(zh):
    pytest.importorskip("mcp")
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = [sys.executable, "-c", "from stillweb.cli.main import main; raise SystemExit(main())", "mcp", str(zh),
               "--tasks", "zh"]

    async def run():
        async with stdio_client(StdioServerParameters(command=command[0], args=command[1:])) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            started = await session.call_tool("start_task", {"task_id": TASK_ID})
            assert started.content[0].text == CAPITAL_TASK["question"]
            found = await session.call_tool("search", {"query": "首都"})
            assert "[doc 0] 北京" in found.content[0].text
            final = await session.call_tool("answer", {"text": "北京", "citations": [0]})
            assert final.structured_content["reward"] == 1.0 and final.structured_content["terminated"]

    anyio.run(run)


def test_context_management_keeps_the_chinese_sentences_that_match():
    from stillweb.envs.core.context import ContextConfig, ContextManager, ToolEvent, Turn
    from stillweb.sandboxes.tools.types import ToolResult

    page = "上海是中国的城市。上海有很多高楼。上海位于长江入海口。上海的人口很多。"
    opened = ToolEvent("open", {"doc": 1}, ToolResult("open", page, opened_doc=1), opened_doc=1)
    searched = ToolEvent("search", {"query": "长江入海口"}, ToolResult("search", "1. [doc 1] 上海", shown_docs=(1,)), listed_docs=(1,))
    turns = [Turn("open", (opened,), page), Turn("search", (searched,), "results")]
    manager = ContextManager(ContextConfig(passages_per_page=1, keep_recent_turns=1))
    context = manager.build([{"role": "user", "content": "上海在哪里？"}], turns, render=lambda results: results[0].text)
    condensed = context.messages[2]["content"]
    assert condensed.endswith("上海位于长江入海口。") and "高楼" not in condensed
