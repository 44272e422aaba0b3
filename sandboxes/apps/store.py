"""One episode's app state: a private SQLite copy of the base, the acting user, the world
clock, the seeded transient errors, and the state fingerprint kept up to date on every write.

Every write goes through :meth:`AppSession.insert`, :meth:`~AppSession.update` or
:meth:`~AppSession.delete`, which adjust the per-table fingerprint sums
(:func:`stillweb.corpora.apps.schema.row_hash`) in O(1) per row, so
``info["state_fingerprint"]`` costs nothing per step. Reads of another user's rows
raise a ``permission_denied`` error; ids that do not exist raise ``not_found``.

The clock counts minutes since 2025-01-01 00:00; each endpoint call advances it one
minute and ``wait`` by more: nothing else moves it (no wall clock).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stillweb.corpora.errors import DataError, UsageError
from stillweb.corpora.apps.generate import START_MINUTE, AppWorldBase, day_text
from stillweb.corpora.apps.schema import FINGERPRINT_MOD, TABLES, Table, row_hash
from stillweb.sandboxes.tools.types import ToolInputError

__all__ = ["AppSession", "ErrorPlan", "api_error", "clock_text"]

# The kinds of transient error and their HTTP-like status codes.
TRANSIENT_STATUS = {"rate_limited": 429, "unavailable": 503, "timeout": 504}


def api_error(flag: str, kind: str, message: str, status: int, **details: Any) -> ToolInputError:
    """A typed API error: the flag the registry reports and ``{"error": {"type", "status", ...}}`` data."""
    return ToolInputError(flag, message, {"error": {"type": kind, "status": status, **details}})


def clock_text(minute: int) -> str:
    """``YYYY-MM-DDTHH:MM`` of a world-clock minute (minutes since 2025-01-01 00:00)."""
    day, rest = divmod(minute, 1440)
    return f"{day_text(min(day, 364))}T{rest // 60:02d}:{rest % 60:02d}"


@dataclass(frozen=True)
class ErrorPlan:
    """Which calls fail transiently: a keyed share ``rate`` of call indices, plus ``scripted``
    ``{call index: kind}`` (a recovery task's own errors). Keyed by (seed, task id, call index)."""

    seed: int = 0
    task_id: str = ""
    rate: float = 0.0
    scripted: Mapping[int, str] = field(default_factory=dict)

    def error_at(self, call_index: int) -> str | None:
        """The transient error kind of the ``call_index``-th call, or None."""
        if call_index in self.scripted:
            return self.scripted[call_index]
        if self.rate <= 0.0:
            return None
        digest = hashlib.blake2b(f"{self.seed}\x1f{self.task_id}\x1f{call_index}".encode(), digest_size=8).digest()
        draw = int.from_bytes(digest, "big")
        if draw / 2**64 >= self.rate:
            return None
        return ("rate_limited", "unavailable", "timeout")[draw % 3]


class AppSession:
    """The state of one episode, acting as user ``user`` (1-based) over a copy of ``base``."""

    def __init__(self, base: AppWorldBase, user: int, errors: ErrorPlan | None = None, state: bytes | None = None) -> None:
        if not 1 <= user <= base.users:
            raise UsageError(f"user must be in 1..{base.users}, got {user!r}")
        self.base = base
        self.user = user
        self.connection: sqlite3.Connection = base.connect()
        if state is not None:
            self.connection.deserialize(state)
        self.sums = dict(base.table_sums) if state is None else self._scan_sums()
        self.clock = START_MINUTE
        self.calls = 0
        self.errors = errors or ErrorPlan()
        self.waits = 0
        self._fingerprint: str | None = None
        self.rate_limited_until = -1
        self.journal: list[dict[str, Any]] = []  # every row written: table, id, before, after (None: absent)

    # -- clock and transient errors -------------------------------------------------------

    @property
    def now(self) -> str:
        """The world time as ``YYYY-MM-DDTHH:MM``."""
        return clock_text(self.clock)

    def begin_call(self) -> None:
        """Count one endpoint call and advance the clock; raise its transient error, if any."""
        index = self.calls
        self.calls += 1
        self.clock += 1
        if self.clock < self.rate_limited_until:
            wait = self.rate_limited_until - self.clock
            raise api_error("rate_limited", "RateLimited", f"429 Too Many Requests: still rate limited; retry after "
                            f"{wait} minute(s) of world time (call wait({{\"minutes\": {wait}}}) or retry later).", 429,
                            retry_after_minutes=wait)
        kind = self.errors.error_at(index)
        if kind == "rate_limited":
            self.rate_limited_until = self.clock + 2
            raise api_error("rate_limited", "RateLimited", "429 Too Many Requests: retry after 2 minute(s) of world time "
                            '(call wait({"minutes": 2}), then repeat the same call).', 429, retry_after_minutes=2)
        if kind == "unavailable":
            raise api_error("unavailable", "ServiceUnavailable", "503 Service Unavailable: nothing was changed; "
                            "repeat the same call.", 503)
        if kind == "timeout":
            raise api_error("timeout", "Timeout", "504 Gateway Timeout: the call timed out and nothing was changed; "
                            "repeat the same call.", 504)

    def wait(self, minutes: int) -> None:
        """Advance the world clock by ``minutes`` (the one way to let a rate limit pass)."""
        self.clock += minutes
        self.waits += 1

    # -- reads ----------------------------------------------------------------------------

    def select(self, sql: str, parameters: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of a read query as dicts."""
        cursor = self.connection.execute(sql, parameters)
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]

    def row(self, table: str, row_id: int) -> dict[str, Any] | None:
        """The row ``row_id`` of ``table`` (any owner), or None."""
        found = self.select(f"SELECT * FROM {table} WHERE id = ?", (row_id,))
        return found[0] if found else None

    def owned_row(self, table: str, row_id: int, label: str) -> dict[str, Any]:
        """The row if it exists and the user may see it; else a ``not_found`` or ``permission_denied`` error."""
        found = self.row(table, row_id)
        if found is None:
            raise api_error("not_found", "NotFound", f"404 Not Found: no {label} with id {row_id}. "
                            f"List them first (list_{table}) and use an id from the list.", 404, id=row_id)
        if TABLES[table].owned and found["owner"] != self.user:
            raise api_error("permission_denied", "PermissionDenied", f"403 Forbidden: {label} {row_id} belongs to another "
                            "user; you can only access your own data.", 403, id=row_id)
        return found

    # -- writes ---------------------------------------------------------------------------

    def insert(self, table: str, values: Mapping[str, Any]) -> int:
        """Insert a row (owner set to the user for owned tables); returns its id (max id + 1)."""
        spec = TABLES[table]
        row = {name: values.get(name) for name in spec.columns if name != "id"}
        if spec.owned:
            row["owner"] = self.user
        cursor = self.connection.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                                         list(row.values()))
        row["id"] = cursor.lastrowid
        self._add(spec, row, +1)
        self.journal.append({"table": table, "id": row["id"], "before": None, "after": row})
        return int(row["id"])

    def update(self, table: str, row_id: int, changes: Mapping[str, Any]) -> dict[str, Any]:
        """Change columns of row ``row_id``; returns the new row."""
        spec = TABLES[table]
        old = self.row(table, row_id)
        assert old is not None, f"update of a missing row {table}/{row_id}"
        new = {**old, **changes}
        if new == old:
            return new
        assignments = ", ".join(f"{name} = ?" for name in changes)
        self.connection.execute(f"UPDATE {table} SET {assignments} WHERE id = ?", [*changes.values(), row_id])
        self._add(spec, old, -1)
        self._add(spec, new, +1)
        self.journal.append({"table": table, "id": row_id, "before": old, "after": new})
        return new

    def delete(self, table: str, row_id: int) -> None:
        """Delete row ``row_id`` of ``table``."""
        old = self.row(table, row_id)
        if old is None:
            return
        self.connection.execute(f"DELETE FROM {table} WHERE id = ?", (row_id,))
        self._add(TABLES[table], old, -1)
        self.journal.append({"table": table, "id": row_id, "before": old, "after": None})

    def _add(self, spec: Table, row: dict[str, Any], sign: int) -> None:
        self.sums[spec.name] = (self.sums[spec.name] + sign * row_hash(spec, row)) % FINGERPRINT_MOD
        self._fingerprint = None

    # -- fingerprints ---------------------------------------------------------------------

    def fingerprint(self) -> str:
        """A hex digest of the whole state's content (every table's rows, stamps excluded)."""
        if self._fingerprint is None:
            payload = ",".join(f"{name}:{self.sums[name]:016x}" for name in sorted(self.sums))
            self._fingerprint = hashlib.blake2b(payload.encode(), digest_size=16).hexdigest()
        return self._fingerprint

    def changed_tables(self) -> list[str]:
        """The tables whose content differs from the base, sorted."""
        return sorted(name for name, total in self.sums.items() if total != self.base.table_sums[name])

    def state_bytes(self) -> bytes:
        """The serialized database (for determinism checks and state files)."""
        return self.connection.serialize()

    def _scan_sums(self) -> dict[str, int]:
        return {name: sum(row_hash(spec, row) for row in self.select(f"SELECT * FROM {name}")) % FINGERPRINT_MOD
                for name, spec in TABLES.items()}

    @classmethod
    def from_file(cls, base: AppWorldBase, user: int, path: str | Path, errors: ErrorPlan | None = None) -> AppSession:
        """A session over a state file saved from ``base``'s world (:meth:`state_bytes`); ``ValueError``
        naming the file when it is not an SQLite database, or not a state of this world."""
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as error:
            raise UsageError(f"cannot read app state file {path}: {error.strerror}") from None
        if not data.startswith(b"SQLite format 3\x00"):
            raise DataError(f"app state file {path} is not an SQLite database (corrupt or another kind of file)")
        try:
            session = cls(base, user, errors, state=data)
            world = session.connection.execute("SELECT snapshot, seed, users FROM _world").fetchone()
        except sqlite3.Error as error:
            raise UsageError(f"app state file {path} is not a readable app-world state: {error}") from None
        if world is None or tuple(world) != base.identity:
            session.close()
            raise UsageError(f"app state file {path} belongs to another world ({tuple(world) if world else 'no _world row'}), "
                             f"not (snapshot {base.snapshot_fingerprint[:12]}..., seed {base.seed}, users {base.users})")
        return session

    def close(self) -> None:
        """Release the database copy."""
        self.connection.close()
