"""``stillweb tasks import SNAPSHOT FILE... --name NAME``: public QA sets (every format of
:data:`~stillweb.corpora.tasks.importers.QA_FORMATS`) as task sets over the snapshot, evidence mapped to
doc ids, with a solvability report (:mod:`stillweb.corpora.tasks.importers`). The formats and answer-match
rules the help lists come from their registries."""

from __future__ import annotations

import argparse
import sys
import textwrap

from stillweb.corpora.tasks.answer_match import ANSWER_MATCH_RULES, ANSWER_MATCHES
from stillweb.corpora.tasks.store.export import SEARCH_R1_DATA_SOURCES

__all__ = ["add_import_parser", "run_import"]

EXAMPLES = """examples:
  stillweb tasks import snapshots/wiki18 nq/train.jsonl nq/test.jsonl --name nq
  stillweb tasks import snapshots/hotpot hotpot_dev_distractor_v1.json --name hotpot --answer-match f1
  stillweb tasks import snapshots/wiki18 data/nq_search/train.parquet --name nq-verl --format search_r1
  stillweb tasks import snapshots/msq musique_full_v1.0_dev.jsonl.bz2 --name musique --require-evidence --strict
  stillweb tasks import snapshots/s qa.csv --name mine --question-field q --answer-field a --id-field qid
  stillweb tasks import snapshots/bcp data/browsecomp_plus_decrypted.jsonl --name bcp \\
      --qrels topics-qrels/qrel_evidence.txt --qrels topics-qrels/qrel_golds.txt
"""


def add_import_parser(actions: argparse._SubParsersAction) -> None:
    """Add ``tasks import`` to the ``tasks`` sub-commands."""
    from stillweb.corpora.tasks.importers import FORMAT_NAMES, QA_FORMATS

    formats = ", ".join(f"{qa_format.name} ({qa_format.description.split(':')[0]})" for qa_format in QA_FORMATS)
    parser = actions.add_parser(
        "import", help="import a public QA set (FlashRAG, Search-R1, HotpotQA, MuSiQue, KILT, ...) as a task set",
        description="Read QA files, map their gold evidence to the snapshot's doc ids (by corpus id, title or the "
                    "passage holding the supporting text), check what the snapshot can answer (evidence present, "
                    "BM25 top-k hit, answer in an evidence doc) and write SNAPSHOT/tasks/NAME/ with a card.md.",
        epilog=EXAMPLES + "\n" + textwrap.fill(f"formats (detected from the first row unless --format): {formats}; "
                                                "gzip, bzip2 and zstd files are read as is.", 110), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("snapshot", metavar="SNAPSHOT", help="snapshot directory")
    parser.add_argument("files", nargs="+", metavar="FILE", help="QA files, read in the order given")
    parser.add_argument("--name", required=True, help="task set name")
    parser.add_argument("--format", choices=FORMAT_NAMES, help="override format detection")
    parser.add_argument("--answer-match", choices=ANSWER_MATCHES, default=None,
                        help="the outcome's match rule stored with the set (default em for imports): "
                             + "; ".join(f"{name}: {rule.summary}" for name, rule in ANSWER_MATCH_RULES.items()))
    parser.add_argument("--data-source", choices=SEARCH_R1_DATA_SOURCES, default=None,
                        help="the Search-R1 data source these questions are (default: the one a file's name says, "
                             "e.g. nq/test.jsonl); the verl export writes it, the name Search-R1's reward selector accepts")
    parser.add_argument("--strict", action="store_true", help="stop at the first evidence item that maps to no document")
    parser.add_argument("--require-evidence", action="store_true",
                        help="keep only answerable tasks whose gold evidence is all in the snapshot")
    parser.add_argument("--question-field", default="question", help="plain files: the question column (default question)")
    parser.add_argument("--answer-field", default="answer", help="plain files: the answer column, one or a list (default answer)")
    parser.add_argument("--id-field", default=None, help="plain files: the id column (default: a hash of question and answer)")
    parser.add_argument("--qrels", action="append", default=[], metavar="QRELS",
                        help="TREC qrels file ('query_id Q0 docid relevance'; BrowseComp-Plus's topics-qrels/"
                             "qrel_evidence.txt, qrel_golds.txt) whose judged docs become the evidence of the "
                             "question with that id; repeatable")
    parser.add_argument("--k", type=int, default=10, help="depth of the BM25 retrieval check (default 10)")
    parser.add_argument("--no-retrieval-check", action="store_true",
                        help="skip the BM25 checks (gold doc in the top k; for questions without evidence, a golden "
                             "answer in the top k, with a warning when fewer than half have one); the rest still runs")
    parser.add_argument("--seed", type=int, default=0, help="seed of the hash split of files without splits (default 0)")
    parser.add_argument("--workers", type=int, default=None, help="search processes of the retrieval check (default: all cores)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(handler=run_import)


def run_import(args: argparse.Namespace) -> int:
    """Handler of ``tasks import``: prints the console line, exit status 0."""
    from stillweb.corpora.errors import UsageError
    from stillweb.corpora.tasks.importers import FieldNames, ImportOptions, import_tasks

    if not 1 <= args.k <= 100:
        raise UsageError(f"--k must be 1..100, got {args.k}")
    options = ImportOptions(format=args.format, answer_match=args.answer_match, strict=args.strict,
                            require_evidence=args.require_evidence,
                            fields=FieldNames(args.question_field, args.answer_field, args.id_field), k=args.k,
                            retrieval=not args.no_retrieval_check, seed=args.seed, workers=args.workers,
                            progress=not args.no_progress, qrels=tuple(args.qrels), data_source=args.data_source)
    summary = import_tasks(args.snapshot, args.files, args.name, options)
    print(summary.line())
    if summary.warning:
        print(summary.warning, file=sys.stderr)
    return 0
