"""Schemathesis against the app's own OpenAPI schema, in-process (ASGI): generated
requests, valid and invalid, never get a server error, and responses match the
documented schemas. 20 examples per operation by default, 100 when ``CI=true``."""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error, response_schema_conformance, status_code_conformance

from stillweb.server.app import make_app
from stillweb.server.plumbing import ServerSettings

EXAMPLES = 100 if os.environ.get("CI") == "true" else 20


@pytest.fixture(scope="module")
def api_schema(small_snapshot):
    app = make_app([small_snapshot], ServerSettings(max_sessions=8, max_body_bytes=256 * 1024))
    return schemathesis.openapi.from_asgi("/openapi.json", app)


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors_and_documented_responses(case):
    case.call_and_validate(checks=[not_a_server_error, response_schema_conformance, status_code_conformance])
