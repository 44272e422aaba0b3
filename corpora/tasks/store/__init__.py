"""Storing tasks: the task record, split files, the card, exports and quality figures."""
