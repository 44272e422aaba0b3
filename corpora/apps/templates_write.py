"""Task templates that write: single writes, dependent writes (find an id, then act),
multi-turn follow-ups, and recovery from transient API errors (the write templates
again, with scripted 429/503/timeout answers at fixed call indices).
"""

from __future__ import annotations

from dataclasses import replace

from stillweb.corpora.apps.template_kit import TaskSpec, TemplateContext, call, pages
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


_NEW_TODOS = ("Buy stamps", "Call the plumber", "Renew passport", "Book a table", "Water the plants", "Return library books")
_NEW_FOLDERS = ("Receipts", "Travel plans", "Recipes", "Contracts", "Manuals", "Taxes 2025")


def create_todo(ctx: TemplateContext) -> TaskSpec | None:
    todo_list = ctx.pick(ctx.mine("todo_lists"))
    taken = {row["title"] for row in ctx.mine("todos", "list_id = ?", todo_list["id"])}
    title = ctx.pick([title for title in _NEW_TODOS if title not in taken])
    return title and TaskSpec((f"Add a to-do \"{title}\" to my \"{todo_list['name']}\" list.",),
                              ((call("list_todo_lists"), call("create_todo", list_id=todo_list["id"], title=title)),), ((),))


def create_payee(ctx: TemplateContext) -> TaskSpec | None:
    payees = {row["email"] for row in ctx.mine("payees")}
    contact = ctx.pick([row for row in ctx.mine("contacts") if row["email"] not in payees])
    return contact and TaskSpec((f"Add {contact['name']} ({contact['email']}) to my payees.",),
                                ((call("create_payee", name=contact["name"], email=contact["email"]),),), ((),))


def create_folder(ctx: TemplateContext) -> TaskSpec | None:
    taken = {row["name"] for row in ctx.mine("folders")}
    name = ctx.pick([name for name in _NEW_FOLDERS if name not in taken])
    return name and TaskSpec((f"Create a new folder for my files called \"{name}\".",), ((call("create_folder", name=name),),), ((),))


def star_message(ctx: TemplateContext) -> TaskSpec | None:
    inbox = ctx.mine("messages", "folder = 'inbox' AND starred = 0")
    keyed = [dict(row, key=(row["subject"], row["correspondent"])) for row in ctx.mine("messages", "folder = 'inbox'")]
    unique = {row["id"] for row in ctx.unique(keyed, "key")}
    message = ctx.pick([row for row in inbox if row["id"] in unique])
    if message is None:
        return None
    listed = ctx.mine("messages", "folder = 'inbox' AND correspondent = ?", message["correspondent"])
    return TaskSpec((f"Star the message \"{message['subject']}\" that {message['correspondent']} sent me.",),
                    ((*pages("list_messages", len(listed), folder="inbox", correspondent=message["correspondent"]),
                      call("update_message", id=message["id"], starred=True)),), ((),))


def cancel_named_event(ctx: TemplateContext) -> TaskSpec | None:
    keyed = [dict(row, key=(row["title"], row["day"])) for row in ctx.mine("events")]
    event = ctx.pick([row for row in ctx.unique(keyed, "key") if row["status"] != "cancelled"])
    return event and TaskSpec((f"Cancel my event \"{event['title']}\" on {event['day']}.",),
                              ((call("list_events", day=event["day"]), call("cancel_event", id=event["id"])),), ((),))


def mail_address_then_group(ctx: TemplateContext) -> TaskSpec | None:
    spec = email_then_message(ctx)
    group = ctx.pick(ctx.mine("contact_groups"))
    if spec is None or group is None:
        return None
    contact = ctx.mine("contacts", "email = ?", spec.program[1][0]["arguments"]["to"])[0]
    if ctx.mine("group_members", "group_id = ? AND contact_id = ?", group["id"], contact["id"]):
        return None
    return TaskSpec((*spec.turns, f"One more thing: add them to my \"{group['name']}\" group."),
                    (*spec.program, (call("list_contact_groups"), call("add_group_member", group_id=group["id"], contact_id=contact["id"]))),
                    (*spec.facts, ()))


def lists_then_todo_then_done(ctx: TemplateContext) -> TaskSpec | None:
    lists = ctx.mine("todo_lists")
    added = create_todo(ctx)
    open_todos = [row for row in ctx.unique(ctx.mine("todos"), "title") if not row["done"]]
    finished = ctx.pick(open_todos)
    if added is None or finished is None or finished["title"] == added.program[0][1]["arguments"]["title"]:
        return None
    return TaskSpec(("Which to-do lists do I have?", added.turns[0], f"And mark \"{finished['title']}\" as done, please."),
                    ((call("list_todo_lists"),), added.program[0][1:],
                     (call("list_todos", query=finished["title"]), call("complete_todo", id=finished["id"]))),
                    (tuple(row["name"] for row in lists), (), ()))


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
    "create_todo": ("single_write", create_todo),
    "create_payee": ("single_write", create_payee),
    "create_folder": ("single_write", create_folder),
    "complete_named_todo": ("dependent_writes", complete_named_todo),
    "pay_payee": ("dependent_writes", pay_payee),
    "add_to_group": ("dependent_writes", add_to_group),
    "cancel_trip": ("dependent_writes", cancel_trip),
    "star_message": ("dependent_writes", star_message),
    "cancel_named_event": ("dependent_writes", cancel_named_event),
    "email_then_message": ("multi_turn", email_then_message),
    "balance_then_transfer": ("multi_turn", balance_then_transfer),
    "status_then_cancel": ("multi_turn", status_then_cancel),
    "pay_then_balance": ("multi_turn", pay_then_balance),
    "mail_address_then_group": ("multi_turn", mail_address_then_group),
    "lists_then_todo_then_done": ("multi_turn", lists_then_todo_then_done),
    "recover_todo_429": ("recovery", _with_errors(complete_named_todo, {0: "rate_limited"})),
    "recover_event_503": ("recovery", _with_errors(create_event, {0: "unavailable", 1: "timeout"})),
    "recover_payment_429": ("recovery", _with_errors(pay_payee, {2: "rate_limited"})),
    "recover_balance_timeout": ("recovery", _with_errors(account_balance, {0: "timeout"})),
    "recover_folder_503": ("recovery", _with_errors(create_folder, {0: "unavailable"})),
    "recover_payee_429": ("recovery", _with_errors(create_payee, {0: "rate_limited"})),
}
