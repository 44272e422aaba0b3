"""``stillweb/Remote-v0``: a Gymnasium environment whose episodes run on a stillweb server.

>>> env = gym.make("stillweb/Remote-v0", url="http://127.0.0.1:8000",
...                env_id="stillweb/WikiQA-v0", tasks="default")      # doctest: +SKIP
>>> observation, info = env.reset(seed=0)                             # doctest: +SKIP

Observations, rewards, terminated/truncated and info are the server-side
environment's, which are the in-process environment's (info after a JSON round
trip: tuples arrive as lists). As in-process, ``info["messages"]`` holds only the messages a
step added (after the first ``info["messages_kept"]``); :attr:`RemoteEnv.messages` is the whole history.

Faults are survived, not reported. Every reset and step carries a fresh request
id, so a retried request (after a timeout or a dropped connection) returns the
server's stored result instead of acting twice, and each step's echoed id and
step count are checked, so a response can never be matched to the wrong
request. The client keeps the session's create-config and its log since the
last seeded reset; when the server no longer knows the session (restarted,
expired, or the request landed on another worker) the client creates a new
one, replays the log (episodes are deterministic) and continues: the caller
sees the same observations it would have seen.

The transport is one persistent HTTP/1.1 connection (keep-alive) read with
``http.client``, which costs a third of ``httpx``'s client CPU per request; a
connection the server closed while idle is reopened and the request retried.
"""

from __future__ import annotations

import http.client
import itertools
import json
import re
import secrets
import socket
import ssl
import time
from typing import Any
from urllib.parse import quote, urlsplit

import gymnasium as gym

from stillweb.envs.registration import REMOTE_ENV_ID
from stillweb.corpora.errors import UpstreamError, UsageError
from stillweb.corpora.arguments import check_positive_int
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.envs.core.limits import EpisodeLimits

__all__ = ["HttpConnection", "RemoteEnv", "RemoteEnvError", "RemoteTasks"]

# Session errors after which the client rebuilds its session from the log.
LOST_SESSION = frozenset({"session_not_found", "session_expired"})
# Most ops per replay request (the server accepts 10,000; smaller requests stay under body limits).
REPLAY_CHUNK = 256
RETRYABLE_STATUS = frozenset({502, 503, 504})
_SURROGATE = re.compile("[\ud800-\udfff]")


class RemoteEnvError(UpstreamError):
    """The server refused a request (bad kwargs, limits) or stayed unreachable after every retry."""


class HttpConnection:
    """One keep-alive HTTP/1.1 connection to a server: ``request`` returns (status, body bytes).

    A request goes out in one ``sendall`` on a ``TCP_NODELAY`` socket (``http.client``'s
    own connection sends the head and the body separately, which wakes the server
    twice); ``http.client.HTTPResponse`` reads the answer. ``timeout`` bounds each
    socket operation (connect at most 5 s). A failure (refused, reset, timed out,
    closed by the server) raises ``OSError`` or ``http.client.HTTPException`` and
    drops the connection, so the next request opens a new one.
    """

    def __init__(self, url: str, timeout: float, headers: dict[str, str] | None = None) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"url must be http(s)://host[:port][/prefix], got {url!r}")
        self._tls = ssl.create_default_context() if parts.scheme == "https" else None
        self._address = (parts.hostname, parts.port or (443 if self._tls else 80))
        self._prefix = parts.path.rstrip("/")
        self._timeout = timeout
        fields = {"Host": parts.netloc.rpartition("@")[2], "Content-Type": "application/json", **(headers or {})}
        self._head = "".join(f"{name}: {value}\r\n" for name, value in fields.items()).encode("latin-1")
        self._socket: socket.socket | None = None

    def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        """Send one request and read the whole response. A kept-alive connection the
        server closed while idle (the usual case after a long pause) is reopened once."""
        reused = self._socket is not None
        try:
            return self._exchange(method, path, body)
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
            if not reused:
                raise
            return self._exchange(method, path, body)

    def _exchange(self, method: str, path: str, body: bytes) -> tuple[int, bytes]:
        message = b"%s %s HTTP/1.1\r\n%sContent-Length: %d\r\n\r\n%s" % (
            method.encode("ascii"), (self._prefix + path).encode("utf-8"), self._head, len(body), body)
        try:
            sock = self._socket or self._connect()
            sock.sendall(message)
            response = http.client.HTTPResponse(sock, method=method)
            response.begin()
            content = response.read()
        except BaseException:
            self.close()
            raise
        if response.will_close:
            self.close()
        return response.status, content

    def _connect(self) -> socket.socket:
        sock = socket.create_connection(self._address, timeout=min(self._timeout, 5.0))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._tls is not None:
            sock = self._tls.wrap_socket(sock, server_hostname=self._address[0])
        sock.settimeout(self._timeout)
        self._socket = sock
        return sock

    def close(self) -> None:
        """Drop the connection (the next request reconnects); idempotent."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None


class RemoteEnv(gym.Env[str, str]):
    """A stillweb environment served over HTTP, with retries, timeouts and transparent resume.

    Args:
        url: the server's base URL, e.g. ``"http://127.0.0.1:8000"``.
        env_id: the server-side environment (default ``stillweb/WikiQA-v0``).
        token: the server's bearer token, if it has one.
        timeout: seconds to wait for one response (a step's tool call included).
        retries: attempts per request before :class:`RemoteEnvError`.
        backoff: first wait between attempts in seconds (doubles, capped at 2 s).
        connection: the :class:`HttpConnection` to use (tests pass one that injects faults).
        **env_kwargs: the server-side environment's kwargs (JSON values; ``snapshot``
            names one of the served snapshots).
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        url: str,
        env_id: str = "stillweb/WikiQA-v0",
        token: str | None = None,
        timeout: float = 60.0,
        retries: int = 8,
        backoff: float = 0.1,
        connection: HttpConnection | None = None,
        **env_kwargs: Any,
    ) -> None:
        check_positive_int("retries", retries)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._connection = connection or HttpConnection(url, timeout, headers)
        self._closed = False
        self.env_id = env_id
        self.env_kwargs = env_kwargs
        self.retries = retries
        self.backoff = backoff
        self.observation_space = EpisodeLimits().observation_space()
        self.action_space = EpisodeLimits().action_space()
        self.resumes = 0  # how many times the session was rebuilt on the server
        self._client_tag = secrets.token_hex(6)  # request ids: never reach observations or rewards
        self._request_numbers = itertools.count()
        self._log: list[dict[str, Any]] = []  # ops since the last seeded reset (or creation)
        self._episode_steps = 0
        self._messages: list[Any] = []  # the episode's message history as of the last response
        self._session_id: str | None = self._create_session()

    @property
    def tasks(self) -> RemoteTasks:
        """The served environment's task set, looked up by id (``tasks.by_id(task_id)``), so
        ``run_episode(env, lambda task: ReferenceAgent(task))`` works as in-process."""
        return RemoteTasks(self)

    @property
    def session_id(self) -> str | None:
        """The server's id of the current session (changes when the session is rebuilt)."""
        return self._session_id

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Reset the server-side environment; see the served environment's ``reset``."""
        super().reset(seed=seed)
        op = {"op": "reset", "seed": seed, "options": options}
        body = self._session_call("reset", {"seed": seed, "options": options})
        if seed is not None:
            self._log = []
        self._log.append(op)
        self._episode_steps = 0
        self._messages = []
        return body["observation"], self._full_info(body)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Step the server-side environment; see the served environment's ``step``."""
        if not isinstance(action, str):
            raise TypeError(f"action must be a str (the policy's text), got {type(action).__name__}")
        body = self._session_call("step", action_fields(action))
        if body["step"] != self._episode_steps + 1:
            raise RemoteEnvError(f"server answered step {body['step']} where step {self._episode_steps + 1} was due")
        self._episode_steps += 1
        self._log.append({"op": "step", **action_fields(action)})
        return body["observation"], body["reward"], body["terminated"], body["truncated"], self._full_info(body)

    def close(self) -> None:
        """Close the server-side session (best effort) and the connection; idempotent."""
        if self._session_id is not None and not self._closed:
            try:
                self._connection.request("DELETE", f"/sessions/{self._session_id}")
            except (OSError, http.client.HTTPException):
                pass
        self._session_id = None
        self._closed = True
        self._connection.close()
        super().close()

    def _full_info(self, body: dict[str, Any]) -> dict[str, Any]:
        """The response's info, as the in-process env gives it: ``messages`` the ones this response added,
        after the first ``messages_kept`` of the history (kept in :attr:`messages`)."""
        info = body["info"]
        kept = body.get("messages_kept")
        if kept is None:
            return info
        if not isinstance(kept, int) or not 0 <= kept <= len(self._messages):
            raise RemoteEnvError(f"server kept {kept!r} messages of a history of {len(self._messages)}")
        self._messages = self._messages[:kept] + info["messages"]
        info["messages_kept"] = kept
        return info

    @property
    def messages(self) -> list[Any]:
        """The episode's whole message history (rebuilt from the responses' deltas)."""
        return list(self._messages)

    # -- transport ------------------------------------------------------------------------

    def _session_call(self, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        """POST a reset or step with a fresh request id, rebuilding the session when it is lost."""
        if self._session_id is None:
            raise RemoteEnvError("the environment is closed")
        request_id = f"{self._client_tag}-{next(self._request_numbers)}"
        body = {**payload, "request_id": request_id}
        for _ in range(self.retries):
            status, answer = self._post(f"/sessions/{self._session_id}/{kind}", body)
            if status == 404 and answer.get("error") in LOST_SESSION:
                self._rebuild_session()
                continue
            if status == 409 and answer.get("error") in ("episode_over", "not_reset"):
                raise RuntimeError(f"step() called on an episode that has ended (or never started): {answer.get('detail')}")
            _raise_for_error(status, answer)
            if answer.get("request_id") != request_id:
                raise RemoteEnvError(f"response to request {answer.get('request_id')!r} arrived for request {request_id!r}")
            return answer
        raise RemoteEnvError(f"the session was lost {self.retries} times in a row; giving up")

    def _create_session(self) -> str:
        status, answer = self._post("/sessions", {"env_id": self.env_id, "kwargs": self.env_kwargs})
        _raise_for_error(status, answer)
        return str(answer["session_id"])

    def _rebuild_session(self) -> None:
        """Create a new session and replay the log into it."""
        self._session_id = self._create_session()
        self.resumes += 1
        for start in range(0, len(self._log), REPLAY_CHUNK):
            status, answer = self._post(f"/sessions/{self._session_id}/replay", {"ops": self._log[start : start + REPLAY_CHUNK]})
            _raise_for_error(status, answer)

    def _post(self, path: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """(status, JSON body) of a POST, retrying connection failures, timeouts and 502/503/504 with backoff."""
        return self._send("POST", path, _encode(payload))

    def _send(self, method: str, path: str, content: bytes = b"") -> tuple[int, dict[str, Any]]:
        """(status, JSON body), retrying connection failures, timeouts and 502/503/504 with backoff."""
        wait = self.backoff
        failure = ""
        for attempt in range(self.retries):
            if attempt:
                time.sleep(wait)
                wait = min(wait * 2, 2.0)
            try:
                status, raw = self._connection.request(method, path, content)
            except (OSError, http.client.HTTPException) as error:
                failure = f"{type(error).__name__}: {error}"
                continue
            if status in RETRYABLE_STATUS:
                failure = f"HTTP {status}"
                continue
            try:
                answer = json.loads(raw)
            except ValueError:
                answer = {"error": "bad_response", "detail": raw[:500].decode("utf-8", "replace")}
            return status, answer if isinstance(answer, dict) else {"error": "bad_response", "detail": str(answer)[:500]}
        raise RemoteEnvError(f"{method} {path} failed after {self.retries} attempts: {failure}")


class RemoteTasks:
    """The task records of a :class:`RemoteEnv`'s server-side environment, fetched one at a time."""

    def __init__(self, env: RemoteEnv) -> None:
        self._env = env

    def by_id(self, task_id: str) -> TaskRecord:
        """The task record for ``task_id``; ``ValueError`` naming the id when the server does not know it."""
        env = self._env
        if env.session_id is None:
            raise RemoteEnvError("the environment is closed")
        status, answer = env._send("GET", f"/sessions/{env.session_id}/tasks/{quote(str(task_id), safe='')}")
        if status == 404 and answer.get("error") in ("unknown_task_id", "no_tasks"):
            raise UsageError(answer.get("detail"))
        _raise_for_error(status, answer)
        return TaskRecord.from_dict(answer)


def action_fields(action: str) -> dict[str, Any]:
    """``{"action": text}``, or ``{"action_codepoints": [...]}`` when the text holds
    surrogates (JSON would merge an escaped high/low pair into one character)."""
    if _SURROGATE.search(action):
        return {"action_codepoints": [ord(char) for char in action]}
    return {"action": action}


def _encode(payload: dict[str, Any]) -> bytes:
    """JSON bytes (UTF-8); surrogates in kwargs or options are sent escaped."""
    try:
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _raise_for_error(status: int, answer: dict[str, Any]) -> None:
    if status >= 400:
        raise RemoteEnvError(f"server answered {status} {answer.get('error', '')}: {answer.get('detail', answer)}")

