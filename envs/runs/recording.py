"""Record episodes to JSONL and replay them to prove the environment still behaves the same.

:class:`RecordEpisodes` wraps an environment made with ``gym.make`` and writes
one JSON object per line: a ``header`` (env id, constructor kwargs, package
version), then per episode a ``reset`` (seed, options, observation, info) and a
``step`` per action (action, observation, reward, terminated, truncated, info;
``info["messages"]`` and ``info["messages_kept"]`` are left out, implied by the observations). Actions
are recorded as the environments read them: characters outside the text
charset (lone surrogates, which JSON cannot round-trip) become U+FFFD.
:func:`replay` re-creates the environment, re-runs every reset and action, and
reports the first line whose outcome differs.

>>> import gymnasium as gym  # doctest: +SKIP
>>> env = RecordEpisodes(gym.make("stillweb/Lookup-v0", tasks=[...]), "episode.jsonl")  # doctest: +SKIP
>>> replay("episode.jsonl").ok  # doctest: +SKIP
True
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import gymnasium as gym

from stillweb.corpora.canonical import canonical_json
from stillweb.corpora.errors import UsageError, writing
from stillweb.corpora.version import PACKAGE_VERSION
from stillweb.envs.runs.recorded_snapshot import locate_snapshot, snapshot_header
from stillweb.envs.runs.recording_versions import INFO_VERSION, as_recorded, info_version, replay_kwargs
from stillweb.envs.core.spaces import to_charset
import stillweb.envs.registration  # noqa: F401 - the environments' ids, for gym.make

__all__ = [
    "RecordEpisodes", "ReplayResult", "RerunRecord", "replay", "rerun", "UNRECORDED_INFO_KEYS",
    "header_record", "reset_record", "step_record", "open_recording",
]

UNRECORDED_INFO_KEYS = ("messages", "messages_kept")


def header_record(spec: gym.envs.registration.EnvSpec, env: gym.Env | None = None) -> dict[str, Any]:
    """The first record of a recording: env id, constructor kwargs, package version, the ``info_version``
    (:mod:`~stillweb.envs.runs.recording_versions`) and, for an ``env`` on a local snapshot, the snapshot's
    resolved path and fingerprint (so a replay can find it)."""
    return {"type": "header", "env_id": spec.id, "kwargs": dict(spec.kwargs), "package_version": PACKAGE_VERSION,
            "info_version": INFO_VERSION, **(snapshot_header(env) if env is not None else {})}


def reset_record(seed: int | None, options: dict[str, Any] | None, observation: str, info: Mapping[str, Any]) -> dict[str, Any]:
    """The record of one reset (``info["messages"]`` left out)."""
    return {"type": "reset", "seed": seed, "options": options, "observation": observation, "info": _recorded(info)}


def step_record(action: Any, observation: str, reward: float, terminated: bool, truncated: bool,
                info: Mapping[str, Any]) -> dict[str, Any]:
    """The record of one step: the action as the env read it and everything it returned."""
    return {
        "type": "step",
        "action": to_charset(action) if isinstance(action, str) else action,
        "observation": observation,
        "reward": reward,
        "terminated": terminated,
        "truncated": truncated,
        "info": _recorded(info),
    }


class RecordEpisodes(gym.Wrapper):
    """Writes every reset and step of the wrapped env to a JSONL file.

    The env must come from ``gym.make`` (its ``spec`` gives the id and kwargs to
    re-create it); kwargs must be JSON-serialisable (dataclass configs are stored
    as dicts). ``close`` closes the file; it is idempotent.
    """

    def __init__(self, env: gym.Env, path: str | Path) -> None:
        super().__init__(env)
        spec = env.spec
        if spec is None:
            raise UsageError("RecordEpisodes needs an env made by gym.make (it records env.spec to replay it)")
        self.path = Path(path)
        self._file: IO[bytes] | None = self.path.open("wb", buffering=0)  # every line reaches the file whole, or not
        self._written = 0  # bytes of complete lines
        self._write(header_record(spec, env))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset the env and record the seed, options, observation and info."""
        observation, info = self.env.reset(seed=seed, options=options)
        self._write(reset_record(seed, options, observation, info))
        return observation, info

    def step(self, action: str):
        """Step the env and record the action and everything it returned."""
        observation, reward, terminated, truncated, info = self.env.step(action)
        self._write(step_record(action, observation, reward, terminated, truncated, info))
        return observation, reward, terminated, truncated, info

    def close(self) -> None:
        """Close the file and the env (idempotent)."""
        if self._file is not None:
            self._file.close()
            self._file = None
        super().close()

    def _write(self, record: dict[str, Any]) -> None:
        """Append one line. A write the disk refuses (full, a size limit) cuts the file back to its complete
        lines, closes it and raises :class:`StorageError` naming it (the episode's env stays usable)."""
        if self._file is None:
            raise RuntimeError(f"recording {self.path} is closed")
        line = (canonical_json(record) + "\n").encode("utf-8")
        rest = memoryview(line)
        try:
            while rest:
                rest = rest[self._file.write(rest):]  # an unbuffered write may take part of it
        except OSError:
            self._file.truncate(self._written)
            self._file.close()
            self._file = None
            kept = (f"the recording keeps its complete lines ({self._written} bytes) and was closed" if self._written
                    else "the empty file was removed")
            if not self._written:
                self.path.unlink(missing_ok=True)
            with writing(self.path, "the recording", kept):
                raise
        self._written += len(line)


@dataclass(frozen=True)
class ReplayResult:
    """The outcome of a replay: ``ok``, lines checked, and the first difference if any."""

    ok: bool
    checked: int
    line: int | None = None
    field: str | None = None
    recorded: Any = None
    replayed: Any = None
    snapshot: str | None = None  # which snapshot was used and how it was found

    def describe(self) -> str:
        """One line for humans: 'identical' or where it first differs (after the snapshot used, if known)."""
        used = f"on {self.snapshot}: " if self.snapshot else ""
        if self.ok:
            return f"{used}identical: {self.checked} resets/steps replayed"
        return used + (
            f"line {self.line} differs in {self.field}: recorded {canonical_json(self.recorded)[:300]} "
            f"but replay gave {canonical_json(self.replayed)[:300]}"
        )


def replay(path: str | Path, **kwarg_overrides: Any) -> ReplayResult:
    """Re-run a recorded file; stop at the first reset or step that differs.

    ``kwarg_overrides`` replace constructor kwargs (e.g. ``snapshot=`` for a
    snapshot that moved); without ``snapshot=`` the snapshot is found by its
    recorded path or fingerprint (:func:`~stillweb.envs.runs.recorded_snapshot.locate_snapshot`).
    Raises ``ValueError`` naming the line if the file is not a recording.
    """
    header, lines = open_recording(Path(path))
    if "snapshot" in kwarg_overrides:
        used = f"snapshot {kwarg_overrides['snapshot']} (given)"
    else:
        found, used = locate_snapshot(header, Path(path))
        kwarg_overrides = {**kwarg_overrides, **({"snapshot": found} if found else {})}
    checked = 0
    for rerun_record in rerun(header, lines, **kwarg_overrides):
        if rerun_record.error is not None:
            return ReplayResult(False, checked, rerun_record.number, "step", "a step", rerun_record.error, used)
        field_name = rerun_record.first_difference()
        if field_name is not None:
            return ReplayResult(False, checked, rerun_record.number, field_name, rerun_record.record.get(field_name),
                                rerun_record.replayed[field_name], used)
        checked += 1
    return ReplayResult(True, checked, snapshot=used)


@dataclass(frozen=True)
class RerunRecord:
    """One re-run reset or step: the recorded line, what the env returned now
    (the recorded fields), its whole ``info`` (``messages`` included), or the
    error of a step the env refused."""

    number: int
    record: dict[str, Any]
    replayed: dict[str, Any]
    info: dict[str, Any]
    error: str | None = None

    def first_difference(self) -> str | None:
        """The first field (in name order) whose replayed value differs from the recorded one."""
        return next((key for key in sorted(self.replayed)
                     if canonical_json(self.replayed[key]) != canonical_json(self.record.get(key))), None)


def rerun(header: Mapping[str, Any], records: Iterable[tuple[int, dict[str, Any]]], **kwarg_overrides: Any) -> Iterator[RerunRecord]:
    """Re-create the recorded env from ``header`` and re-run ``(line number, record)``
    pairs in order, yielding each outcome; stops after a step the env refuses.

    A recording of an older ``info_version`` is compared as its code wrote info
    (:func:`~stillweb.envs.runs.recording_versions.as_recorded`).
    Raises ``ValueError`` for a record of unknown type.
    """
    version = info_version(header)
    env = gym.make(header["env_id"], **{**replay_kwargs(header), **kwarg_overrides})
    try:
        for number, record in records:
            if record.get("type") == "reset":
                observation, info = env.reset(seed=record["seed"], options=record["options"])
                replayed = {"observation": observation, "info": as_recorded(_recorded(info), record.get("info"), version)}
            elif record.get("type") == "step":
                try:
                    observation, reward, terminated, truncated, info = env.step(record["action"])
                except RuntimeError as error:
                    yield RerunRecord(number, record, {}, {}, f"{type(error).__name__}: {error}")
                    return
                replayed = {
                    "observation": observation,
                    "reward": reward,
                    "terminated": terminated,
                    "truncated": truncated,
                    "info": as_recorded(_recorded(info), record.get("info"), version),
                }
            else:
                raise UsageError(f"line {number}: unknown record type {record.get('type')!r}")
            yield RerunRecord(number, record, replayed, dict(info))
    finally:
        env.close()


def open_recording(path: Path) -> tuple[dict[str, Any], Iterator[tuple[int, dict[str, Any]]]]:
    """The header of a recording and an iterator over its other (line number, record) pairs."""
    lines = _read(path)
    header = next(lines, (0, {}))[1]
    if header.get("type") != "header":
        raise UsageError(f"{path}: line 1 is not a stillweb recording header")
    return header, lines


def _read(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                try:
                    yield number, json.loads(line)
                except json.JSONDecodeError as error:
                    raise UsageError(f"{path}:{number}: not JSON: {error}") from None


def _recorded(info: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in info.items() if key not in UNRECORDED_INFO_KEYS}
