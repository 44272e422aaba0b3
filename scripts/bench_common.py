"""Helpers shared by the benchmark scripts: machine description, load, timing, percentiles, appending to BENCHMARKS.md,
and naming snapshots by how to rebuild them (a record never names a path of the machine it ran on)."""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
BENCHMARKS = REPO / "BENCHMARKS.md"


def machine() -> str:
    """One line describing this machine (CPU model, cores, memory, Python)."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f"{mem_kb / 2**20:.0f} GiB"
    except OSError:
        memory = "?"
    return f"{cpu}, {os.cpu_count()} cores, {memory}, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def free_port() -> int:
    """A free TCP port on loopback (for a benchmark's server)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def load() -> str:
    """The load averages now, as a phrase for a run's notes (figures on a loaded machine are read beside it)."""
    return "load average " + " / ".join(f"{value:.1f}" for value in os.getloadavg()) + " (1/5/15 min)"


def snapshot_path(args: Any) -> Path:
    """The snapshot a benchmark runs on: ``args.snapshot``, or a synthetic world of ``args.articles``
    articles (seed 0) built once under ``args.dir`` and reused by later runs."""
    if args.snapshot:
        return Path(args.snapshot)
    path = Path(args.dir) / f"synthetic-{args.articles}-s0"
    if not (path / "manifest.json").exists():
        from stillweb.corpora.build.from_source import build_synthetic

        build_synthetic(args.articles, 0, path, workers=1, progress=False)
    return path


def rebuild_command(manifest: dict) -> str:
    """The ``stillweb build`` command that rebuilds a snapshot, read from its manifest, with ``--out snapshots/NAME``
    (its name); a format 3 copy (:func:`format_3_copy`) and a dense index are named after it.

    >>> rebuild_command({"name": "syn-30k", "source": {"kind": "synthetic", "articles": 30000, "seed": 0},
    ...                  "parameters": {"passage_words": 100}, "index": {}})
    'stillweb build synthetic --articles 30000 --seed 0 --passages 100 --out snapshots/syn-30k'
    >>> rebuild_command({"name": "wiki", "source": {"kind": "wikipedia-xml", "file": "enwiki.xml.bz2"},
    ...                  "parameters": {"skip_bad": True}, "index": {}})
    'stillweb build wikipedia enwiki.xml.bz2 --skip-bad --out snapshots/wiki'
    """
    source, parameters, index = manifest.get("source", {}), manifest.get("parameters", {}), manifest.get("index", {})
    kind = source.get("kind")
    if kind == "synthetic":
        words = ["synthetic", f"--articles {source['articles']}", f"--seed {source['seed']}"]
        words += [f"--dump-style {source['dump_style']}"] if source.get("dump_style") else []
    elif kind == "wikipedia-xml":
        words = ["wikipedia", source["file"], *(["--skip-bad"] if parameters.get("skip_bad") else []),
                 *([f"--script {parameters['script']}"] if parameters.get("script") else [])]
    elif kind == "rows":
        words = ["corpus", *source["files"], f"--format {source['format']}",
                 *([f"--dedupe {parameters['dedupe']}"] if parameters.get("dedupe", "none") != "none" else [])]
    else:
        return f"a snapshot built from {json.dumps(source, sort_keys=True)} (no rebuild command known)"
    words += [f"--language {index['analyzer']['language']}"] if index.get("analyzer") else []
    words += [f"--passages {parameters['passage_words']}"] if parameters.get("passage_words") else []
    command = "stillweb build " + " ".join(words) + f" --out snapshots/{manifest['name']}"
    if manifest.get("format", "").endswith("/3") and manifest["name"].endswith("-format3"):
        command += " (then bench_common.format_3_copy, as a format 3 index)"
    if manifest.get("dense"):
        command += f"; stillweb build dense snapshots/{manifest['name']} --model {manifest['dense']['model']}"
    return command


def snapshot_phrase(path: str | Path) -> str:
    """A snapshot named for a record: ``snapshots/NAME`` (``rebuild command``), never the path it has here."""
    manifest = json.loads((Path(path) / "manifest.json").read_text(encoding="utf-8"))
    return f"`snapshots/{manifest['name']}` (`{rebuild_command(manifest)}`)"


def recorded_command(argv: list[str], cwd: Path | None = None) -> tuple[str, list[str]]:
    """``(the command line, notes)`` to record for ``argv``: a snapshot argument becomes ``snapshots/NAME``, with a note
    of how to rebuild it; any other absolute path becomes relative to ``cwd`` (the repository) when it is inside it or
    in the shared data beside it (``../shared/data/...``), else ``$SCRATCH/<its name>`` (a scratch folder)."""
    cwd = (cwd or REPO).resolve()
    words, notes = [], []
    for word in argv:
        option, equals, value = word.partition("=") if word.startswith("--") and "=" in word else ("", "", word)
        path = Path(value)
        if value and (path / "manifest.json").is_file():
            manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
            value = f"snapshots/{manifest['name']}"
            notes.append(f"- snapshot `{value}`: `{rebuild_command(manifest)}`")
        elif path.is_absolute():
            near = os.path.relpath(path, cwd)
            value = near if path.is_relative_to(cwd) or path.is_relative_to(cwd.parent / "shared") else f"$SCRATCH/{path.name}"
        words.append(option + equals + value)
    return " ".join(words), list(dict.fromkeys(notes))


def format_3_copy(snapshot: Any) -> Any:
    """The same pages as a format 3 snapshot indexed them (one document per page; built once beside the
    snapshot as ``<name>-format3``): the page ranking before issue 43, for a row of the same run."""
    from stillweb.corpora.search.index import INDEX_PARAMETERS
    from stillweb.corpora.snapshot.reading import Snapshot
    from stillweb.corpora.build.snapshot_writer import copy_with_index

    path = snapshot.path.with_name(snapshot.path.name + "-format3")
    if not (path / "manifest.json").exists():
        copy_with_index(snapshot.path, path, INDEX_PARAMETERS, "stillweb-snapshot/3")
    return Snapshot.open(path)


def timed_ms(into: tuple[list[float], list[float]], function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``function(*args, **kwargs)``, append its wall time and its thread CPU time (ms) to ``into``,
    and return its result: on a loaded machine the CPU time leaves out the waits for a core, which
    fall on long calls more than on short ones.

    >>> into = ([], [])
    >>> timed_ms(into, sum, [1, 2]), len(into[0]), len(into[1])
    (3, 1, 1)
    """
    wall, cpu = time.perf_counter(), time.thread_time()
    result = function(*args, **kwargs)
    into[0].append((time.perf_counter() - wall) * 1e3)
    into[1].append((time.thread_time() - cpu) * 1e3)
    return result


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by nearest rank."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[rank]


def append_section(title: str, body: str) -> None:
    """File a dated run (machine, load average, command, how to rebuild its snapshots: :func:`recorded_command`)
    under its area in BENCHMARKS.md's history and echo it.

    The area is the title up to its first ``:``, ``,`` or ``(`` ("Search latency: synthetic
    100,000 articles" -> "Search latency"); a new area is added at the end. The table of
    current figures at the top is edited by hand from the printed run.
    """
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=REPO).stdout.strip()
    except OSError:
        commit = "?"
    command, snapshots = recorded_command(sys.argv[1:])
    command = f"python {os.path.relpath(sys.argv[0], REPO)} {command}".rstrip()
    body = re.sub(r"^### ", "##### ", body.strip(), flags=re.M)
    run = (f"#### {title} ({now})\n\n- date: {now}\n- machine: {machine()}\n- {load()} when filed\n- commit: {commit}\n"
           f"- command: `{command}`\n" + "".join(f"{note}\n" for note in snapshots) + f"\n{body}\n")
    text = BENCHMARKS.read_text(encoding="utf-8") if BENCHMARKS.exists() else "# Benchmarks\n\n## History\n"
    BENCHMARKS.write_text(file_run(text, area_of(title), run), encoding="utf-8")
    print(run)


def area_of(title: str) -> str:
    """The history area of a run title.

    >>> area_of("Search latency: synthetic 100,000 articles"), area_of("Task generator, round 2 (x)")
    ('Search latency', 'Task generator')
    """
    return re.split(r"[:,(]", title)[0].strip()


def file_run(text: str, area: str, run: str) -> str:
    """``text`` with ``run`` added at the end of the history area ``area`` (created at the end if new).

    >>> print(file_run("# B\\n\\n## History\\n\\n### A\\n\\n#### a1\\n\\n### C\\n", "A", "#### a2\\n"), end="")
    # B
    <BLANKLINE>
    ## History
    <BLANKLINE>
    ### A
    <BLANKLINE>
    #### a1
    <BLANKLINE>
    #### a2
    <BLANKLINE>
    ### C
    """
    if "\n## History\n" not in text:
        text = text.rstrip("\n") + "\n\n## History\n"
    heading = re.search(rf"^### {re.escape(area)}\n", text, flags=re.M)
    if heading is None:
        return text.rstrip("\n") + f"\n\n### {area}\n\n{run}"
    following = re.compile(r"^#{1,3} ", flags=re.M).search(text, heading.end())
    end = following.start() if following else len(text)
    return text[:end].rstrip("\n") + f"\n\n{run}" + ("\n" + text[end:] if following else "")
