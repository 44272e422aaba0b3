"""Helpers shared by the Ray tests: tasks, recorded agent scripts, in-process recordings."""

from __future__ import annotations

import bz2
from pathlib import Path

import gymnasium as gym

from support.paths import WIKI_SAMPLE

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.envs import RandomTextAgent, RecordEpisodes, ReferenceAgent
from support.snapshots import fact_tasks

ENV_ID = "stillweb/WikiQA-v0"


def env_kwargs_for(snapshot: Path, tasks: int = 6) -> dict:
    """Kwargs of a short-episode WikiQA env over ``snapshot`` with one-hop fact tasks."""
    return {"snapshot": str(snapshot), "tasks": fact_tasks(snapshot, tasks), "max_turns": 6}


def agent_scripts(env_kwargs: dict, count: int) -> list[tuple[str, int, list[str]]]:
    """(task id, seed, actions) for the first ``count`` tasks: a reference agent on even, random text on odd."""
    scripts = []
    for index, task in enumerate(env_kwargs["tasks"][:count]):
        env = gym.make(ENV_ID, **env_kwargs)
        observation, _info = env.reset(seed=index, options={"task_id": task["task_id"]})
        agent = ReferenceAgent(env.unwrapped.tasks.by_id(task["task_id"])) if index % 2 == 0 else RandomTextAgent(index)
        actions, done = [], False
        while not done:
            actions.append(agent.act(observation))
            observation, _reward, terminated, truncated, _info = env.step(actions[-1])
            done = terminated or truncated
        scripts.append((task["task_id"], index, actions))
    return scripts


def recorded_lines(env: gym.Env, path: Path, seed: int, task_id: str, actions: list[str]) -> list[str]:
    """The recording (JSONL lines) of one scripted episode of ``env``."""
    recorder = RecordEpisodes(env, path)
    recorder.reset(seed=seed, options={"task_id": task_id})
    for action in actions:
        recorder.step(action)
    recorder.close()
    return path.read_text(encoding="utf-8").splitlines()


def multistream_copy(shared_data: Path, folder: Path) -> Path:
    """The real sample recompressed as Wikipedia's multistream dumps are (they hold 100 pages per bzip2 stream; 50 here)."""
    xml = bz2.decompress((shared_data / WIKI_SAMPLE).read_bytes())
    pages = xml.split(b"<page>")
    chunks = [pages[0]] + [b"<page>" + b"<page>".join(pages[i:i + 50]) for i in range(1, len(pages), 50)]
    assert b"".join(chunks) == xml and len(chunks) > 3
    path = folder / "sample-multistream.xml.bz2"
    path.write_bytes(b"".join(bz2.compress(chunk) for chunk in chunks))
    return path


def same_snapshot(local, sharded) -> None:
    """Two builds made the same snapshot: fingerprint, table bytes, and manifest but for its name and file list."""
    assert local.manifest["fingerprint"] == sharded.manifest["fingerprint"]
    for name in ("docs.parquet", "facts.parquet", "links.parquet", "redirects.parquet"):
        assert (local.path / name).read_bytes() == (sharded.path / name).read_bytes(), name
    kept = lambda manifest: {key: value for key, value in manifest.items() if key not in ("name", "files")}  # noqa: E731
    assert kept(local.manifest) == kept(sharded.manifest)


def row_corpus(folder: Path, rows: int = 400) -> list[Path]:
    """A JSON-lines file (with a blank line, a non-JSON row, a bad-UTF-8 row, a row without a title) and a parquet file of
    several row groups: a row corpus that shards into byte ranges and row groups."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"id": f"j{i}", "title": f"Jay {i}", "text": f"Jay {i} lives by river {i % 7}. " * 6}).encode()
             for i in range(rows)]
    lines[17], lines[123] = b"{not json", b'{"id": "x", "text": "\xff\xfe"}'
    lines[200] = json.dumps({"id": "untitled", "text": "A row without a title."}).encode()
    lines.insert(50, b"")
    jsonl = folder / "a.jsonl"
    jsonl.write_bytes(b"\n".join(lines) + b"\n")
    table = pa.table({"id": [f"p{i}" for i in range(rows)], "title": [f"Pea {i}" for i in range(rows)],
                      "text": [f"Pea {i} grows near hill {i % 5}." for i in range(rows)]})
    parquet = folder / "b.parquet"
    pq.write_table(table, parquet, row_group_size=rows // 4)
    return [jsonl, parquet]


def assert_pool_matches_in_process(env_id: str, kwargs: dict, other_agent, seeds: int = 4) -> None:
    """Four episodes of ``env_id`` (the reference agent on even seeds, ``other_agent(seed)`` on odd ones) played
    in-process, then replayed action for action on an :class:`~stillweb.envs.ray.EnvPool` of 2 actors: every
    reset and step result must be the same canonical JSON."""
    from stillweb.corpora.canonical import canonical_json
    from stillweb.envs.ray import EnvPool

    scripts, expected = [], []
    for seed in range(seeds):
        env = gym.make(env_id, **kwargs)
        observation, info = env.reset(seed=seed)
        episode = [canonical_json((observation, info))]
        agent = ReferenceAgent(env.unwrapped.tasks.by_id(info["task_id"])) if seed % 2 == 0 else other_agent(seed)
        actions, done = [], False
        while not done:
            actions.append(agent.act(observation))
            result = env.step(actions[-1])
            observation, done = result[0], result[2] or result[3]
            episode.append(canonical_json(result))
        scripts.append(actions)
        expected.append(episode)
    pool = EnvPool(env_id, seeds, envs_per_actor=2, env_kwargs=kwargs)
    try:
        got = [[canonical_json(result)] for result in pool.run([("reset", seed, None) for seed in range(seeds)])]
        for turn in range(max(map(len, scripts))):
            batch = [("step", actions[turn]) if turn < len(actions) else None for actions in scripts]
            for index, result in enumerate(pool.run(batch)):
                if result is not None:
                    got[index].append(canonical_json(result))
        assert got == expected
    finally:
        pool.close()


def ray_work_log(monkeypatch, folder: Path):
    """Have the Ray work of sharded builds (``stillweb.corpora.build.on_ray``'s shard readers, ``in_shards``' shard
    builds), of shard actors' searches and of ``tasks generate --ray`` (its ``AttemptWorker`` actors' batches) note where it ran: each call writes ``{"node", "pid", "what"}`` to a
    file of ``folder`` (the nodes of a ``ray.cluster_utils.Cluster`` share this machine's disk). Returns a function
    that reads the notes. A build that ignored ``on_ray`` would leave none; work in the driver would note its pid."""
    import json

    from stillweb.corpora.build import in_shards, on_ray
    from stillweb.corpora.search import shard_actors
    from stillweb.corpora.tasks.compose import on_ray as ray_attempts

    folder.mkdir(parents=True, exist_ok=True)
    where = str(folder)

    def note(what: str) -> None:  # runs in a Ray worker: defined here, so Ray ships it by value
        import os

        import ray

        context = ray.get_runtime_context()
        with open(os.path.join(where, f"{what}-{context.get_task_id()}"), "x", encoding="utf-8") as out:
            json.dump({"node": context.get_node_id(), "pid": os.getpid(), "what": what}, out)

    def noted(parse, what: str):
        def run(shard, *args):
            note(what)
            return parse(shard, *args)
        return run

    class NotedAttemptWorker(ray_attempts.AttemptWorker):
        def run(self, indexes):
            note("attempts")
            return super().run(indexes)

    class NotedShardSearcher(shard_actors.ShardSearcher):
        def search_many(self, *args):
            note("shard_search")
            return super().search_many(*args)

    monkeypatch.setattr(in_shards, "_build_shard", noted(in_shards._build_shard, "shard_build"))
    monkeypatch.setattr(shard_actors, "ShardSearcher", NotedShardSearcher)
    monkeypatch.setattr(on_ray, "_parse_dump_shard", noted(on_ray._parse_dump_shard, "dump_shard"))
    monkeypatch.setattr(on_ray, "_read_row_shard", noted(on_ray._read_row_shard, "row_shard"))
    monkeypatch.setattr(ray_attempts, "AttemptWorker", NotedAttemptWorker)
    return lambda: [json.loads(path.read_text(encoding="utf-8")) for path in sorted(folder.iterdir())]
