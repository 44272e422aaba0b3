"""SFT data from BFCL tasks: the reference agent's solved ``BFCL-v0`` episodes (BFCL's ground-truth
calls, turn by turn) as chat ``messages`` with ``tools``, the row shape of
:mod:`stillweb.envs.integrations.sft`, one split per category.

Shape ``openai``: a system message, the first user turn, then per call an assistant
``tool_calls`` message and its ``tool`` result; an ``answer`` call closes each user turn and the
next user turn follows (in miss_func, the turn that lists the added functions). Shape ``tongyi``:
the env's own history. ``tools`` holds the functions offered at the start (and ``answer``).
Only episodes that earn 1 are written (the default split's tasks all do).

>>> from stillweb.envs.bfcl.prompt import BFCL_INSTRUCTIONS
>>> BFCL_INSTRUCTIONS.startswith("You help a user")
True
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from stillweb.envs.bfcl.prompt import BFCL_INSTRUCTIONS
from stillweb.envs.integrations.sft import check_shape, reference_conversation, write_sft

__all__ = ["bfcl_conversation", "export_bfcl_sft"]



def bfcl_conversation(env: Any, task_id: str) -> dict[str, Any]:
    """The reference agent's episode of ``task_id`` in a :class:`~stillweb.envs.bfcl.env.BfclEnv` as one row."""
    env.reset(options={"task_id": task_id})
    tools = env.tool_schemas()
    return reference_conversation(env, task_id, BFCL_INSTRUCTIONS, lambda info: info["messages"][1]["content"], tools)


def export_bfcl_sft(out: str | Path, categories: Sequence[str] | None = None, shape: str = "openai",
                    tasks: Sequence[str] | None = None) -> list[Path]:
    """Write the solved reference episodes of each category's default split (``tasks``: only these
    ids, of every category that has them); returns the paths written."""
    from stillweb.envs.bfcl.data import BFCL_CATEGORIES, category_tasks
    from stillweb.envs.bfcl.env import BfclEnv

    check_shape(shape)
    chosen = tuple(categories) if categories is not None else BFCL_CATEGORIES

    def conversations() -> Iterator[tuple[str, Iterator[dict[str, Any]]]]:
        for category in chosen:
            ids = None if tasks is None else [task.task_id for task in category_tasks(category) if task.task_id in set(tasks)]
            env = BfclEnv(category, tasks=ids, tool_format=shape, max_calls_per_turn=1)
            yield category, (bfcl_conversation(env, task.task_id) for task in env.tasks)

    return write_sft(out, conversations())
