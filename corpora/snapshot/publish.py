"""Publishing a directory whole: it is filled in a staging directory beside its place and renamed into it.

A reader sees the old directory or the new one, never a half-written one: a crash, Ctrl-C or a full disk
while it is filled leaves the directory that was there (or none) and removes the staging directory; a full
disk is a :class:`~stillweb.corpora.errors.StorageError` naming the directory and what was kept. Used by task
sets (:mod:`stillweb.corpora.tasks.store.files`) and app task sets (:mod:`stillweb.corpora.apps.tasks`); snapshots
have their own exchange (:mod:`stillweb.corpora.build.snapshot_writer`).

>>> import tempfile
>>> root = Path(tempfile.mkdtemp())
>>> publish_directory(root / "set", lambda staging: (staging / "a.txt").write_text("1"), "the task set").name
'set'
>>> sorted(path.name for path in root.iterdir()), (root / "set" / "a.txt").read_text()
(['set'], '1')
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from stillweb.corpora.errors import writing

__all__ = ["publish_directory"]


def publish_directory(final: Path, fill: Callable[[Path], object], what: str) -> Path:
    """Call ``fill(staging)`` on a fresh directory beside ``final``, then put it at ``final`` (replacing the one
    there); returns ``final``. ``what`` names it in a full-disk error (``"the task set"``)."""
    final = Path(final)
    kept = f"the one already at {final} is unchanged" if final.exists() else f"nothing was created at {final}"
    with writing(final, what, f"its temporary files were removed; {kept}"):
        final.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
        try:
            fill(staging)
            if final.exists():
                retired = Path(tempfile.mkdtemp(prefix=f".{final.name}.old.", dir=final.parent))
                final.rename(retired / final.name)
                staging.rename(final)
                shutil.rmtree(retired)
            else:
                staging.rename(final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return final
