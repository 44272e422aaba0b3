"""A real verl ``ToolAgentLoop`` rollout without a GPU or an inference server: verl's loop builds the prompt with the
tokenizer's chat template, asks its server manager for each assistant turn, parses the tool calls with its hermes
parser, runs the tools (the ``tool_config.yaml`` an export wrote) and tokenizes their responses. The server manager
here answers with the next of a script of tool calls (the i-th after the i-th tool response), then with plain text,
which ends the rollout: the rollout a model writing those calls would get."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path


class ScriptedServer:
    """The ``server_manager`` verl's agent loops call: ``generate`` returns the token ids of the script's next turn."""

    def __init__(self, tokenizer, calls: list[dict]) -> None:
        self.tokenizer = tokenizer
        self.turns = [f"<tool_call>\n{json.dumps(call)}\n</tool_call>" for call in calls]
        self.prompts: list[str] = []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        """The next scripted turn, chosen by how many tool responses the prompt holds."""
        from verl.workers.rollout.replica import TokenOutput

        text = self.tokenizer.decode(prompt_ids)
        self.prompts.append(text)
        answered = text.count("<tool_response>")
        turn = self.turns[answered] if answered < len(self.turns) else "Done."  # no call: the loop ends
        return TokenOutput(token_ids=self.tokenizer.encode(turn, add_special_tokens=False) + [self.tokenizer.eos_token_id])


def tool_agent_rollout(tool_config: Path, row: dict, calls: list[dict], tokenizer):
    """verl's ``ToolAgentLoop.run`` over one exported parquet ``row`` whose model makes ``calls`` in turn; returns
    (the ``AgentLoopOutput``, the scripted server: the prompts it was sent)."""
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap
    from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop
    from verl.tools.tool_registry import initialize_tools_from_config

    turns = len(calls) + 2
    rollout = {"multi_turn": {"max_user_turns": turns, "max_assistant_turns": turns, "max_parallel_calls": 1,
                              "max_tool_response_length": 100_000, "tool_response_truncate_side": "middle",
                              "format": "hermes"},
               "prompt_length": 1 << 20, "response_length": 1 << 20, "full_determinism": True}
    config = OmegaConf.create({"actor_rollout_ref": {"rollout": rollout}})
    server = ScriptedServer(tokenizer, calls)
    events = asyncio.new_event_loop()  # the agent loop keeps the event loop current at its creation and runs on it
    asyncio.set_event_loop(events)
    try:
        loop = ToolAgentLoop(DictConfigWrap(config), server, tokenizer, None, None,
                             DictConfigWrap(OmegaConf.create({"apply_chat_template_kwargs": {}})),
                             tools=ToolListWrap(initialize_tools_from_config(str(tool_config))))
        output = events.run_until_complete(loop.run({}, raw_prompt=list(row["prompt"]), extra_info=row["extra_info"],
                                                    tools_kwargs=row["extra_info"]["tools_kwargs"]))
    finally:
        asyncio.set_event_loop(None)
        events.close()
    return output, server
