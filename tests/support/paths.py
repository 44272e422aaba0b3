"""Where the repository and the real test data are, and the switches CI sets (used by :mod:`support.require`)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"  # on pytest's pythonpath (pyproject.toml): helpers import as support.*
SHARED_DATA = REPO.parent / "shared" / "data"
WIKI_SAMPLE = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
REQUIRE_SHARED_DATA = os.environ.get("STILLWEB_REQUIRE_SHARED_DATA") == "1"
REQUIRE_EXTRAS = os.environ.get("STILLWEB_REQUIRE_EXTRAS") == "1"
REQUIRE_SANDBOX = os.environ.get("STILLWEB_REQUIRE_SANDBOX") == "1"
RAY_TEST_ENVIRONMENT = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
