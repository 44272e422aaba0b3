"""The tables of the app world: columns, owners and the state fingerprint.

Every table has an ``id INTEGER PRIMARY KEY`` (a new row takes max(id) + 1, so
creating and deleting a stray row leaves the next id unchanged). Tables with an
``owner`` column hold one user's data; the others (``users``, ``products``,
``flights``) are public. *Stamp* columns hold world-clock times: they are shown
to the agent but left out of the fingerprint, so two call sequences that reach the
same content in a different number of steps reach the same state.

The fingerprint of a table is the sum (mod 2**64) of a blake2b hash of each row,
so it is independent of row order and is updated in O(1) per written row.

>>> TABLES["contacts"].owned, "owner" in TABLES["contacts"].columns
(True, True)
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

__all__ = ["Table", "TABLES", "APP_OF_TABLE", "row_hash", "ddl", "FINGERPRINT_MOD"]

FINGERPRINT_MOD = 1 << 64


@dataclass(frozen=True)
class Table:
    """One table: its app, columns (name -> SQLite type) and stamp columns (world-clock times)."""

    name: str
    app: str
    columns: dict[str, str]
    stamps: tuple[str, ...] = ()

    @property
    def owned(self) -> bool:
        """True when each row belongs to one user (an ``owner`` column)."""
        return "owner" in self.columns

    @property
    def hashed_columns(self) -> tuple[str, ...]:
        """The columns the fingerprint covers: all but the stamps."""
        return tuple(name for name in self.columns if name not in self.stamps)


def _table(name: str, app: str, columns: str, stamps: tuple[str, ...] = ()) -> Table:
    pairs = [item.split(":") for item in columns.split()]
    return Table(name, app, {"id": "INTEGER", **{column: kind for column, kind in pairs}}, stamps)


_DEFINITIONS = (
    _table("users", "profile", "name:TEXT email:TEXT city:TEXT employer:TEXT"),
    _table("contacts", "contacts", "owner:INTEGER name:TEXT email:TEXT phone:TEXT city:TEXT company:TEXT "
           "birthday:TEXT favorite:INTEGER notes:TEXT"),
    _table("contact_groups", "contacts", "owner:INTEGER name:TEXT"),
    _table("group_members", "contacts", "owner:INTEGER group_id:INTEGER contact_id:INTEGER"),
    _table("events", "calendar", "owner:INTEGER title:TEXT day:TEXT start:TEXT minutes:INTEGER location:TEXT "
           "status:TEXT notes:TEXT"),
    _table("attendees", "calendar", "owner:INTEGER event_id:INTEGER contact_id:INTEGER response:TEXT"),
    _table("messages", "mail", "owner:INTEGER folder:TEXT correspondent:TEXT subject:TEXT body:TEXT read:INTEGER "
           "starred:INTEGER sent_at:TEXT", ("sent_at",)),
    _table("folders", "files", "owner:INTEGER name:TEXT"),
    _table("files", "files", "owner:INTEGER folder_id:INTEGER name:TEXT content:TEXT size:INTEGER modified_at:TEXT",
           ("modified_at",)),
    _table("file_shares", "files", "owner:INTEGER file_id:INTEGER user_id:INTEGER permission:TEXT"),
    _table("accounts", "payments", "owner:INTEGER name:TEXT balance:INTEGER currency:TEXT"),
    _table("payees", "payments", "owner:INTEGER name:TEXT email:TEXT"),
    _table("transactions", "payments", "owner:INTEGER account_id:INTEGER counterparty:TEXT amount:INTEGER memo:TEXT "
           "status:TEXT at:TEXT", ("at",)),
    _table("products", "shop", "title:TEXT kind:TEXT creator:TEXT price:INTEGER stock:INTEGER"),
    _table("orders", "shop", "owner:INTEGER product_id:INTEGER quantity:INTEGER total:INTEGER status:TEXT "
           "placed_at:TEXT", ("placed_at",)),
    _table("cart_items", "shop", "owner:INTEGER product_id:INTEGER quantity:INTEGER"),
    _table("reviews", "shop", "owner:INTEGER product_id:INTEGER stars:INTEGER text:TEXT"),
    _table("flights", "travel", "origin:TEXT destination:TEXT day:TEXT depart:TEXT price:INTEGER seats:INTEGER"),
    _table("bookings", "travel", "owner:INTEGER flight_id:INTEGER passengers:INTEGER total:INTEGER status:TEXT "
           "booked_at:TEXT", ("booked_at",)),
    _table("todo_lists", "todo", "owner:INTEGER name:TEXT"),
    _table("todos", "todo", "owner:INTEGER list_id:INTEGER title:TEXT due:TEXT priority:INTEGER done:INTEGER"),
)
# Every table by name, in creation order.
TABLES: dict[str, Table] = {table.name: table for table in _DEFINITIONS}
APP_OF_TABLE = {table.name: table.app for table in _DEFINITIONS}


def ddl(table: Table) -> str:
    """The ``CREATE TABLE`` statement (and the owner index) of ``table``."""
    columns = ", ".join(f"{name} {kind}{' PRIMARY KEY' if name == 'id' else ''}" for name, kind in table.columns.items())
    statement = f"CREATE TABLE {table.name} ({columns});"
    if table.owned:
        statement += f"\nCREATE INDEX {table.name}_owner ON {table.name} (owner, id);"
    return statement


def row_hash(table: Table, row: dict[str, Any]) -> int:
    """The fingerprint contribution of one row (its non-stamp columns), a 64-bit integer."""
    payload = json.dumps([table.name, [row.get(name) for name in table.hashed_columns]], ensure_ascii=False,
                         separators=(",", ":"))
    return int.from_bytes(hashlib.blake2b(payload.encode("utf-8"), digest_size=8).digest(), "big")
