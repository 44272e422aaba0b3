"""One error root for stillweb, with a subclass per boundary (after verifiers' error tree).

Catch :class:`StillwebError` for "anything stillweb raised on purpose", or one boundary:

- :class:`UsageError`: a developer's call or configuration is wrong (an argument, an option, a
  missing file they named). Also a ``ValueError``, so callers that caught that keep working.
- :class:`DataError`: a snapshot, corpus, task set, recording or store on disk cannot be read as
  it should (truncated, damaged, from a newer version). Also a ``ValueError``.
- :class:`UpstreamError`: a service stillweb called (a live tool, a policy or embeddings
  endpoint, a stillweb server) failed or stayed unreachable. Also a ``RuntimeError``.
- :class:`PolicyInputError`: raised inside a parser or a tool on a policy's text; the environment
  turns it into an observation that says how to call the tool correctly, never an exception that
  leaves the environment.

Every message says what was wrong, the value, and how to fix it (Gymnasium's "Expected ...,
actually ..." is the model).

>>> issubclass(DataError, ValueError) and issubclass(UpstreamError, RuntimeError)
True
>>> try:
...     raise UsageError("count must be a positive integer, got 0")
... except StillwebError as error:
...     print(type(error).__name__, isinstance(error, ValueError))
UsageError True
"""

from __future__ import annotations

__all__ = ["StillwebError", "UsageError", "DataError", "UpstreamError", "PolicyInputError"]


class StillwebError(Exception):
    """The root of every error stillweb raises on purpose."""


class UsageError(StillwebError, ValueError):
    """A developer's argument, option or configuration is wrong; the message names the value and the fix."""


class DataError(StillwebError, ValueError):
    """Data on disk (snapshot, corpus file, task set, recording, store) cannot be read; the message names the file."""


class UpstreamError(StillwebError, RuntimeError):
    """A service stillweb called failed or stayed unreachable; the message names it and the call."""


class PolicyInputError(StillwebError):
    """A policy's text or tool input that cannot be served; it becomes an observation, never leaves the env."""
