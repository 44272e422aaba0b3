"""Find the snapshot a recording was made on: by its recorded path, else by its fingerprint.

A recording's header stores the snapshot's resolved path and content fingerprint
(:func:`snapshot_header`). Replaying from another directory, or after the
snapshot moved, :func:`locate_snapshot` tries the recorded path (given, then
resolved) and accepts it only when the fingerprint matches; otherwise it looks
for a snapshot with that fingerprint in ``$STILLWEB_HOME/snapshots/``, the
current directory, its ``snapshots/`` and the recording's folder (and their
direct subfolders). It says which one it used and how it found it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stillweb.corpora.home import default_home
from stillweb.corpora.snapshot.manifest import SnapshotError, read_manifest

__all__ = ["locate_snapshot", "snapshot_header"]


def snapshot_header(env: Any) -> dict[str, str]:
    """``{"snapshot_path", "snapshot_fingerprint"}`` of an env that reads a local snapshot, or of a
    snapshot itself (else ``{}``)."""
    target = getattr(env, "unwrapped", env)
    snapshot = getattr(target, "snapshot", target)
    path, fingerprint = getattr(snapshot, "path", None), getattr(snapshot, "fingerprint", None)
    if path is None or fingerprint is None:
        return {}
    return {"snapshot_path": str(Path(path).resolve()), "snapshot_fingerprint": str(fingerprint)}


def locate_snapshot(header: Mapping[str, Any], recording: Path) -> tuple[str | None, str]:
    """(the snapshot directory to replay on, or None to keep the recorded kwargs; how it was found).

    ``FileNotFoundError`` naming both the path and the fingerprint (and the fix) when neither finds it.
    """
    fingerprint = header.get("snapshot_fingerprint")
    given = (header.get("kwargs") or {}).get("snapshot")
    if not fingerprint:
        return None, f"snapshot {given} (as recorded; the recording has no fingerprint)"
    for candidate, how in ((given, "its recorded path"), (header.get("snapshot_path"), "its recorded resolved path")):
        if candidate and _fingerprint(Path(candidate)) == fingerprint:
            return str(Path(candidate).resolve()), f"snapshot {Path(candidate).resolve()} (found by {how})"
    for folder in _search_folders(recording):
        for candidate in sorted([folder, *(path for path in folder.iterdir() if path.is_dir())]):
            if _fingerprint(candidate) == fingerprint:
                return str(candidate.resolve()), f"snapshot {candidate.resolve()} (found by its fingerprint {fingerprint[:12]})"
    raise FileNotFoundError(
        f"snapshot of the recording not found: not at {header.get('snapshot_path') or given}, and no snapshot with "
        f"fingerprint {fingerprint[:12]} in $STILLWEB_HOME/snapshots, ./snapshots, . or {recording.parent}; "
        f"pass it with: stillweb replay {recording} --snapshot DIR")


def _search_folders(recording: Path) -> list[Path]:
    folders = [default_home() / "snapshots", Path.cwd(), Path.cwd() / "snapshots", recording.resolve().parent]
    return [folder for folder in dict.fromkeys(folders) if folder.is_dir()]


def _fingerprint(path: Path) -> str | None:
    try:
        return str(read_manifest(path).get("fingerprint")) if path.is_dir() else None
    except (SnapshotError, OSError, ValueError):
        return None
