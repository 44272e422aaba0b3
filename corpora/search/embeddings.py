"""Embeddings from an OpenAI-compatible ``/v1/embeddings`` server, and frozen query embeddings.

:class:`EmbeddingsClient` posts batches of texts (``{"model", "input": [...]}``, OpenAI's request;
vLLM, text-embeddings-inference, Ollama, LiteLLM and Infinity serve it) and checks what comes
back: one vector per text, all of the expected dimensions. A server that is down, too slow or
answers wrongly raises :class:`EmbeddingsError` naming the URL and the reason.

:class:`QueryEmbeddingStore` freezes query embeddings, as a frozen tool freezes a live API
(:mod:`stillweb.sandboxes.frozen`): the first time a query is embedded its vector is appended
to a log, and every later search, replay and machine reads the record instead of asking the
server again, so a GPU server's run-to-run noise never reaches a ranking. A query without a
record and no server configured is :class:`QueryNotRecorded`, never a different ranking.

The log is one line per record, ``"<blake2b-128 hex of the JSON> <JSON>\\n"``, appended with
one ``write`` under an exclusive ``flock``; a torn last line (a killed writer) fails its
checksum and is skipped. The first record of a key wins.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import httpx

from stillweb.corpora.canonical import canonical_json
from stillweb.corpora.errors import PolicyInputError, UpstreamError, UsageError

__all__ = ["EmbeddingsClient", "EmbeddingsError", "QueryEmbeddingStore", "QueryNotRecorded", "QueryEmbedder",
           "ENDPOINT_VARIABLE", "STORE_VARIABLE", "default_store_path"]

ENDPOINT_VARIABLE = "STILLWEB_EMBEDDINGS_ENDPOINT"  # the server that embeds queries not yet recorded
STORE_VARIABLE = "STILLWEB_QUERY_EMBEDDINGS"  # a query store other than the one beside the snapshot
STORE_SUFFIX = ".query-embeddings.log"


class EmbeddingsError(UpstreamError):
    """The embeddings server is down, timed out, or answered with something other than the vectors asked for."""


class QueryNotRecorded(PolicyInputError):
    """A dense or hybrid query has no recorded embedding and no server is configured to make one."""


def default_store_path(snapshot_path: Path) -> Path:
    """Where a snapshot's query embeddings are recorded unless told otherwise: a file beside it
    (outside the snapshot, which stays immutable and keeps its hashes)."""
    return snapshot_path.with_name(snapshot_path.name + STORE_SUFFIX)


class EmbeddingsClient:
    """Batches of texts to vectors through ``POST {endpoint}/embeddings`` (``endpoint`` ends in ``/v1``;
    a full ``.../embeddings`` URL is accepted too)."""

    def __init__(self, endpoint: str, model: str, timeout: float = 60.0, dimensions: int | None = None) -> None:
        if not isinstance(endpoint, str) or not endpoint.startswith(("http://", "https://")):
            raise UsageError(f"endpoint must be an http(s) URL such as http://127.0.0.1:8000/v1, got {endpoint!r}")
        if not isinstance(model, str) or not model:
            raise UsageError(f"model must be the name the embeddings server knows, got {model!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
            raise UsageError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.url = endpoint.rstrip("/") + ("" if endpoint.rstrip("/").endswith("/embeddings") else "/embeddings")
        self.model = model
        self.dimensions = dimensions
        self._client = httpx.Client(timeout=timeout, headers=_auth_headers())

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order; :class:`EmbeddingsError` with the reason otherwise."""
        try:
            response = self._client.post(self.url, json={"model": self.model, "input": texts})
        except httpx.TimeoutException:
            raise EmbeddingsError(f"embeddings server {self.url} did not answer within "
                                  f"{self._client.timeout.read} s (raise --timeout, or check the server)") from None
        except httpx.HTTPError as error:
            raise EmbeddingsError(f"embeddings server {self.url} is unreachable: {error} (is it running?)") from None
        if response.status_code != 200:
            raise EmbeddingsError(f"embeddings server {self.url} answered HTTP {response.status_code}: "
                                  f"{response.text[:200]}")
        try:
            items = sorted(response.json()["data"], key=lambda item: item["index"])
            vectors = [[float(value) for value in item["embedding"]] for item in items]
        except (ValueError, KeyError, TypeError) as error:
            raise EmbeddingsError(f"embeddings server {self.url} did not answer in OpenAI's format "
                                  f"({{'data': [{{'index', 'embedding'}}]}}): {error!r}") from None
        if len(vectors) != len(texts):
            raise EmbeddingsError(f"embeddings server {self.url} returned {len(vectors)} vectors for {len(texts)} texts")
        for vector in vectors:
            if self.dimensions is None:
                self.dimensions = len(vector)
            if len(vector) != self.dimensions:
                raise EmbeddingsError(f"embeddings server {self.url} returned a vector of {len(vector)} dimensions; "
                                      f"expected {self.dimensions} (model {self.model!r}: is it the same model?)")
        return vectors

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()


def _auth_headers() -> dict[str, str]:
    """``Authorization: Bearer $OPENAI_API_KEY`` when set (OpenAI's own convention); never recorded anywhere."""
    key = os.environ.get("OPENAI_API_KEY")
    return {"Authorization": f"Bearer {key}"} if key else {}


def _line_end_needed(path: Path) -> bytes:
    """``b"\\n"`` when the log ends in a torn line (a recorder killed mid-write), so the next record starts clean."""
    with open(path, "rb") as handle:
        if handle.seek(0, os.SEEK_END) == 0:
            return b""
        handle.seek(-1, os.SEEK_END)
        return b"" if handle.read(1) == b"\n" else b"\n"


def _checksum(payload: bytes) -> str:
    return hashlib.blake2b(payload, digest_size=16).hexdigest()


class QueryEmbeddingStore:
    """The append-only log of recorded query embeddings (see the module doc). Thread- and process-safe."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._records: dict[str, list[float]] = {}
        self._offset = 0
        self._lock = threading.Lock()

    @staticmethod
    def key(model: str, text: str) -> str:
        """The record key of ``text`` (the exact text sent, prefix included) embedded by ``model``."""
        return hashlib.sha256(canonical_json({"model": model, "text": text}).encode()).hexdigest()

    def get(self, key: str) -> list[float] | None:
        """The recorded vector of ``key`` or ``None`` (sees records other processes added since)."""
        with self._lock:
            if key not in self._records:
                self._read_new()
            return self._records.get(key)

    def get_or_record(self, model: str, text: str, embed) -> list[float]:
        """The recorded vector of ``text``; else ``embed(text)``, appended first-record-wins, and returned."""
        key = self.key(model, text)
        found = self.get(key)
        if found is not None:
            return found
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "ab") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)  # one recorder at a time: a query is embedded once
                self._read_new()
                if key not in self._records:
                    vector = embed(text)
                    line = canonical_json({"key": key, "model": model, "text": text, "vector": vector}).encode()
                    handle.write(_line_end_needed(self.path) + _checksum(line).encode() + b" " + line + b"\n")
                    handle.flush()
                    os.fsync(handle.fileno())
                    self._read_new()
            return self._records[key]

    def __len__(self) -> int:
        with self._lock:
            self._read_new()
            return len(self._records)

    def _read_new(self) -> None:
        """Read the complete lines appended since the last read (a torn or damaged line is skipped)."""
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self._offset)
                data = handle.read()
        except FileNotFoundError:
            return
        complete = data[: data.rfind(b"\n") + 1]
        for line in complete.splitlines():
            checksum, _, payload = line.partition(b" ")
            if _checksum(payload).encode() != checksum:
                continue
            record = json.loads(payload)
            self._records.setdefault(record["key"], record["vector"])
        self._offset += len(complete)


@dataclass(frozen=True)
class QueryEmbedder:
    """How a snapshot gets query embeddings: the ``store`` of records, and the ``endpoint`` that fills a
    miss (``None``: a miss is :class:`QueryNotRecorded`). With ``shipped`` (a dense index the shipped
    model made, :mod:`stillweb.corpora.search.dense_model`) a miss is embedded here, in this process, and
    not recorded: the model gives every process the same vector, and a record, where one exists, still
    wins. Picklable, so search worker processes share it."""

    model: str
    query_prefix: str = ""
    store: Path | None = None
    endpoint: str | None = None
    timeout: float = 60.0
    shipped: bool = False

    def embed(self, query: str, snapshot_path: Path) -> list[float]:
        """The frozen embedding of ``query`` for the snapshot at ``snapshot_path``."""
        store = _open_store(self.store or default_store_path(snapshot_path))
        text = self.query_prefix + query
        found = store.get(store.key(self.model, text))
        if found is not None:
            return found
        if self.shipped:
            from stillweb.corpora.search.dense_model import shipped_model

            return shipped_model().embed([text])[0]
        if not self.endpoint:
            raise QueryNotRecorded(
                f"no recorded embedding for this query (model {self.model!r}, store {store.path}) and no "
                f"embeddings server to make one: search with retriever='bm25', or start the server with "
                f"{ENDPOINT_VARIABLE}=URL set to record it")
        client = _client(self.endpoint, self.model, self.timeout)
        return store.get_or_record(self.model, text, lambda item: client.embed([item])[0])


_STORES: dict[Path, QueryEmbeddingStore] = {}
_CLIENTS: dict[tuple[str, str, float], EmbeddingsClient] = {}
_SHARED_LOCK = threading.Lock()


def _open_store(path: Path) -> QueryEmbeddingStore:
    with _SHARED_LOCK:
        return _STORES.setdefault(Path(path), QueryEmbeddingStore(Path(path)))


def _client(endpoint: str, model: str, timeout: float) -> EmbeddingsClient:
    with _SHARED_LOCK:
        key = (endpoint, model, timeout)
        if key not in _CLIENTS:
            _CLIENTS[key] = EmbeddingsClient(endpoint, model, timeout)
        return _CLIENTS[key]
