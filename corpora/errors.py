"""One error root for stillweb, with a subclass per boundary (after verifiers' error tree).

Catch :class:`StillwebError` for "anything stillweb raised on purpose", or one boundary:

- :class:`UsageError`: a developer's call or configuration is wrong (an argument, an option, a
  missing file they named). Also a ``ValueError``, so callers that caught that keep working.
- :class:`DataError`: a snapshot, corpus, task set, recording or store on disk cannot be read as
  it should (truncated, damaged, from a newer version). Also a ``ValueError``.
- :class:`UpstreamError`: a service stillweb called (a live tool, a policy or embeddings
  endpoint, a stillweb server) failed or stayed unreachable. Also a ``RuntimeError``.
- :class:`StorageError`: writing to disk failed (the disk is full, a file-size limit or quota was
  reached, the filesystem is read-only); the message names the path and what was kept. Also an
  ``OSError``. :func:`writing` turns such a failure of a block of writes into one.
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

import errno
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["StillwebError", "UsageError", "DataError", "UpstreamError", "StorageError", "PolicyInputError",
           "disk_full", "writing"]


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


class StorageError(StillwebError, OSError):
    """Writing to disk failed (full, over a size limit or quota, read-only); the message names the path and what was kept."""


_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS})
# pyarrow and tantivy report the OS error in their own message, without errno set
_FULL_TEXTS = ("No space left on device", "File too large", "Disk quota exceeded", "Read-only file system")


def disk_full(error: BaseException) -> bool:
    """Whether ``error`` says the disk (or a size limit, quota or read-only mount) refused a write.

    >>> disk_full(OSError(errno.ENOSPC, "No space left on device")), disk_full(ValueError("bad"))
    (True, False)
    """
    if isinstance(error, OSError) and error.errno in _FULL_ERRNOS:
        return True
    return isinstance(error, (OSError, ValueError, RuntimeError)) and any(text in str(error) for text in _FULL_TEXTS)


@contextmanager
def writing(path: str | Path, what: str, kept: str) -> Iterator[None]:
    """Turn a full disk during the block into a :class:`StorageError` naming ``what`` at ``path`` and saying what was
    ``kept``; the block cleans up its own partial files before the error leaves it.

    >>> try:
    ...     with writing("/data/snap", "the snapshot", "nothing was written"):
    ...         raise OSError(errno.ENOSPC, "No space left on device")
    ... except StorageError as error:
    ...     print(str(error).split(". Free")[0])
    could not write the snapshot /data/snap: [Errno 28] No space left on device; nothing was written
    """
    try:
        yield
    except StillwebError:
        raise
    except BaseException as error:
        if not disk_full(error):
            raise
        reason = " ".join(str(error).split())
        raise StorageError(f"could not write {what} {path}: {reason}; {kept}. Free space on its disk (or raise the "
                           f"file size limit, ulimit -f) and run again") from error
