"""Synthetic recordings for the run-health plots: lines in the RecordEpisodes format whose last
step of each episode carries ``info["episode_stats"]``, shaped healthy or collapsing."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from stillweb.envs.core.degenerate import ACTION_FLAGS


@dataclass(frozen=True)
class Episode:
    """One synthetic episode: its actions, the flags each step raised, how it ended."""

    actions: tuple[str, ...]
    flags: tuple[tuple[str, ...], ...] = ()
    tool_calls: int = 2
    format_errors: int = 0
    ending: str = "terminated"  # terminated | truncated | unfinished
    outcome: float = 1.0
    truncation_reason: str | None = None
    policy_version: int | None = None
    stats: bool = True
    task_id: str = "t"
    extra_info: dict = field(default_factory=dict)

    def stats_dict(self) -> dict:
        flags = dict.fromkeys(ACTION_FLAGS, 0)
        for step_flags in self.flags:
            for name in step_flags:
                flags[name] += 1
        return {"turns": len(self.actions), "action_chars": sum(map(len, self.actions)),
                "longest_action": max(map(len, self.actions)), "tool_calls": self.tool_calls, "repeated_calls": 0,
                "format_errors": self.format_errors, "degenerate_steps": sum(1 for step in self.flags if step),
                "flags": flags}


def healthy(index: int, **changes) -> Episode:
    """A short, well-formed, successful episode."""
    return Episode(actions=("<tool_call>search river</tool_call>", "<answer>Ostra</answer>"), **{"task_id": f"t{index}", **changes})


def collapsed(index: int, **changes) -> Episode:
    """A collapsing episode: long repeated garbage, flagged, no tool calls, truncated by the turn limit."""
    garbage = '{"action": "searchsearchAAPL stockAAAAA' + "A" * (300 + 50 * index)
    shape = {"flags": (("repeated_chars", "repeated_ngrams"), ("repeated_chars",)), "tool_calls": 0, "format_errors": 2,
             "ending": "truncated", "outcome": 0.0, "truncation_reason": "max_turns", "task_id": f"t{index}"}
    return Episode(actions=(garbage, garbage), **{**shape, **changes})


def episode_lines(episode: Episode, seed: int) -> list[dict]:
    """The reset and step records of one episode."""
    lines = [{"type": "reset", "seed": seed, "options": {"task_id": episode.task_id}, "observation": "question",
              "info": {"task_id": episode.task_id}}]
    for turn, action in enumerate(episode.actions):
        last = turn == len(episode.actions) - 1 and episode.ending != "unfinished"
        info = {"action_flags": list(episode.flags[turn]) if turn < len(episode.flags) else [], "tool_flags": [None],
                **episode.extra_info}
        if last:
            info["outcome"] = episode.outcome
            if episode.stats:
                info["episode_stats"] = episode.stats_dict()
            if episode.ending == "truncated":
                info["truncation_reason"] = episode.truncation_reason
        step = {"type": "step", "action": action, "observation": "ok", "reward": episode.outcome if last else 0.0,
                "terminated": last and episode.ending == "terminated", "truncated": last and episode.ending == "truncated",
                "info": info}
        if episode.policy_version is not None:
            step["policy_version"] = episode.policy_version
        lines.append(step)
    return lines


def write_run(path: Path, episodes: list[Episode], tail: str = "") -> Path:
    """A recording of ``episodes`` at ``path`` (``tail``: raw text appended, e.g. a line cut short)."""
    records = [{"type": "header", "env_id": "stillweb/WikiQA-v0", "kwargs": {"snapshot": "nowhere"}, "package_version": "0"}]
    for seed, episode in enumerate(episodes):
        records += episode_lines(episode, seed)
    path.write_text("".join(json.dumps(record, sort_keys=True) + "\n" for record in records) + tail, encoding="utf-8")
    return path


def collapsing_run(path: Path, healthy_episodes: int = 8, collapsed_episodes: int = 8, **changes) -> Path:
    """``healthy_episodes`` healthy episodes, then ``collapsed_episodes`` collapsing ones."""
    episodes = [healthy(index, **changes) for index in range(healthy_episodes)]
    episodes += [collapsed(healthy_episodes + index, **changes) for index in range(collapsed_episodes)]
    return write_run(path, episodes)


def recorded_episode_stats(path: Path) -> tuple[list[dict], int]:
    """The tests' own reading of a recording, independent of ``stillweb.envs.runs.run_summary``: the
    ``info["episode_stats"]`` of every step line that ends an episode, in order, and how many such lines
    have none or stats that are not counts (``stillweb.envs.core.episode_stats.countable``)."""
    from stillweb.envs.core.episode_stats import countable

    found, missing = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line) if line.strip() else {}
        if record.get("type") == "step" and (record.get("terminated") or record.get("truncated")):
            stats = (record.get("info") or {}).get("episode_stats")
            if countable(stats):
                found.append(stats)
            else:
                missing += 1
    return found, missing
