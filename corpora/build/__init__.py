"""Building snapshots: sources to rows, languages, passages, accounting of every row, sharded builds on Ray."""
