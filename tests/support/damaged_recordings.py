"""Damaged and hostile recordings for the viewer's robustness tests (``test_viewer_damaged.py``,
``test_viewer_fuzz.py``): files a killed run, a disk or another snapshot leave behind, and
well-formed recordings whose values have the wrong type (a recording is file input: any
JSON can be in it).

:func:`damaged_directory` writes, beside a good recording, every file of :data:`DAMAGED`
(name -> what the viewer must say about it) and every file of :data:`HOSTILE_VALUES` (a good
recording with one value replaced: the viewer must still show it).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["DAMAGED", "HOSTILE_VALUES", "HUGE_LINE_CHARS", "OTHER_FINGERPRINT", "damaged_directory"]

OTHER_FINGERPRINT = "f" * 64
HUGE_LINE_CHARS = 3_000_000
SCRIPT = "<script>window.__pwned = 9</script>"

# name -> a phrase the runs table and the episode page use for it (None: the file shows normally)
DAMAGED = {
    "killed.jsonl": "ends in the middle",
    "binary.jsonl": "UTF-8",
    "empty.jsonl": "empty",
    "header-only.jsonl": "no episodes",
    "other-snapshot.jsonl": "another snapshot",
    "huge-line.jsonl": "not a recording",
    "digits.jsonl": "not JSON",
}


def _set(path: tuple[str, ...], value: Any, which: str = "steps") -> Callable[[list[dict]], None]:
    """A mutation setting ``record[path...] = value`` in the ``which`` records (``steps``, ``last``, ``reset``)."""
    def mutate(records: list[dict]) -> None:
        chosen = {"steps": [record for record in records if record.get("type") == "step"],
                  "last": [records[-1]], "reset": [records[1]]}[which]
        for record in chosen:
            target = record
            for key in path[:-1]:
                target = target.setdefault(key, {})
            target[path[-1]] = value
    return mutate


# name -> the mutation of a good recording (each one crashed a viewer page once)
HOSTILE_VALUES: dict[str, Callable[[list[dict]], None]] = {
    "reward-huge-int": _set(("reward",), 10 ** 400),
    "reward-text": _set(("reward",), SCRIPT),
    "reward-list": _set(("reward",), [1, [2]]),
    "outcome-huge-int": _set(("info", "outcome"), 10 ** 400, "last"),
    "action-flags-number": _set(("info", "action_flags"), 5),
    "tool-flags-true": _set(("info", "tool_flags"), True),
    "shown-docs-number": _set(("info", "shown_docs"), 7),
    "reward-parts-list": _set(("info", "reward_parts"), [SCRIPT]),
    "reward-parts-text": _set(("info", "reward_parts"), SCRIPT, "last"),
    "stats-turns-text": _set(("info", "episode_stats", "turns"), SCRIPT, "last"),
    "stats-turns-huge": _set(("info", "episode_stats", "turns"), 10 ** 400, "last"),
    "stats-calls-nan": _set(("info", "episode_stats", "tool_calls"), float("nan"), "last"),
    "stats-flags-list": _set(("info", "episode_stats", "flags"), [SCRIPT], "last"),
    "task-id-list": _set(("info", "task_id"), [1, 2], "reset"),
    "policy-text": _set(("action",), SCRIPT + "\x00\ud800-ish"),
}


def damaged_directory(good: Path, directory: Path) -> Path:
    """``directory`` holding ``good.jsonl`` (a copy of the recording ``good``), every :data:`DAMAGED`
    file and every :data:`HOSTILE_VALUES` file (``NAME.jsonl``)."""
    directory.mkdir(parents=True, exist_ok=True)
    text = good.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    header = json.loads(lines[0])
    (directory / "good.jsonl").write_text(text, encoding="utf-8")
    (directory / "killed.jsonl").write_text(text + lines[1] + lines[2][: len(lines[2]) // 2], encoding="utf-8")
    (directory / "binary.jsonl").write_bytes(lines[0].encode() + b"\xff\xfe\x00garbage\n\x80\x81\n")
    (directory / "empty.jsonl").write_bytes(b"")
    (directory / "header-only.jsonl").write_text(lines[0], encoding="utf-8")
    (directory / "other-snapshot.jsonl").write_text(json.dumps({**header, "snapshot_fingerprint": OTHER_FINGERPRINT}) + "\n"
                                                    + "".join(lines[1:]), encoding="utf-8")
    (directory / "huge-line.jsonl").write_text('{"type": "nonsense", "text": "' + "x" * HUGE_LINE_CHARS + '"}\n', encoding="utf-8")
    # a number past Python's 4300-digit limit of int(): json.loads raises ValueError, not JSONDecodeError
    (directory / "digits.jsonl").write_text(text + lines[1].replace('"info":{', '"info":{"n":' + "7" * 5000 + ",", 1), encoding="utf-8")
    records = [json.loads(line) for line in lines]
    for name, mutate in HOSTILE_VALUES.items():
        changed = copy.deepcopy(records)
        mutate(changed)
        (directory / f"{name}.jsonl").write_text("".join(json.dumps(record) + "\n" for record in changed), encoding="utf-8")
    return directory
