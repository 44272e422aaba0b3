"""Titles, namespaces and template names as MediaWiki reads them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from mwparserfromhell.nodes import Template

from stillweb.corpora.wikitext.variants import to_simplified

__all__ = ["normalize_title", "namespace_kind", "template_name", "template_key", "is_infobox", "is_disambiguation", "unique"]


def normalize_title(raw: str) -> str:
    """Normalise a link target the way MediaWiki does for namespace-0 titles.

    Drops the ``#anchor`` and a leading colon, turns underscores into spaces,
    collapses whitespace and uppercases the first letter. Returns ``""`` for a
    target that is not a valid title (empty, or with ``<>[]{}|`` in it).
    """
    target = raw.split("#", 1)[0].replace("_", " ").strip().lstrip(":").strip()
    target = SPACES_RE.sub(" ", target)
    if not target or _INVALID_TITLE_RE.search(target):
        return ""
    return target[0].upper() + target[1:]


def namespace_kind(raw: str) -> str:
    """``article``, ``category``, ``file``, ``interlanguage`` or ``other`` (a namespace)."""
    if ":" not in raw:
        return "article"
    colon_first = raw.lstrip().startswith(":")
    prefix = raw.strip().lstrip(":").split(":", 1)[0].strip()
    lowered = prefix.lower().replace("_", " ")
    if lowered in _FILE_NAMESPACES:
        return "file"
    if lowered in _CATEGORY_NAMESPACES:
        return "other" if colon_first else "category"
    if lowered in _NAMESPACES or lowered in _ZH_NAMESPACES:
        return "other"
    if _LANGUAGE_PREFIX_RE.fullmatch(prefix):
        return "other" if colon_first else "interlanguage"
    return "article"


def template_name(template: Template) -> str:
    """Lowercase template name without ``Template:``, comments, underscores or extra spaces; a Chinese
    name zhwiki redirects to an English template (``人物信息框``) is that template's name."""
    name = _COMMENT_RE.sub("", str(template.name)).replace("_", " ")
    name = SPACES_RE.sub(" ", name).strip().lower()
    name = name[9:].strip() if name.startswith("template:") else name
    if name.isascii() or not _HAN_RE.search(name):
        return name
    for prefix in _ZH_TEMPLATE_PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix):].strip()
    return zh_template_names().get(to_simplified(name), name)


@cache
def zh_template_names() -> dict[str, str]:
    """Chinese template name (simplified, lowercase) -> the English template it redirects to on zhwiki
    (``corpora/zhwiki_templates.json``, from the DBpedia extraction framework's zhwiki statistics)."""
    with open(_ZH_TEMPLATES_PATH, encoding="utf-8") as handle:
        return json.load(handle)["templates"]


def template_key(name: str) -> str:
    """A template name as the mappings list it: ``Infobox military person`` -> ``military person``."""
    name = SPACES_RE.sub(" ", name.replace("_", " ")).strip().lower()
    if name.startswith("infobox"):
        name = name[7:]
    elif name.endswith(" infobox"):
        name = name[:-8]
    return name.strip(" _-")


def is_infobox(name: str) -> bool:
    """True for infobox templates (and the taxobox family; zhwiki's ``...信息框``)."""
    return (name.startswith("infobox") or name.endswith(" infobox") or name in _INFOBOX_LIKE
            or (not name.isascii() and name.endswith(_ZH_INFOBOX_SUFFIXES)))


def is_disambiguation(name: str) -> bool:
    """True for the templates that mark a disambiguation page."""
    return name in _DISAMBIGUATION or bool(_DISAMBIGUATION_RE.fullmatch(name))


def unique(values: Iterable[str]) -> list[str]:
    """Values without repeats, in order of first appearance."""
    return list(dict.fromkeys(values))


SPACES_RE = re.compile(r"[ \t\r\f\v]+")
_COMMENT_RE = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_INVALID_TITLE_RE = re.compile(r"[<>\[\]{}|\x00-\x1f]")
_LANGUAGE_PREFIX_RE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]+)*")
_NAMESPACES = frozenset({
    "talk", "user", "user talk", "wikipedia", "wikipedia talk", "wp", "project", "file talk",
    "mediawiki", "template", "template talk", "help", "category talk", "portal", "book",
    "draft", "module", "special", "timedtext", "education program", "gadget", "topic",
    "wikt", "wiktionary", "commons", "c", "wikisource", "s", "wikiquote", "q", "wikinews", "n",
    "wikibooks", "b", "wikiversity", "v", "wikivoyage", "voy", "species", "wikispecies", "meta",
    "m", "mw", "d", "wikidata", "w", "simple", "foundation", "wmf", "phab", "doi", "google",
})  # fmt: skip
_FILE_NAMESPACES = frozenset({"file", "image", "media", "文件", "档案", "檔案", "图像", "圖像", "图片", "圖片", "媒体",
                              "媒體", "媒体文件", "媒體文件"})  # zhwiki's aliases (its siteinfo namespacealiases)
_CATEGORY_NAMESPACES = frozenset({"category", "分类", "分類"})
_ZH_NAMESPACES = frozenset({
    "模板", "样板", "樣板", "维基百科", "維基百科", "帮助", "幫助", "主题", "主題", "专题", "專題", "草稿", "模块", "模塊",
    "模組", "模组", "用户", "用戶", "使用者", "讨论", "討論", "对话", "對話", "特殊", "专案", "專案", "维基专题", "維基專題",
})  # fmt: skip
_HAN_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_ZH_TEMPLATE_PREFIXES = ("模板:", "样板:", "樣板:")
_ZH_INFOBOX_SUFFIXES = ("信息框", "資訊框", "资讯框", "信息表", "資訊表", "资料框", "資料框")
_ZH_TEMPLATES_PATH = Path(__file__).resolve().parent.parent / "zhwiki_templates.json"
_INFOBOX_LIKE = frozenset({"taxobox", "automatic taxobox", "speciesbox", "chembox", "drugbox", "geobox"})
_DISAMBIGUATION = frozenset({"dab", "disamb", "disambig", "disambiguation", "hndis", "geodis", "numberdis",
                             "mathdab", "letter-numbercombdisambig", "shipindex"})  # fmt: skip
_DISAMBIGUATION_RE = re.compile(r"[a-z]+dis|[a-z -]* disambiguation|[a-z]+ disambig")
