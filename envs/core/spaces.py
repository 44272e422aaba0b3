"""Unicode text spaces for the environments, cheap to create and safe to vectorise.

A :class:`gymnasium.spaces.Text` over every Basic Multilingual Plane character
(surrogates excluded) builds a 63,488-entry charset: done once per process and
shared by every space (copies share the immutable tables), so 1,000 envs do not
pay it 1,000 times. Text outside the charset (lone surrogates, astral
characters such as emoji) becomes U+FFFD via :func:`to_charset`.

Gymnasium's shared-memory codec for ``Text`` decodes the buffer once, when the
``AsyncVectorEnv`` is created, so every later observation reads back as that
stale (empty) text. :class:`UnicodeText` registers its own codec: code points
with a length prefix, read through a live view (:class:`SharedTextBatch`) that
decodes on access and deep-copies to a tuple of strings, as numpy views do. So
the default ``shared_memory=True`` is correct.

>>> space = unicode_text_space(64)
>>> space.contains("Zoë ✓")
True
>>> to_charset("ok \\ud800 \\U0001F600")
'ok \\ufffd \\ufffd'
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Sequence
from types import ModuleType

import multiprocessing as mp
import numpy as np
from gymnasium.spaces import Text
from gymnasium.vector.utils.shared_memory import (
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)

__all__ = ["SharedTextBatch", "UnicodeText", "unicode_text_space", "to_charset", "OBSERVATION_MAX_CHARS"]

OBSERVATION_MAX_CHARS = 1 << 16  # observations are clipped to this many characters (EpisodeLimits' default)

_OUTSIDE_CHARSET = re.compile("[\ud800-\udfff\U00010000-\U0010ffff]")


class UnicodeText(Text):
    """A ``Text`` space whose vectorised shared memory stores code points, length-prefixed.

    It contains every string of ``min_length`` to ``max_length`` characters: the environments
    read a character outside the charset (a lone surrogate, an emoji) as U+FFFD
    (:func:`to_charset`), so they accept it; samples come from the charset.

    >>> unicode_text_space(3).contains("\\U0001F600\\ud800"), unicode_text_space(3).contains("abcd")
    (True, False)
    """

    def contains(self, x: object) -> bool:
        """Whether ``x`` is a string of an accepted length (any characters: see the class docstring)."""
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length


@functools.cache
def _prototype() -> UnicodeText:
    charset = "".join(chr(code) for code in range(0x10000) if not 0xD800 <= code <= 0xDFFF)
    return UnicodeText(max_length=OBSERVATION_MAX_CHARS, min_length=0, charset=charset)


def unicode_text_space(max_length: int) -> UnicodeText:
    """A new Unicode text space (own RNG, shared charset tables) of at most ``max_length`` characters."""
    space = copy.copy(_prototype())
    space.max_length = int(max_length)
    space._np_random = None
    return space


def to_charset(text: str) -> str:
    """``text`` with every character outside the spaces' charset replaced by U+FFFD."""
    return text if text.isascii() else _OUTSIDE_CHARSET.sub("\ufffd", text)


@create_shared_memory.register(UnicodeText)
def _create(space: UnicodeText, n: int = 1, ctx: ModuleType = mp):
    return ctx.Array(np.dtype(np.int32).char, n * (space.max_length + 1))


@write_to_shared_memory.register(UnicodeText)
def _write(space: UnicodeText, index: int, value: str, shared_memory) -> None:
    size = space.max_length + 1
    codes = np.frombuffer(to_charset(value)[: space.max_length].encode("utf-32-le"), dtype=np.int32)
    destination = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)[index * size : (index + 1) * size]
    destination[0] = len(codes)
    destination[1 : 1 + len(codes)] = codes


class SharedTextBatch(Sequence[str]):
    """A live view of ``n`` texts in shared memory: indexing decodes the current contents."""

    def __init__(self, rows: np.ndarray) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        row = self._rows[index]
        return row[1 : 1 + row[0]].tobytes().decode("utf-32-le")

    def __deepcopy__(self, memo: dict) -> tuple[str, ...]:
        return tuple(self)

    def __repr__(self) -> str:
        return f"SharedTextBatch({tuple(self)!r})"


@read_from_shared_memory.register(UnicodeText)
def _read(space: UnicodeText, shared_memory, n: int = 1) -> SharedTextBatch:
    return SharedTextBatch(np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, space.max_length + 1)))
