"""The test tree cannot stand in for a library: pytest's default ("prepend") import mode puts each test module's
first folder without ``__init__.py`` on ``sys.path``, so a test folder named like a package (tests/envs/ray, as it
was) is imported in its place (a namespace package) wherever that package is not installed, and
``pytest.importorskip`` then imports the folder instead of skipping."""

from __future__ import annotations

import re
import sys
import tomllib
from importlib.metadata import packages_distributions

from support.paths import REPO, TESTS


def _library_names() -> set[str]:
    """Top-level import names of what is installed, of the standard library, and of every dependency and extra
    pyproject.toml names (installed here or not)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    named = {re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower().replace("-", "_") for requirement in requirements}
    return set(packages_distributions()) | set(sys.stdlib_module_names) | named | {"stillweb"}


def test_no_test_folder_is_named_like_a_library():
    folders = {path.relative_to(REPO).as_posix(): path.name for path in TESTS.rglob("*")
               if path.is_dir() and path.name != "__pycache__" and not (path / "__init__.py").exists()}
    libraries = _library_names()
    assert "ray" in libraries and "tomllib" in libraries  # the list is not empty by mistake
    assert {folder: name for folder, name in folders.items() if name in libraries} == {}
