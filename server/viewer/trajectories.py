"""Recorded trajectory files (the :mod:`stillweb.envs.runs.recording` format) as the viewer
reads them: which files there are, their episodes, and the context the model saw.

A file that is missing, empty, not JSON or not a recording raises
:class:`TrajectoryError` with a message for the page (line number included);
a file damaged after some episodes (a killed run's cut last line) keeps those,
with the damage in :attr:`Recording.problem`, as the runs table lists them;
the viewer never answers a bad file with a 500. The context after context
management is not recorded (``info["messages"]`` is left out of recordings):
:class:`ContextReruns` re-runs the file's env to get it, which also checks that
each step still gives the recorded result.
"""

from __future__ import annotations

import json
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stillweb.corpora.errors import DataError
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.envs.runs.recording import rerun
from stillweb.envs.runs.recording_versions import replay_kwargs
from stillweb.envs.runs.run_summary import RecordingFollower, RecordingSummary, damage_note, not_json, not_regular_file, recorded_number
from stillweb.envs.core.messages import Conversation

__all__ = ["flags_of", "raised_flags", "other_snapshot_note", "TrajectoryError", "EpisodeRecord", "Recording", "TrajectoryFiles", "ContextReruns", "read_recording"]

MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_RERUN_RECORDS = 5000
RERUN_CACHE = 4
RECORDING_CACHE = 4  # parsed files kept: a step click does not parse its file again


# Info keys shown as flags whatever their name says (plus every key naming a flag or a reason).
FLAG_KEYS = ("hallucination_counts", "mask_from_loss")


def flags_of(info: dict[str, Any]) -> dict[str, Any]:
    """The info entries that flag something: tool flags, termination and truncation
    reasons, hallucination counts and any key with ``flag`` or ``reason`` in its name
    (so flags added later show without a change here); empty values left out."""
    shown = {}
    for key in sorted(info):
        if key in FLAG_KEYS or "flag" in key or key.endswith("_reason"):
            value = info[key]
            if isinstance(value, dict):
                value = {name: count for name, count in value.items() if count}
            if isinstance(value, list) and not any(item is not None for item in value):
                value = None
            if value not in (None, {}, [], False):
                shown[key] = value
    return shown


def raised_flags(info: dict[str, Any], previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """The flags one step raised: :func:`flags_of` without the ending reasons, and running
    counts (``hallucination_counts``) as their increase over the ``previous`` record's info.

    >>> raised_flags({"hallucination_counts": {"format_error": 2}, "termination_reason": "answered"},
    ...              {"hallucination_counts": {"format_error": 1}})
    {'hallucination_counts': {'format_error': 1}}
    """
    before = flags_of(previous or {})
    raised = {}
    for key, value in flags_of(info).items():
        if key.endswith("_reason"):
            continue
        earlier = before.get(key)
        if isinstance(value, dict) and isinstance(earlier, dict):
            value = {name: count - earlier.get(name, 0) if _is_count(count) and _is_count(earlier.get(name, 0)) else count
                     for name, count in value.items() if count != earlier.get(name, 0)}
        if value not in ({}, None):
            raised[key] = value
    return raised


def _is_count(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def other_snapshot_note(recorded: Any, fingerprint: str | None) -> str | None:
    """What to say of a recording whose header's ``snapshot_fingerprint`` (``recorded``) is not the viewer's
    ``fingerprint``; ``None`` when they agree or either is unknown."""
    if not fingerprint or not isinstance(recorded, str) or recorded == fingerprint:
        return None
    return (f"recorded on another snapshot (fingerprint {recorded[:12]}, the viewer shows {fingerprint[:12]}): "
            "its document links and evidence marks point into the viewer's snapshot")


class TrajectoryError(DataError):
    """A trajectory file that cannot be shown, and why (``status``: 404 missing, 422 damaged)."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class EpisodeRecord:
    """One episode of a recording: its reset line and its steps (line number, record)."""

    index: int
    reset: tuple[int, dict[str, Any]]
    steps: tuple[tuple[int, dict[str, Any]], ...]

    @property
    def task_id(self) -> str | None:
        """The task of the episode (from the reset's info)."""
        info = self.reset[1].get("info")
        task_id = info.get("task_id") if isinstance(info, dict) else None
        return task_id if isinstance(task_id, str) else None

    @property
    def reward(self) -> float:
        """The sum of the recorded step rewards (a reward that is not a number counts 0, as in the runs table)."""
        return sum(recorded_number(record.get("reward")) or 0.0 for _, record in self.steps)

    @property
    def ending(self) -> str:
        """``terminated``, ``truncated`` or ``unfinished``."""
        last = self.steps[-1][1] if self.steps else {}
        return "terminated" if last.get("terminated") else "truncated" if last.get("truncated") else "unfinished"


@dataclass(frozen=True)
class Recording:
    """A parsed recording: its header and episodes; ``problem``: why reading stopped early, if it did
    (the episodes are those read before the damage, the one being read included, as the runs table lists them)."""

    name: str
    path: Path
    header: dict[str, Any]
    episodes: tuple[EpisodeRecord, ...]
    problem: str | None = None

    def other_snapshot(self, fingerprint: str | None) -> str | None:
        """What to say when the header's ``snapshot_fingerprint`` is not ``fingerprint`` (the viewer's), else ``None``."""
        return other_snapshot_note(self.header.get("snapshot_fingerprint"), fingerprint)

    @property
    def damage_note(self) -> str | None:
        """What a page showing this recording says about its damage (:func:`~stillweb.envs.runs.run_summary.damage_note`), ``None`` if undamaged."""
        return damage_note(self.problem, len(self.episodes)) if self.problem else None

    @property
    def tool_format(self) -> str:
        """The recorded env's call format (the env default, ``tongyi``, when not given)."""
        kwargs = self.header.get("kwargs")
        return str(kwargs.get("tool_format") or "tongyi") if isinstance(kwargs, dict) else "tongyi"

    @property
    def format_options(self) -> dict[str, Any]:
        """The recorded env's call format options, as its version's code had them (its parser, for the step view)."""
        options = replay_kwargs(self.header).get("format_options") if isinstance(self.header.get("kwargs"), dict) else None
        return dict(options) if isinstance(options, dict) else {}


_STEP_FIELDS = ("action", "observation", "reward", "terminated", "truncated", "info")
_RESET_FIELDS = ("seed", "options", "observation", "info")


def read_recording(path: Path, name: str) -> Recording:
    """Parse the recording at ``path``; :class:`TrajectoryError` says what is wrong and where.

    A damaged line after the header (a killed run's cut last line, text that is not JSON or not a
    record) stops the reading there: the recording keeps the episodes before it and says why in
    ``problem``; only a file with no episode before its damage raises.
    """
    special = not_regular_file(path, name)
    if special:
        raise TrajectoryError(special)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise TrajectoryError(f"the trajectory file {name!r} does not exist (any more): was it moved or deleted?", 404) from None
    except OSError as error:
        raise TrajectoryError(f"the trajectory file {name!r} cannot be read: {error.strerror}") from None
    if size > MAX_FILE_BYTES:
        raise TrajectoryError(f"the trajectory file {name!r} has {size:,} bytes, more than the viewer reads ({MAX_FILE_BYTES:,})")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise TrajectoryError(f"the trajectory file {name!r} cannot be read: {error.strerror}") from None
    records, problem = _records(data, name)
    if not records:
        raise TrajectoryError(problem or f"the trajectory file {name!r} is empty")
    header = records[0][1]
    if header.get("type") != "header" or not isinstance(header.get("env_id"), str) or not isinstance(header.get("kwargs"), dict):
        raise TrajectoryError(f"line {records[0][0]} of {name!r} is not a recording header (env_id, kwargs): "
                              "record episodes with stillweb.envs.RecordEpisodes")
    episodes, damaged = _episodes(records[1:], name)
    problem = damaged or problem
    if problem and not episodes:
        raise TrajectoryError(problem)
    return Recording(name, path, header, episodes, problem)


def _records(data: bytes, name: str) -> tuple[list[tuple[int, dict[str, Any]]], str | None]:
    """The (line number, record) pairs of the lines of ``data`` (split at newlines only, as the runs
    table reads them), up to the first line that is not UTF-8 JSON object text, and why reading stopped there."""
    records = []
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            return records, f"line {number} of {name!r} is not readable UTF-8 text: {error}"
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as error:  # ValueError: JSONDecodeError, or a number past int()'s digit limit
            return records, not_json(number, name, error, complete=number != len(lines))
        if not isinstance(record, dict):
            return records, f"line {number} of {name!r} is not a JSON object"
        records.append((number, record))
    return records, None


def _episodes(records: list[tuple[int, dict[str, Any]]], name: str) -> tuple[tuple[EpisodeRecord, ...], str | None]:
    """The episodes of ``records`` up to the first record that is not a reset or step of one, and why reading stopped there."""
    episodes: list[EpisodeRecord] = []
    reset: tuple[int, dict[str, Any]] | None = None
    steps: list[tuple[int, dict[str, Any]]] = []
    problem = None
    for number, record in records:
        kind = record.get("type")
        required = _RESET_FIELDS if kind == "reset" else _STEP_FIELDS if kind == "step" else None
        if required is None:
            problem = f"line {number} of {name!r} has unknown record type {str(kind)[:50]!r} (expected reset or step)"
            break
        missing = [field for field in required if field not in record]
        if missing:
            problem = f"line {number} of {name!r}: a {kind} record without {', '.join(missing)}"
            break
        if kind == "reset":
            if reset is not None:
                episodes.append(EpisodeRecord(len(episodes), reset, tuple(steps)))
            reset, steps = (number, record), []
        elif reset is None:
            problem = f"line {number} of {name!r} is a step before any reset"
            break
        else:
            steps.append((number, record))
    if reset is not None:
        episodes.append(EpisodeRecord(len(episodes), reset, tuple(steps)))
    return tuple(episodes), problem


class TrajectoryFiles:
    """The trajectory files the viewer shows: given files, and ``*.jsonl`` in given directories.

    Names are the file name (``dir/file`` for files found in a directory); only
    listed names can be opened, so a URL never reaches another path.
    """

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        self._lock = threading.Lock()
        self._followers: dict[str, RecordingFollower] = {}
        self._recordings: OrderedDict[tuple, Recording] = OrderedDict()

    @property
    def save_dir(self) -> Path | None:
        """The first given directory (where hand-played episodes are saved), if any."""
        return next((path for path in self.paths if path.is_dir()), None)

    def listing(self) -> list[tuple[str, Path]]:
        """(name, path) of every trajectory file, in the order given, directory contents sorted (a given
        path that is not a regular file, a named pipe say, is listed: reading it gives the reason, without opening it).
        A name that an earlier file already has (two ``--episodes`` folders called ``run``) gets `` (2)``, `` (3)``
        after it, so no file is hidden behind another."""
        found: list[tuple[str, Path]] = []
        for path in self.paths:
            if path.is_dir():
                found.extend((f"{path.name}/{file.name}", file) for file in sorted(path.glob("*.jsonl")) if file.is_file())
            else:
                found.append((path.name, path))
        seen: Counter[str] = Counter()
        named = []
        for name, path in found:
            seen[name] += 1
            named.append((name if seen[name] == 1 else f"{name} ({seen[name]})", path))
        return named

    def summaries(self) -> list[RecordingSummary]:
        """The current :class:`~stillweb.envs.runs.run_summary.RecordingSummary` of every listed file, in listing
        order: one :class:`~stillweb.envs.runs.run_summary.RecordingFollower` per name reads each file once and
        then only its appended bytes (the same summary object while a file is unchanged), shared by every
        page that sums episodes up (the runs table, the health plots)."""
        with self._lock:
            followers = {}
            for name, path in self.listing():
                follower = self._followers.get(name)
                followers[name] = follower if follower is not None and follower.path == path else RecordingFollower(path, name)
            self._followers = followers
            return [follower.summary() for follower in followers.values()]

    def open(self, name: str) -> Recording:
        """The parsed recording ``name``; :class:`TrajectoryError` if unknown or unreadable."""
        for listed, path in self.listing():
            if listed == name:
                return self._parsed(path, name)
        known = ", ".join(listed for listed, _ in self.listing()) or "none (start the viewer with --episodes PATH)"
        raise TrajectoryError(f"no trajectory file named {name!r}; the files are: {known}", 404)

    def _parsed(self, path: Path, name: str) -> Recording:
        """``read_recording(path, name)``, kept for the last :data:`RECORDING_CACHE` file versions (path, mtime, size)."""
        try:
            stat = path.stat()
        except OSError:
            return read_recording(path, name)  # it says why the file cannot be read
        key = (str(path), name, stat.st_mtime_ns, stat.st_size)
        with self._lock:
            if key in self._recordings:
                self._recordings.move_to_end(key)
                return self._recordings[key]
        recording = read_recording(path, name)
        with self._lock:
            self._recordings[key] = recording
            while len(self._recordings) > RECORDING_CACHE:
                self._recordings.popitem(last=False)
        return recording


@dataclass(frozen=True)
class RerunStep:
    """A record re-run: the messages the model saw after it, and whether it matched."""

    messages: list[dict[str, Any]] | None
    difference: str | None
    error: str | None = None


class ContextReruns:
    """Re-runs recordings to recover the managed context of each step (cached per file version)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple, dict[int, RerunStep] | str] = OrderedDict()

    def context(self, recording: Recording) -> dict[int, RerunStep] | str:
        """Line number -> :class:`RerunStep`, or a message saying why the file could not be re-run."""
        stat = recording.path.stat()
        key = (str(recording.path), stat.st_mtime_ns, stat.st_size)
        with self._lock:
            if key not in self._cache:
                self._cache[key] = self._rerun(recording)
                while len(self._cache) > RERUN_CACHE:
                    self._cache.popitem(last=False)
            return self._cache[key]

    def _rerun(self, recording: Recording) -> dict[int, RerunStep] | str:
        records = [line for episode in recording.episodes for line in (episode.reset, *episode.steps)]
        if len(records) > MAX_RERUN_RECORDS:
            return f"the file has {len(records)} resets and steps; the viewer re-runs at most {MAX_RERUN_RECORDS}"
        recorded_snapshot = recording.header["kwargs"].get("snapshot")
        overrides = {} if isinstance(recorded_snapshot, str) and Path(recorded_snapshot).is_dir() else {"snapshot": str(self.snapshot.path)}
        outcome: dict[int, RerunStep] = {}
        conversation = Conversation()  # the infos carry each step's new messages
        try:
            for item in rerun(recording.header, records, **overrides):
                has_messages = isinstance(item.info.get("messages"), list)
                messages = list(conversation.update(item.info)) if has_messages else None
                outcome[item.number] = RerunStep(messages, item.first_difference(), item.error)
        except Exception as error:  # noqa: BLE001 - a recording's kwargs are file input: any failure is a page message
            return f"the recorded env could not be re-run: {type(error).__name__}: {str(error)[:500]}"
        return outcome
