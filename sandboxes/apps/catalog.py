"""The resources of the eight apps (profile, contacts, calendar, mail, files, payments,
shop, travel, to-do), served through the generic endpoints of :mod:`.resources`.

The actions that are more than a row write (sending mail, paying, checking out,
booking) live in :mod:`.actions`.
"""

from __future__ import annotations

from stillweb.sandboxes.apps.resources import Field, Resource

__all__ = ["RESOURCES"]

_TEXT = Field()
_NAME_FIELD = Field(required=True, filter=True, max_length=100)


def _size(values: dict) -> dict:
    return {"size": len(values.get("content") or "")}


# (app, resource) pairs, in the order the endpoints are listed.
RESOURCES: tuple[tuple[str, Resource], ...] = (
    ("profile", Resource("users", "user", {"name": Field(writable=False), "email": Field(writable=False, filter=True),
                                           "city": Field(writable=False, filter=True), "employer": Field(writable=False)},
                         ops="lg", query=("name",))),
    ("contacts", Resource("contacts", "contact", {
        "name": _NAME_FIELD, "email": Field(filter=True), "phone": Field(max_length=40), "city": Field(filter=True),
        "company": Field(filter=True), "birthday": Field(max_length=10, description="YYYY-MM-DD"),
        "favorite": Field(kind="boolean", filter=True, default=0), "notes": Field(max_length=1000, default="")},
        query=("name", "email"))),
    ("contacts", Resource("contact_groups", "contact_group", {"name": _NAME_FIELD}, children=(("group_members", "group_id"),))),
    ("contacts", Resource("group_members", "group_member", {
        "group_id": Field(kind="id", required=True, filter=True, ref="contact_groups"),
        "contact_id": Field(kind="id", required=True, filter=True, ref="contacts")},
        ops="lcd", names={"c": "add_group_member", "d": "remove_group_member"}, unique=("group_id", "contact_id"))),
    ("calendar", Resource("events", "event", {
        "title": Field(required=True, max_length=200), "day": Field(required=True, filter=True, max_length=10, description="YYYY-MM-DD"),
        "start": Field(required=True, max_length=5, description="HH:MM"),
        "minutes": Field(kind="integer", minimum=5, maximum=1440, default=60), "location": Field(filter=True),
        "status": Field(writable=False, filter=True, default="confirmed"), "notes": Field(max_length=1000, default="")},
        query=("title",), children=(("attendees", "event_id"),))),
    ("calendar", Resource("attendees", "attendee", {
        "event_id": Field(kind="id", required=True, filter=True, ref="events"),
        "contact_id": Field(kind="id", required=True, writable=True, ref="contacts"),
        "response": Field(enum=("pending", "accepted", "declined"), filter=True, default="pending")},
        ops="lcud", names={"c": "invite_attendee", "d": "remove_attendee"}, unique=("event_id", "contact_id"))),
    ("mail", Resource("messages", "message", {
        "folder": Field(enum=("inbox", "sent", "archive", "trash"), filter=True),
        "correspondent": Field(writable=False, filter=True), "subject": Field(writable=False), "body": Field(writable=False),
        "read": Field(kind="boolean", filter=True), "starred": Field(kind="boolean", filter=True),
        "sent_at": Field(writable=False)}, ops="lgud", query=("subject", "body", "correspondent"))),
    ("files", Resource("folders", "folder", {"name": _NAME_FIELD}, blockers=(("files", "folder_id"),))),
    ("files", Resource("files", "file", {
        "folder_id": Field(kind="id", required=True, filter=True, ref="folders"),
        "name": Field(required=True, filter=True, max_length=100), "content": Field(max_length=5000, default=""),
        "size": Field(kind="integer", writable=False), "modified_at": Field(writable=False)},
        query=("name", "content"), derive=_size, children=(("file_shares", "file_id"),))),
    ("files", Resource("file_shares", "file_share", {
        "file_id": Field(kind="id", required=True, filter=True, ref="files"),
        "user_id": Field(kind="id", required=True, filter=True, ref="users"),
        "permission": Field(enum=("view", "edit"), default="view")},
        ops="lcd", names={"c": "share_file", "d": "unshare_file"}, unique=("file_id", "user_id"))),
    ("payments", Resource("accounts", "account", {
        "name": Field(required=True, max_length=100), "balance": Field(kind="integer", writable=False),
        "currency": Field(writable=False)}, ops="lgu")),
    ("payments", Resource("payees", "payee", {"name": _NAME_FIELD, "email": Field(required=True, filter=True)}, query=("name",))),
    ("payments", Resource("transactions", "transaction", {
        "account_id": Field(kind="id", filter=True, ref="accounts"), "counterparty": Field(filter=True),
        "amount": Field(kind="integer"), "memo": Field(), "status": Field(filter=True), "at": Field()},
        ops="lg", query=("counterparty", "memo"))),
    ("shop", Resource("products", "product", {
        "title": Field(), "kind": Field(enum=("book", "film", "album"), filter=True), "creator": Field(filter=True),
        "price": Field(kind="integer"), "stock": Field(kind="integer")}, ops="lg", query=("title", "creator"))),
    ("shop", Resource("orders", "order", {
        "product_id": Field(kind="id", filter=True, ref="products"), "quantity": Field(kind="integer"),
        "total": Field(kind="integer"), "status": Field(filter=True, enum=("placed", "shipped", "delivered", "cancelled")),
        "placed_at": Field()}, ops="lg")),
    ("shop", Resource("cart_items", "cart_item", {
        "product_id": Field(kind="id", required=True, writable=True, ref="products"),
        "quantity": Field(kind="integer", minimum=1, maximum=10, default=1)},
        ops="lcud", names={"c": "add_to_cart", "u": "update_cart_item", "d": "remove_from_cart"}, unique=("product_id",))),
    ("shop", Resource("reviews", "review", {
        "product_id": Field(kind="id", required=True, filter=True, ref="products"),
        "stars": Field(kind="integer", required=True, minimum=1, maximum=5), "text": Field(max_length=2000, default="")},
        unique=("product_id",))),
    ("travel", Resource("flights", "flight", {
        "origin": Field(filter=True), "destination": Field(filter=True), "day": Field(filter=True), "depart": Field(),
        "price": Field(kind="integer"), "seats": Field(kind="integer")}, ops="lg")),
    ("travel", Resource("bookings", "booking", {
        "flight_id": Field(kind="id", filter=True, ref="flights"), "passengers": Field(kind="integer"),
        "total": Field(kind="integer"), "status": Field(filter=True, enum=("booked", "cancelled")), "booked_at": Field()},
        ops="lg")),
    ("todo", Resource("todo_lists", "todo_list", {"name": _NAME_FIELD}, children=(("todos", "list_id"),))),
    ("todo", Resource("todos", "todo", {
        "list_id": Field(kind="id", required=True, filter=True, ref="todo_lists"), "title": Field(required=True, max_length=200),
        "due": Field(max_length=10, filter=True, description="YYYY-MM-DD"),
        "priority": Field(kind="integer", minimum=1, maximum=3, default=2, filter=True),
        "done": Field(kind="boolean", filter=True, default=0)}, query=("title",))),
)
