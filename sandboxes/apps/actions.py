"""The endpoints that are more than one row write: the profile and clock, sending and
replying to mail, cancelling events, paying and transferring, cart checkout and order
cancellation, booking and cancelling flights, completing to-dos.

Each checks the state first and raises a typed ``conflict`` (HTTP 409) when the state
forbids the action (insufficient funds, no seats, an order already shipped), so a
failed action changes nothing.
"""

from __future__ import annotations

from typing import Any

from stillweb.sandboxes.apps.endpoint import AppEndpoint
from stillweb.sandboxes.apps.resources import id_schema, show_row
from stillweb.sandboxes.apps.store import AppSession, api_error

__all__ = ["action_endpoints"]


def _schema(properties: dict, required: list[str] | None = None) -> dict:
    return {"type": "object", "properties": properties, "required": list(properties) if required is None else required,
            "additionalProperties": False}


def _conflict(message: str, **details: Any) -> Exception:
    return api_error("conflict", "Conflict", f"409 Conflict: {message}", 409, **details)


def _profile(session: AppSession, arguments: dict) -> dict:
    return {"user": show_row("users", session.owned_row("users", session.user, "user")), "now": session.now}


def _time(session: AppSession, arguments: dict) -> dict:
    return {"now": session.now}


def _wait(session: AppSession, arguments: dict) -> dict:
    session.wait(arguments["minutes"])
    return {"now": session.now}


def _send(session: AppSession, arguments: dict) -> dict:
    row = {"folder": "sent", "correspondent": arguments["to"], "subject": arguments["subject"], "body": arguments["body"],
           "read": 1, "starred": 0, "sent_at": session.now}
    return {"sent": show_row("messages", {**row, "id": session.insert("messages", row)})}


def _reply(session: AppSession, arguments: dict) -> dict:
    original = session.owned_row("messages", arguments["message_id"], "message")
    subject = original["subject"] if original["subject"].startswith("Re: ") else f"Re: {original['subject']}"
    return _send(session, {"to": original["correspondent"], "subject": subject, "body": arguments["body"]})


def _cancel_event(session: AppSession, arguments: dict) -> dict:
    event = session.owned_row("events", arguments["id"], "event")
    if event["status"] == "cancelled":
        raise _conflict(f"event {event['id']} is already cancelled.", id=event["id"])
    return {"updated": show_row("events", session.update("events", event["id"], {"status": "cancelled"}))}


def _debit(session: AppSession, account_id: int, amount: int, counterparty: str, memo: str) -> dict:
    account = session.owned_row("accounts", account_id, "account")
    if account["balance"] < amount:
        raise _conflict(f"insufficient funds: account {account_id} holds {account['balance']} {account['currency']}, "
                        f"less than {amount}.", balance=account["balance"])
    session.update("accounts", account_id, {"balance": account["balance"] - amount})
    row = {"account_id": account_id, "counterparty": counterparty, "amount": -amount, "memo": memo, "status": "completed",
           "at": session.now}
    return show_row("transactions", {**row, "id": session.insert("transactions", row)})


def _pay(session: AppSession, arguments: dict) -> dict:
    payee = session.owned_row("payees", arguments["payee_id"], "payee")
    session.owned_row("accounts", arguments["account_id"], "account")
    return {"transaction": _debit(session, arguments["account_id"], arguments["amount"], payee["name"], arguments.get("memo", ""))}


def _transfer(session: AppSession, arguments: dict) -> dict:
    source, target = arguments["from_account_id"], arguments["to_account_id"]
    destination = session.owned_row("accounts", target, "account")
    session.owned_row("accounts", source, "account")
    if source == target:
        raise _conflict("the two accounts are the same.")
    debit = _debit(session, source, arguments["amount"], destination["name"], arguments.get("memo", "transfer"))
    session.update("accounts", target, {"balance": destination["balance"] + arguments["amount"]})
    row = {"account_id": target, "counterparty": session.row("accounts", source)["name"], "amount": arguments["amount"],
           "memo": arguments.get("memo", "transfer"), "status": "completed", "at": session.now}
    return {"debit": debit, "credit": show_row("transactions", {**row, "id": session.insert("transactions", row)})}


def _cancel_order(session: AppSession, arguments: dict) -> dict:
    order = session.owned_row("orders", arguments["id"], "order")
    if order["status"] != "placed":
        raise _conflict(f"order {order['id']} is {order['status']}; only placed orders can be cancelled.", status_now=order["status"])
    product = session.row("products", order["product_id"])
    session.update("products", product["id"], {"stock": product["stock"] + order["quantity"]})
    return {"updated": show_row("orders", session.update("orders", order["id"], {"status": "cancelled"}))}


def _checkout(session: AppSession, arguments: dict) -> dict:
    items = session.select("SELECT * FROM cart_items WHERE owner = ? ORDER BY id", (session.user,))
    if not items:
        raise _conflict("the cart is empty.")
    products = {item["id"]: session.row("products", item["product_id"]) for item in items}
    for item in items:
        product = products[item["id"]]
        if product["stock"] < item["quantity"]:
            raise _conflict(f"product {product['id']} ({product['title']}) has {product['stock']} in stock, fewer than "
                            f"{item['quantity']}; change the cart first.", product_id=product["id"])
    orders = []
    for item in items:
        product = products[item["id"]]
        session.update("products", product["id"], {"stock": product["stock"] - item["quantity"]})
        row = {"product_id": product["id"], "quantity": item["quantity"], "total": item["quantity"] * product["price"],
               "status": "placed", "placed_at": session.now}
        orders.append(show_row("orders", {**row, "id": session.insert("orders", row)}))
        session.delete("cart_items", item["id"])
    return {"orders": orders}


def _book(session: AppSession, arguments: dict) -> dict:
    flight = session.owned_row("flights", arguments["flight_id"], "flight")
    passengers = arguments["passengers"]
    if flight["seats"] < passengers:
        raise _conflict(f"flight {flight['id']} has {flight['seats']} free seat(s), fewer than {passengers}.", seats=flight["seats"])
    session.update("flights", flight["id"], {"seats": flight["seats"] - passengers})
    row = {"flight_id": flight["id"], "passengers": passengers, "total": passengers * flight["price"], "status": "booked",
           "booked_at": session.now}
    return {"booking": show_row("bookings", {**row, "id": session.insert("bookings", row)})}


def _cancel_booking(session: AppSession, arguments: dict) -> dict:
    booking = session.owned_row("bookings", arguments["id"], "booking")
    if booking["status"] == "cancelled":
        raise _conflict(f"booking {booking['id']} is already cancelled.", id=booking["id"])
    flight = session.row("flights", booking["flight_id"])
    session.update("flights", flight["id"], {"seats": flight["seats"] + booking["passengers"]})
    return {"updated": show_row("bookings", session.update("bookings", booking["id"], {"status": "cancelled"}))}


def _complete(session: AppSession, arguments: dict) -> dict:
    todo = session.owned_row("todos", arguments["id"], "todo")
    if todo["done"]:
        raise _conflict(f"todo {todo['id']} is already done.", id=todo["id"])
    return {"updated": show_row("todos", session.update("todos", todo["id"], {"done": 1}))}


_AMOUNT = {"type": "integer", "minimum": 1, "maximum": 1_000_000, "description": "whole currency units"}
_MEMO = {"type": "string", "maxLength": 200}


def action_endpoints() -> list[AppEndpoint]:
    """The action endpoints, in listing order."""
    def endpoint(name, app, description, parameters, example, handler, writes=True, transient=True):
        return AppEndpoint(name, app, description, parameters, example, handler, writes, transient)

    return [
        endpoint("get_profile", "profile", "Your own user record (you act as this user) and the world time.",
                 _schema({}), {}, _profile, writes=False),
        endpoint("get_time", "profile", "The world time (YYYY-MM-DDTHH:MM).", _schema({}), {}, _time, writes=False),
        endpoint("wait", "profile", "Let world time pass (to respect a 429 retry-after).",
                 _schema({"minutes": {"type": "integer", "minimum": 1, "maximum": 120}}), {"minutes": 2}, _wait,
                 writes=False, transient=False),
        endpoint("send_message", "mail", "Send an e-mail; a copy goes to your sent folder.",
                 _schema({"to": {"type": "string", "minLength": 3, "maxLength": 200}, "subject": {"type": "string", "maxLength": 200},
                          "body": {"type": "string", "maxLength": 5000}}), {"to": "ann.lee@mail.example", "subject": "Hi", "body": "Hello"},
                 _send),
        endpoint("reply_message", "mail", "Reply to one of your messages (to its correspondent, subject 'Re: ...').",
                 _schema({"message_id": id_schema("message"), "body": {"type": "string", "maxLength": 5000}}),
                 {"message_id": 1, "body": "Thanks!"}, _reply),
        endpoint("cancel_event", "calendar", "Cancel one of your events (its status becomes cancelled).",
                 _schema({"id": id_schema("event")}), {"id": 1}, _cancel_event),
        endpoint("send_payment", "payments", "Pay a payee from one of your accounts (fails with 409 on insufficient funds).",
                 _schema({"account_id": id_schema("account"), "payee_id": id_schema("payee"), "amount": _AMOUNT, "memo": _MEMO},
                         ["account_id", "payee_id", "amount"]), {"account_id": 1, "payee_id": 1, "amount": 20}, _pay),
        endpoint("transfer_between_accounts", "payments", "Move money between two of your accounts.",
                 _schema({"from_account_id": id_schema("account"), "to_account_id": id_schema("account"), "amount": _AMOUNT,
                          "memo": _MEMO}, ["from_account_id", "to_account_id", "amount"]),
                 {"from_account_id": 1, "to_account_id": 2, "amount": 50}, _transfer),
        endpoint("cancel_order", "shop", "Cancel one of your orders; only orders still 'placed' can be cancelled.",
                 _schema({"id": id_schema("order")}), {"id": 1}, _cancel_order),
        endpoint("checkout", "shop", "Order everything in your cart (one order per cart item); empties the cart.",
                 _schema({}), {}, _checkout),
        endpoint("book_flight", "travel", "Book seats on a flight (fails with 409 when too few seats are free).",
                 _schema({"flight_id": id_schema("flight"), "passengers": {"type": "integer", "minimum": 1, "maximum": 9}}),
                 {"flight_id": 1, "passengers": 1}, _book),
        endpoint("cancel_booking", "travel", "Cancel one of your flight bookings (the seats are released).",
                 _schema({"id": id_schema("booking")}), {"id": 1}, _cancel_booking),
        endpoint("complete_todo", "todo", "Mark one of your to-dos as done.", _schema({"id": id_schema("todo")}), {"id": 1}, _complete),
    ]
