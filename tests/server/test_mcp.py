"""MCP: `stillweb mcp` over stdio and streamable HTTP, driven by the official SDK's ClientSession."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.extra

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from stillweb.corpora import Snapshot  # noqa: E402
from stillweb.envs.integrations.episode import tool_content  # noqa: E402
from stillweb.sandboxes import ToolCall, ToolRegistry  # noqa: E402

CLI = [sys.executable, "-c", "from stillweb.cli.main import main; raise SystemExit(main())", "mcp"]
CALLS = [("search", {"query": "river city", "k": 3}), ("open", {"doc": 1}), ("find", {"doc": 1, "pattern": "the"}),
         ("calculator", {"expression": "1/3 + 1/6"}), ("search", {"qery": "x"}), ("open", {"doc": 10**9}), ("nope", {})]


async def _check_tools_match_in_process(session: ClientSession, snapshot) -> None:
    registry = ToolRegistry(Snapshot.open(snapshot))
    await session.initialize()
    listed = (await session.list_tools()).tools
    assert [(t.name, t.description, t.input_schema) for t in listed] == [
        (t["name"], t["description"], t["inputSchema"]) for t in registry.mcp_tools()]
    for name, arguments in CALLS:
        result = await session.call_tool(name, arguments)
        expected = registry.call(ToolCall(name, arguments))
        assert result.content[0].text == expected.text
        assert result.structured_content == json.loads(json.dumps(expected.to_dict()))
        assert result.is_error == (expected.flag is not None)
    bad = await session.call_tool("search", {"qery": "x"})
    assert bad.is_error and "unexpected argument(s) 'qery'" in bad.content[0].text


@pytest.mark.slow
def test_stdio_tools_and_errors_match_in_process(tasks_snapshot):
    async def run():
        parameters = StdioServerParameters(command=CLI[0], args=[*CLI[1:], str(tasks_snapshot)])
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await _check_tools_match_in_process(session, tasks_snapshot)

    anyio.run(run)


@pytest.fixture(scope="module")
def mcp_http(tasks_snapshot):
    """`stillweb mcp --http --tasks hard` on a free loopback port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([*CLI, str(tasks_snapshot), "--http", "--port", str(port), "--tasks", "hard",
                                "--tools", "search", "open", "find", "calculator", "answer"])
    for _ in range(600):
        with socket.socket() as client:
            if client.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    process.terminate()
    process.wait(timeout=30)


@pytest.mark.slow
def test_http_episode_per_session_matches_in_process(mcp_http, tasks_snapshot, reference_trace):
    from stillweb.envs import WikiQAEnv

    tasks = WikiQAEnv(tasks_snapshot, "hard").tasks
    first, second = tasks[0].task_id, tasks[1].task_id
    steps = reference_trace(tasks_snapshot, "hard", first)  # the default limits, as the server has

    async def run():
        async with streamable_http_client(mcp_http) as (r1, w1), ClientSession(r1, w1) as one, \
                streamable_http_client(mcp_http) as (r2, w2), ClientSession(r2, w2) as two:
            await one.initialize()
            await two.initialize()
            assert "start_task" in [tool.name for tool in (await one.list_tools()).tools]
            started = await one.call_tool("start_task", {"task_id": first})
            assert started.content[0].text == tasks[0].question
            await two.call_tool("start_task", {"task_id": second})
            bad = await two.call_tool("start_task", {"task_id": "sw-nope"})
            assert bad.is_error and "sw-nope" in bad.content[0].text
            for name, arguments, observation, reward, info in steps:
                result = await one.call_tool(name, arguments)
                if name != "answer":
                    assert result.content[0].text == tool_content(observation)
                assert result.structured_content["reward"] == reward
            assert result.structured_content["terminated"] and not result.is_error
            assert result.structured_content["reward_parts"] == json.loads(json.dumps(info.get("reward_parts")))
            other = await two.call_tool("search", {"query": "river"})  # the second session's own episode
            assert other.structured_content["task_id"] == second and other.structured_content["reward"] == 0.0

    anyio.run(run)
