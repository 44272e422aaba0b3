"""A local OpenAI-compatible embeddings server with deterministic hashing embeddings (FastAPI on 127.0.0.1).

Each lowercase word of a text adds +-1 to one of ``dimensions`` components, both chosen by its
blake2b hash (feature hashing), so texts sharing words are near: a real, if lexical, embedding
model that needs no weights. Modes: ``ok``; ``slow`` sleeps ``slow_s`` before answering;
``wrong_dimensions`` answers the first request with ``dimensions`` and later ones with fewer;
``error`` answers HTTP 500; ``noisy`` adds a different small offset to every answer (as a GPU
server's batching does), so only a recorded vector can repeat. ``app.state.calls`` counts requests and ``app.state.texts`` the texts.

Run one: ``python tests/support/embeddings_stub.py PORT [--dimensions 64]`` (serves ``/v1/embeddings``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import re
import time
from collections.abc import Iterator

MODEL = "stub/hashing-words"


def hashing_embedding(text: str, dimensions: int) -> list[float]:
    """The stub model's vector of ``text``."""
    vector = [0.0] * dimensions
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        vector[int.from_bytes(digest[:4], "little") % dimensions] += 1.0 if digest[4] & 1 else -1.0
    return vector


def embeddings_app(dimensions: int = 64, mode: str = "ok", slow_s: float = 3.0):
    """The FastAPI app: ``POST /v1/embeddings`` as OpenAI's API answers it."""
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    app = FastAPI()
    app.state.calls = 0
    app.state.texts = 0

    @app.post("/v1/embeddings")
    def embed(body: dict):
        app.state.calls += 1
        texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
        app.state.texts += len(texts)
        if mode == "error":
            return JSONResponse({"error": "overloaded"}, status_code=500)
        if mode == "slow":
            time.sleep(slow_s)
        size = dimensions if mode != "wrong_dimensions" or app.state.calls == 1 else dimensions // 2
        noise = app.state.calls * 1e-3 if mode == "noisy" else 0.0
        data = [{"object": "embedding", "index": i, "embedding": [value + noise for value in hashing_embedding(text, size)]}
                for i, text in enumerate(texts)]
        return {"object": "list", "model": body.get("model"), "data": data,
                "usage": {"prompt_tokens": 0, "total_tokens": 0}}

    return app


@contextlib.contextmanager
def serve_embeddings(port: int, **options) -> Iterator[tuple[str, object]]:
    """Run the stub with uvicorn in a thread on 127.0.0.1:``port``; yields (its ``/v1`` URL, the app)."""
    from support.chat_stub import serve

    app = embeddings_app(**options)
    with serve(app, port) as url:
        yield url, app


if __name__ == "__main__":
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("port", type=int)
    parser.add_argument("--dimensions", type=int, default=64)
    args = parser.parse_args()
    uvicorn.run(embeddings_app(args.dimensions), host="127.0.0.1", port=args.port, log_level="warning")
