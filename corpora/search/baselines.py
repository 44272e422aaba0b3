"""Other BM25 engines over the same rows as a snapshot, for side-by-side retrieval figures.

- :class:`Bm25sIndex`: bm25s (Lucene's BM25 variant in numpy, k1=1.5, b=0.75), English stop
  words and the Snowball English stemmer (PyStemmer); the ``eval`` extra.
- :class:`PyseriniIndex`: Pyserini (Anserini's Lucene through pyjnius, Java 17 for 0.22.1), its
  default ``LuceneSearcher`` as Search-R1's retriever uses it: Lucene's English analyzer (Porter
  stemmer, Lucene's 33 stop words), BM25 k1=0.9, b=0.4; the ``pyserini`` extra plus a JDK
  (``scripts/install_jdk.sh``).

For Chinese (``language="zh"``) bm25s segments words with jieba (a dictionary segmenter, the
``eval`` extra) and Pyserini uses Anserini's ``-language zh`` (Lucene's CJKAnalyzer: bigrams);
Japanese and Korean go to Pyserini's ``ja`` and ``ko`` analyzers.

Both index each document as ``title + "\\n" + text`` (the wiki-18 ``contents`` shape) and answer
:meth:`search` with ``(row, score)`` lists, best first, ties by row, like
:meth:`stillweb.corpora.search.index.SearchIndex.search`::

    index = baseline_index("pyserini", ["Lunor\\nLunor is a river city.", "Ostra\\nOstra is a port."])
    index.search(["river city"], 1)  # [[(0, 0.58...)]]
"""

from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from stillweb.corpora.errors import UsageError

__all__ = ["BASELINES", "Bm25sIndex", "PyseriniIndex", "baseline_index"]

Hits = list[tuple[int, float]]


class Bm25sIndex:
    """bm25s over ``texts`` (row i is document i); queries answered on one thread. ``language``
    ``"zh"``: words segmented by jieba (accurate mode), lowercased, no stop words or stemmer."""

    name = "bm25s"

    def __init__(self, texts: list[str], language: str = "en") -> None:
        import bm25s
        import Stemmer

        self._bm25s = bm25s
        self._segment = _jieba_words() if language == "zh" else None
        if language not in ("en", "zh"):
            raise UsageError(f"the bm25s baseline reads English and Chinese, not {language!r}: use pyserini")
        self._stemmer = Stemmer.Stemmer("english") if self._segment is None else None
        tokens = self._tokenize(texts)
        self._retriever = bm25s.BM25()
        self._retriever.index(tokens, show_progress=False)
        self._count = len(texts)

    def search(self, queries: list[str], k: int) -> list[Hits]:
        """Top ``k`` ``(row, score)`` of each query (blank ones get none), one thread, one batch."""
        answered = [i for i, text in enumerate(queries) if text.strip()]
        results: list[Hits] = [[] for _ in queries]
        if not answered or not self._count:
            return results
        tokens = self._tokenize([queries[i] for i in answered])
        found, scores = self._retriever.retrieve(tokens, k=min(k, self._count), show_progress=False, n_threads=1)
        for row, position in enumerate(answered):
            hits = [(int(d), float(s)) for d, s in zip(found[row], scores[row]) if s > 0]
            results[position] = sorted(hits, key=lambda hit: (-hit[1], hit[0]))
        return results

    def _tokenize(self, texts: list[str]):
        if self._segment is None:
            return self._bm25s.tokenize(texts, stopwords="en", stemmer=self._stemmer, show_progress=False)
        words = [" ".join(self._segment(text)) for text in texts]
        return self._bm25s.tokenize(words, token_pattern=r"(?u)\w+", stopwords=None, show_progress=False)


def _jieba_words():
    """jieba's accurate-mode segmentation (its default dictionary, HMM for unknown words), quietly initialized."""
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba.lcut


class PyseriniIndex:
    """Pyserini's Lucene BM25 over ``texts``, indexed (one thread) into ``directory`` or a temporary one."""

    name = "pyserini"

    def __init__(self, texts: list[str], directory: str | Path | None = None, language: str = "en") -> None:
        self._temporary = None
        if directory is None:
            self._temporary = tempfile.TemporaryDirectory(prefix="stillweb-pyserini-")
            directory = self._temporary.name
        with _stdout_to_stderr():  # Anserini logs to the process's stdout, where --json output goes
            from pyserini.index.lucene import LuceneIndexer
            from pyserini.search.lucene import LuceneSearcher

            if language == "en":
                indexer = LuceneIndexer(str(directory), threads=1)
            else:  # Anserini's -language: Lucene's CJKAnalyzer for zh, ja and ko
                indexer = LuceneIndexer(args=["-index", str(directory), "-language", language], threads=1)
            batch = 10_000
            for start in range(0, len(texts), batch):
                indexer.add_batch_dict([{"id": str(start + i), "contents": text}
                                        for i, text in enumerate(texts[start : start + batch])])
            indexer.close()
            self._searcher = LuceneSearcher(str(directory))  # BM25 k1=0.9, b=0.4: Anserini's defaults
            if language != "en":
                self._searcher.set_language(language)

    def search(self, queries: list[str], k: int) -> list[Hits]:
        """Top ``k`` ``(row, score)`` of each query (blank ones get none), one by one on this thread."""
        results: list[Hits] = []
        for text in queries:
            hits = [(int(hit.docid), float(hit.score)) for hit in self._searcher.search(text, k)] if text.strip() else []
            results.append(sorted(hits, key=lambda hit: (-hit[1], hit[0])))
        return results

    def close(self) -> None:
        """Close the searcher and remove a temporary index."""
        self._searcher.close()
        if self._temporary is not None:
            self._temporary.cleanup()


@contextmanager
def _stdout_to_stderr():
    """Send what anything in this process writes to file descriptor 1 (the JVM's log lines) to 2 meanwhile."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


BASELINES = {"bm25s": Bm25sIndex, "pyserini": PyseriniIndex}


def baseline_index(name: str, texts: list[str], language: str = "en") -> Bm25sIndex | PyseriniIndex:
    """The baseline engine ``name`` (one of :data:`BASELINES`) over ``texts``; ``UsageError`` naming the
    choices for another name, and saying which extra to install when its library is missing. ``language``:
    the snapshot's (``Snapshot.analyzer.language``; English by default)."""
    if name not in BASELINES:
        raise UsageError(f"unknown baseline {name!r}: choose one of {', '.join(BASELINES)}")
    try:
        return BASELINES[name](texts, language=language)
    except ImportError as error:
        extra = "eval" if name == "bm25s" else "pyserini"
        raise UsageError(f"baseline {name} needs the {extra} extra (pip install 'stillweb[{extra}]'"
                         f"{' and a JDK 17: bash scripts/install_jdk.sh' if name == 'pyserini' else ''}): {error}") from None
