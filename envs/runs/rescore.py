"""Re-score recorded episodes under another reward rule or answer-match rule, without a policy.

NeMo-Gym's ``reverify`` and tau2-bench's ``evaluate-trajs`` re-score stored rollouts when a reward
rule changes; :func:`rescore` does it for a :class:`~stillweb.envs.runs.recording.RecordEpisodes` file:
it re-creates the recorded environment with ``reward=`` the new
:class:`~stillweb.envs.scoring.rewards.RewardConfig` (whose ``answer_match`` picks another rule; the
environment scores with the one outcome scorer, :func:`~stillweb.envs.scoring.rewards.score_outcome`), feeds it
the recorded actions (the environment is deterministic: the observations must come out as recorded, or
the episode is reported ``diverged``), and writes a new recording in which each step that ended an
episode carries ``rescored`` (the new ``reward``, ``outcome`` and ``reward_parts``) beside the recorded
ones. An environment that takes no reward config (``Lookup-v0``) is refused. The summary counts the episodes whose reward changed, by reason: the first of :data:`_REASONS`
whose part changed (``outcome`` when the answer-match rule judges the answer otherwise, ``penalty`` when
a penalty weight did), or ``weights`` when only the combination of unchanged parts did.

>>> summary = rescore("episodes.jsonl", {"answer_match": "subem"})  # doctest: +SKIP
>>> summary.flips  # doctest: +SKIP
{'outcome': 3}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stillweb.corpora.canonical import canonical_json
from stillweb.corpora.errors import UsageError
from stillweb.envs.mixture import accepted_kwargs
from stillweb.envs.runs.recorded_snapshot import locate_snapshot
from stillweb.envs.runs.recording import open_recording, rerun
from stillweb.envs.scoring.rewards import RewardConfig

__all__ = ["RescoreSummary", "rescore", "reward_config_from_text"]

_COMPARED = ("observation", "terminated", "truncated")  # what must replay as recorded for a re-score to hold
_REASONS = ("outcome", "abstention", "provenance_ok", "penalty")  # the parts a rule (not a weight) decides


@dataclass
class RescoreSummary:
    """What a re-score found: episodes re-scored, those whose reward changed (up, down), the flips by
    reason, the episodes that no longer replay (``diverged``, by line), and the file written."""

    path: Path
    episodes: int = 0
    changed: int = 0
    up: int = 0
    down: int = 0
    flips: dict[str, int] = field(default_factory=dict)
    diverged: list[int] = field(default_factory=list)

    def describe(self) -> str:
        """One paragraph for humans."""
        reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(self.flips.items())) or "none"
        lines = [f"re-scored {self.episodes} episodes: {self.changed} changed reward ({self.up} up, {self.down} down); "
                 f"flips by reason: {reasons}; wrote {self.path}"]
        if self.diverged:
            lines.append(f"{len(self.diverged)} episodes no longer replay as recorded (lines {self.diverged[:10]}): "
                         "their new scores are of another episode")
        return "\n".join(lines)


def reward_config_from_text(text: str) -> RewardConfig:
    """A :class:`RewardConfig` from JSON text or the path of a JSON file (``UsageError`` naming what is wrong)."""
    source = text
    if not text.lstrip().startswith("{"):
        path = Path(text)
        if not path.is_file():
            raise UsageError(f"reward config {text!r} is neither JSON nor a file: pass e.g. '{{\"answer_match\": \"subem\"}}'")
        source = path.read_text(encoding="utf-8")
    try:
        value = json.loads(source)
    except json.JSONDecodeError as error:
        raise UsageError(f"reward config {text[:200]!r} is not JSON ({error})") from None
    if not isinstance(value, Mapping):
        raise UsageError(f"reward config must be a JSON object of RewardConfig fields, got {type(value).__name__}")
    return RewardConfig.from_value(value)


def rescore(path: str | Path, reward: RewardConfig | Mapping[str, Any], out: str | Path | None = None,
            **kwarg_overrides: Any) -> RescoreSummary:
    """Re-score the recording at ``path`` under ``reward``; write it with both rewards to ``out`` (default
    ``<name>.rescored.jsonl`` beside it) and return the summary. ``kwarg_overrides`` as for
    :func:`~stillweb.envs.runs.recording.replay` (``snapshot=``)."""
    path = Path(path)
    config = RewardConfig.from_value(reward)
    out = Path(out) if out is not None else path.with_name(f"{path.stem}.rescored.jsonl")
    if out.resolve() == path.resolve():
        raise UsageError(f"--out must differ from the recording {path} (the recorded rewards are kept beside the new)")
    header, records = open_recording(path)
    records = list(records)
    if "snapshot" not in kwarg_overrides:
        found, _used = locate_snapshot(header, path)
        kwarg_overrides = {**kwarg_overrides, **({"snapshot": found} if found else {})}
    summary = RescoreSummary(out)
    written = {number: record for number, record in records}
    diverged_episode = False
    env_id = header.get("env_id")
    if not isinstance(env_id, str) or not accepted_kwargs(env_id, {"reward": config}):  # Lookup-v0
        raise UsageError(f"{env_id} takes no reward config (its constructor has no 'reward' argument)")
    outcomes = list(rerun(header, records, reward=config, **kwarg_overrides))
    for outcome in outcomes:
        record = outcome.record
        if record.get("type") == "reset":
            diverged_episode = False
            continue
        if outcome.error is not None or any(outcome.replayed.get(key) != record.get(key) for key in _COMPARED):
            if not diverged_episode:
                summary.diverged.append(outcome.number)
            diverged_episode = True
        if outcome.error is None and (record.get("terminated") or record.get("truncated")):
            written[outcome.number] = {**record, "rescored": _rescored(outcome.info, outcome.replayed["reward"])}
            _count(summary, record, written[outcome.number]["rescored"])
    lines = [canonical_json({**header, "rescore": {"reward": config, "from": path.name}})]
    lines += [canonical_json(written[number]) for number, _ in records]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return summary


def _rescored(info: Mapping[str, Any], reward: float) -> dict[str, Any]:
    return {"reward": reward, "outcome": info.get("outcome"), "reward_parts": info.get("reward_parts")}


def _count(summary: RescoreSummary, record: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """Count one ended episode: whether its reward changed, and why."""
    summary.episodes += 1
    old_reward, new_reward = float(record.get("reward", 0.0)), float(new["reward"])
    if old_reward == new_reward:
        return
    summary.changed += 1
    summary.up += new_reward > old_reward
    summary.down += new_reward < old_reward
    old_parts = (record.get("info") or {}).get("reward_parts") or {}
    new_parts = new["reward_parts"] or {}
    reason = next((key for key in _REASONS if canonical_json(old_parts.get(key)) != canonical_json(new_parts.get(key))),
                  "weights")
    summary.flips[reason] = summary.flips.get(reason, 0) + 1
