"""SFT cold-start data: the reference agent's solved episodes as chat ``messages`` with ``tools``.

Kimi-Researcher and Tongyi DeepResearch start RL from supervised fine-tuning on
agent trajectories. :func:`export_sft` runs the
:class:`~stillweb.envs.agents.ReferenceAgent` on every task of a set, in the
environment itself, and keeps the episodes it solved (outcome 1), as rows of

- ``messages``: the conversation. Shape ``openai``: system and user messages,
  then per call an assistant message with ``tool_calls`` (OpenAI's shape:
  ``arguments`` is a JSON string) and a ``tool`` message with the result, ending
  with the ``answer`` call (text and citations). Shape ``tongyi``: the env's own
  history in the Tongyi format (``<tool_call>``/``<tool_response>`` text, the
  system prompt listing the tools, ``<answer>``/``<citations>`` at the end);
- ``tools``: the OpenAI function definitions, as a JSON string (TRL's
  ``SFTTrainer`` decodes it);
- ``task_id``, ``split``, ``reward``, ``turns``.

Each task split becomes the same split here (``train``/``dev``/``test``), so the
held-out tasks stay held out. Written as ``{split}.parquet`` and a ``datasets``
``DatasetDict`` folder (``dataset/``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from stillweb.corpora.progress import progress_bar
from stillweb.corpora.tasks.splits import SPLITS
from stillweb.corpora.tasks.store import read_tasks
from stillweb.envs.agents import ReferenceAgent
from stillweb.envs.integrations.episode import DEFAULT_TOOLS, INSTRUCTIONS, tool_content
from stillweb.envs.wikiqa import WikiQAEnv
from stillweb.sandboxes.formats import get_format

__all__ = ["SFT_SHAPES", "export_sft", "oracle_conversation"]

SFT_SHAPES = ("openai", "tongyi")


def oracle_conversation(env: WikiQAEnv, task_id: str) -> dict[str, Any]:
    """The reference agent's episode of ``task_id`` in ``env`` (its ``tool_format`` is the shape) as one row."""
    observation, info = env.reset(options={"task_id": task_id})
    agent = ReferenceAgent(env.tasks.by_id(task_id), tool_format=env.format.name)
    messages = [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": env.tasks.by_id(task_id).question}]
    done, reward, turn = False, 0.0, 0
    while not done:
        action = agent.act(observation)
        observation, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        if env.format.name == "openai":
            messages.extend(_openai_turn(action, observation, turn))
        turn += 1
    if env.format.name != "openai":  # the env's own history, less the empty observation after the answer
        messages = [m for i, m in enumerate(info["messages"]) if m["content"] or i < len(info["messages"]) - 1]
    return {"messages": messages, "tools": json.dumps(env.registry.schemas(), ensure_ascii=False), "task_id": task_id,
            "split": "", "reward": float(reward), "outcome": float(info.get("outcome", 0.0)), "turns": turn}


def export_sft(snapshot: str | Path, name: str, out: str | Path, shape: str = "openai", max_turns: int | None = None,
               progress: bool = False) -> list[Path]:
    """Write the solved reference episodes of task set ``name`` (see the module docstring); returns the paths.

    ``max_turns=None``: the env's default for the split (from its task set); ``progress``: one bar for the job."""
    from datasets import Dataset, DatasetDict

    if shape not in SFT_SHAPES:
        raise ValueError(f"unknown SFT shape {shape!r}; expected one of {SFT_SHAPES}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written, splits = [], {}
    by_split = {split: read_tasks(snapshot, name, split) for split in SPLITS}
    bar = progress_bar(total=sum(map(len, by_split.values())), unit="episode", desc=f"sft export of {name}", enabled=progress)
    for split, tasks in by_split.items():
        if not tasks:
            continue
        env = WikiQAEnv(snapshot, name, split, tool_format=shape, tools=list(DEFAULT_TOOLS), max_turns=max_turns,
                        max_calls_per_turn=1)
        rows = []
        for task in tasks:
            row = oracle_conversation(env, task.task_id)
            if row["outcome"] == 1.0:
                rows.append({**row, "split": split})
            bar.update(1)
        table = pa.Table.from_pylist(rows)
        path = out / f"{split}.parquet"
        pq.write_table(table, path)
        written.append(path)
        splits[split] = Dataset(table)
    bar.close()
    DatasetDict(splits).save_to_disk(str(out / "dataset"))
    return [*written, out / "dataset"]


def _openai_turn(action: str, observation: str, turn: int) -> list[dict[str, Any]]:
    """The assistant's tool call (OpenAI shape) and, unless it answered, the tool's result message."""
    parsed = get_format("openai").parse(action)
    if parsed.answer is not None:
        name, arguments = "answer", {"text": parsed.answer, "citations": parsed.citations}
    else:
        name, arguments = parsed.calls[0].name, parsed.calls[0].arguments
    call_id = f"call_{turn}"
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}
    messages = [{"role": "assistant", "content": "", "tool_calls": [call]}]
    if name != "answer":
        messages.append({"role": "tool", "tool_call_id": call_id, "name": name, "content": tool_content(observation)})
    return messages
