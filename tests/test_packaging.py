"""The wheel: every module of the four layers is packaged, under `stillweb.` and nowhere else."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LAYERS = {"corpora": "stillweb/corpora", "sandboxes": "stillweb/sandboxes", "envs": "stillweb/envs", "cli": "stillweb/cli",
          "server": "stillweb/server"}


@pytest.mark.slow
def test_wheel_holds_every_module_under_stillweb(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-q",
                    "-w", str(tmp_path)], check=True, capture_output=True)
    wheel = next(tmp_path.glob("stillweb-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {name.split("/")[0] for name in names} == {"stillweb", wheel.name.split("-py3")[0] + ".dist-info"}
    expected = {
        f"{packaged}/{path.relative_to(REPO / folder).as_posix()}"
        for folder, packaged in LAYERS.items()
        for path in (REPO / folder).rglob("*.py")
    }
    assert expected - names == set(), "modules missing from the wheel (add the subpackage to pyproject's packages)"
    viewer_assets = {f"stillweb/server/viewer/{path.relative_to(REPO / 'server' / 'viewer').as_posix()}"
                     for pattern in ("templates/*.html", "static/*") for path in (REPO / "server" / "viewer").glob(pattern)}
    assert viewer_assets and viewer_assets - names == set(), "viewer templates/static missing (pyproject package-data)"
    assert "stillweb/__init__.py" not in names  # a namespace package: the layers install side by side


def test_one_version_for_the_cli_and_the_manifest(small_snapshot):
    """pyproject's [project] version is the only source: `stillweb --version` and every manifest read it."""
    import json
    import tomllib

    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    printed = subprocess.run([sys.executable, "-c", "from stillweb.cli.main import main; main(['--version'])"],
                             capture_output=True, text=True).stdout.strip()
    manifest = json.loads((small_snapshot / "manifest.json").read_text())
    assert printed == f"stillweb {declared}" and manifest["package_version"] == declared
