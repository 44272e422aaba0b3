"""Chinese Wikipedia's language conversion, resolved to one script before a page is parsed.

zhwiki stores each page once, in whatever mix of simplified and traditional characters its editors
wrote, and MediaWiki's LanguageConverter shows it in the reader's variant. :func:`convert_page`
does what it does for one variant (``hans``: simplified, the default; ``hant``: traditional):

* ``-{zh-hans:计算机;zh-hant:電腦;}-`` keeps the variant's own text (``zh-cn``/``zh-sg``/``zh-my``, else
  ``zh-hant``'s ``zh-tw``/``zh-hk``/``zh-mo``, else ``zh``, else the first given);
* ``-{text}-`` and ``-{R|text}-`` keep ``text`` unconverted; ``-{A|rule}-`` shows the rule's variant;
  ``-{H|rule}-``, ``-{-|rule}-`` and ``-{T|rule}-`` (hidden, removed and title rules) show nothing;
* ``{{noteTA|1=zh-cn:鼠标;zh-tw:滑鼠|G1=IT}}`` rules (numbered parameters) replace every written
  variant of the term by the chosen one throughout the page (the ``G`` groups name MediaWiki's
  shared conversion tables, which are not shipped: they are ignored);
* everything else goes through OpenCC (``t2s`` or ``s2t``, phrase tables), except link targets:
  ``[[臺灣]]`` becomes ``[[臺灣|台湾]]``, so links keep naming pages by their titles as written.

The converter is ``opencc-python-reimplemented`` (pinned in ``pyproject.toml``).

>>> convert_page("-{zh-hans:计算机;zh-hant:電腦;}-與[[臺灣]]", "hans")
'计算机与[[臺灣|台湾]]'
>>> convert_page("-{zh-hans:计算机;zh-hant:電腦;}-与[[台湾]]", "hant")
'電腦與[[台湾|臺灣]]'
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from stillweb.corpora.errors import UsageError

__all__ = ["SCRIPTS", "DEFAULT_SCRIPT", "convert_page", "convert_text", "to_simplified"]

SCRIPTS = ("hans", "hant")
DEFAULT_SCRIPT = "hans"
_VARIANTS = {"hans": ("zh-hans", "zh-cn", "zh-sg", "zh-my", "zh"), "hant": ("zh-hant", "zh-tw", "zh-hk", "zh-mo", "zh")}
_OPENCC_CONFIG = {"hans": "t2s", "hant": "s2t"}


def convert_page(wikitext: str, script: str) -> str:
    """``wikitext`` written in ``script`` (``hans`` or ``hant``): see the module docstring."""
    if script not in SCRIPTS:
        raise UsageError(f"unknown Chinese script {script!r}; expected one of {', '.join(SCRIPTS)}")
    rules = _note_rules(wikitext, script)
    pieces: list[str] = []
    position = 0
    for match in _CONVERSION_RE.finditer(wikitext):
        pieces.append(_convert_free(wikitext[position:match.start()], script, rules))
        pieces.append(_markup(match[1], script))
        position = match.end()
    pieces.append(_convert_free(wikitext[position:], script, rules))
    return "".join(pieces)


def convert_text(text: str, script: str) -> str:
    """Plain ``text`` through OpenCC into ``script`` (no markup read)."""
    return _converter(script).convert(text) if text else text


@lru_cache(maxsize=1 << 16)
def to_simplified(name: str) -> str:
    """A template or field name in simplified characters (ASCII names as they are), for table lookups
    (remembered: the same names recur in every infobox of every page, and OpenCC takes ~45 us a name)."""
    return name if name.isascii() else convert_text(name, "hans")


def _markup(body: str, script: str) -> str:
    """What one ``-{...}-`` shows."""
    flags, bar, rest = body.partition("|")
    if bar and _FLAGS_RE.fullmatch(flags.strip()):
        flag_set = {flag.strip() for flag in flags.split(";")}
        if flag_set & {"H", "-", "T", "D"}:
            return ""
        body = rest
        if "R" in flag_set:
            return body
    variants = _variants(body)
    if not variants:
        return body
    for variant in _VARIANTS[script]:
        if variant in variants:
            return variants[variant]
    other = "hant" if script == "hans" else "hans"
    for variant in _VARIANTS[other]:
        if variant in variants:
            return convert_text(variants[variant], script)
    return convert_text(next(iter(variants.values())), script)


def _variants(body: str) -> dict[str, str]:
    """``{"zh-hans": "计算机", "zh-hant": "電腦"}`` of ``zh-hans:计算机;zh-hant:電腦;`` ({} for plain text)."""
    if not _VARIANT_START_RE.match(body):
        return {}
    found: dict[str, str] = {}
    for match in _VARIANT_RE.finditer(body):
        found.setdefault(match[1].lower(), match[2].strip())
    return found


def _note_rules(wikitext: str, script: str) -> list[tuple[str, str]]:
    """``(written form after OpenCC, chosen form)`` pairs of the page's ``{{noteTA}}`` rules, longest first."""
    pairs: dict[str, str] = {}
    for note in _NOTE_TA_RE.finditer(wikitext):
        for rule in _NOTE_RULE_RE.finditer(note[1]):
            variants = _variants(rule[1])
            if not variants:
                continue
            chosen = _markup(rule[1], script)
            for written in variants.values():
                converted = convert_text(written, script)
                if converted and converted != chosen:
                    pairs.setdefault(converted, chosen)
    return sorted(pairs.items(), key=lambda pair: (-len(pair[0]), pair[0]))


def _convert_free(text: str, script: str, rules: list[tuple[str, str]]) -> str:
    """Text outside ``-{...}-``: link targets kept, the rest converted, then the page's rules applied."""
    pieces: list[str] = []
    position = 0
    for match in _LINK_RE.finditer(text):
        pieces.append(_convert_run(text[position:match.start()], script, rules))
        target, shown = match[1], match[2]
        if shown is None and ":" in target:  # [[Category:電腦]], [[File:...]]: a pipe would change its meaning
            pieces.append(f"[[{_convert_run(target, script, rules)}]]")
        elif shown is None:
            converted = _convert_run(target, script, rules)
            pieces.append(f"[[{target}]]" if converted == target else f"[[{target}|{converted}]]")
        else:
            pieces.append(f"[[{target}|{_convert_run(shown, script, rules)}]]")
        position = match.end()
    pieces.append(_convert_run(text[position:], script, rules))
    return "".join(pieces)


def _convert_run(text: str, script: str, rules: list[tuple[str, str]]) -> str:
    if text.isascii():
        return text
    text = convert_text(text, script)
    for written, chosen in rules:
        text = text.replace(written, chosen)
    return text


@cache
def _converter(script: str):
    try:
        from opencc import OpenCC
    except ModuleNotFoundError:
        raise UsageError("writing Chinese in one script needs opencc-python-reimplemented==0.1.7 (a stillweb "
                         "dependency): pip install opencc-python-reimplemented==0.1.7") from None
    return OpenCC(_OPENCC_CONFIG[script])


_CONVERSION_RE = re.compile(r"-\{(.*?)\}-", re.DOTALL)
_FLAGS_RE = re.compile(r"[AHTRDN\-](?:\s*;\s*[AHTRDN\-])*")
_VARIANT_START_RE = re.compile(r"\s*zh(?:-[a-z]+)?\s*:", re.IGNORECASE)
_VARIANT_RE = re.compile(r"(zh(?:-[a-z]+)?)\s*:(.*?)(?=;\s*zh(?:-[a-z]+)?\s*:|;?\s*$)", re.IGNORECASE | re.DOTALL)
_NOTE_TA_RE = re.compile(r"\{\{\s*[Nn]ote[ _]?TA\s*((?:\|[^{}]*)*)\}\}")
_NOTE_RULE_RE = re.compile(r"\|\s*\d+\s*=([^|]*)")
_LINK_RE = re.compile(r"\[\[([^\[\]|]*)(?:\|([^\[\]]*))?\]\]")
