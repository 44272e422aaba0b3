"""WikiQA-v0's own words: what the research assistant is told.

:data:`INSTRUCTIONS` is the system message when the tools go to the model as functions (TRL, verl, the
SFT export): the role, how to work and how to finish.
"""

from __future__ import annotations

__all__ = ["INSTRUCTIONS"]

INSTRUCTIONS = (
    "You are a research assistant. Use the tools to search the document collection, open and read "
    "documents, and answer only when the evidence supports the answer. Finish by calling the answer "
    "tool with the answer text and the doc ids you cite."
)
