"""Input files of a row corpus: paths, globs and directories in a stated order, and
transparent gzip / bzip2 / zstd decompression.

:func:`expand_inputs` turns the command line's inputs into the list of files to
read: each argument in the order given; a directory or a glob contributes its
matching files in name order. :func:`open_lines` yields a file's lines as bytes,
decompressing by magic number (not by name) with pyarrow's codecs, so memory
stays one line whatever the file size. A truncated or damaged compressed stream
raises :class:`CorpusFileError` naming the file and the last good row.
"""

from __future__ import annotations

import glob
import io
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from stillweb.corpora.errors import DataError

__all__ = [
    "CorpusFileError",
    "expand_inputs",
    "compression_of",
    "data_suffix",
    "open_binary",
    "open_lines",
    "DATA_SUFFIXES",
]

DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".parquet")
_COMPRESSION_SUFFIXES = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".zstd": "zstd"}
_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\x28\xb5\x2f\xfd", "zstd"))
_READ_BUFFER = 1 << 20


class CorpusFileError(DataError):
    """A corpus file that cannot be read as a whole (missing, truncated, damaged)."""


def data_suffix(path: Path) -> str:
    """The data format suffix of ``path`` with any compression suffix removed (``a.jsonl.gz`` -> ``.jsonl``)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION_SUFFIXES:
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def _is_data_file(path: Path) -> bool:
    return path.is_file() and data_suffix(path) in DATA_SUFFIXES


def expand_inputs(inputs: list[str | Path]) -> list[Path]:
    """The files to read, in the stated order: each input in turn, directories and
    globs expanded to their data files (``.jsonl .json .csv .tsv .parquet``, optionally
    ``.gz .bz2 .zst``) sorted by name. Raises :class:`FileNotFoundError` for an input
    that matches nothing."""
    files: list[Path] = []
    for item in inputs:
        text = str(item)
        path = Path(text).expanduser()
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            found = sorted(p for p in path.iterdir() if _is_data_file(p))
            if not found:
                raise FileNotFoundError(f"{path}: directory holds no {' / '.join(DATA_SUFFIXES)} files")
            files.extend(found)
        elif glob.has_magic(text):
            found = sorted(Path(p) for p in glob.glob(str(path)) if _is_data_file(Path(p)))
            if not found:
                raise FileNotFoundError(f"{text}: the pattern matches no {' / '.join(DATA_SUFFIXES)} files")
            files.extend(found)
        else:
            raise FileNotFoundError(f"corpus input not found: {path}")
    return files


def compression_of(path: Path) -> str | None:
    """``"gzip"``, ``"bz2"``, ``"zstd"`` or ``None``, from the file's first bytes."""
    with path.open("rb") as probe:
        head = probe.read(4)
    return next((codec for magic, codec in _MAGIC if head.startswith(magic)), None)


def open_binary(path: Path) -> io.BufferedReader:
    """``path`` opened for buffered binary reading, decompressed when it is compressed."""
    codec = compression_of(path)
    raw = pa.OSFile(str(path), "rb")
    stream = pa.CompressedInputStream(raw, codec) if codec else raw
    return io.BufferedReader(stream, buffer_size=_READ_BUFFER)


def open_lines(path: Path) -> Iterator[bytes]:
    """The lines of ``path`` (decompressed), each with its line ending."""
    number = 0
    try:
        with open_binary(path) as stream:
            for number, line in enumerate(stream, 1):  # noqa: B007 (number is reported on error)
                yield line
    except OSError as error:
        raise CorpusFileError(
            f"{path}: cannot read past line {number} (truncated or damaged {compression_of(path) or 'file'}): {error}"
        ) from error
