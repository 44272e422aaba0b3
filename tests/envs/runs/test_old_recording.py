"""A recording made before the episode core and the counters change (main fceee74, info version 1:
tests/envs/runs/data/recording_v1.jsonl) still replays: a reference episode cut by a spent call budget
(one call refused), format and unknown-tool errors, an answer citing nothing shown
(``<answer>Nobody</answer><citations>999999; No Such Page</citations>``) and a random-text episode, on the
tiny world (its header kwargs hold the tasks; the snapshot is given).

The recording was made on the tiny world's pages as format 3 indexed them (one document per page, a snippet
window around the terms); format 4 ranks a page by its best passage and shows that passage's opening, so the test
replays on a format 3 copy (``copy_with_index``), as a user replays on the snapshot they recorded on. The
fingerprint moves with the build code (not with its pages), so the recording's is replaced by the copy's; every
other recorded value is compared."""

from __future__ import annotations

import json
from pathlib import Path

from stillweb.corpora.search.index import INDEX_PARAMETERS
from stillweb.corpora.snapshot.shared import shared_snapshot
from stillweb.corpora.build.snapshot_writer import copy_with_index
from stillweb.envs import replay

OLD = Path(__file__).parent / "data" / "recording_v1.jsonl"


def test_a_recording_from_before_the_core_replays(tiny_world, tmp_path):
    text = OLD.read_text(encoding="utf-8")
    recorded = json.loads(text.splitlines()[0])["snapshot_fingerprint"]
    moved = tmp_path / "recording_v1.jsonl"
    format_3 = copy_with_index(tiny_world, tmp_path / "tiny-format3", INDEX_PARAMETERS, "stillweb-snapshot/3")
    moved.write_text(text.replace(recorded, shared_snapshot(format_3).fingerprint), encoding="utf-8")
    result = replay(moved, snapshot=str(format_3))
    assert result.ok, result.describe()
    assert result.checked == 17  # every reset and step
