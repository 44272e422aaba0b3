"""Snapshots with a dense index for the tests: a copy of a built snapshot plus the stub model's vectors."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np

from stillweb.corpora.snapshot.reading import Snapshot
from support.embeddings_stub import MODEL, hashing_embedding

DIMENSIONS = 64


def stub_vectors(snapshot_path: Path, dimensions: int = DIMENSIONS) -> tuple[list[str], np.ndarray]:
    """(source ids, vectors) of every document as the stub server embeds it (title, newline, text[:2000])."""
    snapshot = Snapshot.open(snapshot_path)
    ids = [snapshot.source_id_of(doc_id) or str(doc_id) for doc_id in range(len(snapshot))]
    texts = [f"{snapshot.title_of(doc_id)}\n{snapshot.text_of(doc_id)[:2000]}" for doc_id in range(len(snapshot))]
    return ids, np.array([hashing_embedding(text, dimensions) for text in texts])


def dense_copy(snapshot_path: Path, out: Path) -> Path:
    """A copy of the snapshot at ``out`` with the stub model's dense index (built from a vectors file)."""
    from stillweb.corpora.search.dense_build import add_dense_index

    shutil.copytree(snapshot_path, out)
    ids, vectors = stub_vectors(out)
    np.savez(out.parent / f"{out.name}-vectors.npz", ids=np.array(ids), vectors=vectors)
    add_dense_index(out, model=MODEL, vectors_file=out.parent / f"{out.name}-vectors.npz", progress=False)
    return out


def tree_digest(directory: Path) -> str:
    """sha256 over every file below ``directory`` (relative names and bytes)."""
    digest = hashlib.sha256()
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(directory).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
