"""Fast random access to the strings of a memory-mapped Arrow column.

Indexing a ``pyarrow.ChunkedArray`` element by element costs microseconds per
call (it locates the chunk and builds a scalar). Search results need a title
and a snippet for each hit, so :class:`StringColumn` reads the UTF-8 bytes of
row ``i`` straight from the column's buffers: a binary search over chunk
starts and two offset reads, no copy of the column.
"""

from __future__ import annotations

import bisect

import pyarrow as pa

__all__ = ["StringColumn"]


class StringColumn:
    """Row access to a ``string`` or ``large_string`` chunked column by its buffers."""

    def __init__(self, column: pa.ChunkedArray) -> None:
        offset_format = "q" if pa.types.is_large_string(column.type) else "i"
        self._starts: list[int] = []
        self._offsets: list[memoryview] = []  # Python ints on indexing, no copy of the column
        self._data: list[memoryview] = []
        row = 0
        for chunk in column.chunks:
            _validity, offsets, data = chunk.buffers()
            self._starts.append(row)
            view = memoryview(offsets).cast(offset_format)[chunk.offset : chunk.offset + len(chunk) + 1]
            self._offsets.append(view)
            self._data.append(memoryview(data) if data is not None else memoryview(b""))
            row += len(chunk)
        self._length = row

    def __len__(self) -> int:
        return self._length

    def bytes(self, row: int) -> bytes:
        """The UTF-8 bytes of ``row`` (``IndexError`` when out of range)."""
        if not 0 <= row < self._length:
            raise IndexError(f"row {row} out of range 0..{self._length - 1}")
        chunk = bisect.bisect_right(self._starts, row) - 1
        local = row - self._starts[chunk]
        offsets = self._offsets[chunk]
        return self._data[chunk][offsets[local] : offsets[local + 1]].tobytes()

    def __getitem__(self, row: int) -> str:
        return self.bytes(row).decode("utf-8")

    def many_bytes(self, rows: list[int]) -> list[bytes]:
        """The UTF-8 bytes of each of ``rows``, in order (one call for a page of search hits)."""
        return [view.tobytes() for view in self._views(rows)]

    def many(self, rows: list[int]) -> list[str]:
        """The strings of ``rows``, in order, decoded straight from the column's buffer."""
        return [str(view, "utf-8") for view in self._views(rows)]

    def windows(self, rows: list[int], starts: list[int], width: int) -> list[tuple[bytes, bool]]:
        """``width`` bytes of each of ``rows`` from its ``start``, and whether the row goes on past them:
        no copy of the rest of the row."""
        return [(view[start : start + width].tobytes(), start + width < len(view))
                for view, start in zip(self._views(rows), starts)]

    def _views(self, rows: list[int]) -> list[memoryview]:
        starts, offsets, data, length = self._starts, self._offsets, self._data, self._length
        views = []
        for row in rows:
            if not 0 <= row < length:
                raise IndexError(f"row {row} out of range 0..{length - 1}")
            chunk = bisect.bisect_right(starts, row) - 1
            local = row - starts[chunk]
            chunk_offsets = offsets[chunk]
            views.append(data[chunk][chunk_offsets[local] : chunk_offsets[local + 1]])
        return views
