"""The runs table's speed (issue 28): cold index time and p50/p95 render of /view/episodes
over 100,000 recorded episodes, against the same requests over 1,000 in the same run.

Examples:
  python scripts/bench_viewer.py --dir /tmp/bench-viewer
  python scripts/bench_viewer.py --dir /tmp/bench-viewer --episodes 100000 --files 100 --rounds 20 --append
  python scripts/bench_viewer.py --snapshot /path/to/snapshot --episodes 20000 --baseline-episodes 500

It writes deterministic synthetic recordings (records in the RecordEpisodes format, with
tasks, endings, rewards, flags and policy versions drawn from hashes of the seed: not
replayable, but what the table reads), starts the real viewer app in-process (FastAPI's
TestClient, ASGI without a socket) and times:

- cold index: the first /view/episodes request, which reads every file; its baseline is
  the raw cost of json-parsing every line of the same files;
- render: a mix of sorted, filtered and paged /view/episodes requests (every sort key both
  ways, each filter, pages 2 and last, combinations), interleaved with the same mix on the
  baseline run of ``--baseline-episodes`` episodes, so load hits both alike; wall and CPU
  time per request, p50 and p95;
- live append: one episode appended to one file, then the next request (reads only the
  appended bytes, turns that file into columns again and joins the table), ``--appends`` times.

Goal: render p50 under 200 ms at 100,000 episodes. ``--append`` files the run in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section, load, percentile, snapshot_path, snapshot_phrase  # noqa: E402

from stillweb.envs.core.degenerate import ACTION_FLAGS  # noqa: E402
from stillweb.corpora.canonical import canonical_json  # noqa: E402

ENV_IDS = ("stillweb/WikiQA-v0", "stillweb/Lookup-v0")
TRUNCATIONS = ("max_turns", "max_tool_calls", "context_tokens")
TOOL_FLAGS = ("bad_arguments", "not_found", "empty_result")
GENERATOR = 2  # bump when write_synthetic_run writes other bytes (recordings under --dir are reused by name)


class _Draws:
    """Numbers drawn from blake2b of a key (the seeded, order-free randomness the architecture asks for)."""

    def __init__(self, *key: object) -> None:
        self.digest = hashlib.blake2b("/".join(map(str, key)).encode(), digest_size=64).digest()
        self.position = 0

    def below(self, bound: int) -> int:
        """A number in ``0 .. bound - 1``."""
        value = int.from_bytes(self.digest[self.position:self.position + 2], "big")
        self.position = (self.position + 2) % 62
        return value % bound


def write_synthetic_run(directory: Path, episodes: int, files: int, fingerprint: str, seed: int = 0,
                        tasks: int = 2000, observation_chars: int = 400) -> list[Path]:
    """``files`` recordings in ``directory`` (``run-000.jsonl``, ...) holding ``episodes`` episodes in all.

    The same arguments write the same bytes. Headers carry ``fingerprint`` as their snapshot's.
    """
    directory.mkdir(parents=True, exist_ok=True)
    filler = ("lorem ipsum dolor sit amet " * (observation_chars // 27 + 1))[:observation_chars]
    paths = []
    for file in range(files):
        path = directory / f"run-{file:03d}.jsonl"
        count = episodes // files + (1 if file < episodes % files else 0)
        env_id = ENV_IDS[file % len(ENV_IDS)]
        lines = [canonical_json({"type": "header", "env_id": env_id, "kwargs": {"tasks": "default", "max_turns": 8},
                                 "package_version": "bench", "snapshot": "synthetic", "snapshot_fingerprint": fingerprint})]
        for episode in range(count):
            lines.extend(_episode_lines(_Draws(seed, file, episode), env_id, file * 1_000_000 + episode, tasks, filler))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def _episode_lines(draw: _Draws, env_id: str, number: int, tasks: int, filler: str) -> list[str]:
    task_id = f"sw-{draw.below(tasks):05d}"
    turns = 1 + draw.below(8)
    ending = draw.below(100)
    ending = "terminated" if ending < 62 else "truncated" if ending < 97 else "unfinished"
    outcome = 1.0 if draw.below(2) else 0.0
    policy_version = number % 1_000_000 // 50
    lines = [canonical_json({"type": "reset", "seed": number, "options": {"task_id": task_id}, "observation": filler,
                             "info": {"task_id": task_id, "env_id": env_id}})]
    for turn in range(1, turns + 1):
        last = turn == turns and ending != "unfinished"
        action_flags = [flag for flag in ACTION_FLAGS if draw.below(40) == 0]
        tool_flag = TOOL_FLAGS[draw.below(len(TOOL_FLAGS))] if draw.below(10) == 0 else None
        info = {"task_id": task_id, "env_id": env_id, "action_flags": action_flags, "tool_flags": [tool_flag]}
        reward = 0.0
        if last:
            truncation = TRUNCATIONS[draw.below(len(TRUNCATIONS))] if ending == "truncated" else None
            info.update(outcome=outcome if ending == "terminated" else 0.0, truncation_reason=truncation,
                        termination_reason="answered" if ending == "terminated" else None,
                        episode_stats={"turns": turns, "action_chars": 40 * turns})
            reward = (outcome + 0.1 * draw.below(3)) if ending == "terminated" else 0.05 * draw.below(3)
        lines.append(canonical_json({"type": "step", "action": f"<tool_call>search {turn}</tool_call>", "observation": filler,
                                     "reward": reward, "terminated": last and ending == "terminated",
                                     "truncated": last and ending == "truncated", "info": info,
                                     "policy_version": policy_version}))
    return lines


def request_mix(choices: dict[str, tuple[str, ...]], pages: int) -> list[str]:
    """The timed /view/episodes requests: every sort key both ways, each filter, paging, combinations."""
    from stillweb.server.viewer.run_query import SORT_KEYS

    urls = [f"/view/episodes?sort={key}&order={order}" for key in SORT_KEYS for order in ("asc", "desc")]
    for name in ("file", "task", "env", "outcome", "truncation", "flag", "policy"):
        values = [value for value in choices[name] if value != "none"]
        if values:
            urls.append(f"/view/episodes?{name}={values[len(values) // 2]}")
    urls += ["/view/episodes?ending=truncated", "/view/episodes?ending=terminated&sort=reward&order=desc",
             f"/view/episodes?page={min(2, pages)}", f"/view/episodes?page={pages}", f"/view/episodes?sort=turns&order=desc&page={min(3, pages)}",
             "/view/episodes?reward_min=1&turns_max=4&sort=task", "/view/episodes?flag=near_miss_call&sort=flags&order=desc",
             "/view/episodes?ending=truncated&truncation=max_turns&sort=policy&order=desc"]
    return urls


def json_parse_seconds(paths: list[Path]) -> float:
    """Seconds to read and json-parse every line of ``paths`` (the cold index's baseline)."""
    started = time.perf_counter()
    for path in paths:
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                json.loads(line)
    return time.perf_counter() - started


def run_directory(args: argparse.Namespace, episodes: int, files: int, fingerprint: str) -> tuple[Path, list[Path], bool]:
    """The recordings of ``episodes`` episodes and whether they were written now (they are written once per
    parameters; a marker file says they are complete)."""
    directory = Path(args.dir) / f"runs-v{GENERATOR}-{episodes}-{files}-s{args.seed}-{fingerprint[:8]}"
    done = directory.with_suffix(".done")
    if done.exists():
        return directory, sorted(directory.glob("*.jsonl")), False
    paths = write_synthetic_run(directory, episodes, files, fingerprint, seed=args.seed)
    done.write_text("complete\n", encoding="utf-8")
    return directory, paths, True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--snapshot", help="an existing snapshot to view (else a small synthetic one is built under --dir)")
    parser.add_argument("--articles", type=int, default=300, help="articles of the built snapshot (default 300)")
    parser.add_argument("--dir", default="/tmp/bench-viewer", help="where the snapshot and the recordings are written")
    parser.add_argument("--episodes", type=int, default=100_000, help="episodes of the measured run (default 100,000)")
    parser.add_argument("--files", type=int, default=100, help="recording files they are spread over (default 100)")
    parser.add_argument("--baseline-episodes", type=int, default=1000, help="episodes of the baseline run (default 1,000)")
    parser.add_argument("--rounds", type=int, default=10, help="passes over the request mix (default 10)")
    parser.add_argument("--cold-runs", type=int, default=2, help="fresh apps timed for the cold index, best kept (default 2)")
    parser.add_argument("--appends", type=int, default=5, help="episodes appended one at a time for the live-run figure (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic recordings (default 0)")
    parser.add_argument("--append", action="store_true", help="file the run in BENCHMARKS.md")
    args = parser.parse_args()

    from fastapi.testclient import TestClient

    from stillweb.corpora.snapshot.reading import Snapshot
    from stillweb.server.viewer import ViewerConfig, make_viewer_app

    snapshot = snapshot_path(args)
    fingerprint = Snapshot.open(snapshot).fingerprint
    started = time.perf_counter()
    big_dir, big_paths, written = run_directory(args, args.episodes, args.files, fingerprint)
    small_dir, _, _ = run_directory(args, args.baseline_episodes, max(1, args.files // 10), fingerprint)
    write_seconds = time.perf_counter() - started
    megabytes = sum(path.stat().st_size for path in big_paths) / 2**20
    load_before = load()

    parse_times, cold_times = [], []
    for _ in range(args.cold_runs):  # interleaved, best of each: load from other work hits both alike
        parse_times.append(json_parse_seconds(big_paths))
        client = TestClient(make_viewer_app(ViewerConfig(snapshot, episodes=(big_dir,))))
        tick = time.perf_counter()
        response = client.get("/view/episodes")
        cold_times.append(time.perf_counter() - tick)
        assert response.status_code == 200, response.text[:2000]
    parse_seconds, cold_seconds = min(parse_times), min(cold_times)
    clients = {"big": client, "small": TestClient(make_viewer_app(ViewerConfig(snapshot, episodes=(small_dir,))))}
    assert clients["small"].get("/view/episodes").status_code == 200

    from stillweb.server.viewer.runs import PAGE_ROWS, RunIndex, TrajectoryFiles

    mixes = {}
    for label, directory, episodes in (("big", big_dir, args.episodes), ("small", small_dir, args.baseline_episodes)):
        table = RunIndex(TrajectoryFiles([directory]), fingerprint).table()
        mixes[label] = request_mix(table.choices, max(1, -(-episodes // PAGE_ROWS)))
    wall: dict[str, list[float]] = {"big": [], "small": []}
    cpu: dict[str, list[float]] = {"big": [], "small": []}
    for _ in range(args.rounds):
        for position in range(max(len(mixes["big"]), len(mixes["small"]))):
            for label in ("small", "big"):
                url = mixes[label][position % len(mixes[label])]
                tick, tock = time.perf_counter(), time.process_time()
                response = clients[label].get(url)
                cpu[label].append(time.process_time() - tock)
                wall[label].append(time.perf_counter() - tick)
                assert response.status_code == 200, (url, response.text[:2000])

    appended = big_paths[0]
    size = appended.stat().st_size
    append_times = []
    for number in range(args.appends):
        with appended.open("a", encoding="utf-8") as file:
            file.write("\n".join(_episode_lines(_Draws(args.seed, "appended", number), ENV_IDS[0], 999_999, 2000, "x" * 400)) + "\n")
        tick = time.perf_counter()
        assert clients["big"].get("/view/episodes?sort=reward&order=desc").status_code == 200
        append_times.append(time.perf_counter() - tick)
    os.truncate(appended, size)  # the recordings stay those of the parameters, for the next run

    def ms(values: list[float], q: float) -> float:
        return 1000 * percentile(values, q)

    ratio = ms(wall["big"], 50) / ms(wall["small"], 50)
    lines = [
        f"- load: {load_before}",
        f"- recordings: {args.episodes:,} episodes in {args.files} files, {megabytes:,.0f} MiB"
        f" ({f'written in {write_seconds:.1f} s' if written else 'written by an earlier run'}, `$SCRATCH/{big_dir.name}`); baseline run {args.baseline_episodes:,} episodes; "
        f"snapshot {snapshot_phrase(snapshot)}",
        f"- requests: {len(mixes['big'])} URLs x {args.rounds} rounds per run, interleaved (TestClient, in-process ASGI)",
        "",
        "| figure | value | baseline (same run) | ratio |",
        "|---|---|---|---|",
        f"| cold index (first request, reads every file; best of {args.cold_runs}), {args.episodes:,} episodes | {cold_seconds:.2f} s"
        f" | json-parsing every line {parse_seconds:.2f} s | {cold_seconds / parse_seconds:.2f}x |",
        f"| render p50 / p95 wall, {args.episodes:,} episodes | {ms(wall['big'], 50):.1f} / {ms(wall['big'], 95):.1f} ms"
        f" | {args.baseline_episodes:,} episodes {ms(wall['small'], 50):.1f} / {ms(wall['small'], 95):.1f} ms | {ratio:.2f}x p50 |",
        f"| render p50 / p95 CPU, {args.episodes:,} episodes | {ms(cpu['big'], 50):.1f} / {ms(cpu['big'], 95):.1f} ms"
        f" | {args.baseline_episodes:,} episodes {ms(cpu['small'], 50):.1f} / {ms(cpu['small'], 95):.1f} ms"
        f" | {ms(cpu['big'], 50) / ms(cpu['small'], 50):.2f}x p50 |",
        f"| request after one episode is appended (live run), {args.episodes:,} episodes, p50 / max of {args.appends}"
        f" | {ms(append_times, 50):.0f} / {1000 * max(append_times):.0f} ms | - | - |",
    ]
    body = "\n".join(lines)
    print(body)
    if args.append:
        append_section(f"Viewer runs table: {args.episodes:,} episodes", body)


if __name__ == "__main__":
    main()
