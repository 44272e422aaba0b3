"""Run the ``python`` and ``bash`` blocks of README.md and docs/*.md as written, in file order.

Every fenced block whose info string is ``python`` or ``bash`` runs; other fences
(plain text, ``yaml``, ``json``...) are shown, not run. One Markdown file is one
session in its own working directory:

- ``python`` blocks share one namespace (like a doctest session) and run in-process;
- ``bash`` blocks run with ``bash -euo pipefail``; ``stillweb``, ``python`` and
  ``python3`` on their ``PATH`` are this checkout's; a command left running in
  the background (``cmd &``) is killed when the file's session ends;
- the working directory holds ``snap/`` and ``snapshots/syn-20k/``: a small
  (300-article) synthetic snapshot with a 12-task set ``default``, standing in
  for the full-size worlds the docs name; ``STILLWEB_HOME`` is a fresh folder
  and ``STILLWEB_QUICKSTART_ARTICLES=300`` (``stillweb quickstart`` builds a small world);
- ``127.0.0.1:8000`` and ``:8001`` (and ``--port 8000``/``8001``) become free
  ports, so parallel runs never collide.

The one marker: an HTML comment on the line just before a block's opening fence,

    <!-- docs-test: skip REASON -->

keeps that block from running. REASON is required (why it cannot run offline in
a test: a GPU, a cluster, a package install); it is the exception, not the rule.

A failure names the file and the line of the block's opening fence
(``docs/trainers.md:42: bash block failed ...``), with the block's output.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Block", "BlockFailure", "DocSession", "markdown_blocks", "markdown_files"]

RUN_LANGUAGES = ("python", "bash")
MARKER = re.compile(r"<!--\s*docs-test:\s*(?P<verb>\S+)\s*(?P<reason>.*?)\s*-->")
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>```+|~~~+)\s*(?P<info>[^`\s]*)")
PORTS = ("8000", "8001")


@dataclass(frozen=True)
class Block:
    """One fenced block: its file, the line of its opening fence, its language, code and skip reason."""

    path: Path
    line: int
    language: str
    code: str
    skip_reason: str | None

    @property
    def where(self) -> str:
        """``file:line`` of the opening fence, relative to the repository when possible."""
        return f"{self.path}:{self.line}"


class BlockFailure(AssertionError):
    """A block that did not run as written; the message names the file, line and output."""


def markdown_files(root: Path) -> list[Path]:
    """README.md and docs/*.md under ``root``, sorted."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def markdown_blocks(path: Path, relative_to: Path | None = None) -> list[Block]:
    """Every fenced block of ``path`` in order; ``ValueError`` naming the line of a bad marker."""
    lines = path.read_text(encoding="utf-8").splitlines()
    shown = path.relative_to(relative_to) if relative_to else path
    blocks, number = [], 0
    while number < len(lines):
        opening = FENCE.match(lines[number])
        if not opening or (opening["fence"][0] == "`" and "`" in lines[number][opening.end("fence"):]):
            # CommonMark: a backtick fence's info string has no backtick (```` ```text ```` is inline code)
            number += 1
            continue
        fence, start = opening["fence"], number
        body = []
        number += 1
        while number < len(lines) and not lines[number].strip().startswith(fence):
            body.append(lines[number][len(opening["indent"]):])
            number += 1
        number += 1
        previous = lines[start - 1].strip() if start else ""
        marker = MARKER.search(previous)
        skip_reason = None
        if marker:
            if marker["verb"] != "skip" or not marker["reason"]:
                raise ValueError(f"{shown}:{start}: the marker must read '<!-- docs-test: skip REASON -->', got {previous!r}")
            skip_reason = marker["reason"]
        blocks.append(Block(shown, start + 1, opening["info"].lower(), "\n".join(body) + "\n", skip_reason))
    return blocks


class DocSession:
    """The working directory, namespace and background processes of one Markdown file's blocks."""

    def __init__(self, workdir: Path, bin_dir: Path, environment: dict[str, str], ports: dict[str, str]) -> None:
        self.workdir = workdir
        self.environment = {**environment, "PATH": f"{bin_dir}{os.pathsep}{environment.get('PATH', '')}"}
        self.ports = ports
        self.namespace: dict[str, object] = {"__name__": "__docs__"}
        self._groups: list[int] = []

    def run(self, block: Block) -> None:
        """Run one block (python in-process, bash in a subprocess); :class:`BlockFailure` if it fails."""
        code = self._with_ports(block.code)
        if block.language == "python":
            self._run_python(block, code)
        elif block.language == "bash":
            self._run_bash(block, code)

    def close(self) -> None:
        """Kill what bash blocks left running in the background."""
        for group in self._groups:
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._groups.clear()

    def _with_ports(self, code: str) -> str:
        for documented, free in self.ports.items():
            code = re.sub(rf"(127\.0\.0\.1:|localhost:|--port[ =]){documented}\b", rf"\g<1>{free}", code)
        return code

    def _run_python(self, block: Block, code: str) -> None:
        saved_cwd, saved_env = os.getcwd(), dict(os.environ)
        os.chdir(self.workdir)
        os.environ.update(self.environment)
        try:
            exec(compile(code, f"{block.where} (python block)", "exec"), self.namespace)
        except BaseException as error:  # noqa: BLE001 - a SystemExit from a snippet is a failure too
            details = "".join(traceback.format_exception(error)[-6:])
            raise BlockFailure(f"{block.where}: python block failed: {type(error).__name__}: {error}\n{details}") from None
        finally:
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)

    def _run_bash(self, block: Block, code: str) -> None:
        log = self.workdir / f".block-{block.line}.log"  # a file, not a pipe: background commands keep it open
        with log.open("wb") as output:
            process = subprocess.Popen(["bash", "-euo", "pipefail", "-c", code], cwd=self.workdir, env=self.environment,
                                       stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
            self._groups.append(process.pid)
            process.wait()
        if process.returncode != 0:
            text = log.read_bytes().decode("utf-8", "replace")[-3000:]
            raise BlockFailure(f"{block.where}: bash block failed (exit {process.returncode}):\n{code}\n--- output ---\n{text}")


def command_shims(bin_dir: Path) -> Path:
    """``stillweb``, ``python`` and ``python3`` scripts in ``bin_dir`` that run this interpreter."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, target in (("stillweb", f'"{sys.executable}" -m stillweb.cli.main'),
                         ("python", f'"{sys.executable}"'), ("python3", f'"{sys.executable}"')):
        path = bin_dir / name
        path.write_text(f"#!/usr/bin/env bash\nexec {target} \"$@\"\n", encoding="utf-8")
        path.chmod(0o755)
    return bin_dir
