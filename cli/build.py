"""``stillweb build synthetic|wikipedia|corpus``: make a corpus snapshot."""

from __future__ import annotations

import argparse
import os
import sys

from stillweb.cli import build_dense
from stillweb.corpora.errors import UsageError
from stillweb.corpora.search.analyzers import LANGUAGES
from stillweb.corpora.arguments import check_positive_int
from stillweb.corpora.build.from_source import DUMP_STYLES, build_rows, build_synthetic, build_wikipedia
from stillweb.corpora.build.accounting import DEDUPE_POLICIES, describe_rows
from stillweb.corpora.sources.corpus_formats import CORPUS_FORMATS, MAX_ROW_CHARS, ColumnMap
from stillweb.corpora.wikitext.variants import SCRIPTS

SYNTHETIC_EXAMPLES = """examples:
  stillweb build synthetic --articles 20000 --seed 0 --out snapshots/syn-20k
  stillweb build synthetic --articles 2000 --seed 1 --out snapshots/syn-2k --workers 2
  stillweb build synthetic --articles 2000 --passages 100 --out snapshots/syn-passages
"""
WIKIPEDIA_EXAMPLES = """examples:
  stillweb build wikipedia ../shared/data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2 --out snapshots/enwiki-sample
  stillweb build wikipedia enwiki-pages-articles.xml.bz2 --passages 100 --out snapshots/wiki-passages
  stillweb build wikipedia enwiki-pages-articles-multistream.xml.bz2 --out snapshots/enwiki --ray
      (shards on the Ray cluster of RAY_ADDRESS or ray start, or a local one; needs stillweb[ray])
"""
CORPUS_EXAMPLES = """examples:
  stillweb build corpus wiki-18.jsonl.gz --out snapshots/wiki18          (FlashRAG / Search-R1 passages)
  stillweb build corpus beir/scifact --out snapshots/scifact             (BEIR folder: corpus.jsonl)
  stillweb build corpus kilt_knowledgesource.json --format kilt --out snapshots/kilt
  stillweb build corpus 'parts/*.parquet' --id-column doc --text-column body --out snapshots/mine
  stillweb build corpus collection.tsv --format tsv --out snapshots/msmarco   (headerless: id, text)
  stillweb build corpus wiki-18.jsonl --out snapshots/wiki18-x8 --shards 8 --ray
      (8 shard snapshots built as Ray tasks, searched as one; the source uncompressed, on a filesystem every node sees)
"""
EXAMPLES = "examples:\n" + "".join(text.split("\n", 1)[1].split("\n", 1)[0] + "\n"
                                    for text in (SYNTHETIC_EXAMPLES, WIKIPEDIA_EXAMPLES, CORPUS_EXAMPLES,
                                                 build_dense.EXAMPLES))


def _positive(name: str):
    def parse(value: str) -> int:
        try:
            return check_positive_int(name, int(value))
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    return parse


def register(subparsers) -> None:
    """Add ``build`` and its three sources."""
    build = subparsers.add_parser(
        "build", help="build a corpus snapshot", epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Build an immutable corpus snapshot (documents, facts, links, a tantivy index and a fingerprint) "
                    "from the synthetic world, a Wikipedia dump or a row corpus. SOURCE --help shows each one's options.",
    )
    sources = build.add_subparsers(dest="source", metavar="SOURCE", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--out", required=True, help="snapshot directory to write (replaced atomically)")
    common.add_argument("--workers", type=_positive("--workers"), default=os.cpu_count() or 1,
                        help="parsing processes (default: all cores)")
    common.add_argument("--quiet", action="store_true", help="no progress output")
    common.add_argument("--passages", type=_positive("--passages"), metavar="WORDS",
                        help="split pages into WORDS-word passages (the DPR / wiki-18 recipe uses 100)")
    common.add_argument("--language", choices=LANGUAGES, metavar="LANG",
                        help=f"the text's language, which picks the search analyzer ({', '.join(LANGUAGES)}; "
                             "default: the dump's own, else detected from the text and said on the console)")
    strict = argparse.ArgumentParser(add_help=False)
    strict.add_argument("--strict", action="store_true", help="fail on the first row that would be skipped")

    synthetic = sources.add_parser("synthetic", parents=[common], help="the seeded fictional encyclopedia (default corpus)",
                                   description="Generate the seeded fictional world (people, places, organisations, "
                                               "works with facts and links) and build its snapshot.",
                                   epilog=SYNTHETIC_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    synthetic.add_argument("--articles", type=int, default=20_000, help="number of articles (default 20000)")
    synthetic.add_argument("--seed", type=int, default=0, help="world seed (default 0)")
    synthetic.add_argument("--ray", action="store_true", help="parse the world's page ranges as Ray tasks; same snapshot")
    synthetic.add_argument("--dump-style", choices=DUMP_STYLES, default="synthetic",
                           help="how the intermediate dump writes infoboxes: the world's own keys (default) or "
                                "English Wikipedia's templates, keys and habits (tests the infobox mapping)")
    synthetic.set_defaults(handler=_run_synthetic)

    wikipedia = sources.add_parser("wikipedia", parents=[common, strict],
                                   help="a MediaWiki pages-articles XML dump (.xml or .xml.bz2)",
                                   description="Parse a MediaWiki pages-articles dump (articles, infobox facts, links, "
                                               "redirects) into a snapshot.",
                                   epilog=WIKIPEDIA_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    wikipedia.add_argument("path", help="the dump file")
    wikipedia.add_argument("--skip-bad", action="store_true", help="count and skip malformed pages instead of failing")
    wikipedia.add_argument("--ray", action="store_true",
                           help="read and parse shards (bzip2 streams, page ranges) as Ray tasks; same snapshot")
    wikipedia.add_argument("--script", choices=SCRIPTS,
                           help="a Chinese dump's script: hans (simplified, the default for a zh dump) or hant "
                                "(traditional); language-conversion markup resolved, titles kept as written")
    wikipedia.set_defaults(handler=_run_wikipedia)

    corpus = sources.add_parser(
        "corpus", aliases=["parquet"], parents=[common, strict],
        help="a row corpus: wiki-18, BEIR, KILT, save_to_disk, parquet/jsonl/json/csv/tsv (gz, bz2, zst)",
        description="One document per source row, the corpus's ids kept as source_id. Inputs are files, "
                    "folders or globs, read in the order given (a folder or glob in name order).",
        epilog=CORPUS_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    corpus.add_argument("inputs", nargs="+", metavar="INPUT", help="corpus files, folders or globs")
    corpus.add_argument("--format", choices=CORPUS_FORMATS, help="override format detection")
    corpus.add_argument("--id-column", help="column holding the corpus's own id")
    corpus.add_argument("--title-column", help="column holding the title")
    corpus.add_argument("--text-column", help="column holding the text")
    corpus.add_argument("--dedupe", choices=DEDUPE_POLICIES, default="none",
                        help="skip later rows repeating an earlier row's id, title or text (default none: "
                             "every row is a document, a repeated id is an error)")
    corpus.add_argument("--url-template", metavar="TEMPLATE",
                        help="URL of a row without one, from its {id} and {title} (e.g. 'https://example.org/doc/{id}'); "
                             "default: no URL (none is made up)")
    corpus.add_argument("--max-row-chars", type=_positive("--max-row-chars"), default=MAX_ROW_CHARS,
                        help=f"skip rows whose text is longer (default {MAX_ROW_CHARS})")
    corpus.add_argument("--ray", action="store_true",
                        help="read shards (parquet row groups, JSON-lines byte ranges) as Ray tasks; same snapshot "
                             "(with --shards: build each shard as a Ray task)")
    corpus.add_argument("--shards", type=_positive("--shards"), metavar="N",
                        help="build a sharded snapshot: N shard snapshots of about equal bytes of the source, searched "
                             "as one (docs/scale.md); rankings use each shard's own BM25 statistics")
    corpus.set_defaults(handler=_run_corpus)
    build_dense.register(sources)


def _report(result) -> int:
    manifest = result.manifest
    counts = manifest["counts"]
    for note in result.notes:  # the language chosen, and a warning when its analyzer suits the text poorly
        print(note, file=sys.stderr)
    print(f"snapshot: {result.path}")
    print(f"fingerprint: {manifest['fingerprint']}")
    print("counts: " + ", ".join(f"{k}={v}" for k, v in counts.items() if not isinstance(v, dict)))
    print(describe_rows(counts["rows"]))
    return 0


def _run_synthetic(args) -> int:
    if args.articles < 1:
        raise UsageError(f"--articles must be at least 1, got {args.articles}")
    return _report(build_synthetic(args.articles, args.seed, args.out, workers=args.workers, progress=not args.quiet,
                                   passages=args.passages, on_ray=args.ray, dump_style=args.dump_style,
                                   language=args.language))


def _run_wikipedia(args) -> int:
    return _report(build_wikipedia(args.path, args.out, workers=args.workers, skip_bad=args.skip_bad,
                                   progress=not args.quiet, passages=args.passages, strict=args.strict,
                                   on_ray=args.ray, language=args.language, script=args.script))


def _run_corpus(args) -> int:
    columns = ColumnMap(id=args.id_column, title=args.title_column, text=args.text_column)
    if args.shards:
        from stillweb.corpora.build.in_shards import build_rows_in_shards

        return _report(build_rows_in_shards(args.inputs, args.out, args.shards, on_ray=args.ray, progress=not args.quiet,
                                            language=args.language, format=args.format, columns=columns,
                                            dedupe=args.dedupe, strict=args.strict, passages=args.passages,
                                            max_row_chars=args.max_row_chars, workers=args.workers,
                                            url_template=args.url_template))
    return _report(build_rows(args.inputs, args.out, format=args.format, columns=columns, dedupe=args.dedupe,
                              strict=args.strict, passages=args.passages, max_row_chars=args.max_row_chars,
                              workers=args.workers, progress=not args.quiet, url_template=args.url_template,
                              on_ray=args.ray, language=args.language))
