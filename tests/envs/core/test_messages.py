"""info carries a step's new messages, not the whole history (O(1) bytes a step, not O(turns)); the history
is the env's (``env.messages``) and rebuilds from the infos (``Conversation``), with context management too."""

from __future__ import annotations

import json

import pytest

from stillweb.envs import WikiQAEnv
from stillweb.envs.core.messages import Conversation

SEARCH = '<tool_call>{{"name": "search", "arguments": {{"query": "{}"}}}}</tool_call>'


@pytest.mark.parametrize("context", [None, {"budget_tokens": 1500, "keep_recent_turns": 1}])
def test_the_infos_rebuild_the_history(tiny_world, world_tasks, context):
    env = WikiQAEnv(tiny_world, world_tasks, context=context, max_turns=12)
    _, info = env.reset(options={"task_id": "chain"})
    conversation = Conversation()
    assert conversation.update(info) == env.messages and info["messages_kept"] == 0
    sizes, kept_less = [], False
    for query in ("Glass Orchard", "Ada Quill", "Marrow Bay", "Velland", "Ostra", "Glass Orchard author"):
        *_, info = env.step(SEARCH.format(query))
        kept_less |= info["messages_kept"] < len(env.messages) - 2
        assert conversation.update(info) == env.messages
        sizes.append(len(json.dumps(info["messages"])))
    assert kept_less == (context is not None)  # context management condensed earlier turns
    if context is None:
        assert max(sizes) < 3 * min(sizes)  # each step's delta, not the growing history


def test_a_delta_that_does_not_fit_is_an_error():
    with pytest.raises(ValueError, match="messages_kept"):
        Conversation().update({"messages": ["x"], "messages_kept": 3})
