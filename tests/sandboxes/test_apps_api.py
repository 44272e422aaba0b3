"""The app APIs: schemas, typed errors, pagination, per-user access, transient errors, the
fingerprint, and a property test that no call sequence crashes or escapes the user."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stillweb.corpora.apps.generate import shared_base
from stillweb.corpora.apps.schema import FINGERPRINT_MOD, TABLES, row_hash
from stillweb.sandboxes import ToolCall
from stillweb.sandboxes.apps import ENDPOINTS, WRITE_ENDPOINTS, AppSession, ErrorPlan, app_registry, bound
from stillweb.sandboxes.apps.api import all_endpoints


@pytest.fixture(scope="module")
def base(small_snapshot):
    return shared_base(str(small_snapshot.resolve()), 0, 12)


def run(session, endpoint, /, **arguments):
    with bound(session):
        return app_registry().call(ToolCall(endpoint, arguments))


def test_at_least_80_endpoints_of_at_least_6_apps_each_with_a_schema():
    endpoints = all_endpoints()
    assert len(ENDPOINTS) == len(set(ENDPOINTS)) >= 80
    assert len({endpoint.app for endpoint in endpoints}) >= 6
    assert all(endpoint.parameters["type"] == "object" and endpoint.parameters["additionalProperties"] is False
               for endpoint in endpoints)
    assert all({"page", "page_size"} <= set(endpoint.parameters["properties"]) for endpoint in endpoints
               if endpoint.name.startswith("list_"))
    assert len(app_registry().schemas()) == len(ENDPOINTS) and WRITE_ENDPOINTS < set(ENDPOINTS)


def test_pagination_walks_every_row_once(base):
    session = AppSession(base, 2)
    seen, page = [], 1
    while page is not None:
        data = run(session, "list_messages", page=page, page_size=7).data
        seen += [item["id"] for item in data["items"]]
        page = data["next_page"]
    assert len(seen) == len(set(seen)) == data["total"] > 7


def test_typed_errors_say_what_was_wrong_and_show_a_correct_call(base):
    session = AppSession(base, 1)
    other = session.select("SELECT id FROM contacts WHERE owner = 2 LIMIT 1")[0]["id"]
    denied = run(session, "get_contact", id=other)
    assert denied.flag == "permission_denied" and denied.data["error"]["status"] == 403
    missing = run(session, "delete_contact", id=10**6)
    assert missing.flag == "not_found" and "list_contacts" in missing.text
    wrong_type = run(session, "get_contact", id="1")
    assert wrong_type.flag == "bad_arguments" and 'get_contact({"id": 1})' in wrong_type.text
    assert run(session, "create_contact").flag == "bad_arguments"  # missing argument
    oversized = run(session, "send_message", to="a@b.c", subject="x", body="y" * 100_000)
    assert oversized.flag == "bad_arguments" and "too long" in oversized.text
    unknown = run(session, "drop_database")
    assert unknown.flag == "unknown_tool" and "list_contacts" in unknown.text
    broke = run(session, "send_payment", account_id=session.select("SELECT id FROM accounts WHERE owner = 1")[0]["id"],
                payee_id=session.select("SELECT id FROM payees WHERE owner = 1")[0]["id"], amount=999_999)
    assert broke.flag == "conflict" and "insufficient funds" in broke.text
    assert session.fingerprint() == AppSession(base, 1).fingerprint()  # failed calls changed nothing


def test_transient_errors_are_keyed_and_off_at_rate_zero():
    plan = ErrorPlan(seed=4, task_id="t", rate=0.3)
    kinds = [plan.error_at(index) for index in range(200)]
    assert kinds == [ErrorPlan(seed=4, task_id="t", rate=0.3).error_at(index) for index in range(200)]
    assert {"rate_limited", "unavailable", "timeout"} <= set(kinds) and 30 < sum(map(bool, kinds)) < 90
    assert kinds != [ErrorPlan(seed=5, task_id="t", rate=0.3).error_at(index) for index in range(200)]
    assert not any(ErrorPlan(seed=4, task_id="t", rate=0.0).error_at(index) for index in range(200))


def test_a_429_holds_until_world_time_passes(base):
    session = AppSession(base, 1, ErrorPlan(scripted={0: "rate_limited"}))
    first = run(session, "list_accounts")
    assert first.flag == "rate_limited" and first.data["error"]["retry_after_minutes"] == 2
    assert run(session, "list_accounts").flag == "rate_limited"  # one minute later: still limited
    before = session.now
    assert run(session, "wait", minutes=2).ok and session.now > before
    assert run(session, "list_accounts").ok


def test_the_incremental_fingerprint_equals_a_full_scan(base):
    session = AppSession(base, 3)
    run(session, "create_contact", name="Ann Lee", email="ann@x.y")
    run(session, "checkout")
    run(session, "delete_todo_list", id=session.select("SELECT id FROM todo_lists WHERE owner = 3")[0]["id"])
    for name, spec in TABLES.items():
        scanned = sum(row_hash(spec, row) for row in session.select(f"SELECT * FROM {name}")) % FINGERPRINT_MOD
        assert scanned == session.sums[name], name
    assert session.changed_tables() == ["cart_items", "contacts", "orders", "products", "todo_lists", "todos"]


_VALUES = st.one_of(st.integers(-5, 2000), st.text(max_size=30), st.booleans(), st.none(), st.lists(st.integers(), max_size=2))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(st.tuples(st.sampled_from(ENDPOINTS), st.dictionaries(
    st.sampled_from(["id", "page", "name", "amount", "account_id", "payee_id", "flight_id", "passengers", "group_id",
                     "contact_id", "file_id", "user_id", "folder_id", "product_id", "list_id", "title", "quantity"]),
    _VALUES, max_size=4)), max_size=25))
@pytest.mark.slow
def test_no_call_sequence_crashes_or_touches_another_users_rows(base, calls):
    session = AppSession(base, 5, ErrorPlan(seed=1, task_id="p", rate=0.2))
    for name, arguments in calls:
        result = run(session, name, **arguments)
        assert isinstance(result.text, str)
    fresh = AppSession(base, 5)
    for name, spec in TABLES.items():
        if spec.owned:
            query = f"SELECT * FROM {name} WHERE owner != 5 ORDER BY id"
            assert session.select(query) == fresh.select(query), name
