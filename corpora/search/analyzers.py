"""Language analyzers: how a snapshot's text becomes index terms, and a query the same terms.

English (every snapshot whose manifest names no ``analyzer``) is tantivy's ``en_stem`` with
its stop words, in :mod:`stillweb.corpora.search.index`. Languages written without spaces between
words (Chinese, Japanese, Thai...) and Korean get :class:`BigramAnalyzer`: the recipe of
Lucene's ``CJKAnalyzer`` (the analyzer Pyserini uses for Chinese, Japanese and Korean),
applied in Python so that tantivy indexes its terms as given (tantivy-py 0.27 has no CJK or
bigram tokenizer: its ngram tokenizer grams the whole text, spaces and Latin words included):

- each run of Han, Hiragana, Katakana, Hangul (and Thai, Lao, Khmer, Myanmar) characters
  becomes its overlapping two-character bigrams, a lone character its unigram
  (``CJKBigramFilter``), traditional Chinese characters read as simplified
  (:mod:`stillweb.corpora.search.chinese`: 中國 and 中国 are the same terms);
- any other word (letters and digits) is one term, lowercased, with full-width and
  half-width forms folded by NFKC (``CJKWidthFilter``) and Lucene's CJK stop words dropped.

The analyzer's name and version are recorded in the manifest's ``index.analyzer`` and so in
the fingerprint; a change of its terms is a new version, and a snapshot is always searched
with the version it was built with.

>>> zh = analyzer_for("zh")
>>> zh.terms("北京是中國的首都, the Capital")
['北京', '京是', '是中', '中国', '国的', '的首', '首都', 'capital']
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache

from stillweb.corpora.search.chinese import CONVERTER, fold_to_simplified
from stillweb.corpora.errors import DataError, UsageError

__all__ = ["BigramAnalyzer", "ENGLISH", "LANGUAGES", "analyzer_for", "analyzer_from_parameters", "language_of_text",
           "check_language", "ScriptShares", "script_shares", "poor_indexing_warning", "CJK_RANGES", "CJK_CHARACTER",
           "BIGRAM_RANGES"]

ENGLISH = "en"
# Scripts written without spaces between words, plus Hangul (Lucene's CJKBigramFilter bigrams it too).
# Ranges from the Unicode blocks: CJK Unified Ideographs and extensions A-H, compatibility
# ideographs, Hiragana, Katakana (and its half-width forms and phonetic extensions), Hangul
# syllables and jamo, Thai, Lao, Myanmar, Khmer; 々 and 〆 (ideographic iteration and closing marks).
BIGRAM_RANGES = (
    "\u3005\u3006\u3007\u3021-\u3029\u3031-\u3035\u3038-\u303c"
    "\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
    "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uffa0-\uffdc"
    "\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff"
)
# Han (with its extensions and compatibility ideographs), Hiragana, Katakana and Hangul syllables: the
# characters Chinese, Japanese and Korean text is written in (answer matching and context management look for them).
CJK_RANGES = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0003134f"
CJK_CHARACTER = re.compile(f"[{CJK_RANGES}]")
_TOKENS = re.compile(f"(?P<run>[{BIGRAM_RANGES}]+)|(?P<word>[^\\W_{BIGRAM_RANGES}]+)")
_MAX_WORD_CHARS = 40  # longer words are dropped, as tantivy's remove_long(40) does for English
# Lucene's CJKAnalyzer default stop set (org/apache/lucene/analysis/cjk/stopwords.txt).
_CJK_STOPWORDS = frozenset(
    "a and are as at be but by for if in into is it no not of on or s such t that the their then there these they "
    "this to was will with www".split()
)
BIGRAM_LANGUAGES = ("zh", "ja", "ko", "th", "lo", "km", "my")
LANGUAGES = (ENGLISH, *BIGRAM_LANGUAGES)
BIGRAM_NAME = "cjk_bigram"
BIGRAM_VERSION = 1


def check_language(language: str) -> str:
    """``language`` if stillweb has an analyzer for it, else a :class:`UsageError` naming the choices."""
    if language not in LANGUAGES:
        raise UsageError(f"no analyzer for language {language!r}: --language takes one of {', '.join(LANGUAGES)} "
                         f"({', '.join(BIGRAM_LANGUAGES)} index character bigrams, as Lucene's CJKAnalyzer does)")
    return language


@dataclass(frozen=True)
class BigramAnalyzer:
    """Lucene's CJK analysis in Python: bigrams of no-space scripts, other words whole (see the module)."""

    language: str
    name: str = BIGRAM_NAME
    version: int = BIGRAM_VERSION

    def parameters(self) -> dict:
        """What the manifest records under ``index.analyzer`` (and the fingerprint hashes)."""
        return {"name": self.name, "version": self.version, "language": self.language, "script_fold": CONVERTER}

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """``(start, end, term)`` of every term of ``text``, in text order (offsets into ``text``)."""
        out: list[tuple[int, int, str]] = []
        for match in _TOKENS.finditer(fold_to_simplified(text)):  # one character for one: offsets unchanged
            start, end = match.span()
            if match.lastgroup == "run":
                run, fold = match.group(), _run_fold(match.group())
                if len(run) == 1:
                    out.append((start, end, fold(run)))
                else:
                    out.extend((start + i, start + i + 2, fold(run[i:i + 2])) for i in range(len(run) - 1))
            else:
                word = _fold(match.group())
                if len(word) <= _MAX_WORD_CHARS and word not in _CJK_STOPWORDS and word.isalnum():
                    out.append((start, end, word))
        return out

    def terms(self, text: str) -> list[str]:
        """The terms of ``text`` in order (repeats kept): what the index holds and a query asks for
        (the terms of :meth:`spans`, made without their offsets: the build's hot loop)."""
        out: list[str] = []
        for match in _TOKENS.finditer(fold_to_simplified(text)):
            token = match.group()
            if match.lastgroup == "run":
                if len(token) == 1:
                    out.append(_run_fold(token)(token))
                elif _run_fold(token) is _same:
                    out.extend([token[i:i + 2] for i in range(len(token) - 1)])
                else:
                    out.extend([_fold(token[i:i + 2]) for i in range(len(token) - 1)])
            else:
                word = _fold(token)
                if len(word) <= _MAX_WORD_CHARS and word not in _CJK_STOPWORDS and word.isalnum():
                    out.append(word)
        return out

    def stream(self, text: str) -> str:
        """The terms of ``text`` joined by spaces: the field value tantivy indexes with its whitespace tokenizer."""
        return " ".join(self.terms(text))


def _same(token: str) -> str:
    return token


def _run_fold(run: str):
    """How a bigram of ``run`` is folded: not at all when the run is already NFKC and lowercase (nearly
    every run of Han, Kana or Hangul; then :func:`_fold` would return each bigram as it is), else :func:`_fold`."""
    return _same if unicodedata.is_normalized("NFKC", run) and run.lower() == run else _fold


def _fold(token: str) -> str:
    """Width folding and lowercasing (NFKC, then ``str.lower``); whitespace NFKC may introduce is removed."""
    if token.isascii():  # NFKC leaves ASCII as it is
        return token.lower()
    folded = unicodedata.normalize("NFKC", token).lower()
    return "".join(folded.split()) if not folded.isalnum() else folded


@cache
def analyzer_for(language: str) -> BigramAnalyzer | None:
    """The analyzer of ``language`` (``None``: English, tantivy's own analyzer)."""
    check_language(language)
    return None if language == ENGLISH else BigramAnalyzer(language)


def analyzer_from_parameters(index_parameters: Mapping) -> BigramAnalyzer | None:
    """The analyzer a snapshot's index parameters record (``None``: no ``analyzer``, English).

    A name or version this stillweb does not know is a :class:`DataError` (the snapshot was built
    by a newer stillweb: its terms cannot be reproduced here).
    """
    recorded = index_parameters.get("analyzer")
    if recorded is None:
        return None
    if (not isinstance(recorded, Mapping) or recorded.get("name") != BIGRAM_NAME or recorded.get("version") != BIGRAM_VERSION
            or recorded.get("language") not in BIGRAM_LANGUAGES or recorded.get("script_fold") != CONVERTER):
        raise DataError(f"unknown analyzer {recorded!r} in the index parameters (this stillweb has {BIGRAM_NAME} "
                        f"version {BIGRAM_VERSION}): upgrade stillweb to search this snapshot")
    return analyzer_for(recorded["language"])


# -- what the text is written in ------------------------------------------------------------------

_BIGRAM_CHAR = re.compile(f"[{BIGRAM_RANGES}]")
_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7ff]")
_THAI_LAO_KHMER_MYANMAR = {"th": "[\u0e00-\u0e7f]", "lo": "[\u0e80-\u0eff]", "km": "[\u1780-\u17ff]", "my": "[\u1000-\u109f]"}
_SAMPLE_CHARS = 1_000_000  # what detection and the indexing check read: the first million characters
_LONG_TOKEN = 20  # a "word" longer than this is most likely a whole clause of a language without spaces


@dataclass(frozen=True)
class ScriptShares:
    """Counts over a sample of text: letters, letters of no-space scripts, words and words over 20 characters."""

    letters: int
    bigram_letters: int
    words: int
    long_words: int
    language: str  # the language the letters point to (``en`` when no-space scripts are the minority)

    @property
    def bigram_share(self) -> float:
        """The share of letters in scripts written without spaces (Han, Kana, Hangul, Thai...)."""
        return self.bigram_letters / self.letters if self.letters else 0.0

    @property
    def long_share(self) -> float:
        """The share of space-and-punctuation separated words longer than 20 characters."""
        return self.long_words / self.words if self.words else 0.0


def script_shares(texts: Iterable[str]) -> ScriptShares:
    """Count the letters and words of the first million characters of ``texts``."""
    letters = bigram = words = long_words = 0
    kana = hangul = 0
    other: dict[str, int] = dict.fromkeys(_THAI_LAO_KHMER_MYANMAR, 0)
    budget = _SAMPLE_CHARS
    for text in texts:
        text = text[:budget]
        budget -= len(text)
        letters += sum(1 for char in text if char.isalpha())
        bigram += len(_BIGRAM_CHAR.findall(text))
        kana += len(_KANA.findall(text))
        hangul += len(_HANGUL.findall(text))
        for language, pattern in _THAI_LAO_KHMER_MYANMAR.items():
            other[language] += len(re.findall(pattern, text))
        for word in re.findall(r"\w+", text):
            words += 1
            long_words += len(word) > _LONG_TOKEN
        if budget <= 0:
            break
    letters = max(letters, bigram)  # Thai vowel signs are marks, not letters: never a share above 1
    language = ENGLISH
    if letters and bigram * 2 > letters:
        scores = {"ja": kana * 4, "ko": hangul, **other}  # a little kana marks Japanese among the kanji
        best = max(sorted(scores), key=lambda name: scores[name])
        language = best if scores[best] * 2 > bigram else "zh"
    return ScriptShares(letters, bigram, words, long_words, language)


def language_of_text(texts: Iterable[str]) -> tuple[str, ScriptShares]:
    """The language a build indexes ``texts`` as, when none is given: English unless most letters
    are in scripts written without spaces (then ``zh``, ``ja``, ``ko``, ``th``... by their script)."""
    shares = script_shares(texts)
    return shares.language, shares


def poor_indexing_warning(shares: ScriptShares, language: str) -> str | None:
    """What to tell the builder of a snapshot whose text ``language``'s analyzer would index poorly, else ``None``.

    Poorly: most words longer than 20 characters, or most letters outside the analyzer's scripts
    (no-space scripts for the bigram analyzer, the others for English).
    """
    if not shares.letters:
        return None
    share = shares.bigram_share if language == ENGLISH else 1 - shares.bigram_share
    if share > 0.5:
        written = ("in scripts written without spaces (Han, Kana, Hangul, Thai...)" if language == ENGLISH
                   else "outside the Han, Kana, Hangul, Thai, Lao, Khmer and Myanmar scripts")
        return (f"{share:.0%} of the letters are {written}: the {language!r} analyzer would index this text poorly; "
                f"build with --language {shares.language}")
    if language == ENGLISH and shares.long_share > 0.5:
        return (f"{shares.long_share:.0%} of the words are longer than {_LONG_TOKEN} characters: the 'en' analyzer "
                f"would index this text poorly; if it is written without spaces, build with --language "
                f"{'|'.join(BIGRAM_LANGUAGES)}")
    return None
