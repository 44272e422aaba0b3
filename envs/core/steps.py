"""What a step of every text environment shares (``WikiQA-v0``, ``Apps-v0``; ``Lookup-v0`` the checks).

- :func:`check_step`: the developer-boundary errors of ``step`` (no episode, a non-string action);
- :func:`over_long_observation`: the observation of an action over ``limits.max_action_chars``;
- :func:`clip_observation`: an observation cut to ``limits.max_observation_chars``, saying so;
- :func:`ending_info`: the ``info`` keys of the step that ends an episode (reward parts,
  outcome, why it ended, whether to mask it from the loss);
- :func:`latest_message`: what ``render()`` shows in ``render_mode="ansi"``.

>>> from types import SimpleNamespace
>>> parts = SimpleNamespace(outcome=0.0, as_dict=lambda: {"outcome": 0.0})
>>> ending_info(parts, "truncated", "max_turns", mask_truncated=True)
{'reward_parts': {'outcome': 0.0}, 'outcome': 0.0, 'termination_reason': None, 'truncation_reason': 'max_turns', 'mask_from_loss': True}
"""

from __future__ import annotations

from typing import Any, Protocol

from stillweb.envs.core.spaces import OBSERVATION_MAX_CHARS

__all__ = ["ScoredEpisode", "check_step", "over_long_observation", "clip_observation", "ending_info", "latest_message"]


class ScoredEpisode(Protocol):
    """The score of an ended episode: its parts (``as_dict``), the outcome and the reward (``total``)."""

    outcome: float
    total: float

    def as_dict(self) -> dict[str, Any]: ...


def check_step(ended: bool, action: Any) -> None:
    """``RuntimeError`` when there is no episode to step (``ended``), ``TypeError`` for a non-string action."""
    if ended:
        raise RuntimeError("step() called on an episode that has ended (or never started): call reset() first")
    if not isinstance(action, str):
        raise TypeError(f"action must be a str (the policy's text), got {type(action).__name__}")


def over_long_observation(action: str, max_action_chars: int) -> str:
    """What the agent is told when its action is longer than the cap: nothing ran, the episode ends."""
    return (f"Not run: the action has {len(action)} characters, more than the cap of "
            f"{max_action_chars}; the episode ends here (truncated).")


def clip_observation(text: str, max_chars: int = OBSERVATION_MAX_CHARS) -> str:
    """``text``, or its head with a note when it is longer than ``max_chars`` (the limits' observation cap)."""
    if len(text) <= max_chars:
        return text
    note = f"\n[... clipped to {max_chars} characters]"
    return text[: max_chars - len(note)] + note if max_chars > len(note) else text[:max_chars]


def ending_info(parts: ScoredEpisode, ending: str, reason: str | None, mask_truncated: bool) -> dict[str, Any]:
    """The ``info`` keys, in order, of the step that ends an episode ``ending`` (``"terminated"`` or
    ``"truncated"``) for ``reason``: ``reward_parts``, ``outcome``, ``termination_reason``,
    ``truncation_reason`` (the one that does not apply is ``None``) and ``mask_from_loss``."""
    return {
        "reward_parts": parts.as_dict(),
        "outcome": parts.outcome,
        "termination_reason": reason if ending == "terminated" else None,
        "truncation_reason": reason if ending == "truncated" else None,
        "mask_from_loss": ending == "truncated" and mask_truncated,
    }


def latest_message(render_mode: str | None, episode: Any) -> str | None:
    """The content of the latest message of ``episode`` (its ``messages``) in ``render_mode="ansi"``;
    ``None`` in any other mode or before the first ``reset`` (``episode`` is ``None``)."""
    if render_mode != "ansi" or episode is None:
        return None
    return episode.messages[-1]["content"]
