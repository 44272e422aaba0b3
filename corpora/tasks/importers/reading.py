"""Reading QA files: containers (jsonl, a json array, csv/tsv, parquet; gzip, bzip2 and zstd read
transparently by their first bytes), format detection from the first row's keys, and errors that
name the file, the line (json arrays: the item; parquet: the row) and the field.

A SQuAD file (one json object ``{"version", "data": [...]}``) is read as the items of its ``data``;
a record may hold several questions (:attr:`~.base.QAFormat.rows`), numbered ``question <n>`` in ``where``.

The import formats are one registry, :data:`QA_FORMATS` (detection tries them in its order): to add a
format, write its module (a :class:`~.base.QAFormat`) and add it there; the CLI's choices and help, the
docs' lists (checked by tests/test_registries.py) and format detection all read it.

>>> [f.name for f in QA_FORMATS]
['search_r1', 'kilt', 'musique', '2wikimultihopqa', 'hotpotqa', 'browsecomp_plus', 'squad', 'cmrc2018', 'flashrag', 'plain']
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from stillweb.corpora.errors import DataError, UsageError
from stillweb.corpora.snapshot.records import SkippedRow
from stillweb.corpora.sources.containers import Shard, read_shard
from stillweb.corpora.sources.files import data_suffix, open_lines
from stillweb.corpora.tasks.importers.base import FieldNames, QAFormat, RowError, SkippedQuestion, SourceRow
from stillweb.corpora.tasks.importers.browsecomp_plus import BROWSECOMP_PLUS
from stillweb.corpora.tasks.importers.flashrag import FLASHRAG
from stillweb.corpora.tasks.importers.hotpotqa import HOTPOTQA, TWOWIKI
from stillweb.corpora.tasks.importers.kilt import KILT
from stillweb.corpora.tasks.importers.musique import MUSIQUE
from stillweb.corpora.tasks.importers.plain import PLAIN
from stillweb.corpora.tasks.importers.search_r1 import SEARCH_R1
from stillweb.corpora.tasks.importers.squad import CMRC2018, SQUAD

__all__ = ["QA_FORMATS", "FORMAT_NAMES", "ImportFileError", "format_named", "read_rows"]

QA_FORMATS: tuple[QAFormat, ...] = (SEARCH_R1, KILT, MUSIQUE, TWOWIKI, HOTPOTQA, BROWSECOMP_PLUS, SQUAD, CMRC2018, FLASHRAG,
                                    PLAIN)
FORMAT_NAMES = tuple(f.name for f in QA_FORMATS)
_CONTAINERS = {".jsonl": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet"}


class ImportFileError(DataError):
    """A QA file that cannot be imported: the message names the file, the line and the field."""


def format_named(name: str) -> QAFormat:
    """The format called ``name``; ``ValueError`` listing the known formats otherwise."""
    for qa_format in QA_FORMATS:
        if qa_format.name == name:
            return qa_format
    raise UsageError(f"unknown format {name!r}; known formats: {', '.join(FORMAT_NAMES)}")


def read_rows(path: Path, format_name: str | None,
              fields: FieldNames) -> Iterator[tuple[str, str, SourceRow | SkippedQuestion]]:
    """``(where, format, row)`` for every question of ``path``, ``where`` being ``"<file> line <n>"``
    (a question of a several-question record that cannot be read comes as a :class:`SkippedQuestion`).

    The format is ``format_name`` or detected from the first row's keys; a first row that does
    not fit ``format_name`` is an error saying which format it looks like.
    """
    wanted = format_named(format_name) if format_name else None
    qa_format = None
    for where, record in _records(path):
        if qa_format is None:
            qa_format = _check_format(where, record, wanted, fields)
        try:
            rows = list(qa_format.read(record, fields))
        except RowError as error:
            raise ImportFileError(f"{where}: field {error.field!r}: {error} ({qa_format.name} format)") from None
        except (TypeError, ValueError, AttributeError, KeyError) as error:
            raise ImportFileError(f"{where}: not a {qa_format.name} row: {type(error).__name__}: {error}") from None
        if qa_format.rows is None:
            yield where, qa_format.name, rows[0]
            continue
        for number, row in enumerate(rows):
            yield f"{where} question {number}", qa_format.name, row


def _check_format(where: str, record: dict, wanted: QAFormat | None, fields: FieldNames) -> QAFormat:
    """The format of the file's first row: ``wanted`` if it fits, else the detected one."""
    keys = frozenset(record)
    looks_like = next((f for f in QA_FORMATS if f.matches(keys, fields)), None)
    if wanted is not None:
        if wanted.matches(keys, fields):
            return wanted
        hint = f"it looks like {looks_like.name}" if looks_like else "it matches no known format"
        raise ImportFileError(f"{where}: not {wanted.name} ({wanted.description}); its keys are {sorted(keys)}: "
                              f"{hint}. Drop --format to detect it, or give the right one ({', '.join(FORMAT_NAMES)})")
    if looks_like is None:
        raise ImportFileError(f"{where}: cannot tell the format from the keys {sorted(keys)}; known formats: "
                              f"{', '.join(FORMAT_NAMES)} (plain: name the columns with --question-field and --answer-field)")
    return looks_like


def _records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every record of ``path`` as ``(where, dict)``, in file order."""
    container = _CONTAINERS.get(data_suffix(path))
    if container is None:
        raise UsageError(f"{path}: cannot read a {data_suffix(path) or 'suffix-less'} file; expected "
                         f"{' / '.join(_CONTAINERS)} (optionally .gz, .bz2, .zst)")
    if container == "jsonl":
        yield from _json_lines(path)
        return
    if container == "json" and not _is_json_array(path):
        yield from _json_document(path)
        return
    unit = {"json": "item", "parquet": "row"}.get(container, "data row")
    for item in read_shard(Shard(path, container)):
        if isinstance(item, SkippedRow):
            raise ImportFileError(f"{path} {unit} {item.position.rsplit(' ', 1)[-1]}: {item.reason}: {item.detail}")
        position, record = item
        yield f"{path} {unit} {position.rsplit(' ', 1)[-1]}", record


def _is_json_array(path: Path) -> bool:
    for line in open_lines(path):
        if line.strip():
            return line.lstrip().startswith(b"[")
    return False


def _json_document(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """A ``.json`` file that is not an array: a SQuAD document (``{"version", "data": [...]}``, on one
    line or pretty-printed) gives the items of its ``data``; anything else is read as JSON lines."""
    first = next((line for line in open_lines(path) if line.strip()), b"")
    try:
        document = json.loads(first)
    except (UnicodeDecodeError, json.JSONDecodeError):
        if not first.lstrip().startswith(b"{"):
            document = None
        else:  # one object written over several lines
            try:
                document = json.loads(b"".join(open_lines(path)))
            except (UnicodeDecodeError, json.JSONDecodeError) as error:
                raise ImportFileError(f"{path}: not JSON: {error}") from None
    if not (isinstance(document, dict) and isinstance(document.get("data"), list) and set(document) <= _SQUAD_KEYS):
        yield from _json_lines(path)
        return
    for number, item in enumerate(document["data"]):
        where = f"{path} data item {number}"
        if not isinstance(item, dict):
            raise ImportFileError(f"{where}: a JSON {type(item).__name__}, expected an object")
        yield where, item


_SQUAD_KEYS = frozenset({"data", "version"})


def _json_lines(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for number, line in enumerate(open_lines(path), 1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        try:
            record = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ImportFileError(f"{where}: not JSON: {error}") from None
        if not isinstance(record, dict):
            raise ImportFileError(f"{where}: a JSON {type(record).__name__}, expected an object")
        yield where, record
