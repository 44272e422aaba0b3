"""Snapshots on disk: the format, the manifest, records and columns, opening, reading and publishing."""
