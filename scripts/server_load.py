"""The lean load generator of ``scripts/bench_server.py``: HTTP/1.1 keep-alive clients on
asyncio streams (uvloop), for a plain search endpoint and for stillweb sessions, and
:func:`run_load`, which shares requests among concurrent clients and reports latency,
throughput and the server's and the client's CPU per request.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import statistics
import time

import uvloop

SEARCH_K = 5  # the search tool's default k
ENV_KWARGS = {"tool_format": "tongyi", "max_turns": 16, "max_tool_calls": 64, "max_format_errors": None}


def search_action(query: str) -> str:
    return '<tool_call>{"name": "search", "arguments": {"query": %s}}</tool_call>' % json.dumps(query)


# -- the lean load generator ---------------------------------------------------------------


class LeanConnection:
    """A minimal HTTP/1.1 keep-alive client on asyncio streams: the load generator's own
    CPU stays small (the servers always answer with a Content-Length)."""

    CONTENT_LENGTH = re.compile(rb"(?i)\r\ncontent-length: *(\d+)")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int) -> LeanConnection:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(reader, writer)

    async def request(self, method: str, path: str, payload: object = None) -> tuple[int, bytes]:
        """(status, body) of one request with a JSON ``payload``."""
        body = b"" if payload is None else json.dumps(payload).encode()
        self.writer.write(
            b"%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
            % (method.encode(), path.encode(), len(body), body)
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        length = self.CONTENT_LENGTH.search(head)
        return int(head[9:12]), await self.reader.readexactly(int(length[1]) if length else 0)

    async def json(self, method: str, path: str, payload: object = None) -> dict:
        """The JSON body of a request that must succeed."""
        status, body = await self.request(method, path, payload)
        if status >= 300:
            raise RuntimeError(f"{method} {path} answered {status}: {body[:300]!r}")
        return json.loads(body)

    def close(self) -> None:
        self.writer.close()


class PlainClient:
    """One connection posting searches to the plain server."""

    def __init__(self, connection: LeanConnection, number: int) -> None:
        self.connection, self.number = connection, number

    @classmethod
    async def open(cls, port: int, number: int) -> PlainClient:
        return cls(await LeanConnection.open(port), number)

    async def run(self, count: int, queries: list[str], latencies: list[float]) -> int:
        """``count`` searches; returns the number of errors."""
        errors = 0
        for index in range(count):
            start = time.perf_counter()
            query = queries[(self.number * 7 + index) % len(queries)]
            status, _ = await self.connection.request("POST", "/search", {"query": query, "k": SEARCH_K})
            latencies.append(time.perf_counter() - start)
            errors += status != 200
        return errors

    async def close(self) -> None:
        self.connection.close()


class SessionClient:
    """One connection owning one environment session, stepping it with searches
    (request ids on every step, so the server's retry store is exercised)."""

    def __init__(self, connection: LeanConnection, number: int, session: str) -> None:
        self.connection, self.number, self.session = connection, number, session
        self.steps = 0

    @classmethod
    async def open(cls, port: int, number: int, tasks: list[dict]) -> SessionClient:
        connection = await LeanConnection.open(port)
        created = await connection.json("POST", "/sessions", {"env_id": "stillweb/WikiQA-v0", "kwargs": {"tasks": tasks, **ENV_KWARGS}})
        await connection.json("POST", f"/sessions/{created['session_id']}/reset", {"seed": number})
        return cls(connection, number, created["session_id"])

    async def run(self, count: int, queries: list[str], latencies: list[float]) -> int:
        """``count`` steps (resetting when an episode ends); returns the number of errors."""
        errors = 0
        for _ in range(count):
            start = time.perf_counter()
            query = queries[(self.number * 7 + self.steps) % len(queries)]
            body = {"action": search_action(query), "request_id": f"{self.number}-{self.steps}"}
            status, content = await self.connection.request("POST", f"/sessions/{self.session}/step", body)
            latencies.append(time.perf_counter() - start)
            self.steps += 1
            if status != 200:
                errors += 1
                continue
            step = json.loads(content)
            if step["terminated"] or step["truncated"]:
                await self.connection.json("POST", f"/sessions/{self.session}/reset", {})
        return errors

    async def close(self) -> None:
        await self.connection.request("DELETE", f"/sessions/{self.session}")
        self.connection.close()


async def server_stats(port: int) -> dict:
    """``GET /stats`` on a new connection (a kept one would be closed while idle)."""
    connection = await LeanConnection.open(port)
    stats = await connection.json("GET", "/stats")
    connection.close()
    return stats


async def server_cpu_s(port: int) -> float:
    stats = await server_stats(port)
    return stats["cpu_user_s"] + stats["cpu_system_s"]


def run_load(port: int, concurrency: int, total: int, queries: list[str], open_client) -> dict:
    """``concurrency`` clients share ``total`` requests: latency, throughput, server and client CPU per request
    (clients are opened and warmed up before the clocks start)."""
    return uvloop.run(_run_load(port, concurrency, total, queries, open_client))


async def _run_load(port: int, concurrency: int, total: int, queries: list[str], open_client) -> dict:
    clients = [await open_client(port, number) for number in range(concurrency)]
    per_client = max(1, total // concurrency)
    await asyncio.gather(*(client.run(min(per_client, 20), queries, []) for client in clients))
    before, client_before = await server_cpu_s(port), time.process_time()
    latencies: list[float] = []
    start = time.perf_counter()
    errors = await asyncio.gather(*(client.run(per_client, queries, latencies) for client in clients))
    elapsed = time.perf_counter() - start
    client_cpu = time.process_time() - client_before
    cpu = await server_cpu_s(port) - before
    for client in clients:
        await client.close()
    return {**summary(latencies, elapsed), "server_cpu_ms": 1000 * cpu / len(latencies), "client_cpu_ms": 1000 * client_cpu / len(latencies),
            "errors": sum(errors)}


def summary(latencies: list[float], elapsed: float) -> dict:
    ordered = sorted(latencies)
    return {
        "p50_ms": 1000 * statistics.median(ordered),
        "p99_ms": 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
        "per_s": len(ordered) / elapsed,
    }
