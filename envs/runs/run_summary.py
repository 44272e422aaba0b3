"""One line per recorded episode: what a table of a training run and its health plots need.

:func:`summarize_recording` reads a file written by :class:`~stillweb.envs.RecordEpisodes`
(or by the Ray rollout workers, which write the same records) in one pass and gives an
:class:`EpisodeSummary` per episode: task, environment, ending, outcome, reward, turns,
truncation reason, the flags its steps raised, its ``info["episode_stats"]`` and the
policy version where the step records carry one. Nothing here raises on file content: a
file that is not a recording, or that a killed run left truncated, comes back with the
episodes read before the damage and a :attr:`RecordingSummary.problem` that says where
and why (the viewer lists such files with the reason, never a 500).
:class:`RecordingFollower` does the same for a file that is still growing (a live run):
each call reads only the bytes appended since the last one.

>>> summary = summarize_recording("run/episodes.jsonl")  # doctest: +SKIP
>>> [episode.success for episode in summary.episodes]  # doctest: +SKIP
[True, False]
"""

from __future__ import annotations

import copy
import json
import math
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stillweb.envs.core.episode_stats import is_count

__all__ = ["EpisodeSummary", "RecordingSummary", "RecordingFollower", "summarize_recording", "recorded_number", "not_json", "damage_note", "not_regular_file", "ENDINGS"]

ENDINGS = ("terminated", "truncated", "unfinished")


@dataclass(frozen=True)
class EpisodeSummary:
    """One recorded episode, summed up.

    ``ending``: ``terminated`` (the agent answered), ``truncated`` (a limit stopped it)
    or ``unfinished`` (the file ends, or the next reset comes, before either);
    ``outcome``: the final step's ``info["outcome"]`` (the answer's correctness part of
    the reward) or ``None`` where the env records none; ``flags``: how many steps raised
    each degenerate-action flag (``info["action_flags"]``), each tool flag
    (``info["tool_flags"]``: ``bad_arguments``, ``not_found``, ...) and ``format_error``,
    sorted by name; ``policy_version``: the first step record's ``policy_version`` where
    one is recorded.
    """

    file: str
    index: int
    line: int
    env_id: str
    task_id: str | None
    ending: str
    outcome: float | None
    reward: float
    turns: int
    truncation_reason: str | None
    termination_reason: str | None
    flags: tuple[tuple[str, int], ...]
    action_chars: int
    stats: dict[str, Any] | None = None
    policy_version: int | None = None

    @property
    def success(self) -> bool:
        """The agent answered and the answer was right (``outcome`` 1, as the solvability check counts it)."""
        return self.ending == "terminated" and (self.outcome or 0.0) >= 1.0


@dataclass(frozen=True)
class RecordingSummary:
    """A recording's header (``{}`` when it has none), its episodes and what is wrong with it, if anything."""

    name: str
    path: Path
    header: dict[str, Any]
    episodes: tuple[EpisodeSummary, ...]
    problem: str | None = None

    @property
    def env_id(self) -> str | None:
        """The recorded environment id, if the header names one."""
        env_id = self.header.get("env_id")
        return env_id if isinstance(env_id, str) else None

    @property
    def snapshot_fingerprint(self) -> str | None:
        """The fingerprint of the snapshot the episodes were recorded on, if the header has it."""
        fingerprint = self.header.get("snapshot_fingerprint")
        return fingerprint if isinstance(fingerprint, str) else None


def summarize_recording(path: str | Path, name: str | None = None) -> RecordingSummary:
    """Summaries of every episode of the recording at ``path`` (``name``: how to call it, default the file name).

    Reads the file once, line by line. A missing or unreadable file, a first line that
    is not a recording header, a line that is not a JSON object or a record of unknown
    type stops the reading there: the summary keeps the episodes finished before it and
    says what was wrong in ``problem`` (a last line cut short is how a killed run ends).
    """
    return RecordingFollower(path, name).summary()


# Bytes compared to tell a file that grew from one rewritten in place (its start, and before the read offset).
_CHECK_BYTES = 256
_CHUNK_BYTES = 8 * 2**20


class RecordingFollower:
    """The summary of one recording that may still be growing, read incrementally.

    :meth:`summary` gives what :func:`summarize_recording` would give for the file as it
    is now. It returns the previous summary object while the file's (mtime_ns, size) is
    unchanged, reads only the bytes appended since the last call when the file grew, and
    reads it again from the start when it shrank or its first bytes, or the bytes before
    where reading stopped, changed (a file rewritten in place). A last line without its
    newline (a run still writing it) is read again once it is complete.

    >>> follower = RecordingFollower("run/episodes.jsonl")  # doctest: +SKIP
    >>> first = follower.summary(); again = follower.summary()  # doctest: +SKIP
    >>> first is again  # doctest: +SKIP
    True
    """

    def __init__(self, path: str | Path, name: str | None = None) -> None:
        self.path = Path(path)
        self.name = name or self.path.name
        self._version: tuple[int, int] | None = None
        self._summary: RecordingSummary | None = None
        self._restart()

    def summary(self) -> RecordingSummary:
        """The summary of the file now (the same object as last time if the file did not change);
        a path that is not a regular file (a named pipe would block the read) is not opened."""
        special = not_regular_file(self.path, self.name)
        if special:
            return self._failed(special)
        try:
            with self.path.open("rb") as file:
                stat = os.fstat(file.fileno())
                version = (stat.st_mtime_ns, stat.st_size)
                if version == self._version and self._summary is not None:
                    return self._summary
                if stat.st_size < self._offset or not self._same_bytes(file):
                    self._restart()
                file.seek(self._offset)
                tail = b""
                while self._reader.problem is None:  # in chunks, so memory stays bounded whatever the file's size
                    chunk = file.read(_CHUNK_BYTES)
                    if not chunk:
                        break
                    if self._offset == 0 and not tail:
                        self._start = chunk[:_CHECK_BYTES]
                    tail = self._read_lines(tail + chunk)
        except FileNotFoundError:
            return self._failed(f"{self.name!r} does not exist (any more): was it moved or deleted?")
        except OSError as error:
            return self._failed(f"{self.name!r} cannot be read: {error.strerror or error}")
        self._version = version
        self._summary = self._finish(tail)
        return self._summary

    def _restart(self) -> None:
        self._reader = _Reader(self.name)
        self._offset = 0
        self._lines = 0
        self._start = b""
        self._before = b""

    def _failed(self, problem: str) -> RecordingSummary:
        self._restart()
        self._version, self._summary = None, None
        reader = _Reader(self.name)
        reader.problem = problem
        return reader.summary(self.path)

    def _same_bytes(self, file) -> bool:
        """Whether the file still starts, and still reads up to the offset, as it did."""
        if self._offset == 0:
            return True
        file.seek(0)
        if file.read(len(self._start)) != self._start:
            return False
        before = min(self._offset, _CHECK_BYTES)
        file.seek(self._offset - before)
        return file.read(before) == self._before

    def _read_lines(self, data: bytes) -> bytes:
        """Feed the complete lines of ``data`` to the reader; the incomplete last line is returned."""
        end = data.rfind(b"\n") + 1
        position = 0
        while position < end and self._reader.problem is None:
            stop = data.index(b"\n", position) + 1
            self._lines += 1
            if not self._add(self._reader, data[position:stop], complete=True):
                stop = end  # reading stopped for good: what follows is not read
            position = stop
        consumed = data[:position]
        self._before = (self._before + consumed)[-_CHECK_BYTES:] if self._offset else consumed[-_CHECK_BYTES:]
        self._offset += position
        return data[end:] if self._reader.problem is None else b""

    def _add(self, reader: "_Reader", raw: bytes, complete: bool) -> bool:
        number = self._lines
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            return reader._stop(f"line {number} of {self.name!r} cannot be read as UTF-8 text: {error}")
        return not line.strip() or reader.add(number, line, complete=complete)

    def _finish(self, tail: bytes) -> RecordingSummary:
        if not tail.strip():
            return self._reader.summary(self.path)
        reader = self._reader.fork()  # the cut line is read again once the rest of it is written
        self._lines += 1
        try:
            self._add(reader, tail, complete=False)
        finally:
            self._lines -= 1
        return reader.summary(self.path)


@dataclass
class _Episode:
    """The episode being read: its reset and what its steps added up to so far."""

    index: int
    line: int
    env_id: str
    task_id: str | None
    turns: int = 0
    reward: float = 0.0
    action_chars: int = 0
    flags: Counter = field(default_factory=Counter)
    policy_version: int | None = None
    last_info: dict[str, Any] = field(default_factory=dict)
    ending: str = "unfinished"

    def add_step(self, record: dict[str, Any]) -> None:
        info = record.get("info") if isinstance(record.get("info"), dict) else {}
        action = record.get("action")
        self.turns += 1
        self.reward += recorded_number(record.get("reward")) or 0.0
        self.action_chars += len(action) if isinstance(action, str) else 0
        for flag in _listed(info.get("action_flags")):
            self.flags[str(flag)] += 1
        for flag in _listed(info.get("tool_flags")):
            if flag is not None:
                self.flags[str(flag)] += 1
        if self.policy_version is None and is_count(record.get("policy_version")):
            self.policy_version = record["policy_version"]
        self.last_info = info
        if record.get("terminated") or record.get("truncated"):
            self.ending = "terminated" if record.get("terminated") else "truncated"

    def summary(self, file: str) -> EpisodeSummary:
        info = self.last_info
        stats = info.get("episode_stats")
        return EpisodeSummary(
            file=file, index=self.index, line=self.line, env_id=str(info.get("env_id") or self.env_id),
            task_id=self.task_id, ending=self.ending, outcome=recorded_number(info.get("outcome")) if self.ending != "unfinished" else None,
            reward=self.reward, turns=self.turns,
            truncation_reason=_text(info.get("truncation_reason")) if self.ending == "truncated" else None,
            termination_reason=_text(info.get("termination_reason")) if self.ending == "terminated" else None,
            flags=tuple(sorted(self.flags.items())), action_chars=self.action_chars,
            stats=stats if isinstance(stats, dict) else None, policy_version=self.policy_version,
        )


class _Reader:
    """Records in, summaries out; stops at the first line that is not a recording record."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.header: dict[str, Any] | None = None
        self.done: list[EpisodeSummary] = []
        self.current: _Episode | None = None
        self.problem: str | None = None

    def add(self, number: int, line: str, complete: bool) -> bool:
        """Take one non-blank line; False (with ``problem`` set) where reading must stop."""
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as error:  # ValueError: JSONDecodeError, or a number past int()'s digit limit
            return self._stop(not_json(number, self.name, error, complete))
        if not isinstance(record, dict):
            return self._stop(f"line {number} of {self.name!r} is not a JSON object")
        kind = record.get("type")
        if self.header is None:
            if kind != "header" or not isinstance(record.get("env_id"), str):
                return self._stop(f"line {number} of {self.name!r} is not a recording header (type 'header', env_id): "
                                  "record episodes with stillweb.envs.RecordEpisodes")
            self.header = record
        elif kind == "reset":
            self._close_episode()
            info = record.get("info") if isinstance(record.get("info"), dict) else {}
            self.current = _Episode(len(self.done), number, str(info.get("env_id") or self.header["env_id"]),
                                    _text(info.get("task_id")))
        elif kind == "step":
            if self.current is None:
                return self._stop(f"line {number} of {self.name!r} is a step before any reset")
            self.current.add_step(record)
        else:
            return self._stop(f"line {number} of {self.name!r} has unknown record type {str(kind)[:50]!r} (expected reset or step)")
        return True

    def summary(self, path: Path) -> RecordingSummary:
        """The summary of what was read so far (the episode being read counted as it is)."""
        episodes = tuple(self.done) + ((self.current.summary(self.name),) if self.current is not None else ())
        return RecordingSummary(self.name, path, self.header or {}, episodes, self.problem)

    def fork(self) -> "_Reader":
        """A copy to read a line with, leaving this reader as it is."""
        forked = copy.copy(self)
        forked.done = list(self.done)
        forked.current = copy.deepcopy(self.current)
        return forked

    def _close_episode(self) -> None:
        if self.current is not None:
            self.done.append(self.current.summary(self.name))
            self.current = None

    def _stop(self, problem: str) -> bool:
        self.problem = problem
        return False


_SPECIAL_FILES = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                  (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


def not_regular_file(path: str | Path, name: str) -> str | None:
    """Why the recording ``name`` at ``path`` is not read when it exists but is not a regular file (a named
    pipe or a device: reading one can block forever), else ``None`` (a missing file is the reader's to report).

    >>> not_regular_file("/dev/null", "null.jsonl")
    "'null.jsonl' is not a regular file (a character device): recordings are read from regular files only"
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    kind = next((kind for test, kind in _SPECIAL_FILES if test(mode)), "a special file")
    return f"{name!r} is not a regular file ({kind}): recordings are read from regular files only"


def not_json(number: int, name: str, error: Exception, complete: bool) -> str:
    """Why reading stopped at line ``number`` of ``name``, text that JSON cannot parse (``error``);
    ``complete``: False for a file's last line with no newline after it, the cut line a killed run leaves.

    >>> not_json(3, "a.jsonl", ValueError("Expecting value"), complete=False)
    "line 3 of 'a.jsonl' is not JSON (the file ends in the middle of it: a run still writing, or one that was killed): Expecting value"
    """
    cut = "" if complete else " (the file ends in the middle of it: a run still writing, or one that was killed)"
    return f"line {number} of {name!r} is not JSON{cut}: {error}"


def damage_note(problem: str, episodes: int) -> str:
    """The note a page showing a damaged file's ``episodes`` (those read before reading stopped) gives:
    where reading stopped and why (``problem``), and how many episodes are shown.

    >>> damage_note("line 3 of 'a.jsonl' is not JSON: Expecting value", 1)
    "Reading stopped at the damage: line 3 of 'a.jsonl' is not JSON: Expecting value. The 1 episode read before it is shown."
    """
    shown = "The 1 episode read before it is shown" if episodes == 1 else f"The {episodes} episodes read before it are shown"
    return f"Reading stopped at the damage: {problem.rstrip('.')}. {shown}."


def recorded_number(value: Any) -> float | None:
    """``value`` as a float if it is a number (an integer too large for a float: infinite, of its sign), else ``None``."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _listed(value: Any) -> list:
    """``value`` if it is a list (how flags are recorded), else no items (a number or a string is not a list of flags)."""
    return value if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
