"""verl: ``BaseTool`` classes, the tool config YAML, the parquet data and ``compute_score``.

verl's multi-turn agent loop (``ToolAgentLoop``, verl 0.9) loads ``BaseTool``
subclasses from a tool config YAML (``actor_rollout_ref.rollout.multi_turn.tool_config_path``)
and, for each tool call of a trajectory, runs ``create`` (with the row's
``extra_info.tools_kwargs[name].create_kwargs``), ``execute`` (which gets the
trajectory's ``agent_data``) and ``release``. :class:`StillwebTool` keeps the
trajectory's :class:`~stillweb.envs.integrations.episode.ToolEpisode` in
``agent_data.extra_fields``, so every call of one trajectory steps the same
episode, and the answer call returns the environment's reward as its tool
reward. :func:`compute_score` (``custom_reward_function.path``/``name``) sums
the trajectory's tool rewards, which verl passes in ``extra_info``.

>>> export_verl("snap/", "default", "data/")   # doctest: +SKIP
>>> # data/{train,dev,test}.parquet, data/tool_config.yaml; then, for verl's trainer:
>>> #   data.train_files=data/train.parquet actor_rollout_ref.rollout.multi_turn.enable=True
>>> #   actor_rollout_ref.rollout.multi_turn.tool_config_path=data/tool_config.yaml
>>> #   custom_reward_function.path=<this module's file> custom_reward_function.name=compute_score
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from verl.tools.base_tool import BaseTool
from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

from stillweb.corpora.errors import UsageError
from stillweb.corpora.tasks.store.export import verl_row
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.envs.integrations.episode import DEFAULT_TOOLS, ToolEpisode
from stillweb.envs.wikiqa.prompt import INSTRUCTIONS
from stillweb.corpora.tasks.answer_match import match_score
from stillweb.sandboxes.formats import get_format

__all__ = ["StillwebTool", "EPISODE_FIELD", "compute_score", "export_verl", "export_bfcl_verl", "tool_config"]

EPISODE_FIELD = "stillweb_episode"  # the key of the trajectory's episode in agent_data.extra_fields
CLASS_NAME = f"{__name__}.StillwebTool"


class StillwebTool(BaseTool):
    """One stillweb tool (the schema's name) stepping the trajectory's episode.

    ``config`` (from the YAML) holds ``snapshot``, ``tasks``, ``split``, ``tools`` and
    ``env`` (other :class:`~stillweb.envs.wikiqa.env.WikiQAEnv` arguments).
    """

    def __init__(self, config: dict, tool_schema: OpenAIFunctionToolSchema) -> None:
        super().__init__(config, tool_schema)
        if "snapshot" not in config:
            raise UsageError(f"the stillweb tool config needs 'snapshot'; got keys {sorted(config)}")
        self._create_kwargs: dict[str, dict[str, Any]] = {}

    async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, ToolResponse]:
        """Note the row's ``create_kwargs`` (``task_id``) for the execute that follows."""
        instance_id, response = await super().create(instance_id, **kwargs)
        self._create_kwargs[instance_id] = dict(kwargs.get("create_kwargs") or {})
        return instance_id, response

    async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs: Any) -> tuple[ToolResponse, float, dict]:
        """Step the trajectory's episode (started at its first call) with this tool's call."""
        agent_data = kwargs.get("agent_data")
        if agent_data is None:
            raise UsageError("StillwebTool.execute needs verl's agent_data (verl >= 0.9's ToolAgentLoop passes it)")
        episode = agent_data.extra_fields.get(EPISODE_FIELD)
        if episode is None:
            create_kwargs = self._create_kwargs.get(instance_id, {})
            task_id = create_kwargs.get("task_id")
            if not task_id:
                raise UsageError("no task_id in extra_info.tools_kwargs[<tool>].create_kwargs: write the data with export_verl()")
            split = create_kwargs.get("split") or self.config.get("split", "train")  # the row's split: one config serves all
            episode = ToolEpisode(self.config["snapshot"], self.config.get("tasks"), split,
                                  tools=self.config.get("tools", DEFAULT_TOOLS), **self.config.get("env", {}))
            episode.reset(task_id=task_id)
            agent_data.extra_fields[EPISODE_FIELD] = episode
        step = episode.call(self.name, parameters)
        flags = step.info.get("tool_flags") or [None]
        metrics = {"flag": flags[0], "turn": step.info["turn"], "done": step.done}
        return ToolResponse(text=step.text), step.reward, metrics

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        """Forget the call's create kwargs (the episode lives with the trajectory)."""
        self._create_kwargs.pop(instance_id, None)


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict | None = None, **kwargs: Any) -> float:
    """The trajectory's reward: the sum of its tool rewards (the episode's reward, given by the answer call).

    Without tool rewards (scoring a text offline), the last ``answer`` call in ``solution_str``
    scored against the golds by the row's ``extra_info["answer_match"]`` (an imported set's rule,
    e.g. Search-R1's ``em``; stillweb's matcher when absent).
    """
    rewards = (extra_info or {}).get("tool_rewards")
    if rewards is not None and len(rewards):
        return float(sum(float(reward) for reward in rewards))
    golds = list((ground_truth or {}).get("target", [])) if isinstance(ground_truth, dict) else [str(ground_truth)]
    parser = get_format("openai", max_calls_per_turn=16)
    answer = None
    for block in solution_str.split("<tool_call>")[1:]:
        parsed = parser.parse("<tool_call>" + block.split("</tool_call>")[0] + "</tool_call>")
        answer = parsed.answer if parsed.answer is not None else answer
    return match_score((extra_info or {}).get("answer_match"), answer, golds) if answer is not None else 0.0


def tool_config(snapshot: str | Path, tasks: str | None = None, split: str = "train",
                tools: tuple[str, ...] | list[str] = DEFAULT_TOOLS, **env_kwargs: Any) -> dict[str, Any]:
    """verl's tool config (the YAML's content): one :class:`StillwebTool` per tool, with its OpenAI schema."""
    episode = ToolEpisode(snapshot, tasks, split, tools=tools, **env_kwargs)  # fails here, naming the problem
    config = {"type": "native", "snapshot": str(Path(snapshot).resolve()) if snapshot is not None else None,
              "tasks": tasks, "split": split,
              "tools": list(tools), "env": dict(env_kwargs)}
    entries = []
    for schema in episode.schemas():
        function = schema["function"]
        parameters = {"type": "object", "required": list(function["parameters"].get("required", [])),
                      "properties": {name: _verl_property(prop) for name, prop in function["parameters"]["properties"].items()}}
        entries.append({"class_name": CLASS_NAME, "config": config,
                        "tool_schema": {"type": "function", "function": {"name": function["name"],
                                        "description": function["description"], "parameters": parameters}}})
    return {"tools": entries}


def export_verl(snapshot: str | Path, name: str, out: str | Path, tools: tuple[str, ...] | list[str] = DEFAULT_TOOLS,
                **env_kwargs: Any) -> list[Path]:
    """Write ``{split}.parquet`` (verl's layout, chat prompts for tool calling, ``tools_kwargs``) and ``tool_config.yaml``.

    Every split's rows carry their ``split`` in ``create_kwargs`` beside the ``task_id``, so the one
    ``tool_config.yaml`` serves training on ``train.parquet`` and validation on ``dev.parquet`` alike.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for split in SPLITS:
        rows = []
        for index, task in enumerate(read_tasks(snapshot, name, split)):
            row = verl_row(task, name, index)
            row["prompt"] = [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": task.question}]
            row["agent_name"] = "tool_agent"
            row["extra_info"]["tools_kwargs"] = {tool: {"create_kwargs": {"task_id": task.task_id, "split": split}}
                                                 for tool in tools}
            rows.append(row)
        path = out / f"{split}.parquet"
        if rows:
            pq.write_table(pa.Table.from_pylist(rows), path)
            written.append(path)
    path = out / "tool_config.yaml"
    path.write_text(yaml.safe_dump(tool_config(snapshot, name, "train", tools, **env_kwargs), sort_keys=False), encoding="utf-8")
    return [*written, path]


def export_bfcl_verl(out: str | Path, category: str = "multi_turn_base", tasks: list[str] | None = None,
                     split: str = "default", **env_kwargs: Any) -> list[Path]:
    """``stillweb/BFCL-v0``'s tasks for verl: ``{category}.parquet`` (each prompt the environment's own: its
    preamble and the first user turn; ``tools_kwargs`` for every BFCL function) and ``tool_config.yaml``
    (one :class:`StillwebTool` per function of the category's tasks, and ``answer``, which brings the next
    user turn and, after the last, the reward of BFCL's checker). No snapshot: ``snapshot`` is ``None``."""
    from stillweb.envs.integrations.trl import task_dataset

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    env = {"env_id": "stillweb/BFCL-v0", "category": category, **env_kwargs}
    config = tool_config(None, tasks, split, tools=(), **env)
    names = [entry["tool_schema"]["function"]["name"] for entry in config["tools"]]
    rows = []
    for index, row in enumerate(task_dataset(None, tasks, split, **env)):
        create = {"create_kwargs": {"task_id": row["task_id"], "split": split}}
        rows.append({"data_source": f"stillweb/BFCL-v0/{category}", "prompt": row["prompt"], "ability": "tool-use",
                     "reward_model": {"style": "rule", "ground_truth": {"target": []}}, "agent_name": "tool_agent",
                     "extra_info": {"split": split, "index": index, "task_id": row["task_id"],
                                    "tools_kwargs": {name: create for name in names}}})
    path = out / f"{category}.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    config_path = out / "tool_config.yaml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return [path, config_path]


def _verl_property(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON-schema property in verl's restricted form (``type`` a name or a list of names; ``anyOf`` -> list)."""
    kind = schema["type"] if "type" in schema else [option["type"] for option in schema.get("anyOf", [])]
    prop: dict[str, Any] = {"type": kind, "description": schema.get("description", "")}
    if "enum" in schema:
        prop["enum"] = list(schema["enum"])
    return prop
