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

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from stillweb.corpora.apps.tasks import app_task_dir
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.envs.apps.env import AppsEnv
from stillweb.envs.apps.prompt import ANSWER_SCHEMA, APP_INSTRUCTIONS
from stillweb.envs.integrations.sft import check_shape, reference_conversation, write_sft

__all__ = ["app_conversation", "export_app_sft"]



def app_conversation(env: AppsEnv, task_id: str) -> dict[str, Any]:
    """The reference agent's episode of ``task_id`` in ``env`` (its ``tool_format`` is the shape) as one row."""
    return reference_conversation(env, task_id, APP_INSTRUCTIONS, lambda info: info["messages"][1]["content"],
                                  env.registry.schemas() + [ANSWER_SCHEMA])


def export_app_sft(snapshot: str | Path, name: str, out: str | Path, shape: str = "openai") -> list[Path]:
    """Write the solved reference episodes of app task set ``name``; returns the paths written."""
    check_shape(shape)

    def conversations() -> Iterator[tuple[str, Iterator[dict[str, Any]]]]:
        for split in SPLITS:
            path = app_task_dir(snapshot, name) / f"{split}.jsonl"
            if path.is_file() and not path.read_text(encoding="utf-8").strip():
                continue
            env = AppsEnv(snapshot, name, split, tool_format=shape, max_calls_per_turn=1)
            yield split, (app_conversation(env, task.task_id) for task in env.tasks)

    return write_sft(out, conversations())
