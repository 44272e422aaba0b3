"""A policy behind an OpenAI-compatible chat endpoint (vLLM, SGLang, TGI, llama.cpp, OpenAI).

:class:`ChatPolicy` sends the environment's conversation (``info["messages"]``) to
``POST {base_url}/chat/completions`` with fixed sampling settings and returns the
reply's text as the next action. The model id comes from ``model`` or, when not
given, from the endpoint's ``GET {base_url}/models`` (its first model), so a
difficulty profile records which model it measured.

A call that fails (connection refused, timeout, HTTP error, a body without
``choices[0].message.content``) is retried ``retries`` times with exponential
backoff, then raises :class:`PolicyFailure` whose ``reason`` names what went
wrong; callers record the episode as failed with that reason instead of crashing.
The per-episode ``seed`` (OpenAI's ``seed`` parameter) makes sampling servers that
honour it reproducible.

>>> policy = ChatPolicy("http://127.0.0.1:8000/v1", model="qwen", temperature=1.0)  # doctest: +SKIP
>>> action = policy(prompt, info)                                                       # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import httpx

from stillweb.corpora.errors import UsageError
from stillweb.envs.agents.loop import PolicyFailure

__all__ = ["ChatPolicy", "Sampling"]


@dataclass(frozen=True)
class Sampling:
    """The sampling settings sent with every request (and recorded in profiles)."""

    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 2048

    def as_dict(self) -> dict[str, Any]:
        """The settings as a plain dict."""
        return asdict(self)


class ChatPolicy:
    """``policy(observation, info) -> action``: the endpoint's reply to ``info["messages"]``.

    Args:
        base_url: the API root, e.g. ``http://127.0.0.1:8000/v1``.
        model: the model id to ask for (default: the endpoint's first listed model).
        sampling: a :class:`Sampling` (temperature, top_p, max_tokens).
        timeout_s: longest wait for one request.
        retries: further attempts after a failed request; backoff ``backoff_s * 2**attempt``.
        api_key: sent as ``Authorization: Bearer ...`` when given.
    """

    def __init__(self, base_url: str, model: str | None = None, sampling: Sampling | None = None, *,
                 timeout_s: float = 60.0, retries: int = 3, backoff_s: float = 0.5, api_key: str | None = None) -> None:
        if retries < 0:
            raise UsageError(f"retries must be 0 or more, got {retries}")
        self.base_url = base_url.rstrip("/")
        self.sampling = sampling or Sampling()
        self.timeout_s, self.retries, self.backoff_s = timeout_s, retries, backoff_s
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._model = model
        self._client: httpx.Client | None = None  # one connection pool per process (not pickled)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_client": None}

    @property
    def model(self) -> str:
        """The model id (asked of the endpoint once when not given; :class:`PolicyFailure` if it cannot say)."""
        if self._model is None:
            body = self._request("GET", "/models", None)
            try:
                self._model = str(body["data"][0]["id"])
            except (KeyError, IndexError, TypeError):
                raise PolicyFailure(f"malformed reply from {self.base_url}/models: {str(body)[:200]!r}, "
                                    "expected {\"data\": [{\"id\": ...}]}") from None
        return self._model

    def complete(self, messages: Sequence[Mapping[str, str]], seed: int | None = None) -> str:
        """The assistant text the endpoint replies to ``messages`` (:class:`PolicyFailure` after the retries)."""
        payload = {"model": self.model, "messages": [dict(m) for m in messages], **self.sampling.as_dict()}
        if seed is not None:
            payload["seed"] = seed
        return self._request("POST", "/chat/completions", payload, _reply_text)

    def __call__(self, observation: str, info: Mapping[str, Any]) -> str:
        """The next action for an environment step (the conversation is ``info["messages"]``: the whole of it
        as :func:`~stillweb.envs.agents.loop.play_episode` gives it to a policy)."""
        messages = info.get("messages") or [{"role": "user", "content": observation}]
        return self.complete(messages, info.get("sample_seed"))

    def _request(self, method: str, path: str, payload: dict | None, read=lambda body: body):
        """One request with retries; ``read(body)`` raising ``ValueError`` counts as a malformed reply."""
        reason = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                if self._client is None:
                    self._client = httpx.Client(headers=self.headers, timeout=self.timeout_s)
                response = self._client.request(method, self.base_url + path, json=payload)
                response.raise_for_status()
                return read(response.json())
            except httpx.TimeoutException:
                reason = f"timeout: no reply from {self.base_url}{path} within {self.timeout_s:g} s"
            except httpx.HTTPStatusError as error:
                reason = f"http {error.response.status_code} from {self.base_url}{path}: {error.response.text[:200]!r}"
            except httpx.HTTPError as error:
                reason = f"unreachable: {self.base_url}{path}: {type(error).__name__}: {error}"
            except ValueError as error:  # json.JSONDecodeError included
                reason = f"malformed reply from {self.base_url}{path}: {error}"
        raise PolicyFailure(f"{reason} (after {self.retries + 1} attempts)")


def _reply_text(body: Any) -> str:
    """``choices[0].message.content`` of a chat completion (``ValueError`` naming what is missing)."""
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise UsageError(f"expected choices[0].message.content, got {str(body)[:200]!r}") from None
    if not isinstance(content, str):
        raise UsageError(f"choices[0].message.content is {type(content).__name__}, not text")
    return content
