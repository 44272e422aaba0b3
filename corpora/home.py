"""Where stillweb keeps its default snapshots: ``$STILLWEB_HOME`` or ``~/.cache/stillweb``.

>>> default_home().is_absolute()
True
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["default_home"]


def default_home() -> Path:
    """``$STILLWEB_HOME`` (``~`` expanded), else ``~/.cache/stillweb``."""
    return Path(os.environ.get("STILLWEB_HOME", "~/.cache/stillweb")).expanduser()
