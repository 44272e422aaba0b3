"""Task templates that read: lookups, pagination, conditions and aggregation, and requests
that cannot be done (the right move is to say so, as ``<abstain>`` in the search tasks).

Each template takes a :class:`TemplateContext` and returns a :class:`TaskSpec`, or None
when the user's state offers no target for it.
"""

from __future__ import annotations

from stillweb.corpora.apps.template_kit import TaskSpec, TemplateContext, call, pages

__all__ = ["READ_TEMPLATES", "REASON_PATTERNS"]

# What an abstention must say for each kind of impossible request: any one of the
# alternatives (separated by "|"); a bare "no" is not an honest account of why.
REASON_PATTERNS = {
    "permission": "permission|another user|not allowed|forbidden|403|access",
    "no_endpoint": "no endpoint|no api|not supported|no way|not possible|cannot|can't|unable",
    "shipped": "shipped|delivered|409|only placed",
    "seats": "seats|409|not enough|free seat",
}


def contact_phone(ctx: TemplateContext) -> TaskSpec | None:
    contact = ctx.pick(ctx.unique(ctx.mine("contacts"), "name"))
    return contact and TaskSpec((f"What is the phone number of my contact {contact['name']}?",),
                                ((call("list_contacts", query=contact["name"]),),), ((contact["phone"],),))


def account_balance(ctx: TemplateContext) -> TaskSpec | None:
    account = ctx.pick(ctx.mine("accounts"))
    return TaskSpec((f"How much money is in my {account['name']} account?",), ((call("list_accounts"),),),
                    ((str(account["balance"]),),))


def event_location(ctx: TemplateContext) -> TaskSpec | None:
    event = ctx.pick(ctx.unique(ctx.mine("events"), "title"))
    return event and TaskSpec((f"Where does my event \"{event['title']}\" on {event['day']} take place?",),
                              ((call("list_events", day=event["day"]),),), ((event["location"],),))


def order_product(ctx: TemplateContext) -> TaskSpec | None:
    order = ctx.pick(ctx.mine("orders"))
    product = ctx.rows("SELECT * FROM products WHERE id = ?", order["product_id"])[0]
    return TaskSpec((f"Which product did I buy in my order {order['id']}, and who made it?",),
                    ((call("get_order", id=order["id"]), call("get_product", id=product["id"])),),
                    ((product["title"], product["creator"]),))


def last_inbox_subject(ctx: TemplateContext) -> TaskSpec | None:
    inbox = ctx.mine("messages", "folder = 'inbox'")
    if len(inbox) <= 10:
        return None
    return TaskSpec(("What is the subject of the last message in my inbox (the one listed last)?",),
                    (tuple(pages("list_messages", len(inbox), folder="inbox")),), ((inbox[-1]["subject"],),))


def transaction_day(ctx: TemplateContext) -> TaskSpec | None:
    rows = ctx.mine("transactions")
    keyed = [dict(row, key=(row["counterparty"], row["amount"])) for row in rows]
    unique_ids = {row["id"] for row in ctx.unique(keyed, "key")}
    row = ctx.pick([row for index, row in enumerate(rows) if index >= 10 and row["amount"] < 0 and row["id"] in unique_ids])
    return row and TaskSpec((f"On which day did I pay {row['counterparty']} {-row['amount']}? Answer with the date.",),
                            (tuple(pages("list_transactions", len(rows))),), ((row["at"][:10],),))


def cheap_products(ctx: TemplateContext) -> TaskSpec | None:
    kind = ctx.pick(["book", "film", "album"])
    limit = ctx.pick([20, 30, 40])
    products = ctx.rows("SELECT * FROM products WHERE kind = ? ORDER BY id", kind)
    if len(products) <= 10:
        return None
    count = sum(product["price"] < limit for product in products)
    return TaskSpec((f"How many {kind}s in the shop cost less than {limit}? Answer with the number.",),
                    (tuple(pages("list_products", len(products), kind=kind)),), ((str(count),),))


def spent_with(ctx: TemplateContext) -> TaskSpec | None:
    rows = ctx.mine("transactions", "amount < 0")
    names = sorted({row["counterparty"] for row in rows if sum(other["counterparty"] == row["counterparty"] for other in rows) >= 2})
    name = ctx.pick(names)
    if name is None:
        return None
    every = ctx.mine("transactions", "counterparty = ?", name)
    spent = -sum(row["amount"] for row in every if row["amount"] < 0)
    return TaskSpec((f"How much have I paid to {name} in total, over all my transactions? Answer with the number.",),
                    (tuple(pages("list_transactions", len(every), counterparty=name)),), ((str(spent),),))


def unread_from(ctx: TemplateContext) -> TaskSpec | None:
    unread = ctx.mine("messages", "folder = 'inbox' AND read = 0")
    sender = ctx.pick(sorted({row["correspondent"] for row in unread}))
    if sender is None:
        return None
    count = sum(row["correspondent"] == sender for row in unread)
    return TaskSpec((f"How many unread messages from {sender} are in my inbox? Answer with the number.",),
                    ((call("list_messages", folder="inbox", read=False, correspondent=sender),),), ((str(count),),))


def cheapest_flight(ctx: TemplateContext) -> TaskSpec | None:
    routes = ctx.rows("SELECT origin, destination FROM flights WHERE seats > 0 GROUP BY origin, destination "
                      "HAVING count(*) >= 2 ORDER BY origin, destination")
    route = ctx.pick(routes)
    if route is None:
        return None
    flights = ctx.rows("SELECT * FROM flights WHERE origin = ? AND destination = ? ORDER BY id", route["origin"], route["destination"])
    open_flights = sorted((flight for flight in flights if flight["seats"] > 0), key=lambda flight: (flight["price"], flight["id"]))
    if len(open_flights) > 1 and open_flights[0]["price"] == open_flights[1]["price"]:
        return None
    best = open_flights[0]
    return TaskSpec((f"Book the cheapest flight from {route['origin']} to {route['destination']} that still has a free seat, "
                     "for one passenger.",),
                    ((call("list_flights", origin=route["origin"], destination=route["destination"]),
                      call("book_flight", flight_id=best["id"], passengers=1)),), ((),))


def finish_priority_todos(ctx: TemplateContext) -> TaskSpec | None:
    todo_list = ctx.pick(ctx.mine("todo_lists"))
    open_todos = ctx.mine("todos", "list_id = ? AND priority = 1 AND done = 0", todo_list["id"])
    if not open_todos:
        return None
    program = [call("list_todo_lists"), call("list_todos", list_id=todo_list["id"], priority=1, done=False)]
    program += [call("complete_todo", id=todo["id"]) for todo in open_todos]
    return TaskSpec((f"In my {todo_list['name']} to-do list, mark every unfinished to-do of priority 1 as done.",),
                    (tuple(program),), ((),))


def other_users_contact(ctx: TemplateContext) -> TaskSpec | None:
    other = ctx.pick([user for user in range(1, ctx.users + 1) if user != ctx.user])
    if other is None:
        return None
    name = ctx.rows("SELECT name FROM users WHERE id = ?", other)[0]["name"]
    contact = ctx.pick(ctx.rows("SELECT name FROM contacts WHERE owner = ? ORDER BY id", other))
    return TaskSpec((f"Delete {contact['name']} from {name}'s address book (not mine).",), ((),),
                    ((REASON_PATTERNS["permission"],),), abstain=True)


def change_price(ctx: TemplateContext) -> TaskSpec | None:
    product = ctx.pick(ctx.rows("SELECT * FROM products ORDER BY id"))
    return TaskSpec((f"Lower the shop's price of \"{product['title']}\" to {max(1, product['price'] - 5)}.",),
                    ((call("list_products", query=product["title"]),),), ((REASON_PATTERNS["no_endpoint"],),), abstain=True)


def cancel_shipped_order(ctx: TemplateContext) -> TaskSpec | None:
    order = ctx.pick(ctx.mine("orders", "status IN ('shipped', 'delivered')"))
    return order and TaskSpec((f"Cancel my order {order['id']}.",), ((call("cancel_order", id=order["id"]),),),
                              ((REASON_PATTERNS["shipped"],),), abstain=True)


def overbook_flight(ctx: TemplateContext) -> TaskSpec | None:
    flight = ctx.pick(ctx.rows("SELECT * FROM flights WHERE seats < 9 ORDER BY id"))
    return flight and TaskSpec((f"Book {flight['seats'] + 1} seats on flight {flight['id']} from {flight['origin']} to "
                                f"{flight['destination']}.",), ((call("get_flight", id=flight["id"]),),),
                               ((REASON_PATTERNS["seats"],),), abstain=True)


def contact_city(ctx: TemplateContext) -> TaskSpec | None:
    contact = ctx.pick(ctx.unique(ctx.mine("contacts"), "name"))
    return contact and TaskSpec((f"In which city does my contact {contact['name']} live?",),
                                ((call("list_contacts", query=contact["name"]),),), ((contact["city"],),))


def file_folder(ctx: TemplateContext) -> TaskSpec | None:
    files = ctx.unique(ctx.mine("files"), "name")
    file = ctx.pick([row for row in files if sum(row["name"].lower() in other["name"].lower() for other in files) == 1])
    if file is None:
        return None
    folder = ctx.rows("SELECT * FROM folders WHERE id = ?", file["folder_id"])[0]
    return TaskSpec((f"In which of my folders is the file \"{file['name']}\"?",),
                    ((call("list_files", query=file["name"]), call("get_folder", id=folder["id"])),), ((folder["name"],),))


def unread_inbox_count(ctx: TemplateContext) -> TaskSpec | None:
    inbox = ctx.mine("messages", "folder = 'inbox'")
    if len(inbox) <= 10:
        return None
    unread = sum(not row["read"] for row in inbox)
    return TaskSpec(("How many messages in my inbox have I not read yet? Answer with the number.",),
                    (tuple(pages("list_messages", len(inbox), folder="inbox")),), ((str(unread),),))


def transaction_count(ctx: TemplateContext) -> TaskSpec | None:
    rows = ctx.mine("transactions")
    if len(rows) <= 10:
        return None
    return TaskSpec(("How many transactions are there on my accounts, all of them together? Answer with the number.",),
                    (tuple(pages("list_transactions", len(rows))),), ((str(len(rows)),),))


def priciest_product(ctx: TemplateContext) -> TaskSpec | None:
    kind = ctx.pick(["book", "film", "album"])
    products = ctx.rows("SELECT * FROM products WHERE kind = ? ORDER BY price DESC, id", kind)
    if len(products) <= 10 or products[0]["price"] == products[1]["price"]:
        return None
    return TaskSpec((f"Which {kind} is the most expensive one in the shop, and who made it?",),
                    (tuple(pages("list_products", len(products), kind=kind)),), ((products[0]["title"], products[0]["creator"]),))


def minutes_on_day(ctx: TemplateContext) -> TaskSpec | None:
    days = sorted({row["day"] for row in ctx.mine("events", "status != 'cancelled'")})
    day = ctx.pick([day for day in days if len(ctx.mine("events", "day = ? AND status != 'cancelled'", day)) >= 2])
    if day is None:
        return None
    events = ctx.mine("events", "day = ? AND status != 'cancelled'", day)
    return TaskSpec((f"How many minutes of events (not counting cancelled ones) do I have on {day}? Answer with the number.",),
                    ((call("list_events", day=day),),), ((str(sum(row["minutes"] for row in events)),),))


def money_in_total(ctx: TemplateContext) -> TaskSpec | None:
    accounts = ctx.mine("accounts")
    return TaskSpec(("How much money do I have in all my accounts together? Answer with the number.",),
                    ((call("list_accounts"),),), ((str(sum(row["balance"] for row in accounts)),),))


def refund_order(ctx: TemplateContext) -> TaskSpec | None:
    order = ctx.pick(ctx.mine("orders", "status = 'delivered'"))
    return order and TaskSpec((f"Refund my order {order['id']} to my Checking account.",),
                              ((call("get_order", id=order["id"]),),), ((REASON_PATTERNS["no_endpoint"],),), abstain=True)


def read_other_users_mail(ctx: TemplateContext) -> TaskSpec | None:
    other = ctx.pick([user for user in range(1, ctx.users + 1) if user != ctx.user])
    if other is None:
        return None
    name = ctx.rows("SELECT name FROM users WHERE id = ?", other)[0]["name"]
    return TaskSpec((f"Mark every message in {name}'s inbox as read (their inbox, not mine).",), ((),),
                    ((REASON_PATTERNS["permission"],),), abstain=True)


# name -> (category, template)
READ_TEMPLATES = {
    "contact_phone": ("lookup", contact_phone),
    "account_balance": ("lookup", account_balance),
    "event_location": ("lookup", event_location),
    "order_product": ("lookup", order_product),
    "contact_city": ("lookup", contact_city),
    "file_folder": ("lookup", file_folder),
    "last_inbox_subject": ("pagination", last_inbox_subject),
    "transaction_day": ("pagination", transaction_day),
    "cheap_products": ("pagination", cheap_products),
    "unread_inbox_count": ("pagination", unread_inbox_count),
    "transaction_count": ("pagination", transaction_count),
    "priciest_product": ("pagination", priciest_product),
    "spent_with": ("aggregation", spent_with),
    "unread_from": ("aggregation", unread_from),
    "cheapest_flight": ("aggregation", cheapest_flight),
    "finish_priority_todos": ("aggregation", finish_priority_todos),
    "minutes_on_day": ("aggregation", minutes_on_day),
    "money_in_total": ("aggregation", money_in_total),
    "other_users_contact": ("impossible", other_users_contact),
    "change_price": ("impossible", change_price),
    "cancel_shipped_order": ("impossible", cancel_shipped_order),
    "overbook_flight": ("impossible", overbook_flight),
    "refund_order": ("impossible", refund_order),
    "read_other_users_mail": ("impossible", read_other_users_mail),
}
