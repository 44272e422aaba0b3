"""The live side of a frozen tool: forward one call to the real HTTP JSON service or MCP server.

Both upstreams are synchronous and thread-safe (the MCP one keeps one client session on
a private event-loop thread), and both raise :class:`UpstreamError` naming the upstream
and what went wrong (down, timed out, a 5xx, a response that is not JSON): such an
answer is never recorded. Credentials the upstream needs go in ``headers`` (HTTP) or
the server's own environment (MCP stdio); they are forwarded, never stored.

>>> HttpUpstream("http://127.0.0.1:9000").forward("POST", "/search", (), b'{"q": "x"}', {})  # doctest: +SKIP
{'status': 200, 'content_type': 'application/json', 'body': '{"hits": []}'}
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import httpx

from stillweb.corpora.errors import UpstreamError, UsageError

__all__ = ["HttpUpstream", "McpUpstream", "MAX_RESPONSE_BYTES"]

MAX_RESPONSE_BYTES = 16 * 1024 * 1024
# Request headers a proxy must not pass on (hop-by-hop, or set by the HTTP client itself).
_NOT_FORWARDED = frozenset({"host", "content-length", "connection", "transfer-encoding", "keep-alive", "upgrade",
                            "accept-encoding", "te", "trailer", "proxy-connection"})

# Statuses that say "not now" rather than answer the call: never recorded, like a 5xx.
_TRANSIENT_STATUS = frozenset({408, 425, 429})


class HttpUpstream:
    """A live HTTP JSON service at ``base_url``; ``headers`` are added to every forwarded call
    (an API key, say). Only answers with a JSON body and a
    status below 500 (but not 408, 425, 429: they mean "later") are returned."""

    def __init__(self, base_url: str, headers: Mapping[str, str] | None = None, timeout_s: float = 30.0,
                 max_response_bytes: int = MAX_RESPONSE_BYTES) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise UsageError(f"upstream URL must start with http:// or https://, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.max_response_bytes = max_response_bytes
        self._client = httpx.Client(headers=dict(headers or {}), timeout=timeout_s)

    def forward(self, method: str, path: str, query: Iterable[tuple[str, str]], body: bytes,
                headers: Mapping[str, str]) -> dict[str, Any]:
        """Forward one call; ``{"status", "content_type", "body"}`` (body: the response text)."""
        url = f"{self.base_url}{path}"
        passed = {name: value for name, value in headers.items() if name.lower() not in _NOT_FORWARDED}
        where = f"{method} {url}"
        try:
            with self._client.stream(method, url, params=list(query), content=body or None, headers=passed) as response:
                content = bytearray()
                for chunk in response.iter_bytes():
                    content += chunk
                    if len(content) > self.max_response_bytes:
                        raise UpstreamError(f"upstream answer to {where} is larger than {self.max_response_bytes} bytes")
        except httpx.TimeoutException as error:
            raise UpstreamError(f"upstream timed out on {where}: {type(error).__name__}") from None
        except httpx.TransportError as error:
            raise UpstreamError(f"upstream is down or unreachable on {where}: {type(error).__name__}: {error}") from None
        if response.status_code >= 500 or response.status_code in _TRANSIENT_STATUS:
            raise UpstreamError(f"upstream answered {response.status_code} to {where} (not recorded: retry later)")
        content_type = response.headers.get("content-type", "")
        try:
            text = bytes(content).decode("utf-8")
            json.loads(text)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise UpstreamError(f"upstream answered {where} with a body that is not JSON (content-type "
                                f"{content_type or 'none'}, {len(content)} bytes): not recorded") from None
        return {"status": response.status_code, "content_type": "application/json", "body": text}

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()


class McpUpstream:
    """A live MCP server: ``command`` (stdio: program and arguments) or ``url`` (streamable HTTP).

    One client session is opened on first use and kept on a private event-loop thread.
    :meth:`list_tools` and :meth:`call_tool` answer JSON dicts (the SDK's results, dumped)."""

    def __init__(self, command: Sequence[str] | None = None, url: str | None = None, timeout_s: float = 60.0) -> None:
        if (command is None) == (url is None):
            raise UsageError("give an MCP upstream either a stdio command or a streamable HTTP url, not both")
        self.command = list(command) if command is not None else None
        self.url = url
        self.timeout_s = timeout_s
        self.label = url if url is not None else " ".join(self.command[:1])
        self._loop: asyncio.AbstractEventLoop | None = None
        self._session = None
        self._stop: asyncio.Event | None = None
        self._owner: asyncio.Future | None = None
        self._start_lock = threading.Lock()
        self._connect_lock = asyncio.Lock()

    def list_tools(self) -> dict[str, Any]:
        """``tools/list`` of the live server as a JSON dict."""
        return self._run(lambda session: session.list_tools())

    def call_tool(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``tools/call`` of the live server as a JSON dict (an ``isError`` result is an answer too)."""
        return self._run(lambda session: session.call_tool(name, dict(arguments)))

    def close(self) -> None:
        """Close the session and stop the loop thread; idempotent."""
        loop, stop = self._loop, self._stop
        if loop is None:
            return
        if stop is not None and self._owner is not None:
            loop.call_soon_threadsafe(stop.set)
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(asyncio.wait_for(asyncio.shield(self._owner), self.timeout_s), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        self._loop = self._session = self._stop = self._owner = None

    def _run(self, request) -> dict[str, Any]:
        loop = self._ensure_loop()

        async def call() -> dict[str, Any]:
            if self._session is None:
                await self._connect()
            result = await request(self._session)
            return result.model_dump(mode="json", by_alias=True, exclude_none=True)

        try:
            return asyncio.run_coroutine_threadsafe(call(), loop).result(self.timeout_s)
        except TimeoutError:
            raise UpstreamError(f"MCP upstream {self.label} did not answer within {self.timeout_s} s") from None
        except UpstreamError:
            raise
        except Exception as error:  # the SDK's transport and protocol errors, all "the live tool failed"
            raise UpstreamError(f"MCP upstream {self.label} failed: {type(error).__name__}: {str(error)[:300]}") from None

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._start_lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="stillweb-mcp-upstream", daemon=True).start()
                self._loop = loop
            return self._loop

    async def _connect(self) -> None:
        """Start the task that owns the session (anyio wants contexts entered and exited in one task)."""
        async with self._connect_lock:
            if self._session is not None:
                return
            ready: asyncio.Future = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            self._owner = asyncio.ensure_future(self._own_session(ready))
            await ready

    async def _own_session(self, ready: asyncio.Future) -> None:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client

        try:
            if self.command is not None:
                transport = stdio_client(StdioServerParameters(command=self.command[0], args=self.command[1:]))
            else:
                transport = streamable_http_client(self.url)
            async with transport as streams, ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                self._session = session
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as error:  # noqa: BLE001 - handed to the waiting caller
            if not ready.done():
                ready.set_exception(error if isinstance(error, Exception) else RuntimeError(repr(error)))
        finally:
            self._session = None
