"""The seeded base database of the app world, made once per (snapshot, seed, users).

:func:`build_base` reads the snapshot's people, cities, companies and works (from
the infobox facts, the same names a search agent sees), makes each of the first
``users`` people an app user, and fills every app with that user's data: contacts
drawn from the other people, calendar events in the world's cities, mail with
those contacts, files, bank accounts and payments, shop orders of the world's
books, films and albums, flight bookings between its cities, and to-do lists.
Every choice is ``KeyedRng(seed, "apps", table, user, ...)``, so a user's data
does not depend on how many users there are.

The result is an :class:`AppWorldBase`: the serialized SQLite bytes (an episode
deserializes a private copy in well under a millisecond per megabyte), the
per-table fingerprints and the users. :func:`shared_base` caches it per process.
"""

from __future__ import annotations

import functools
import sqlite3
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.corpora.apps.schema import FINGERPRINT_MOD, TABLES, ddl, row_hash
from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.snapshot.reading import Snapshot

__all__ = ["AppWorldBase", "WorldNames", "build_base", "shared_base", "world_names", "DEFAULT_USERS", "START_MINUTE"]

DEFAULT_USERS = 40
START_MINUTE = (31 + 28 + 2) * 1440 + 9 * 60  # 2025-03-03 09:00, in minutes since 2025-01-01 00:00
_WORK_CREATOR = {"infobox book": ("book", "author"), "infobox film": ("film", "director"),
                 "infobox album": ("album", "performer")}
_FOLDERS = ("Documents", "Photos", "Work")
_TODO_LISTS = ("Personal", "Errands")
_TOPICS = ("project update", "lunch plans", "invoice", "weekend trip", "book club", "quarterly report",
           "meeting notes", "birthday party", "contract", "travel itinerary")
_EVENT_KINDS = ("Lunch with", "Meeting with", "Call with", "Coffee with", "Review with")
_CHORES = ("renew passport", "buy groceries", "call the bank", "water the plants", "pay rent", "book dentist",
           "return library books", "fix the bike", "send thank-you notes", "clean the garage")


@dataclass(frozen=True)
class WorldNames:
    """The synthetic world's names the apps use: people, cities, companies and works (kind, title, creator)."""

    people: tuple[str, ...]
    cities: tuple[str, ...]
    companies: tuple[str, ...]
    works: tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class AppWorldBase:
    """The seeded base state: SQLite bytes, per-table fingerprints, user names, and what made it."""

    data: bytes
    table_sums: dict[str, int]
    user_names: tuple[str, ...]
    snapshot_fingerprint: str
    seed: int

    @property
    def users(self) -> int:
        """How many users the world has (user ids are 1..users)."""
        return len(self.user_names)

    @property
    def identity(self) -> tuple[str, int, int]:
        """(snapshot fingerprint, seed, users): what a state file must match (its ``_world`` row)."""
        return (self.snapshot_fingerprint, self.seed, self.users)

    def connect(self) -> sqlite3.Connection:
        """A private in-memory copy of the base database (writes never reach the base)."""
        connection = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        connection.deserialize(self.data)
        return connection


def world_names(snapshot: Snapshot) -> WorldNames:
    """The people, cities, companies and works of ``snapshot``, from its infobox facts (sorted by doc id)."""
    table = snapshot.facts_table
    columns = [table.column(name).to_pylist() for name in ("subject", "relation", "value", "template")]
    kinds: dict[str, dict[int, str]] = {"person": {}, "city": {}, "company": {}}
    creators: dict[int, tuple[str, str]] = {}
    for subject, relation, value, template in zip(*columns):
        kind = {"infobox person": "person", "infobox settlement": "city", "infobox company": "company"}.get(template)
        if kind is not None:
            if subject not in kinds[kind]:
                kinds[kind][subject] = _plain_title(snapshot.title_of(subject))
        elif template in _WORK_CREATOR and relation == _WORK_CREATOR[template][1] and subject not in creators:
            creators[subject] = (_WORK_CREATOR[template][0], _plain_title(value))
    works = tuple((kind, _plain_title(snapshot.title_of(subject)), creator) for subject, (kind, creator) in sorted(creators.items()))
    names = WorldNames(*(tuple(kinds[kind][key] for key in sorted(kinds[kind])) for kind in ("person", "city", "company")), works)
    if len(names.people) < 8 or len(names.cities) < 3 or not names.works:
        raise UsageError(f"snapshot {snapshot.path} has too few people, cities or works for the app world "
                         f"({len(names.people)} people, {len(names.cities)} cities, {len(names.works)} works): build a synthetic one")
    return names


def build_base(snapshot: Snapshot, seed: int = 0, users: int = DEFAULT_USERS) -> AppWorldBase:
    """The seeded base database of ``users`` users over ``snapshot``'s world.

    Raises ``ValueError`` when ``users`` is not in 1..(number of people in the snapshot).
    """
    names = world_names(snapshot)
    if isinstance(users, bool) or not isinstance(users, int) or not 1 <= users <= len(names.people):
        raise UsageError(f"users must be an integer in 1..{len(names.people)} (the people of snapshot {snapshot.path}), got {users!r}")
    connection = sqlite3.connect(":memory:", isolation_level=None)
    for table in TABLES.values():
        connection.executescript(ddl(table))
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    _fill_public(rows, names, seed)
    for user in range(1, users + 1):
        _fill_user(rows, names, seed, user, users)
    sums = {}
    connection.execute("BEGIN")
    for name, table_rows in rows.items():
        columns = list(TABLES[name].columns)
        for index, row in enumerate(table_rows, start=1):
            row["id"] = index
        connection.executemany(f"INSERT INTO {name} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                               [[row.get(column) for column in columns] for row in table_rows])
        sums[name] = sum(row_hash(TABLES[name], row) for row in table_rows) % FINGERPRINT_MOD
    connection.execute("CREATE TABLE _world (snapshot TEXT, seed INTEGER, users INTEGER)")
    connection.execute("INSERT INTO _world VALUES (?, ?, ?)", (snapshot.fingerprint, seed, users))
    connection.execute("COMMIT")
    data = connection.serialize()
    connection.close()
    return AppWorldBase(data, sums, names.people[:users], snapshot.fingerprint, seed)


@functools.lru_cache(maxsize=8)
def shared_base(snapshot_path: str, seed: int, users: int) -> AppWorldBase:
    """:func:`build_base` once per process for each (resolved snapshot path, seed, users)."""
    return build_base(Snapshot.open(Path(snapshot_path)), seed, users)


def email_of(name: str) -> str:
    """The world's e-mail address of a person: ``first.last@mail.example`` in plain ASCII."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii").lower()
    local = ".".join("".join(ch for ch in part if ch.isalnum()) for part in folded.split())
    return f"{local.strip('.') or 'user'}@mail.example"


def day_text(day_index: int) -> str:
    """``YYYY-MM-DD`` of the ``day_index``-th day of 2025 (0 = January 1)."""
    lengths = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    month = 0
    while month < 11 and day_index >= lengths[month]:
        day_index -= lengths[month]
        month += 1
    return f"2025-{month + 1:02d}-{day_index + 1:02d}"


def _plain_title(title: str) -> str:
    """A title without its disambiguating qualifier: ``Letho (city)`` -> ``Letho``."""
    return title.split(" (")[0] if title.endswith(")") and " (" in title else title


def _fill_public(rows: dict[str, list[dict[str, Any]]], names: WorldNames, seed: int) -> None:
    for index, (kind, title, creator) in enumerate(names.works):
        rng = KeyedRng(seed, "apps", "product", index)
        rows["products"].append({"title": title, "kind": kind, "creator": creator,
                                 "price": rng.integer(5, 60), "stock": rng.integer(0, 12)})
    cities = names.cities[:12]
    for origin in cities:
        for destination in cities:
            if origin == destination:
                continue
            rng = KeyedRng(seed, "apps", "flight", origin, destination)
            for _ in range(2):
                rows["flights"].append({"origin": origin, "destination": destination, "day": day_text(rng.integer(62, 119)),
                                        "depart": f"{rng.integer(6, 21):02d}:{rng.choice((0, 15, 30, 45)):02d}",
                                        "price": rng.integer(60, 600), "seats": rng.integer(0, 9)})


def _fill_user(rows: dict[str, list[dict[str, Any]]], names: WorldNames, seed: int, user: int, users: int) -> None:
    def rng(*path: str | int) -> KeyedRng:
        return KeyedRng(seed, "apps", user, *path)

    name = names.people[user - 1]
    pick = rng("profile")
    rows["users"].append({"name": name, "email": email_of(name), "city": pick.choice(names.cities),
                          "employer": pick.choice(names.companies) if names.companies else None})
    others = [person for person in names.people if person != name]
    friends = rng("contacts").sample(others, min(12, len(others)))
    contact_ids = []
    for number, friend in enumerate(friends):
        r = rng("contact", number)
        rows["contacts"].append({"owner": user, "name": friend, "email": email_of(friend),
                                 "phone": f"555-{r.integer(1000, 9999)}", "city": r.choice(names.cities),
                                 "company": r.choice(names.companies) if names.companies else None,
                                 "birthday": day_text(r.integer(0, 364)), "favorite": int(r.chance(0.25)), "notes": ""})
        contact_ids.append(len(rows["contacts"]))
    for number, group in enumerate(("Family", "Colleagues")):
        rows["contact_groups"].append({"owner": user, "name": group})
        group_id = len(rows["contact_groups"])
        for contact in rng("group", number).sample(contact_ids, 2):
            rows["group_members"].append({"owner": user, "group_id": group_id, "contact_id": contact})
    for number in range(8):
        r = rng("event", number)
        friend = r.choice(friends)
        rows["events"].append({"owner": user, "title": f"{r.choice(_EVENT_KINDS)} {friend}", "day": day_text(r.integer(60, 119)),
                               "start": f"{r.integer(8, 18):02d}:{r.choice((0, 30)):02d}", "minutes": r.choice((30, 60, 90)),
                               "location": r.choice(names.cities), "status": "confirmed", "notes": ""})
        rows["attendees"].append({"owner": user, "event_id": len(rows["events"]), "contact_id": contact_ids[friends.index(friend)],
                                  "response": r.choice(("pending", "accepted", "declined"))})
    for number in range(24):
        r = rng("message", number)
        friend = r.choice(friends)
        folder = r.weighted_choice(("inbox", "sent", "archive"), (6, 3, 1))
        rows["messages"].append({"owner": user, "folder": folder, "correspondent": email_of(friend),
                                 "subject": f"{r.choice(_TOPICS).capitalize()} #{number + 1}",
                                 "body": f"Hello, a note from {friend if folder == 'inbox' else name} about {r.choice(_TOPICS)}.",
                                 "read": int(folder != "inbox" or r.chance(0.5)), "starred": int(r.chance(0.15)),
                                 "sent_at": f"{day_text(r.integer(0, 60))}T{r.integer(7, 22):02d}:{r.integer(0, 59):02d}"})
    for number, folder in enumerate(_FOLDERS):
        rows["folders"].append({"owner": user, "name": folder})
        folder_id = len(rows["folders"])
        for item in range(2 + number % 2):
            r = rng("file", number, item)
            content = f"{folder} note {item + 1}: {r.choice(_TOPICS)} in {r.choice(names.cities)}."
            rows["files"].append({"owner": user, "folder_id": folder_id, "name": f"{folder.lower()}-{item + 1}.txt",
                                  "content": content, "size": len(content), "modified_at": f"{day_text(r.integer(0, 60))}T12:00"})
    if users > 1:  # the first file is shared with the next user (the one place users' data meet)
        first_file = len(rows["files"]) - 6
        rows["file_shares"].append({"owner": user, "file_id": first_file, "user_id": user % users + 1, "permission": "view"})
    for number, account in enumerate(("Checking", "Savings")):
        r = rng("account", number)
        rows["accounts"].append({"owner": user, "name": account, "balance": r.integer(200, 5000), "currency": "USD"})
    account_id = len(rows["accounts"]) - 1
    for number, friend in enumerate(friends[:4]):
        rows["payees"].append({"owner": user, "name": friend, "email": email_of(friend)})
    for number in range(18):
        r = rng("transaction", number)
        rows["transactions"].append({"owner": user, "account_id": account_id, "counterparty": r.choice(friends + list(names.companies[:5])),
                                     "amount": -r.integer(3, 250) if r.chance(0.8) else r.integer(20, 900),
                                     "memo": r.choice(_TOPICS), "status": "completed",
                                     "at": f"{day_text(r.integer(0, 60))}T{r.integer(7, 22):02d}:00"})
    products = len(rows["products"]) or 1
    for number in range(4):
        r = rng("order", number)
        product = r.integer(1, products)
        quantity = r.integer(1, 3)
        rows["orders"].append({"owner": user, "product_id": product, "quantity": quantity,
                               "total": quantity * rows["products"][product - 1]["price"],
                               "status": r.choice(("placed", "shipped", "delivered")), "placed_at": f"{day_text(r.integer(30, 60))}T10:00"})
    r = rng("cart")
    rows["cart_items"].append({"owner": user, "product_id": r.integer(1, products), "quantity": 1})
    rows["reviews"].append({"owner": user, "product_id": r.integer(1, products), "stars": r.integer(1, 5), "text": "Worth it."})
    flights = len(rows["flights"])
    for number in range(2):
        r = rng("booking", number)
        flight = r.integer(1, flights)
        passengers = r.integer(1, 2)
        rows["bookings"].append({"owner": user, "flight_id": flight, "passengers": passengers,
                                 "total": passengers * rows["flights"][flight - 1]["price"], "status": "booked",
                                 "booked_at": f"{day_text(r.integer(30, 60))}T09:00"})
    for number, todo_list in enumerate(_TODO_LISTS):
        rows["todo_lists"].append({"owner": user, "name": todo_list})
        list_id = len(rows["todo_lists"])
        for item in rng("todos", number).sample(_CHORES, 4):
            r = rng("todo", number, item)
            rows["todos"].append({"owner": user, "list_id": list_id, "title": item, "due": day_text(r.integer(62, 100)),
                                  "priority": r.integer(1, 3), "done": int(r.chance(0.3))})
