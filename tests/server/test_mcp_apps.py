"""``stillweb mcp --apps``: the app endpoints over MCP (stdio), one episode per client; the
reference program called through MCP earns the environment's reward."""

from __future__ import annotations

import sys

import pytest

pytestmark = pytest.mark.extra

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from stillweb.envs.apps.env import AppsEnv  # noqa: E402
from stillweb.sandboxes.apps import ENDPOINTS  # noqa: E402

CLI = [sys.executable, "-c", "from stillweb.cli.main import main; raise SystemExit(main())", "mcp"]


def test_app_endpoints_over_mcp(apps_snapshot):
    task = next(task for task in AppsEnv(apps_snapshot, "core").tasks if task.extra["category"] == "dependent_writes")

    async def run():
        parameters = StdioServerParameters(command=CLI[0], args=[*CLI[1:], str(apps_snapshot), "--apps", "--tasks", "core"])
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert set(ENDPOINTS) | {"answer", "start_task"} <= names
            early = await session.call_tool("list_contacts", {})
            assert early.is_error and "start_task" in early.content[0].text
            started = await session.call_tool("start_task", {"task_id": task.task_id})
            assert task.extra["turns"][0] in started.content[0].text
            for call in task.extra["program"][0]:
                assert not (await session.call_tool(call["name"], call["arguments"])).is_error
            final = await session.call_tool("answer", {"text": "Done."})
            assert final.structured_content["reward"] == 1.0 and final.structured_content["terminated"]

    anyio.run(run)
