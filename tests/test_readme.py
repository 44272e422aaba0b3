"""The README's Python examples run as written (against a small snapshot with a `default` task set)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from stillweb.corpora.tasks.generate import GenerationParams, generate_tasks

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


@pytest.fixture(scope="module")
def snapshot_with_default_tasks(small_snapshot, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("readme") / "syn"
    shutil.copytree(small_snapshot, path)
    generate_tasks(path, "default", GenerationParams(count=12, seed=0), allow_partial=True)
    return path


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, snapshot_with_default_tasks):
    code = (BLOCKS[index]
            .replace("snapshots/syn-20k", str(snapshot_with_default_tasks))
            .replace('"Some Title"', "0")
            .replace('"..."', '"river"'))
    exec(compile(code, f"README python block {index}", "exec"), {})
