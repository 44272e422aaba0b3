"""Task templates that write: single writes, dependent writes (find an id, then act),
multi-turn follow-ups, and recovery from transient API errors (the write templates
again, with scripted 429/503/timeout answers at fixed call indices).
"""

from __future__ import annotations

from dataclasses import replace

from stillweb.corpora.apps.template_kit import TaskSpec, TemplateContext, call
from stillweb.corpora.apps.templates_read import account_balance

__all__ = ["WRITE_TEMPLATES"]

_GROUPS = ("Book Club", "Neighbours", "Running", "Choir", "Volunteers", "Chess")
_EVENTS = ("Dentist", "Yoga", "Haircut", "Piano lesson", "Car service", "Tax advisor")
_SUBJECTS = ("Dinner on Friday", "Slides for Monday", "Holiday photos", "Quick question", "Thank you")
_BODIES = ("Are you free at seven?", "Please find the slides attached.", "Here are the photos from our trip.",
           "Could you call me back today?", "Thanks again for your help.")
_MEMOS = ("rent share", "concert tickets", "birthday gift", "dinner", "taxi")


def create_group(ctx: TemplateContext) -> TaskSpec | None:
    taken = {row["name"] for row in ctx.mine("contact_groups")}
    name = ctx.pick([group for group in _GROUPS if group not in taken])
    return name and TaskSpec((f"Create a contact group called \"{name}\".",), ((call("create_contact_group", name=name),),), ((),))


def create_event(ctx: TemplateContext) -> TaskSpec | None:
    title, day = ctx.pick(list(_EVENTS)), f"2025-04-{ctx.rng.integer(1, 28):02d}"
    start, minutes = f"{ctx.rng.integer(8, 17):02d}:{ctx.pick([0, 30]):02d}", ctx.pick([30, 45, 60])
    return TaskSpec((f"Add an event \"{title}\" to my calendar on {day} at {start}, lasting {minutes} minutes.",),
                    ((call("create_event", title=title, day=day, start=start, minutes=minutes),),), ((),))


def send_mail(ctx: TemplateContext) -> TaskSpec | None:
    contact = ctx.pick(ctx.mine("contacts"))
    subject, body = ctx.pick(list(_SUBJECTS)), ctx.pick(list(_BODIES))
    return TaskSpec((f"Send an e-mail to {contact['email']} with the subject \"{subject}\" and the body \"{body}\".",),
                    ((call("send_message", to=contact["email"], subject=subject, body=body),),), ((),))


def complete_named_todo(ctx: TemplateContext) -> TaskSpec | None:
    todos = [todo for todo in ctx.unique(ctx.mine("todos"), "title") if not todo["done"]]
    todo = ctx.pick(todos)
    return todo and TaskSpec((f"Mark my to-do \"{todo['title']}\" as done.",),
                             ((call("list_todos", query=todo["title"]), call("complete_todo", id=todo["id"])),), ((),))


def pay_payee(ctx: TemplateContext) -> TaskSpec | None:
    payee = ctx.pick(ctx.unique(ctx.mine("payees"), "name"))
    account = ctx.mine("accounts", "name = 'Checking'")[0]
    amount, memo = ctx.rng.integer(10, 60), ctx.pick(list(_MEMOS))
    if payee is None or account["balance"] < amount:
        return None
    return TaskSpec((f"Pay {payee['name']} {amount} from my Checking account with the memo \"{memo}\".",),
                    ((call("list_payees"), call("list_accounts"),
                      call("send_payment", account_id=account["id"], payee_id=payee["id"], amount=amount, memo=memo)),), ((),))


def add_to_group(ctx: TemplateContext) -> TaskSpec | None:
    group = ctx.pick(ctx.mine("contact_groups"))
    members = {row["contact_id"] for row in ctx.mine("group_members", "group_id = ?", group["id"])}
    contact = ctx.pick([row for row in ctx.unique(ctx.mine("contacts"), "name") if row["id"] not in members])
    return contact and TaskSpec((f"Add my contact {contact['name']} to my \"{group['name']}\" group.",),
                                ((call("list_contacts", query=contact["name"]), call("list_contact_groups"),
                                  call("add_group_member", group_id=group["id"], contact_id=contact["id"])),), ((),))


def cancel_trip(ctx: TemplateContext) -> TaskSpec | None:
    bookings = ctx.rows("SELECT b.id, b.flight_id, f.origin, f.destination, f.day FROM bookings b JOIN flights f ON f.id = b.flight_id "
                        "WHERE b.owner = ? AND b.status = 'booked' ORDER BY b.id", ctx.user)
    keyed = [dict(row, key=(row["origin"], row["destination"], row["day"])) for row in bookings]
    booking = ctx.pick(ctx.unique(keyed, "key"))
    if booking is None:
        return None
    lookups = tuple(call("get_flight", id=row["flight_id"]) for row in bookings)
    return TaskSpec((f"Cancel my flight booking from {booking['origin']} to {booking['destination']} on {booking['day']}.",),
                    ((call("list_bookings"), *lookups, call("cancel_booking", id=booking["id"])),), ((),))


def email_then_message(ctx: TemplateContext) -> TaskSpec | None:
    contact = ctx.pick(ctx.unique(ctx.mine("contacts"), "name"))
    subject, body = ctx.pick(list(_SUBJECTS)), ctx.pick(list(_BODIES))
    return contact and TaskSpec(
        (f"What is the e-mail address of my contact {contact['name']}?",
         f"Thanks. Please send them an e-mail with the subject \"{subject}\" and the body \"{body}\"."),
        ((call("list_contacts", query=contact["name"]),), (call("send_message", to=contact["email"], subject=subject, body=body),)),
        ((contact["email"],), ()))


def balance_then_transfer(ctx: TemplateContext) -> TaskSpec | None:
    checking, savings = ctx.mine("accounts", "name = 'Checking'")[0], ctx.mine("accounts", "name = 'Savings'")[0]
    amount = min(savings["balance"], ctx.pick([50, 100, 150]))
    return TaskSpec(
        ("How much money is in my Savings account?",
         f"Move {amount} from Savings to Checking with the memo \"top-up\", please."),
        ((call("list_accounts"),), (call("transfer_between_accounts", from_account_id=savings["id"],
                                         to_account_id=checking["id"], amount=amount, memo="top-up"),)),
        ((str(savings["balance"]),), ()))


def status_then_cancel(ctx: TemplateContext) -> TaskSpec | None:
    order = ctx.pick(ctx.mine("orders", "status = 'placed'"))
    return order and TaskSpec(
        (f"What is the status of my order {order['id']}?", "Then cancel it, please."),
        ((call("get_order", id=order["id"]),), (call("cancel_order", id=order["id"]),)), (("placed",), ()))


def pay_then_balance(ctx: TemplateContext) -> TaskSpec | None:
    spec = pay_payee(ctx)
    if spec is None:
        return None
    payment = spec.program[0][-1]["arguments"]
    account = ctx.mine("accounts", "id = ?", payment["account_id"])[0]
    return TaskSpec((spec.turns[0], "And how much is left in my Checking account now?"),
                    (spec.program[0], (call("get_account", id=account["id"]),)), ((), (str(account["balance"] - payment["amount"]),)))


def _with_errors(template, errors: dict[int, str]):
    def recovering(ctx: TemplateContext) -> TaskSpec | None:
        spec = template(ctx)
        return spec and replace(spec, errors=dict(errors))
    return recovering


# name -> (category, template)
WRITE_TEMPLATES = {
    "create_group": ("single_write", create_group),
    "create_event": ("single_write", create_event),
    "send_mail": ("single_write", send_mail),
    "complete_named_todo": ("dependent_writes", complete_named_todo),
    "pay_payee": ("dependent_writes", pay_payee),
    "add_to_group": ("dependent_writes", add_to_group),
    "cancel_trip": ("dependent_writes", cancel_trip),
    "email_then_message": ("multi_turn", email_then_message),
    "balance_then_transfer": ("multi_turn", balance_then_transfer),
    "status_then_cancel": ("multi_turn", status_then_cancel),
    "pay_then_balance": ("multi_turn", pay_then_balance),
    "recover_todo_429": ("recovery", _with_errors(complete_named_todo, {0: "rate_limited"})),
    "recover_event_503": ("recovery", _with_errors(create_event, {0: "unavailable", 1: "timeout"})),
    "recover_payment_429": ("recovery", _with_errors(pay_payee, {2: "rate_limited"})),
    "recover_balance_timeout": ("recovery", _with_errors(account_balance, {0: "timeout"})),
}
