"""Proving tasks: uniqueness, keys, minimality, shortcuts, unanswerable tasks, the independent re-solver."""
