"""Plain-text ``--help`` from module docstrings: RST literals and roles become the bare names.

>>> plain("re-run ``stillweb replay FILE`` with :class:`~stillweb.envs.RecordEpisodes`")
're-run stillweb replay FILE with RecordEpisodes'
"""

from __future__ import annotations

import re

__all__ = ["plain"]

_ROLE = re.compile(r":[a-z]+:`~?(?:[\w.]*\.)?([^`]+)`")


def plain(docstring: str) -> str:
    """``docstring`` without RST markup (double backticks, ``:role:`target``` references)."""
    return _ROLE.sub(r"\1", docstring).replace("``", "")
