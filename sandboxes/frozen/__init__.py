"""Frozen live tools: record any HTTP JSON tool or MCP server once, replay it forever.

- :mod:`~stillweb.sandboxes.frozen.store`: the append-only, content-addressed store.
- :mod:`~stillweb.sandboxes.frozen.replay`: answering calls from it (a miss: ``not_recorded``).
- :mod:`~stillweb.sandboxes.frozen.upstream`: the live HTTP / MCP side, for recording.
- :mod:`~stillweb.sandboxes.frozen.tool`: a store mounted as a tool in a ``ToolRegistry``.
- :mod:`~stillweb.sandboxes.frozen.upkeep`: info, verify, merge and prune.

The proxy routes live in :mod:`stillweb.server.freeze`, the command in ``stillweb freeze``.
"""

from stillweb.sandboxes.frozen.replay import NOT_RECORDED, Answer, Replayer
from stillweb.sandboxes.frozen.store import FrozenStore, FrozenStoreError, canonical_request, request_key
from stillweb.sandboxes.frozen.tool import FrozenTool, FrozenToolSpec, mcp_request, shared_store
from stillweb.sandboxes.frozen.upstream import HttpUpstream, McpUpstream
from stillweb.corpora.errors import UpstreamError

__all__ = [
    "NOT_RECORDED", "Answer", "FrozenStore", "FrozenStoreError", "FrozenTool", "FrozenToolSpec", "HttpUpstream",
    "McpUpstream", "Replayer", "UpstreamError", "canonical_request", "mcp_request", "request_key", "shared_store",
]
