"""A recording made before the episode core (main fceee74, tests/envs/runs/data/recording_v1.jsonl) still
replays: a reference episode cut by a spent call budget (one call refused), format and unknown-tool errors,
an answer citing nothing shown (``<answer>Nobody</answer><citations>999999; No Such Page</citations>``) and a
random-text episode, on the tiny world (its header kwargs hold the tasks; the snapshot is given)."""

from __future__ import annotations

from pathlib import Path

from stillweb.envs import replay

OLD = Path(__file__).parent / "data" / "recording_v1.jsonl"


def test_a_recording_from_before_the_core_replays(tiny_world):
    result = replay(OLD, snapshot=str(tiny_world))
    assert result.ok, result.describe()
    assert result.checked == 17  # every reset and step
