"""``stillweb replay FILE``: re-run a recorded episode file and check it step by step.

Exits 0 when every reset and step gives the recorded observation, reward,
endings and info; exits 1 at the first one that differs, naming its line and
field. The snapshot is found by the path the recording stores (as given,
then resolved) or, when it moved, by its fingerprint in $STILLWEB_HOME/snapshots,
./snapshots, . or the recording's folder; the verdict says which one was used.
``--snapshot DIR`` names it instead.

--rescore REWARD_CONFIG re-scores the recorded episodes under another reward rule or
answer-match rule (RewardConfig fields as JSON, or a JSON file) without a policy: the
recorded actions are played again, and a new file (--out, default NAME.rescored.jsonl)
keeps the recorded reward beside the new one on each episode's last step. It prints the
episodes whose reward changed, by reason (outcome: the answer is judged otherwise).

examples:
  stillweb replay episodes.jsonl
  stillweb replay runs/episode-000.jsonl --snapshot /data/snapshots/syn-20k
  stillweb replay episodes.jsonl --rescore '{"answer_match": "subem"}'
  stillweb replay episodes.jsonl --rescore reward.json --out episodes.f1.jsonl
"""

from __future__ import annotations

import argparse

from stillweb.cli.help_text import plain

__all__ = ["register", "run_replay"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``replay`` subcommand to the ``stillweb`` parser."""
    parser = subparsers.add_parser(
        "replay",
        help="re-run a recorded episode file; exit non-zero at the first step that differs",
        description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", help="a JSONL recording written by stillweb.envs.RecordEpisodes")
    parser.add_argument("--snapshot", help="snapshot directory to replay against (default: found by the recorded "
                                           "path or fingerprint)")
    parser.add_argument("--rescore", metavar="REWARD_CONFIG",
                        help="re-score under this RewardConfig (JSON text or a JSON file) instead of checking")
    parser.add_argument("--out", help="where --rescore writes (default: NAME.rescored.jsonl beside the file)")
    parser.set_defaults(handler=run_replay)


def run_replay(args: argparse.Namespace) -> int:
    """Replay ``args.file``; print the verdict; 0 if identical, 1 otherwise (with ``--rescore``: 0 when
    every episode replayed as recorded, 1 when one diverged)."""
    from stillweb.corpora.errors import UsageError
    from stillweb.envs.runs.recording import replay

    overrides = {"snapshot": args.snapshot} if args.snapshot else {}
    if args.rescore:
        from stillweb.envs.runs.rescore import rescore, reward_config_from_text

        summary = rescore(args.file, reward_config_from_text(args.rescore), args.out, **overrides)
        print(f"{args.file}: {summary.describe()}")
        return 1 if summary.diverged else 0
    if args.out:
        raise UsageError("--out goes with --rescore (a plain replay writes nothing)")
    result = replay(args.file, **overrides)
    print(f"{args.file}: {result.describe()}")
    return 0 if result.ok else 1
