"""A local OpenAI-compatible chat endpoint with a scripted policy behind it (FastAPI on 127.0.0.1).

Modes: ``reference`` solves every task (a :class:`ReferenceAgent` re-played over the
conversation), ``half`` solves a task in a keyed half of its episodes (by ``seed`` and task id) and
answers "unknown" in the others (a "half-right" policy), ``wrong`` always answers
"unknown"; ``malformed`` returns a body without ``choices``, ``error`` answers HTTP 500
and ``slow`` sleeps past any short client timeout.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator, Sequence

from stillweb.corpora.keyed import KeyedRng
from stillweb.envs.agents.scripted import ReferenceAgent
from stillweb.corpora.tasks.store.record import TaskRecord

MODEL_ID = "stub/scripted-policy"


def chat_stub_app(tasks: Sequence[TaskRecord], mode: str = "reference", tool_format: str = "tongyi", slow_s: float = 2.0):
    """The FastAPI app: ``GET /v1/models`` and ``POST /v1/chat/completions``; ``app.state.calls`` counts requests."""
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse, StreamingResponse

    by_question = {task.question: task for task in tasks}
    app = FastAPI()
    app.state.calls = 0

    @app.get("/v1/models")
    def models() -> dict:
        return {"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]}

    @app.post("/v1/chat/completions")
    def complete(body: dict):
        app.state.calls += 1
        if mode == "error":
            return JSONResponse({"error": "overloaded"}, status_code=500)
        if mode == "malformed":
            return {"id": "x", "object": "chat.completion", "choices": []}
        if mode == "slow":
            time.sleep(slow_s)
        text = _scripted_reply(body["messages"], by_question, mode, body.get("seed") or 0, tool_format)
        if body.get("stream"):  # server-sent events, as verifiers' harness programs ask for
            return StreamingResponse(iter(_stream_events(body.get("model"), text)), media_type="text/event-stream")
        return {"id": "stub", "object": "chat.completion", "model": body.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]}

    return app


def _stream_events(model: str | None, text: str) -> list[str]:
    """The reply as OpenAI's streamed chunks: the content, the finish reason, the usage, then ``[DONE]``."""
    def chunk(choices: list[dict], **extra) -> str:
        return "data: " + json.dumps({"id": "stub", "object": "chat.completion.chunk", "model": model,
                                      "choices": choices, **extra}) + "\n\n"

    usage = {"prompt_tokens": 0, "completion_tokens": len(text) // 4, "total_tokens": len(text) // 4}
    return [chunk([{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]),
            chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]), chunk([], usage=usage), "data: [DONE]\n\n"]


def _scripted_reply(messages: list[dict], by_question: dict, mode: str, seed: int, tool_format: str) -> str:
    task = by_question.get(messages[1]["content"]) if len(messages) > 1 else None
    solves = task is not None and (mode == "reference" or (mode == "half" and KeyedRng(seed, task.task_id).chance(0.5)))
    if not solves:
        return "<answer>unknown</answer>"
    agent = ReferenceAgent(task, tool_format=tool_format)
    action = agent.act(messages[0]["content"] + "\n\n" + messages[1]["content"])
    for message in messages[3::2]:  # the observations after each earlier action
        action = agent.act(message["content"])
    return action


@contextlib.contextmanager
def serve(app, port: int) -> Iterator[str]:
    """Run ``app`` with uvicorn in a thread on 127.0.0.1:``port``; yields its ``/v1`` URL."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.02)
    if not server.started:
        raise RuntimeError(f"the stub server did not start on 127.0.0.1:{port}")
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
