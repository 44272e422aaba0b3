"""SFT data from app tasks: the reference agent's solved ``Apps-v0`` episodes as chat
``messages`` with ``tools`` (the same row shape as :mod:`stillweb.envs.integrations.sft`).

Shape ``openai``: a system message, the user's first turn (with whose apps the agent
operates), then per call an assistant ``tool_calls`` message and a ``tool`` result;
an ``answer`` call closes each user turn and the scripted follow-up comes as the next
``user`` message. Shape ``tongyi``: the env's own history (system prompt listing the
endpoints, ``<tool_call>``/``<tool_response>`` text, ``<answer>``/``<abstain>``).
``tools`` holds every endpoint's function definition and ``answer``.
Written as ``{split}.parquet`` and a ``datasets`` ``DatasetDict`` folder (``dataset/``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from stillweb.corpora.apps.tasks import SPLITS, app_task_dir
from stillweb.envs.agents import ReferenceAgent
from stillweb.envs.apps import AppsEnv
from stillweb.envs.apps_prompt import ANSWER_SCHEMA
from stillweb.envs.integrations.sft import SFT_SHAPES, _openai_turn

__all__ = ["APP_INSTRUCTIONS", "app_conversation", "export_app_sft"]

APP_INSTRUCTIONS = ("You operate a user's apps through their APIs. Call the functions to look things up and make the "
                    "changes the user asks for, then answer the user with the answer function; if a request cannot be "
                    "done, abstain and say why.")


def app_conversation(env: AppsEnv, task_id: str) -> dict[str, Any]:
    """The reference agent's episode of ``task_id`` in ``env`` (its ``tool_format`` is the shape) as one row."""
    observation, info = env.reset(options={"task_id": task_id})
    agent = ReferenceAgent(env.tasks.by_id(task_id), tool_format=env.format.name)
    messages = [{"role": "system", "content": APP_INSTRUCTIONS}, {"role": "user", "content": info["messages"][1]["content"]}]
    done, reward, turn = False, 0.0, 0
    while not done:
        action = agent.act(observation)
        observation, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        if env.format.name == "openai":
            messages.extend(_openai_turn(action, observation, turn))
            if messages[-1]["role"] == "assistant" and not done:  # an answer: the user's next turn follows
                messages.append({"role": "user", "content": observation})
        turn += 1
    if env.format.name != "openai":
        messages = [m for i, m in enumerate(info["messages"]) if m["content"] or i < len(info["messages"]) - 1]
    tools = json.dumps(env.registry.schemas() + [ANSWER_SCHEMA], ensure_ascii=False)
    return {"messages": messages, "tools": tools, "task_id": task_id, "split": "", "reward": float(reward),
            "outcome": float(info.get("outcome", 0.0)), "turns": turn}


def export_app_sft(snapshot: str | Path, name: str, out: str | Path, shape: str = "openai") -> list[Path]:
    """Write the solved reference episodes of app task set ``name``; returns the paths written."""
    from datasets import Dataset, DatasetDict

    if shape not in SFT_SHAPES:
        raise ValueError(f"unknown SFT shape {shape!r}; expected one of {SFT_SHAPES}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written, splits = [], {}
    for split in SPLITS:
        path = app_task_dir(snapshot, name) / f"{split}.jsonl"
        if path.is_file() and not path.read_text(encoding="utf-8").strip():
            continue
        env = AppsEnv(snapshot, name, split, tool_format=shape, max_calls_per_turn=1)
        rows = [{**row, "split": split} for row in (app_conversation(env, task.task_id) for task in env.tasks)
                if row["outcome"] == 1.0]
        table = pa.Table.from_pylist(rows)
        pq.write_table(table, out / f"{split}.parquet")
        written.append(out / f"{split}.parquet")
        splits[split] = Dataset(table)
    DatasetDict(splits).save_to_disk(str(out / "dataset"))
    return [*written, out / "dataset"]
