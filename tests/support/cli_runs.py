"""Every ``stillweb`` command that prints, with arguments that work, and ways to run one as a user would
(a reader that closed the pipe, Ctrl-C at a terminal): the pipe and interrupt tests of tests/cli/."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

# What a terminal's Ctrl-C does, at a moment the test chooses: the first write to STREAM (stdout or
# stderr: a progress line, mid-work) sends SIGINT to the whole process group (the command and its
# worker processes), then main() runs as the installed `stillweb` script does.
INTERRUPT_AT_FIRST_WRITE = """
import os, signal, sys
from stillweb.cli.main import main

class FirstWriteInterrupts:
    def __init__(self, stream):
        self.stream, self.fired = stream, False
    def write(self, text):
        if not self.fired and text:
            self.fired = True
            os.killpg(0, signal.SIGINT)
        return self.stream.write(text)
    def __getattr__(self, name):
        return getattr(self.stream, name)

name = sys.argv[1]
setattr(sys, name, FirstWriteInterrupts(getattr(sys, name)))
sys.exit(main(sys.argv[2:]))
"""

# Each printing command: (test id, argv with {snap}, {apps}, {rec}, {store}, {store2}, {usage}, {dump}, {corpus},
# {queries}, {qrels}, {dense}, {vectors}, {qa}, {policy} and {out} filled in). {out} is a fresh path per run, so commands that write can run
# more than once. Commands of an extra are in EXTRA_COMMANDS (test id -> the module they need).
PRINTING_COMMANDS = [
    ("info", ["info", "{snap}"]),
    ("info-json", ["info", "{snap}", "--json"]),
    ("verify", ["verify", "{snap}"]),
    ("graph-stats", ["graph", "stats", "{snap}"]),
    ("build", ["build", "synthetic", "--articles", "30", "--seed", "1", "--out", "{out}"]),
    ("build-wikipedia", ["build", "wikipedia", "{dump}", "--out", "{out}", "--workers", "1"]),
    ("build-corpus", ["build", "corpus", "{corpus}", "--out", "{out}", "--workers", "1"]),
    ("build-parquet", ["build", "parquet", "{corpus}", "--out", "{out}", "--workers", "1"]),
    ("build-dense", ["build", "dense", "{dense}", "--model", "seeded-8d", "--vectors", "{vectors}"]),
    ("eval-retrieval", ["eval", "retrieval", "{snap}", "--queries", "{queries}", "--qrels", "{qrels}", "--k", "10"]),
    ("quickstart", ["quickstart", "--out", "{snap}", "--articles", "300", "--seed", "0", "--episodes", "1"]),
    ("tasks-generate", ["tasks", "generate", "{snap}", "--name", "{name}", "--count", "2", "--verify", "0"]),
    ("tasks-show", ["tasks", "show", "{snap}", "hard"]),
    ("tasks-stats", ["tasks", "stats", "{snap}", "hard"]),
    ("tasks-verify", ["tasks", "verify", "{snap}", "hard"]),
    ("tasks-export", ["tasks", "export", "{snap}", "hard", "--format", "jsonl", "--out", "{out}"]),
    ("tasks-profile", ["tasks", "profile", "{snap}", "hard", "--agent", "reference", "-k", "1", "--policy-name", "{name}"]),
    ("tasks-filter", ["tasks", "filter", "{snap}", "hard", "--profile", "reference", "--pass-rate", "0:1", "--out", "{name}"]),
    ("tasks-reverify", ["tasks", "reverify", "{snap}", "hard", "--profile", "reference"]),
    ("tasks-polish", ["tasks", "polish", "{snap}", "hard", "--policy", "{policy}", "--out", "{name}"]),
    ("tasks-import", ["tasks", "import", "{snap}", "{qa}", "--format", "plain", "--name", "{name}"]),
    ("apps-generate", ["apps", "generate", "{apps}", "--name", "{name}", "--count", "9", "--no-verify"]),
    ("apps-verify", ["apps", "verify", "{apps}", "core"]),
    ("apps-export", ["apps", "export", "{apps}", "core", "--out", "{out}"]),
    ("replay", ["replay", "{rec}"]),
    ("health", ["health", "{rec}"]),
    ("check", ["check", "stillweb/WikiQA-v0", "--snapshot", "{snap}", "--tasks", "hard", "--max-tasks", "2"]),
    ("freeze-info", ["freeze", "info", "{store}", "--usage", "{usage}"]),
    ("freeze-verify", ["freeze", "verify", "{store}"]),
    ("freeze-merge", ["freeze", "merge", "{store}", "{store2}", "--out", "{out}"]),
    ("freeze-prune", ["freeze", "prune", "{store}", "--used", "{usage}", "--out", "{out}"]),
    ("bfcl-card", ["bfcl", "card", "--category", "multi_turn_base"]),
    ("bfcl-export", ["bfcl", "export", "{out}", "--category", "multi_turn_base", "--tasks", "multi_turn_base_0"]),
    ("help", ["tasks", "--help"]),
]
EXTRA_COMMANDS = {"eval-retrieval": "ir_measures", "bfcl-card": "bfcl_eval", "bfcl-export": "bfcl_eval"}

# Commands that serve until stopped: their Ctrl-C is their normal stop (tests/cli/test_pipes_and_interrupts.py
# starts each, waits until it answers, interrupts it), with the argv and the path that answers once it is up.
SERVERS = {
    "serve": (["serve", "{snap}", "--port", "{port}"], "health"),
    "view": (["view", "{snap}", "--port", "{port}"], "view/"),
    "mcp": (["mcp", "{snap}", "--http", "--port", "{port}"], "mcp"),
    "freeze serve": (["freeze", "serve", "{store}", "--port", "{port}"], "health"),
    "freeze record": (["freeze", "record", "--upstream", "http://127.0.0.1:9", "--out", "{out}", "--port", "{port}"],
                      "health"),
}


def leaf_commands() -> list[str]:
    """Every ``stillweb`` command that runs (``tasks show``...), as the parser knows them."""
    import argparse

    from stillweb.cli.main import make_parser

    def leaves(parser, words):
        actions = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
        if not actions:
            return [" ".join(words)]
        return [leaf for name, sub in actions[0].choices.items() for leaf in leaves(sub, [*words, name])]

    return leaves(make_parser(), [])


def command_words(argv: list[str]) -> str:
    """The command an argv runs (``tasks show``): its longest prefix that is a command."""
    commands = set(leaf_commands())
    return next((" ".join(argv[:end]) for end in range(len(argv), 0, -1) if " ".join(argv[:end]) in commands), "")


def make_workspace(folder: Path, tasks_snapshot: Path, policy_url: str) -> dict[str, str]:
    """Inputs for every command of :data:`PRINTING_COMMANDS` under ``folder``: a copy of the tasks snapshot
    (with a reference profile and a small app task set ``core``), a recording, two frozen stores, a small
    MediaWiki dump, a jsonl corpus, queries and qrels; ``policy_url``: a chat endpoint for ``tasks polish``."""
    import gymnasium as gym

    import stillweb.envs  # noqa: F401 - registers the environments
    from stillweb.corpora.apps.tasks import generate_app_tasks
    from stillweb.envs import RecordEpisodes, ReferenceAgent, run_episode
    from stillweb.envs.profiles import PolicySpec, ProfileRun, profile_tasks
    from stillweb.sandboxes.frozen.store import FrozenStore, canonical_request

    snap = folder / "snap"
    shutil.copytree(tasks_snapshot, snap)
    profile_tasks(ProfileRun(str(snap), "hard", PolicySpec("reference", "reference"), k=1, splits=("train",)))
    apps = folder / "apps"
    shutil.copytree(tasks_snapshot, apps)
    generate_app_tasks(apps, "core", 9)
    recording = folder / "run.jsonl"
    env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot=str(snap), tasks="hard"), recording)
    try:
        run_episode(env, lambda task: ReferenceAgent(task), seed=0)
    finally:
        env.close()
    stores = []
    for name, queries in (("store", ("a", "b")), ("store2", ("b", "c"))):
        store = FrozenStore.create(folder / name, "http", "http://127.0.0.1:9/")
        records = [store.add(canonical_request("POST", "/search", body={"q": q}), {"status": 200, "body": json.dumps([q])})
                   for q in queries]
        store.write_manifest()
        stores.append(records)
    usage = folder / "usage.jsonl"
    usage.write_text(json.dumps({"key": stores[0][0]["key"], "source": "store"}) + "\n", encoding="utf-8")
    return {"snap": str(snap), "apps": str(apps), "rec": str(recording), "store": str(folder / "store"),
            "store2": str(folder / "store2"), "usage": str(usage), "policy": policy_url, **_corpus_files(folder, snap)}


def _corpus_files(folder: Path, snap: Path) -> dict[str, str]:
    """A two-page MediaWiki dump, a 40-row jsonl corpus, two queries with qrels and three plain QA rows over
    ``snap``, and a copy of ``snap`` with seeded 8-dimension vectors for its documents."""
    import numpy

    from stillweb.corpora.snapshot.records import RawPage
    from stillweb.corpora.snapshot.reading import Snapshot
    from stillweb.corpora.synthetic import write_xml_dump

    dump = folder / "dump.xml"
    write_xml_dump([RawPage("Alpha", "Alpha is a [[Beta|river]] town."), RawPage("Beta", "Beta is a river.")], dump)
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "title": f"Doc {i}", "text": f"river {i} town"}) + "\n"
                              for i in range(40)), encoding="utf-8")
    snapshot = Snapshot.open(snap)
    queries, qrels = folder / "queries.tsv", folder / "qrels.tsv"
    queries.write_text("".join(f"q{i}\t{snapshot.title_of(i)}\n" for i in range(2)), encoding="utf-8")
    qrels.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\t{snapshot.source_id_of(i)}\t1\n" for i in range(2)),
                     encoding="utf-8")
    qa = folder / "qa.jsonl"
    qa.write_text("".join(json.dumps({"question": f"What is {snapshot.title_of(i)}?", "answer": snapshot.title_of(i)}) + "\n"
                          for i in range(3)), encoding="utf-8")
    dense, vectors = folder / "dense", folder / "vectors.npz"  # build dense rewrites its snapshot: a copy of its own
    shutil.copytree(snap, dense)
    ids = [snapshot.source_id_of(doc_id) for doc_id in range(len(snapshot))]
    numpy.savez(vectors, ids=numpy.array(ids), vectors=numpy.random.default_rng(0).standard_normal((len(ids), 8), "float32"))
    return {"dump": str(dump), "corpus": str(corpus), "queries": str(queries), "qrels": str(qrels), "dense": str(dense),
            "vectors": str(vectors), "qa": str(qa)}


def fill(argv: list[str], workspace: dict[str, str], out: Path) -> list[str]:
    """``argv`` with the workspace's paths, ``{out}`` a fresh path and ``{name}`` a fresh task-set name."""
    values = {**workspace, "out": str(out), "name": out.name.replace(".", "-")}
    return [word.format(**values) for word in argv]


def run_into_closed_pipe(argv: list[str]) -> subprocess.CompletedProcess:
    """Run ``stillweb ARGV`` with stdout a pipe whose reader has already gone (``| head -0``, deterministically)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "stillweb.cli.main", *argv], stdout=write_end, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, text=True, timeout=300)
    finally:
        os.close(write_end)


def run_interrupted(argv: list[str], stream: str = "stdout") -> subprocess.CompletedProcess:
    """Run ``stillweb ARGV`` in its own process group; Ctrl-C (SIGINT to the group) at its first write to ``stream``."""
    return subprocess.run([sys.executable, "-c", INTERRUPT_AT_FIRST_WRITE, stream, *argv], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, start_new_session=True, timeout=300)
