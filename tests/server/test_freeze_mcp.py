"""`stillweb freeze record|serve` in front of a real MCP server built here with the `mcp` SDK (answers
change on every call): recorded over stdio and streamable HTTP, replayed twice with identical bytes,
a call never recorded flagged `not_recorded` (also over `freeze serve --stdio`)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.extra

pytest.importorskip("mcp")

from support.live_services import start, stdio_command  # noqa: E402
from support.network import free_port  # noqa: E402
from support.freeze_servers import FREEZE as CLI, start_freeze as _freeze, stop as _stop  # noqa: E402

from stillweb.sandboxes.frozen import FrozenStore  # noqa: E402

def _mcp_calls(url: str, miss: bool = False) -> list[str]:
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def run() -> list[str]:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            results = [await session.call_tool("web_search", {"q": "river"}), await session.call_tool("clock", {}),
                       await session.call_tool("web_search", {"q": "river", "k": 1})]
            if miss:
                missed = await session.call_tool("web_search", {"q": "never recorded"})
                assert missed.is_error and missed.structured_content["flag"] == "not_recorded"
                assert missed.meta["stillweb/frozen"]["source"] == "not_recorded"
            dumped = [tools[0].model_dump_json(by_alias=True)]
            dumped += [result.model_dump_json(by_alias=True, exclude={"meta"}) for result in results]
            dumped.append(str([result.meta["stillweb/frozen"]["source"] for result in results]))
            return dumped

    return anyio.run(run)


@pytest.mark.parametrize("upstream", ["stdio", pytest.param("http", marks=pytest.mark.slow)])
def test_mcp_record_then_replay_twice_identical(tmp_path, upstream):
    live = None
    if upstream == "stdio":
        source = ["--mcp-command", " ".join(stdio_command())]
    else:
        live_port = free_port()
        live = start("mcp-http", live_port)
        source = ["--mcp-url", f"http://127.0.0.1:{live_port}/mcp"]
    store, port = tmp_path / "frozen", free_port()
    recorder = _freeze("record", *source, "--out", str(store), port=port)
    try:
        recorded = _mcp_calls(f"http://127.0.0.1:{port}/mcp")
        assert recorded[-1] == "['live', 'live', 'live']"
    finally:
        _stop(recorder)
        if live is not None:
            live.kill()
    frozen = FrozenStore.open(store)
    assert len(frozen) == 4 and frozen.kind == "mcp"  # tools/list and three calls
    port = free_port()
    server = _freeze("serve", str(store), port=port)
    try:
        first, second = _mcp_calls(f"http://127.0.0.1:{port}/mcp", miss=True), _mcp_calls(f"http://127.0.0.1:{port}/mcp")
    finally:
        _stop(server)
    assert first == second == recorded[:4] + ["['store', 'store', 'store']"]
    if upstream == "http":  # and over `freeze serve --stdio` too
        miss = _mcp_miss(store)
        assert miss.is_error and miss.structured_content["flag"] == "not_recorded"


def _mcp_miss(store):
    """A call never recorded, over `freeze serve --stdio`."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def run():
        parameters = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "serve", str(store), "--stdio"])
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            assert (await session.call_tool("clock", {})).meta["stillweb/frozen"]["source"] == "store"
            return await session.call_tool("web_search", {"q": "something new"})

    return anyio.run(run)
