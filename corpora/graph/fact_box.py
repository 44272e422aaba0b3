"""The fact box: a page's infobox as readable lines at the top of its document text.

Infobox facts are shown at the top of the plaintext, so every fact of the graph is stated in its
evidence document's text; the fields the infobox mapping does not know follow, as text only. An
English page labels a line with its relation's words (``Birth place: Lunor``). A Chinese page
(a snapshot built as ``zh``) labels it with the name zhwiki's infoboxes give the field, from the
reviewed table ``corpora/graph/fact_labels_zh.toml`` (``出生地点：Lunor``), and writes the labels in the
page's script: a page written in traditional characters (``--script hant``) has its labels,
unmapped Chinese field names included, converted through the project's OpenCC converter
(:func:`~stillweb.corpora.wikitext.variants.convert_text`).

>>> from stillweb.corpora.snapshot.records import ExtractedFact, ParsedPage
>>> page = ParsedPage("X", "", facts=[ExtractedFact("birth_place", "Lunor", "entity")], unmapped=[("person|籍贯", "福建")])
>>> print(render_fact_box(page))
Birth place: Lunor
籍贯: 福建
>>> print(render_fact_box(page, "zh"))
出生地点：Lunor
籍贯：福建
>>> page.script = "hant"
>>> print(render_fact_box(page, "zh"))
出生地點：Lunor
籍貫：福建
"""

from __future__ import annotations

import tomllib
from functools import cache, lru_cache
from pathlib import Path

from stillweb.corpora.snapshot.records import ParsedPage
from stillweb.corpora.wikitext.variants import convert_text

__all__ = ["FACT_LABELS_ZH_PATH", "render_fact_box", "fact_label"]

FACT_LABELS_ZH_PATH = Path(__file__).resolve().parent / "fact_labels_zh.toml"


def render_fact_box(page: ParsedPage, language: str | None = None) -> str:
    """The infobox of ``page`` as ``Label: value`` lines (facts, then unmapped fields); ``language="zh"``
    labels them in Chinese (``标签：value``, in the page's script). Empty when the page has no infobox."""
    script = page.script if language == "zh" else None
    separator = "：" if language == "zh" else ": "
    lines = [f"{fact_label(fact.relation, language, script)}{separator}{fact.value}" for fact in page.facts]
    lines += [f"{fact_label(field.rsplit('|', 1)[-1], language, script)}{separator}{text}"
              for field, text in page.unmapped]
    return "\n".join(lines)


def fact_label(relation: str, language: str | None = None, script: str | None = None) -> str:
    """The label of a fact line: for ``language="zh"`` the Chinese table's entry (a Chinese field name the
    mapping does not know is its own label), written in ``script`` (``hant``: converted through OpenCC; the
    table and the unmapped names are simplified); else, and for a relation without an entry, the relation's
    words (``Birth place``)."""
    label = _zh_labels().get(relation) if language == "zh" else None
    if label is None:
        label = relation.replace("_", " ").strip().capitalize()
    return _in_script(label, script) if script is not None and not label.isascii() else label


@lru_cache(maxsize=1 << 12)
def _in_script(label: str, script: str) -> str:
    """``label`` through OpenCC, once per label and script (the same labels head every page's fact box)."""
    return convert_text(label, script)


@cache
def _zh_labels() -> dict[str, str]:
    with open(FACT_LABELS_ZH_PATH, "rb") as handle:
        return tomllib.load(handle)["labels"]
