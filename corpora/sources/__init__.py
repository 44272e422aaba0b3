"""Readers of corpus sources: each yields the pages or rows a snapshot build consumes."""
