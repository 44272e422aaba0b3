"""The app world's APIs as a tool family: about ninety endpoints of eight apps over an
episode's SQLite state, each a :class:`~stillweb.sandboxes.tools.types.Tool` with a JSON
schema, typed errors, pagination and per-user access (AppWorld / BFCL / tau-bench style).

>>> from stillweb.sandboxes.apps import app_registry
>>> len(app_registry().names) >= 80
True
"""

from stillweb.sandboxes.apps.api import ENDPOINTS, WRITE_ENDPOINTS, app_registry, replay_program
from stillweb.sandboxes.apps.endpoint import AppEndpoint, bound
from stillweb.sandboxes.apps.store import AppSession, ErrorPlan

__all__ = ["ENDPOINTS", "WRITE_ENDPOINTS", "AppEndpoint", "AppSession", "ErrorPlan", "app_registry", "bound", "replay_program"]
