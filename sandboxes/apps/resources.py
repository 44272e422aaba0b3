"""Generic endpoints of a resource (a table): list (paginated, filtered), get, create,
update and delete, each with a JSON schema made from the resource's fields.

A :class:`Resource` names its table, singular label, fields (:class:`Field`: JSON type,
limits, whether create requires it, whether update may change it, whether list filters
on it, and the table an id field refers to), which operations it offers, and the
text fields ``query`` searches. Lists return ``{"items", "page", "page_size",
"total", "next_page"}`` (``next_page`` null on the last page), ordered by id.
Referenced ids are checked: a missing one is ``not_found``, another user's is
``permission_denied``. Booleans are stored as 0/1 and shown as true/false.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stillweb.corpora.apps.schema import TABLES
from stillweb.sandboxes.apps.endpoint import AppEndpoint
from stillweb.sandboxes.apps.store import AppSession, api_error

__all__ = ["Field", "Resource", "endpoints_of", "show_row", "check_refs", "PAGE_SIZE", "MAX_PAGE_SIZE", "id_schema"]

PAGE_SIZE = 10
MAX_PAGE_SIZE = 50


@dataclass(frozen=True)
class Field:
    """A column as the API shows it: ``kind`` is ``string``, ``integer``, ``boolean`` or ``id``."""

    kind: str = "string"
    required: bool = False
    writable: bool = True
    filter: bool = False
    ref: str | None = None
    enum: tuple[str, ...] = ()
    max_length: int = 200
    minimum: int | None = None
    maximum: int | None = None
    default: Any = None
    description: str = ""

    def schema(self) -> dict:
        """The JSON schema of the field's value."""
        if self.kind in ("integer", "id"):
            schema: dict[str, Any] = {"type": "integer"}
            low = 1 if self.kind == "id" else self.minimum
            if low is not None:
                schema["minimum"] = low
            if self.maximum is not None:
                schema["maximum"] = self.maximum
        elif self.kind == "boolean":
            schema = {"type": "boolean"}
        else:
            schema = {"type": "string", "maxLength": self.max_length}
            if self.enum:
                schema["enum"] = list(self.enum)
            elif self.required:
                schema["minLength"] = 1
        if self.description:
            schema["description"] = self.description
        return schema


@dataclass(frozen=True)
class Resource:
    """A table offered through generic endpoints (``ops``: letters of ``lgcud``).

    ``names`` overrides an operation's endpoint name (e.g. ``{"c": "add_group_member"}``);
    ``children`` are deleted with a row (``(table, column)``); ``blockers`` forbid deleting
    a row that still has such children (a ``conflict``); ``derive`` fills computed columns.
    """

    table: str
    label: str
    fields: dict[str, Field]
    ops: str = "lgcud"
    query: tuple[str, ...] = ()
    names: dict[str, str] = field(default_factory=dict)
    children: tuple[tuple[str, str], ...] = ()
    blockers: tuple[tuple[str, str], ...] = ()
    derive: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    unique: tuple[str, ...] = ()

    def endpoint_name(self, op: str) -> str:
        """The endpoint name of operation ``op``."""
        default = {"l": f"list_{self.table}", "g": f"get_{self.label}", "c": f"create_{self.label}",
                   "u": f"update_{self.label}", "d": f"delete_{self.label}"}[op]
        return self.names.get(op, default)


def id_schema(label: str) -> dict:
    """The schema of an id argument naming one ``label``."""
    return {"type": "integer", "minimum": 1, "description": f"the {label}'s id"}


def _object(properties: dict, required: list[str], **extra: Any) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False, **extra}


def show_row(table: str, row: dict[str, Any], fields: dict[str, Field] | None = None) -> dict[str, Any]:
    """A row as the API shows it: no ``owner``, booleans (per ``fields``) as true/false."""
    booleans = _booleans(table, fields)
    return {name: (bool(value) if name in booleans else value) for name, value in row.items() if name != "owner"}


_BOOLEANS: dict[str, frozenset[str]] = {}


def _booleans(table: str, fields: dict[str, Field] | None) -> frozenset[str]:
    if not fields:
        return frozenset()
    if table not in _BOOLEANS:
        _BOOLEANS[table] = frozenset(name for name, spec in fields.items() if spec.kind == "boolean")
    return _BOOLEANS[table]


def check_refs(session: AppSession, resource: Resource, values: dict[str, Any]) -> None:
    """Every id field in ``values`` names a row the user may use (else not_found / permission_denied)."""
    for name, value in values.items():
        spec = resource.fields.get(name)
        if spec is not None and spec.ref is not None and value is not None:
            session.owned_row(spec.ref, value, spec.ref.rstrip("s").replace("_", " "))


def _stored(resource: Resource, arguments: dict[str, Any]) -> dict[str, Any]:
    values = {name: (int(value) if resource.fields[name].kind == "boolean" else value)
              for name, value in arguments.items() if name in resource.fields}
    return values


def endpoints_of(resource: Resource, app: str) -> list[AppEndpoint]:
    """The generic endpoints of ``resource`` (in ``lgcud`` order)."""
    makers = {"l": _list_endpoint, "g": _get_endpoint, "c": _create_endpoint, "u": _update_endpoint, "d": _delete_endpoint}
    return [makers[op](resource, app) for op in "lgcud" if op in resource.ops]


def _list_endpoint(resource: Resource, app: str) -> AppEndpoint:
    table, fields = resource.table, resource.fields
    filters = {name: spec for name, spec in fields.items() if spec.filter}
    properties = {name: spec.schema() for name, spec in filters.items()}
    if resource.query:
        properties["query"] = {"type": "string", "maxLength": 100,
                               "description": f"case-insensitive text to find in {' or '.join(resource.query)}"}
    properties["page"] = {"type": "integer", "minimum": 1, "default": 1, "description": "page number, from 1"}
    properties["page_size"] = {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE, "default": PAGE_SIZE}
    owned = TABLES[table].owned
    shown = ", ".join(name for name in TABLES[table].columns if name != "owner")
    booleans = [name for name, spec in fields.items() if spec.kind == "boolean"]

    def handler(session: AppSession, arguments: dict) -> dict:
        clauses, values = (["owner = ?"], [session.user]) if owned else ([], [])
        for name in filters:
            if name in arguments:
                clauses.append(f"{name} = ?")
                value = arguments[name]
                values.append(int(value) if fields[name].kind == "boolean" else value)
        if arguments.get("query"):
            clauses.append("(" + " OR ".join(f"instr(lower({column}), ?) > 0" for column in resource.query) + ")")
            values.extend([arguments["query"].lower()] * len(resource.query))
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        page, size = arguments.get("page", 1), arguments.get("page_size", PAGE_SIZE)
        total = session.connection.execute(f"SELECT count(*) FROM {table}{where}", values).fetchone()[0]
        rows = session.select(f"SELECT {shown} FROM {table}{where} ORDER BY id LIMIT ? OFFSET ?", [*values, size, (page - 1) * size])
        for row in rows if booleans else ():
            for name in booleans:
                row[name] = bool(row[name])
        return {"items": rows, "page": page, "page_size": size, "total": total,
                "next_page": page + 1 if page * size < total else None}

    filter_text = f" Filters: {', '.join(filters)}." if filters else ""
    description = (f"List your {table.replace('_', ' ')}, {PAGE_SIZE} per page by default (page_size up to {MAX_PAGE_SIZE}); "
                   f"follow next_page until it is null to see them all.{filter_text}")
    if not owned:
        description = description.replace("your ", "the ")
    return AppEndpoint(resource.endpoint_name("l"), app, description, _object(properties, []), {"page": 1}, handler, writes=False)


def _get_endpoint(resource: Resource, app: str) -> AppEndpoint:
    def handler(session: AppSession, arguments: dict) -> dict:
        return {resource.label: show_row(resource.table, session.owned_row(resource.table, arguments["id"], resource.label),
                                         resource.fields)}

    return AppEndpoint(resource.endpoint_name("g"), app, f"Get one {resource.label.replace('_', ' ')} by id.",
                       _object({"id": id_schema(resource.label)}, ["id"]), {"id": 1}, handler, writes=False)


def _create_endpoint(resource: Resource, app: str) -> AppEndpoint:
    writable = {name: spec for name, spec in resource.fields.items() if spec.writable}
    required = [name for name, spec in writable.items() if spec.required]

    def handler(session: AppSession, arguments: dict) -> dict:
        check_refs(session, resource, arguments)
        values = {name: spec.default for name, spec in resource.fields.items()}
        values.update(_stored(resource, arguments))
        if resource.unique:
            existing = session.select(f"SELECT id FROM {resource.table} WHERE owner = ? AND "
                                      + " AND ".join(f"{name} = ?" for name in resource.unique),
                                      [session.user, *(values[name] for name in resource.unique)])
            if existing:
                raise api_error("conflict", "Conflict", f"409 Conflict: that {resource.label.replace('_', ' ')} already exists "
                                f"(id {existing[0]['id']}).", 409, id=existing[0]["id"])
        if resource.derive is not None:
            values.update(resource.derive(values))
        values.update({stamp: session.now for stamp in TABLES[resource.table].stamps})
        values["id"] = session.insert(resource.table, values)
        return {"created": show_row(resource.table, session.row(resource.table, values["id"]) or values, resource.fields)}

    example = {name: _example_value(spec) for name, spec in writable.items() if spec.required}
    return AppEndpoint(resource.endpoint_name("c"), app, f"Create a {resource.label.replace('_', ' ')}.",
                       _object({name: spec.schema() for name, spec in writable.items()}, required), example, handler, writes=True)


def _update_endpoint(resource: Resource, app: str) -> AppEndpoint:
    writable = {name: spec for name, spec in resource.fields.items() if spec.writable}

    def handler(session: AppSession, arguments: dict) -> dict:
        session.owned_row(resource.table, arguments["id"], resource.label)
        changes = _stored(resource, {name: value for name, value in arguments.items() if name != "id"})
        check_refs(session, resource, changes)
        if resource.derive is not None:
            current = {**(session.row(resource.table, arguments["id"]) or {}), **changes}
            changes.update(resource.derive(current))
        changes.update({stamp: session.now for stamp in TABLES[resource.table].stamps})
        new = session.update(resource.table, arguments["id"], changes)
        return {"updated": show_row(resource.table, new, resource.fields)}

    properties = {"id": id_schema(resource.label), **{name: spec.schema() for name, spec in writable.items()}}
    first = next(iter(writable))
    return AppEndpoint(resource.endpoint_name("u"), app,
                       f"Change fields of a {resource.label.replace('_', ' ')} (give the id and at least one field: "
                       f"{', '.join(writable)}).", _object(properties, ["id"], minProperties=2),
                       {"id": 1, first: _example_value(writable[first])}, handler, writes=True)


def _delete_endpoint(resource: Resource, app: str) -> AppEndpoint:
    def handler(session: AppSession, arguments: dict) -> dict:
        row_id = arguments["id"]
        session.owned_row(resource.table, row_id, resource.label)
        for table, column in resource.blockers:
            if session.connection.execute(f"SELECT 1 FROM {table} WHERE {column} = ? LIMIT 1", (row_id,)).fetchone():
                raise api_error("conflict", "Conflict", f"409 Conflict: {resource.label} {row_id} still has "
                                f"{table.replace('_', ' ')}; move or delete them first.", 409, id=row_id)
        for table, column in resource.children:
            for child in session.select(f"SELECT id FROM {table} WHERE {column} = ? ORDER BY id", (row_id,)):
                session.delete(table, child["id"])
        session.delete(resource.table, row_id)
        return {"deleted": row_id}

    return AppEndpoint(resource.endpoint_name("d"), app, f"Delete a {resource.label.replace('_', ' ')} by id.",
                       _object({"id": id_schema(resource.label)}, ["id"]), {"id": 1}, handler, writes=True)


def _example_value(spec: Field) -> Any:
    if spec.kind in ("integer", "id"):
        return spec.minimum if spec.minimum is not None and spec.kind == "integer" else 1
    if spec.kind == "boolean":
        return True
    return spec.enum[0] if spec.enum else "text"
