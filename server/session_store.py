"""Environment sessions held by a server: each wraps one Gymnasium environment,
serialises its requests, and remembers recent results by client request id so a
retried request returns the stored result instead of stepping twice.

Limits: at most ``max_sessions`` live sessions (creating one more is a 429) and
an idle timeout after which a session is closed; a later request to it gets a
404 that says it expired (a bounded memory of expired ids tells expired from
unknown). The clock is only used for idle expiry and never reaches an
observation or a reward.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from stillweb.corpora.errors import StillwebError
from stillweb.envs.core.messages import message_delta

__all__ = ["EnvSession", "SessionError", "SessionStore", "request_digest", "REMEMBERED_RESULTS"]

# How many results per session are kept for retried requests (a client retries its latest
# request; a few more cover clients that pipeline). Each is a step's compact JSON answer.
REMEMBERED_RESULTS = 16
# How many expired/closed session ids are remembered (to say "expired", not "unknown").
REMEMBERED_ENDED = 4096


class SessionError(StillwebError):
    """A request the store cannot serve; ``code`` says why: ``too_many_sessions``,
    ``session_not_found``, ``session_expired`` or ``request_id_reused`` (the routes
    answer it as an HTTP error, see ``stillweb.server.sessions``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class EnvSession:
    """One live environment and its bookkeeping. Its fields change only through its own
    methods (:meth:`touch`, :meth:`start_episode`, :meth:`count_step`, :meth:`message_delta`,
    :meth:`remember`); the routes and the store read them."""

    session_id: str
    env_id: str
    kwargs: dict[str, Any]
    env: gym.Env
    last_used: float
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    episode_steps: int = 0
    total_steps: int = 0
    resets: int = 0
    episode_over: bool = False
    results: OrderedDict[str, tuple[str, Any]] = field(default_factory=OrderedDict)
    messages: list[Any] = field(default_factory=list)  # the history as of the last result (for message deltas)

    def touch(self, now: float) -> None:
        """Mark the session used at ``now`` (the store's clock; only for idle expiry)."""
        self.last_used = now

    def start_episode(self) -> None:
        """A reset succeeded: a new episode, no steps yet, no message history."""
        self.resets += 1
        self.episode_steps = 0
        self.episode_over = False
        self.messages = []

    def count_step(self, over: bool) -> None:
        """A step ran; ``over``: it terminated or truncated the episode."""
        self.episode_steps += 1
        self.total_steps += 1
        self.episode_over = over

    def message_delta(self, info: Any) -> tuple[Any, int | None]:
        """(``info`` with ``messages`` cut to what is new since this session's last result,
        how many previous messages are kept before them); ``None`` when info has no message list.

        An env on the episode core gives its own delta (``info["messages_kept"]``,
        :mod:`stillweb.envs.core.messages`), passed on as it is; for an env whose info holds
        its whole history the delta is computed here, by the same rule: the history usually
        only grows, and with context management the kept prefix may be shorter.

        >>> EnvSession("s", "e", {}, env=None, last_used=0.0).message_delta({"messages": ["c"], "messages_kept": 2})
        ({'messages': ['c'], 'messages_kept': 2}, 2)

        >>> session = EnvSession("s", "e", {}, env=None, last_used=0.0)
        >>> session.message_delta({"messages": ["a", "b"]})
        ({'messages': ['a', 'b']}, 0)
        >>> session.message_delta({"messages": ["a", "b", "c"]})
        ({'messages': ['c']}, 2)
        >>> session.message_delta({"messages": ["a", "B", "c", "d"]})
        ({'messages': ['B', 'c', 'd']}, 1)
        """
        messages = info.get("messages") if isinstance(info, dict) else None
        if isinstance(messages, list) and isinstance(info.get("messages_kept"), int):
            return info, info["messages_kept"]  # the env's own delta (every env on the episode core)
        if not isinstance(messages, list):
            self.messages = []
            return info, None
        new, kept = message_delta(self.messages, messages)
        self.messages = list(messages)
        return {**info, "messages": new}, kept

    def stored_result(self, request_id: str | None, digest: str) -> Any | None:
        """The stored result of ``request_id``, ``None`` if not seen; 409 if the id was used for another request."""
        if request_id is None or request_id not in self.results:
            return None
        stored_digest, result = self.results[request_id]
        if stored_digest != digest:
            raise SessionError("request_id_reused", f"request id {request_id[:100]!r} was already used for a different request in this session")
        return result

    def remember(self, request_id: str | None, digest: str, result: Any) -> None:
        """Store ``result`` under ``request_id`` (the oldest stored results are dropped)."""
        if request_id is None:
            return
        self.results[request_id] = (digest, result)
        while len(self.results) > REMEMBERED_RESULTS:
            self.results.popitem(last=False)


class SessionStore:
    """The live sessions of one server process, with limits and idle expiry."""

    def __init__(self, max_sessions: int, idle_timeout_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_sessions = max_sessions
        self.idle_timeout_s = idle_timeout_s
        self.clock = clock
        self._live: dict[str, EnvSession] = {}
        self._pending = 0  # sessions whose environments are being built (see slot)
        self._ended: OrderedDict[str, str] = OrderedDict()

    def __len__(self) -> int:
        return len(self._live)

    def check_capacity(self, pending: int = 0) -> None:
        """Expire idle sessions, then raise 429 if no session can be added beside ``pending`` ones being made."""
        self.expire_idle()
        if len(self._live) + pending >= self.max_sessions:
            raise SessionError(
                "too_many_sessions",
                f"the server holds its maximum of {self.max_sessions} sessions: close sessions (DELETE /sessions/{{id}}) "
                f"or wait for idle ones to expire after {self.idle_timeout_s:g} s",
            )

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold a place for a session being made (429 at once when there is none): its environment is built
        only if it will fit, so a storm of creates at the limit costs no environment builds. Requests run on
        one event loop: nothing else runs between the check and the count."""
        self.check_capacity(self._pending)
        self._pending += 1
        try:
            yield
        finally:
            self._pending -= 1

    def add(self, env_id: str, kwargs: dict[str, Any], env: gym.Env) -> EnvSession:
        """Register a new session around ``env`` (429 if full; ``env`` is closed then)."""
        try:
            self.check_capacity()
        except SessionError:
            env.close()
            raise
        session_id = secrets.token_urlsafe(12)
        session = EnvSession(session_id=session_id, env_id=env_id, kwargs=kwargs, env=env, last_used=self.clock())
        self._live[session_id] = session
        return session

    def get(self, session_id: str) -> EnvSession:
        """The live session ``session_id``; 404 saying whether it expired, was closed or never existed."""
        session = self._live.get(session_id)
        if session is not None and not session.lock.locked() and self._idle(session):
            self._end(session, "expired after being idle")
            session = None
        if session is None:
            why = self._ended.get(session_id)
            if why is None:
                message = f"unknown session {session_id[:100]!r} (never created here, or the server restarted): create one with POST /sessions"
                raise SessionError("session_not_found", message)
            raise SessionError("session_expired", f"session {session_id[:100]!r} {why}: create a new one with POST /sessions")
        session.touch(self.clock())
        return session

    def close(self, session_id: str) -> None:
        """Close and forget a live session (404 if it is not live)."""
        self._end(self.get(session_id), "was closed")

    def expire_idle(self) -> int:
        """Close every idle session that is not busy; returns how many were closed."""
        idle = [session for session in self._live.values() if not session.lock.locked() and self._idle(session)]
        for session in idle:
            self._end(session, "expired after being idle")
        return len(idle)

    def close_all(self) -> None:
        """Close every session (server shutdown)."""
        for session in list(self._live.values()):
            self._end(session, "was closed at server shutdown")

    def _idle(self, session: EnvSession) -> bool:
        return self.clock() - session.last_used > self.idle_timeout_s

    def _end(self, session: EnvSession, why: str) -> None:
        self._live.pop(session.session_id, None)
        self._ended[session.session_id] = why
        while len(self._ended) > REMEMBERED_ENDED:
            self._ended.popitem(last=False)
        session.env.close()


def request_digest(*parts: Any) -> str:
    """A stable digest of a request's content (to detect a reused request id)."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
