"""One way to build an environment config: from itself, a dict of its fields, or None (its defaults).

>>> from stillweb.envs.scoring.rewards import RewardConfig
>>> config_from(RewardConfig, {"outcome": 0.5}).outcome
0.5
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, TypeVar

from stillweb.corpora.errors import UsageError

__all__ = ["config_from"]

Config = TypeVar("Config")


def config_from(config_type: type[Config], value: Config | Mapping[str, Any] | None) -> Config:
    """``value`` as a ``config_type`` dataclass; ``ValueError`` naming unknown fields (and the known ones)."""
    if value is None:
        return config_type()
    if isinstance(value, config_type):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"expected a {config_type.__name__}, a dict of its fields or None, got {type(value).__name__}")
    known = {f.name for f in fields(config_type)}
    unknown = sorted(set(value) - known)
    if unknown:
        raise UsageError(f"unknown {config_type.__name__} fields {unknown}; known: {sorted(known)}")
    return config_type(**dict(value))
