"""A frozen tool's store: every call once made to a live tool, answered from disk forever.

A store is a snapshot-like directory::

    manifest.json   format, kind ("http" or "mcp"), upstream label, the request headers kept,
                    record count, sha256 of the log, the content fingerprint
    records.log     append-only: one record per line, "<blake2b-128 hex of the JSON> <JSON>\\n"

A record is ``{"key", "request", "response"}``: ``request`` is the call's
:func:`canonical_request` (method, path, sorted query, JSON body, the chosen
headers; secrets such as ``Authorization`` or an ``api_key`` field never enter
it) and ``key`` the sha256 of its canonical JSON, so the store is content
addressed. The first record of a key wins; later ones (a retry, a concurrent
recorder) are never appended by :meth:`FrozenStore.add` and ignored if present.

Crash safety: each record is one ``write`` of one whole line on an ``O_APPEND``
descriptor under an exclusive ``flock`` (so threads and processes never
interleave), then ``fsync``. A recorder killed mid-write leaves at most a torn
last line without a valid checksum: readers skip it (and report it), and the
next writer ends it with a newline first, so every completed record survives.
The manifest is replaced atomically (temp file, ``fsync``, ``rename``).

>>> store = FrozenStore.create("frozen/", kind="http", upstream="http://127.0.0.1:9000")   # doctest: +SKIP
>>> store.add(canonical_request("POST", "/search", body={"q": "x"}), {"status": 200, "body": "{}"})  # doctest: +SKIP
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stillweb.corpora.canonical import canonical_json
from stillweb.corpora.snapshot.manifest import MANIFEST_NAME, load_manifest_json
from stillweb.corpora.errors import DataError, UsageError
from stillweb.corpora.version import PACKAGE_VERSION

__all__ = ["FROZEN_FORMAT", "UPSTREAM_KINDS", "LOG_NAME", "SECRET_HEADERS", "SECRET_FIELDS", "FrozenStore", "FrozenStoreError", "LogDamage", "canonical_request", "request_key"]

FROZEN_FORMAT = "stillweb-frozen/1"
FORMAT_VERSION = 1
UPSTREAM_KINDS = ("http", "mcp")
LOG_NAME = "records.log"
# Request headers that carry credentials: never stored, and refused as "chosen headers".
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "x-auth-token"})
# Query parameters and JSON body fields dropped from the canonical form (credentials, by name).
SECRET_FIELDS = ("api_key", "apikey", "access_token", "key", "token", "secret", "password", "subscription-key")
_SECRET_WORDS = ("auth", "token", "secret", "key", "password", "cookie", "credential")


class FrozenStoreError(DataError):
    """A frozen store is missing, from a newer version, or damaged; the message names the file."""


@dataclass(frozen=True)
class LogDamage:
    """A line of ``records.log`` that is not a complete record: ``offset`` (bytes), ``reason``."""

    offset: int
    reason: str


def canonical_request(
    method: str, path: str, query: Iterable[tuple[str, str]] = (), body: Any = None,
    headers: Mapping[str, str] | None = None, keep_headers: Iterable[str] = (),
    secret_fields: Iterable[str] = SECRET_FIELDS,
) -> dict[str, Any]:
    """The stored form of a call: ``{"method", "path", "query", "body", "headers"}``.

    ``query`` pairs are sorted; ``body`` is parsed JSON (``None``: no body); only the
    ``keep_headers`` of ``headers`` are kept (names lower-cased, sorted). Query
    parameters and body fields (at any depth) named in ``secret_fields`` are dropped,
    so rotating a key changes no request key. ``ValueError`` if a kept header is a secret.
    """
    secrets = {name.lower() for name in secret_fields}
    kept = check_kept_headers(keep_headers)
    lowered = {str(name).lower(): str(value) for name, value in (headers or {}).items()}
    return {
        "method": method.upper(),
        "path": path,
        "query": sorted([str(name), str(value)] for name, value in query if str(name).lower() not in secrets),
        "body": _without_secrets(body, secrets),
        "headers": {name: lowered[name] for name in kept if name in lowered},
    }


def check_kept_headers(names: Iterable[str]) -> list[str]:
    """``names`` lower-cased and sorted; ``ValueError`` naming any that looks like a credential."""
    kept = sorted({name.lower() for name in names})
    bad = [name for name in kept if name in SECRET_HEADERS or any(word in name for word in _SECRET_WORDS)]
    if bad:
        raise UsageError(f"header(s) {bad} look like credentials and are never stored; keep only headers "
                         "that change the answer (e.g. accept-language)")
    return kept


def request_key(request: Mapping[str, Any]) -> str:
    """The content address of a canonical request: sha256 of its canonical JSON."""
    return hashlib.sha256(canonical_json(request).encode()).hexdigest()


def _without_secrets(value: Any, secrets: set[str]) -> Any:
    if isinstance(value, dict):
        return {name: _without_secrets(item, secrets) for name, item in value.items() if str(name).lower() not in secrets}
    if isinstance(value, list):
        return [_without_secrets(item, secrets) for item in value]
    return value


def _checksum(payload: bytes) -> str:
    return hashlib.blake2b(payload, digest_size=16).hexdigest()


@dataclass
class _Loaded:
    """What reading the log found: the first record of each key, duplicates and damage."""

    records: dict[str, dict] = field(default_factory=dict)
    conflicts: dict[str, int] = field(default_factory=dict)  # key -> later records with another response
    duplicates: int = 0
    damage: list[LogDamage] = field(default_factory=list)
    offset: int = 0  # bytes of the log read so far (complete lines only)


class FrozenStore:
    """An open frozen store (see the module doc). Thread-safe; several processes may add at once."""

    def __init__(self, path: Path, manifest: dict) -> None:
        self.path = path
        self.manifest = manifest
        self._lock = threading.Lock()
        self._loaded = _Loaded()
        self._fingerprint: str | None = None
        self._refresh()

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | Path, kind: str, upstream: str, keep_headers: Iterable[str] = (),
               secret_fields: Iterable[str] = SECRET_FIELDS) -> FrozenStore:
        """Open the store at ``path``, creating it if absent. An existing store must be of the same
        ``kind`` (``ValueError`` otherwise); recording into it adds to it."""
        if kind not in UPSTREAM_KINDS:
            raise UsageError(f"kind must be one of {UPSTREAM_KINDS}, got {kind!r}")
        path = Path(path)
        keep_headers = check_kept_headers(keep_headers)
        if (path / MANIFEST_NAME).exists():
            store = cls.open(path)
            if store.kind != kind:
                raise UsageError(f"{path} is a frozen {store.kind} store; it cannot record a {kind} upstream")
            return store
        if path.exists() and any(path.iterdir()):
            raise UsageError(f"{path} exists and is not a frozen store: choose an empty or new directory")
        path.mkdir(parents=True, exist_ok=True)
        (path / LOG_NAME).touch()
        manifest = {"format": FROZEN_FORMAT, "kind": kind, "upstream": upstream, "keep_headers": keep_headers,
                    "secret_fields": sorted({name.lower() for name in secret_fields})}
        store = cls(path, manifest)
        store.write_manifest()
        return store

    @classmethod
    def open(cls, path: str | Path) -> FrozenStore:
        """Open an existing store; :class:`FrozenStoreError` naming the file if absent, newer or damaged."""
        path = Path(path)
        return cls(path, read_frozen_manifest(path))

    # -- reading ---------------------------------------------------------------------------

    @property
    def kind(self) -> str:
        """``"http"`` or ``"mcp"``."""
        return self.manifest["kind"]

    @property
    def keep_headers(self) -> list[str]:
        """The request headers that are part of a request's identity."""
        return list(self.manifest.get("keep_headers", []))

    @property
    def secret_fields(self) -> list[str]:
        """Query parameters and body fields left out of the canonical request."""
        return list(self.manifest.get("secret_fields", SECRET_FIELDS))

    def __len__(self) -> int:
        return len(self._loaded.records)

    def get(self, key: str) -> dict | None:
        """The record of ``key`` (its first), or ``None``. Sees records other processes added since."""
        record = self._loaded.records.get(key)
        if record is None:
            with self._lock:
                self._refresh()
                record = self._loaded.records.get(key)
        return record

    def records(self) -> list[dict]:
        """Every record (the first of each key), sorted by key."""
        with self._lock:
            self._refresh()
            return [self._loaded.records[key] for key in sorted(self._loaded.records)]

    @property
    def damage(self) -> list[LogDamage]:
        """Lines of the log that are not complete records (a torn write, a damaged byte)."""
        return list(self._loaded.damage)

    @property
    def conflicts(self) -> dict[str, int]:
        """Keys recorded again with a different response: key -> how many later answers differed."""
        return dict(self._loaded.conflicts)

    @property
    def fingerprint(self) -> str:
        """sha256 of the format, kind and every (key, response), in key order: not of the log's order."""
        with self._lock:
            self._refresh()
            if self._fingerprint is None:
                digest = hashlib.sha256(f"{FROZEN_FORMAT}\0{self.kind}\0".encode())
                for key in sorted(self._loaded.records):
                    digest.update(f"{key} {canonical_json(self._loaded.records[key]['response'])}\n".encode())
                self._fingerprint = digest.hexdigest()
            return self._fingerprint

    # -- writing ---------------------------------------------------------------------------

    def add(self, request: Mapping[str, Any], response: Mapping[str, Any]) -> dict:
        """Append the record of ``request`` unless its key is already stored; returns the stored record
        (the earlier one when there was one: the first answer wins)."""
        return self.add_many([(request, response)])[0]

    def add_many(self, calls: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> list[dict]:
        """:meth:`add` for each ``(request, response)``, with one write and one ``fsync``; the stored records."""
        records = [{"key": request_key(request), "request": dict(request), "response": dict(response)}
                   for request, response in calls]
        with self._lock:
            descriptor = os.open(self.path / LOG_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX)
                self._refresh()
                lines, pending = [], set()
                for record in records:
                    if record["key"] not in self._loaded.records and record["key"] not in pending:
                        pending.add(record["key"])
                        payload = canonical_json(record).encode()
                        lines.append(f"{_checksum(payload)} ".encode() + payload + b"\n")
                if lines:
                    if self._ends_torn():
                        lines.insert(0, b"\n")  # close a torn line left by a killed writer
                    _write_all(descriptor, b"".join(lines))
                    os.fsync(descriptor)
                    self._refresh()
            finally:
                os.close(descriptor)  # releases the flock
            return [self._loaded.records[record["key"]] for record in records]

    def write_manifest(self, extra: Mapping[str, Any] | None = None) -> dict:
        """Rewrite ``manifest.json`` (atomically) with the counts, the log's sha256 and the fingerprint."""
        log = self.path / LOG_NAME
        with log.open("rb") as handle:
            content = handle.read()
        fingerprint = self.fingerprint
        manifest = dict(self.manifest, **(extra or {}))
        manifest.update(format=FROZEN_FORMAT, package_version=PACKAGE_VERSION, records=len(self), log_bytes=len(content),
                        files={LOG_NAME: hashlib.sha256(content).hexdigest()}, fingerprint=fingerprint)
        write_atomically(self.path / MANIFEST_NAME, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        self.manifest = manifest
        return manifest

    # -- internals -------------------------------------------------------------------------

    def _ends_torn(self) -> bool:
        loaded = self._loaded
        size = (self.path / LOG_NAME).stat().st_size
        return size > loaded.offset

    def _refresh(self) -> None:
        """Read the complete lines appended since the last read (by any process)."""
        loaded = self._loaded
        try:
            with (self.path / LOG_NAME).open("rb") as handle:
                handle.seek(loaded.offset)
                tail = handle.read()
        except FileNotFoundError:
            raise FrozenStoreError(f"damaged frozen store: {self.path / LOG_NAME} is missing") from None
        end = tail.rfind(b"\n") + 1
        start = 0
        for line in tail[:end].split(b"\n")[:-1]:
            self._take(line, loaded.offset + start)
            start += len(line) + 1
        loaded.offset += end

    def _take(self, line: bytes, offset: int) -> None:
        loaded = self._loaded
        checksum, _, payload = line.partition(b" ")
        if not payload or _checksum(payload) != checksum.decode("ascii", "replace"):
            loaded.damage.append(LogDamage(offset, "torn or damaged line (checksum differs); no record lost after it"))
            return
        record = json.loads(payload)
        self._fingerprint = None
        first = loaded.records.setdefault(record["key"], record)
        if first is not record:
            loaded.duplicates += 1
            if first["response"] != record["response"]:
                loaded.conflicts[record["key"]] = loaded.conflicts.get(record["key"], 0) + 1


def read_frozen_manifest(path: Path) -> dict:
    """The manifest of a frozen store; :class:`FrozenStoreError` naming the file when it is not one."""
    manifest = load_manifest_json(path, FrozenStoreError, "frozen store", "frozen store")
    manifest_path = Path(path) / MANIFEST_NAME
    written = manifest.get("format") if isinstance(manifest, dict) else None
    if isinstance(written, str) and written.startswith("stillweb-frozen/"):
        version = written.rpartition("/")[2]
        if version.isdigit() and int(version) > FORMAT_VERSION:
            raise FrozenStoreError(f"{manifest_path} was written by a newer stillweb (format {written}); this version "
                                   f"reads {FROZEN_FORMAT}: upgrade stillweb to use this store")
    if written != FROZEN_FORMAT or manifest.get("kind") not in UPSTREAM_KINDS:
        raise FrozenStoreError(f"{manifest_path} is not a {FROZEN_FORMAT} manifest (format {written!r})")
    return manifest


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temp file, ``fsync`` and ``rename``: readers see old or new, never half."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with temporary.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]
