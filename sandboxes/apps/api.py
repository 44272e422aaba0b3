"""The assembled app API: every endpoint, one shared :class:`ToolRegistry` per process,
and the replay of a reference program on a fresh state copy.

>>> "send_payment" in WRITE_ENDPOINTS and "list_contacts" not in WRITE_ENDPOINTS
True
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping

from stillweb.corpora.apps.generate import AppWorldBase
from stillweb.sandboxes.apps.actions import action_endpoints
from stillweb.sandboxes.apps.catalog import RESOURCES
from stillweb.sandboxes.apps.endpoint import AppEndpoint, bound
from stillweb.sandboxes.apps.resources import endpoints_of
from stillweb.sandboxes.apps.store import AppSession
from stillweb.sandboxes.tools.registry import ToolRegistry
from stillweb.sandboxes.tools.types import ToolCall, ToolResult

__all__ = ["ENDPOINTS", "WRITE_ENDPOINTS", "all_endpoints", "app_registry", "replay_program"]


def all_endpoints() -> list[AppEndpoint]:
    """Every endpoint: the generic ones of each resource, then the actions, grouped by app."""
    endpoints = [endpoint for app, resource in RESOURCES for endpoint in endpoints_of(resource, app)]
    endpoints += action_endpoints()
    order = {app: index for index, app in enumerate(dict.fromkeys(app for app, _ in RESOURCES))}
    return sorted(endpoints, key=lambda endpoint: order[endpoint.app])  # stable: resource order within an app


@functools.lru_cache(maxsize=1)
def app_registry() -> ToolRegistry:
    """The registry of every endpoint (validators compiled once per process, shared by all envs)."""
    return ToolRegistry.from_tools(all_endpoints())


ENDPOINTS: tuple[str, ...] = tuple(endpoint.name for endpoint in all_endpoints())
WRITE_ENDPOINTS: frozenset[str] = frozenset(endpoint.name for endpoint in all_endpoints() if endpoint.writes)


def replay_program(base: AppWorldBase, user: int, calls: Iterable[Mapping]) -> tuple[AppSession, list[ToolResult]]:
    """Run ``calls`` (``{"name", "arguments"}``) error-free on a fresh copy; the session and the results."""
    session = AppSession(base, user)
    registry = app_registry()
    with bound(session):
        results = [registry.call(ToolCall(call["name"], dict(call["arguments"]))) for call in calls]
    return session, results
