"""SFT cold-start data: the reference agent's solved episodes as chat ``messages`` with ``tools``.

Kimi-Researcher and Tongyi DeepResearch start RL from supervised fine-tuning on
agent trajectories. :func:`export_sft` runs the
:class:`~stillweb.envs.agents.scripted.ReferenceAgent` on every task of a set, in the
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
``DatasetDict`` folder (``dataset/``). The row builder (:func:`reference_conversation`) and
the writer (:func:`write_sft`) serve the app tasks' export too
(:mod:`stillweb.envs.integrations.apps_sft`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pyarrow as pa
import pyarrow.parquet as pq

from stillweb.corpora.errors import UsageError
from stillweb.corpora.progress import progress_bar
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.envs.agents.loop import play_episode
from stillweb.envs.agents.scripted import ReferenceAgent
from stillweb.envs.integrations.episode import DEFAULT_TOOLS, tool_content
from stillweb.envs.wikiqa.prompt import INSTRUCTIONS
from stillweb.envs.wikiqa.env import WikiQAEnv
from stillweb.sandboxes.formats import get_format

__all__ = ["SFT_SHAPES", "export_sft", "oracle_conversation", "reference_conversation", "write_sft", "check_shape"]

SFT_SHAPES = ("openai", "tongyi")


def oracle_conversation(env: WikiQAEnv, task_id: str) -> dict[str, Any]:
    """The reference agent's episode of ``task_id`` in ``env`` (its ``tool_format`` is the shape) as one row."""
    return reference_conversation(env, task_id, INSTRUCTIONS, lambda info: env.tasks.by_id(task_id).question,
                                  env.registry.schemas())


def export_sft(snapshot: str | Path, name: str, out: str | Path, shape: str = "openai", max_turns: int | None = None,
               progress: bool = False) -> list[Path]:
    """Write the solved reference episodes of task set ``name`` (see the module docstring); returns the paths.

    ``max_turns=None``: the env's default for the split (from its task set); ``progress``: one bar for the job."""
    check_shape(shape)

    def conversations() -> Iterator[tuple[str, Iterator[dict[str, Any]]]]:
        by_split = {split: read_tasks(snapshot, name, split) for split in SPLITS}
        bar = progress_bar(total=sum(map(len, by_split.values())), unit="episode", desc=f"sft export of {name}",
                           enabled=progress)
        for split, tasks in by_split.items():
            if not tasks:
                continue
            env = WikiQAEnv(snapshot, name, split, tool_format=shape, tools=list(DEFAULT_TOOLS), max_turns=max_turns,
                            max_calls_per_turn=1)
            yield split, _counted((oracle_conversation(env, task.task_id) for task in tasks), bar)
        bar.close()

    return write_sft(out, conversations())


def check_shape(shape: str) -> None:
    """``ValueError`` unless ``shape`` is one of :data:`SFT_SHAPES`."""
    if shape not in SFT_SHAPES:
        raise UsageError(f"unknown SFT shape {shape!r}; expected one of {SFT_SHAPES}")


def reference_conversation(env: gym.Env, task_id: str, instructions: str, first_user: Callable[[dict[str, Any]], str],
                           tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The reference agent's episode of ``task_id`` in ``env`` as one row (``env``'s ``tool_format`` is the shape).

    Shape ``openai``: ``instructions`` as the system message, ``first_user(reset info)`` as the user's,
    then per call the assistant's ``tool_calls`` and the ``tool`` result; an answer that does not end
    the episode is followed by the next user turn (its observation). Other shapes: the env's own
    history, less the empty observation after the last answer. ``tools`` go in as a JSON string."""
    played = play_episode(env, lambda task: ReferenceAgent(task, tool_format=env.format.name), options={"task_id": task_id})
    messages = [{"role": "system", "content": instructions}, {"role": "user", "content": first_user(played.reset_info)}]
    if env.format.name == "openai":
        for turn, step in enumerate(played.steps):
            messages.extend(_openai_turn(step.action, step.observation, turn))
            done = step.terminated or step.truncated
            if messages[-1]["role"] == "assistant" and not done:  # an answer: the user's next turn follows
                messages.append({"role": "user", "content": step.observation})
    else:  # the env's own history, less the empty observation after the answer
        history = played.messages
        messages = [m for i, m in enumerate(history) if m["content"] or i < len(history) - 1]
    reward = played.steps[-1].reward if played.steps else 0.0
    return {"messages": messages, "tools": json.dumps(tools, ensure_ascii=False), "task_id": task_id,
            "split": "", "reward": float(reward), "outcome": float(played.info.get("outcome", 0.0)), "turns": played.turns}


def write_sft(out: str | Path, conversations: Iterable[tuple[str, Iterable[dict[str, Any]]]]) -> list[Path]:
    """Write the solved rows (outcome 1) of each ``(split, rows)`` as ``{split}.parquet`` and all of them
    as a ``datasets`` ``DatasetDict`` folder ``dataset/``; returns the paths written."""
    from datasets import Dataset, DatasetDict

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written, splits = [], {}
    for split, rows in conversations:
        table = pa.Table.from_pylist([{**row, "split": split} for row in rows if row["outcome"] == 1.0])
        path = out / f"{split}.parquet"
        pq.write_table(table, path)
        written.append(path)
        splits[split] = Dataset(table)
    DatasetDict(splits).save_to_disk(str(out / "dataset"))
    return [*written, out / "dataset"]


def _counted(rows: Iterable[dict[str, Any]], bar) -> Iterator[dict[str, Any]]:
    """``rows``, ticking ``bar`` once after each."""
    for row in rows:
        yield row
        bar.update(1)


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
