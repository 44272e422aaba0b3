"""No module over 400 lines, tests, scripts and helpers included (the project's rules): a module that grows past it
is split by what it holds."""

from __future__ import annotations

import subprocess
from pathlib import Path

from support.paths import REPO

MAX_LINES = 400


def python_files(root: Path) -> list[Path]:
    """Every ``.py`` file of the checkout at ``root``: the ones git tracks and the new ones it would (untracked, not
    ignored); outside a git checkout, every ``.py`` below ``root`` but in hidden folders (``.venv``, ``.git``)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "*.py"],
                                cwd=root, capture_output=True, check=True).stdout.decode().split("\0")
        paths = [root / name for name in listed if name]
    except (OSError, subprocess.CalledProcessError):
        paths = [path for path in root.rglob("*.py")
                 if not any(part.startswith(".") for part in path.relative_to(root).parts)]
    return sorted(path for path in paths if path.is_file())  # a tracked file deleted in the working tree is gone


def over_limit(paths: list[Path], root: Path, limit: int = MAX_LINES) -> dict[str, int]:
    """``{relative path: lines}`` of the files of ``paths`` longer than ``limit`` lines."""
    counts = {path.relative_to(root).as_posix(): len(path.read_bytes().splitlines()) for path in paths}
    return {name: lines for name, lines in counts.items() if lines > limit}


def test_no_module_is_over_400_lines():
    files = python_files(REPO)
    names = {path.relative_to(REPO).as_posix() for path in files}
    assert {"tests/test_module_size.py", "cli/main.py", "scripts/bench_common.py"} <= names  # tests and scripts count
    assert over_limit(files, REPO) == {}, f"split these modules (at most {MAX_LINES} lines each)"


def test_a_module_one_line_over_is_found(tmp_path):
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "full.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "site.py").write_text("x = 1\n" * 1000)
    assert over_limit(python_files(tmp_path), tmp_path) == {"long.py": MAX_LINES + 1}
