"""An app endpoint as a :class:`~stillweb.sandboxes.tools.types.Tool`, bound to the episode's
session at call time, so one set of endpoint objects (and one compiled registry) serves
every environment of a process.

:func:`bound` sets the session of the calls made inside it (a context variable, so
threads and asyncio tasks each see their own). An endpoint's ``run`` counts the call,
advances the world clock, raises the call's seeded transient error if it has one,
then runs its handler and renders the result as JSON text.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Callable
from typing import Any

from stillweb.sandboxes.apps.store import AppSession
from stillweb.sandboxes.tools.types import Tool, ToolResult

__all__ = ["AppEndpoint", "bound", "current_session"]

_SESSION: contextvars.ContextVar[AppSession | None] = contextvars.ContextVar("stillweb_app_session", default=None)

Handler = Callable[[AppSession, dict], Any]
# One encoder for every result (``json.dumps`` with options builds a new one per call).
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))


class bound:  # noqa: N801 (used as a function: ``with bound(session):``)
    """Run the calls inside the ``with`` block against ``session`` (a plain class: a generator-based
    context manager costs as much as the rest of a call's bookkeeping)."""

    __slots__ = ("session", "_token")

    def __init__(self, session: AppSession) -> None:
        self.session = session

    def __enter__(self) -> AppSession:
        self._token = _SESSION.set(self.session)
        return self.session

    def __exit__(self, *exc_info: object) -> None:
        _SESSION.reset(self._token)


def current_session() -> AppSession:
    """The session bound by :func:`bound`; ``RuntimeError`` outside one (a developer mistake)."""
    session = _SESSION.get()
    if session is None:
        raise RuntimeError("an app endpoint was called outside `with bound(session):`")
    return session


class AppEndpoint(Tool):
    """One endpoint of an app: its schema, whether it writes, and its handler.

    ``transient``: whether seeded transient errors may hit it (``wait`` is exempt).
    """

    def __init__(self, name: str, app: str, description: str, parameters: dict, example: dict, handler: Handler,
                 writes: bool, transient: bool = True) -> None:
        self.name = name
        self.app = app
        self.description = description
        self.parameters = parameters
        self.example = example
        self.handler = handler
        self.writes = writes
        self.transient = transient

    def run(self, arguments: dict) -> ToolResult:
        """Run the handler on the bound session (errors are raised as ``ToolInputError``)."""
        session = current_session()
        if self.transient:
            session.begin_call()
        data = self.handler(session, arguments)
        return self.result(_ENCODER.encode(data), data=data)
