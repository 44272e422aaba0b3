"""Behaviour unchanged, proven against an older checkout: the same snapshot fingerprint, the
same exported task set (fields may be added), recorded episodes that replay and re-record byte-identical, and an
OpenAPI document that differs only by added fields.

Run with the Python of a checkout of the base commit (its own venv, stillweb installed
editable from it), for example the tree before the issue-12 reorganisation::

    git worktree add --detach /tmp/base 0a51336
    python3 -m venv --system-site-packages /tmp/base/.venv
    /tmp/base/.venv/bin/pip install --no-deps -e /tmp/base
    python scripts/compare_with_base.py --base-python /tmp/base/.venv/bin/python --work /tmp/compare

Each side builds a synthetic snapshot (300 articles, seed 0) with its own ``stillweb``,
generates and exports a task set (its files hashed byte for byte), records reference-agent and random-text episodes on
WikiQA-v0, and dumps its OpenAPI document. This side then replays the base's recording
(``stillweb.envs.runs.recording.replay``) and compares files byte for byte. Exits non-zero at
the first difference, naming it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

# Runs in either interpreter: only public, stable entry points (the CLI and gym ids), except
# the app factory, whose module moved in issue 12 (both homes are tried).
PROBE = r"""
import json, subprocess, sys
from pathlib import Path
import gymnasium as gym
import stillweb.envs  # registers the environments
from stillweb.envs import RandomTextAgent, RecordEpisodes, ReferenceAgent, run_episode  # both layouts

work = Path(sys.argv[1])
cli = [str(Path(sys.executable).parent / "stillweb")]  # the console script of this venv
snap = work / "snap"
subprocess.run([*cli, "build", "synthetic", "--articles", "300", "--seed", "0", "--out", str(snap)],
               check=True, capture_output=True)
subprocess.run([*cli, "tasks", "generate", str(snap), "--name", "cmp", "--count", "30", "--seed", "1"],
               check=True, capture_output=True)
subprocess.run([*cli, "tasks", "export", str(snap), "cmp", "--format", "jsonl", "--out", str(work / "export")],
               check=True, capture_output=True)
manifest = json.loads((snap / "manifest.json").read_text())
tasks = [json.loads(line) for line in (work / "export" / "test.jsonl").read_text().splitlines()][:3]
env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot=str(snap), tasks="cmp", split="test"),
                     str(work / "episodes.jsonl"))
for task in tasks:
    run_episode(env, lambda task: ReferenceAgent(task), options={"task_id": task["task_id"]})
for seed in (0, 1):
    run_episode(env, RandomTextAgent(seed), seed=seed)
env.close()
try:
    from stillweb.server.app import make_app
except ImportError:
    from stillweb.envs.serve import make_app
(work / "openapi.json").write_text(json.dumps(make_app([str(snap)]).openapi(), sort_keys=True, indent=1))
(work / "fingerprint").write_text(manifest["fingerprint"])
import hashlib
(work / "taskset.sha256").write_text("".join(  # the task set's files (splits, card) byte for byte
    f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.name}\n" for path in sorted((snap / "tasks" / "cmp").iterdir())))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-python", required=True, help="the Python of the base checkout's venv")
    parser.add_argument("--work", type=Path, required=True, help="a scratch directory (base/ and new/ go inside)")
    parser.add_argument("--allow-additions", action="store_true",
                        help="pass when records only gained keys (a base before features that add info/fields)")
    parser.add_argument("--reuse-base", action="store_true",
                        help="keep WORK/base from an earlier run of the same base commit (skip rebuilding it)")
    args = parser.parse_args(argv)
    added_only = args.allow_additions
    sides = {"base": args.base_python, "new": sys.executable}
    for side, python in sides.items():
        directory = args.work / side
        if side == "base" and args.reuse_base and (directory / "taskset.sha256").exists():
            print(f"base: reusing {directory}", flush=True)
            continue
        directory.mkdir(parents=True, exist_ok=True)
        print(f"{side}: building, generating, recording with {python}", flush=True)
        subprocess.run([python, "-c", PROBE, str(directory)], check=True)
    base, new = args.work / "base", args.work / "new"
    problems = []
    same = _digest(base / "fingerprint") == _digest(new / "fingerprint")
    print(f"snapshot fingerprint: {'identical' if same else 'DIFFERS'}")
    if not same:
        problems.append("fingerprint")
    same = _digest(base / "taskset.sha256") == _digest(new / "taskset.sha256")
    print(f"task set files (parquet splits, card.md): {'byte-identical' if same else 'DIFFER'}")
    if not same:
        problems.append("task set files")
    for name in ("episodes.jsonl", *(f"export/{split}.jsonl" for split in ("train", "dev", "test"))):
        # the recordings' headers name their own snapshot directory: compare as if both were base's
        new_lines = _lines(new / name, (str(new / "snap"), str(base / "snap")))
        changed = removed_or_changed(_lines(base / name), new_lines)
        added = _lines(base / name) != new_lines
        print(f"{name}: " + ("DIFFERS: " + "; ".join(changed[:5]) if changed else
                             "same records plus added fields" if added else "byte-identical"))
        if changed or (added and not added_only):
            problems.append(name)
    from stillweb.envs.runs.recording import replay

    try:
        result = replay(base / "episodes.jsonl", snapshot=str(new / "snap"))
        print(f"replay of the base recording on this code: " + ("ok" if result.ok else
              f"first difference at line {result.line}, {result.field}") + f" ({result.checked} records matched)")
        replayed = result.ok
    except ValueError as error:  # e.g. a task the base recorded is not in this side's (changed) task set
        print(f"replay of the base recording on this code: impossible: {str(error)[:300]}")
        replayed = False
    if not replayed and not added_only:
        problems.append("replay")
    removed = removed_or_changed(json.loads((base / "openapi.json").read_text()),
                                   json.loads((new / "openapi.json").read_text()))
    print("OpenAPI: " + ("only additions" if not removed else "removed or changed: " + "; ".join(removed[:20])))
    if removed:
        problems.append("openapi")
    print("behaviour unchanged" if not problems else f"DIFFERENCES: {problems}")
    return 1 if problems else 0


def removed_or_changed(base: object, new: object, where: str = "") -> list[str]:
    """Everything in the base document that the new one lacks or changed (added keys are fine).

    >>> removed_or_changed({"a": {"b": 1}, "l": [1]}, {"a": {"b": 1, "c": 2}, "l": [1]})
    []
    >>> removed_or_changed({"a": {"b": 1}}, {"a": {"b": 2}})
    ['/a/b: 1 -> 2']
    """
    if isinstance(base, dict) and isinstance(new, dict):
        found = []
        for key, value in base.items():
            path = f"{where}/{key}"
            if key not in new:
                found.append(f"{path}: missing")
            elif key == "required" and isinstance(value, list) and isinstance(new[key], list):
                found.extend(f"{path}: {name} no longer required" for name in value if name not in new[key])
            else:
                found.extend(removed_or_changed(value, new[key], path))
        return found
    if isinstance(base, list) and isinstance(new, list) and len(base) == len(new):
        return [item for i, (b, n) in enumerate(zip(base, new)) for item in removed_or_changed(b, n, f"{where}[{i}]")]
    return [] if base == new else [f"{where}: {str(base)[:60]} -> {str(new)[:60]}"]


def _lines(path: Path, replace: tuple[str, str] = ("", "")) -> list:
    text = path.read_text(encoding="utf-8").replace(*replace) if replace[0] else path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "missing"


if __name__ == "__main__":
    raise SystemExit(main())
