"""Progress of long work that reads well on a terminal and in a log.

On a terminal :func:`progress_bar` is a tqdm bar. Under a pipe or in CI (stderr
is not a tty) it is :class:`LineProgress`: one full line every few seconds
(``building: 120000 pages [00:14, 8200.00 pages/s]``, tqdm's own format) instead of
a carriage-return update per batch, plus a last line when the work ends.

>>> bar = progress_bar(total=None, unit="page", desc="building")   # doctest: +SKIP
>>> bar.update(32); bar.close()                                    # doctest: +SKIP
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from tqdm import tqdm

__all__ = ["progress_bar", "LineProgress", "LINE_INTERVAL_SECONDS"]

LINE_INTERVAL_SECONDS = 5.0


class LineProgress:
    """A tqdm-like counter that prints a whole line at most every ``interval`` seconds."""

    def __init__(self, total: int | None, unit: str, desc: str, file: TextIO, interval: float = LINE_INTERVAL_SECONDS) -> None:
        self.total, self.unit, self.desc, self.file, self.interval = total, unit, desc, file, interval
        self.n = 0
        self._start = time.monotonic()  # progress display only: never reaches an output
        self._last_line = self._start

    def update(self, n: int = 1) -> None:
        """Add ``n`` and print a line when ``interval`` seconds have passed since the last."""
        self.n += n
        now = time.monotonic()
        if now - self._last_line >= self.interval:
            self._print(now)

    def _print(self, now: float) -> None:
        self._last_line = now
        meter = tqdm.format_meter(self.n, self.total, now - self._start, prefix=self.desc, unit=f" {self.unit}s", ncols=0)
        print(meter, file=self.file, flush=True)

    def close(self) -> None:
        """Print the final line."""
        self._print(time.monotonic())


def progress_bar(*, total: int | None, unit: str, desc: str, enabled: bool = True, file: TextIO | None = None):
    """A tqdm bar on a terminal, a :class:`LineProgress` under a pipe, a silent tqdm when not ``enabled``."""
    stream = file if file is not None else sys.stderr
    if enabled and not stream.isatty():
        return LineProgress(total, unit, desc, stream)
    return tqdm(total=total, unit=unit, desc=desc, disable=not enabled, mininterval=1.0, file=stream)
