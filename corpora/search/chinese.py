"""Chinese script folding: traditional characters read as their simplified forms.

Search and answer matching treat 中國 and 中国 alike. The table is OpenCC's
``TSCharacters.txt`` (traditional -> simplified, character by character; the first
candidate where OpenCC lists several), read from the ``opencc-python-reimplemented``
package pinned in ``pyproject.toml`` so that the fold, and with it the fingerprint
of a Chinese snapshot, does not follow its releases. Character by character, not by
phrase: the same text always folds the same way, whatever surrounds it.

>>> fold_to_simplified("中華人民共和國的首都是北京")
'中华人民共和国的首都是北京'
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from stillweb.corpora.errors import UsageError

__all__ = ["fold_to_simplified", "fold_utf8_to_simplified", "CONVERTER"]

CONVERTER = "opencc-python-reimplemented 0.1.7 TSCharacters"  # recorded where the fold changes what is indexed


def fold_to_simplified(text: str) -> str:
    """``text`` with each traditional Chinese character replaced by its simplified form (others unchanged)."""
    return text.translate(_table())


def fold_utf8_to_simplified(data: bytes) -> bytes:
    """UTF-8 ``data`` with traditional characters read as simplified where both forms take as many bytes
    (every common character does): byte offsets stay valid, so a snippet can be found in the folded copy.

    >>> fold_utf8_to_simplified("長城是中國的".encode()).decode()
    '长城是中国的'
    """
    return data.decode("utf-8", "surrogateescape").translate(_same_length_table()).encode("utf-8", "surrogateescape")


@cache
def _same_length_table() -> dict[int, str]:
    return {code: simple for code, simple in _table().items() if len(chr(code).encode()) == len(simple.encode())}


@cache
def _table() -> dict[int, str]:
    """``{ord(traditional): simplified}`` from OpenCC's character table (single characters only)."""
    try:
        data = resources.files("opencc").joinpath("dictionary", "TSCharacters.txt").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        raise UsageError("Chinese script folding needs opencc-python-reimplemented==0.1.7 (a stillweb dependency): "
                         "pip install opencc-python-reimplemented==0.1.7") from None
    table: dict[int, str] = {}
    for line in data.splitlines():
        source, _tab, targets = line.partition("\t")
        first = targets.split(" ")[0] if targets else ""
        if len(source) == 1 and len(first) == 1 and first != source:
            table[ord(source)] = first
    return table
