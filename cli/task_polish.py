"""``stillweb tasks polish SNAPSHOT NAME --policy URL``: rewrite a set's questions with a model, keeping only
rewrites that state every constant, not the answer, and re-prove the same (:mod:`stillweb.corpora.tasks.phrase.polish`)."""

from __future__ import annotations

import argparse

__all__ = ["add_polish_parser", "run_polish"]

EXAMPLES = """examples:
  stillweb tasks polish snapshots/syn-20k default --policy http://127.0.0.1:8000/v1 --out default-polished
  stillweb tasks polish snapshots/syn-20k default --policy http://127.0.0.1:8000/v1 --model qwen --temperature 0.7
"""


def add_polish_parser(actions: argparse._SubParsersAction) -> None:
    """Add ``tasks polish`` to the ``tasks`` sub-commands."""
    polish = actions.add_parser(
        "polish", help="rewrite a set's questions with a model into a new set, keeping only faithful rewrites",
        description="Ask a model behind an OpenAI-compatible chat endpoint to rewrite each question as a person "
                    "would write it. A rewrite is kept only when every constant of the question is still in it, "
                    "the answer and its aliases are not, and the independent re-proof is unchanged; the others "
                    "keep their question and are counted by reason. Writes a new set; the source set is never changed.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    polish.add_argument("snapshot", metavar="SNAPSHOT", help="snapshot directory")
    polish.add_argument("name", metavar="NAME", help="task set to polish")
    polish.add_argument("--policy", required=True, metavar="URL", help="OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1")
    polish.add_argument("--out", metavar="NEW_NAME", help="name of the polished set (default: NAME-polished)")
    polish.add_argument("--model", help="model id (default: the endpoint's first listed model)")
    polish.add_argument("--temperature", type=float, default=0.7, help="sampling temperature (default 0.7)")
    polish.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling (default 1.0)")
    polish.add_argument("--max-tokens", type=int, default=512, help="longest rewrite in tokens (default 512)")
    polish.add_argument("--api-key", help="sent as a bearer token")
    polish.add_argument("--no-progress", action="store_true", help="no progress bar")
    polish.set_defaults(handler=run_polish)


def run_polish(args: argparse.Namespace) -> int:
    """Handler of ``tasks polish``: prints the kept and rejected counts."""
    from stillweb.corpora.tasks.phrase.polish import polish_task_set
    from stillweb.envs.agents.chat_policy import ChatPolicy, Sampling

    sampling = Sampling(temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens)
    policy = ChatPolicy(args.policy, model=args.model, sampling=sampling, api_key=args.api_key)
    report = polish_task_set(args.snapshot, args.name, args.out or f"{args.name}-polished",
                             lambda messages: policy.complete(messages, seed=0), policy.model,
                             sampling.as_dict(), progress=not args.no_progress)
    rejected = ", ".join(f"{reason} {count}" for reason, count in report.rejected.items())
    print(f"kept {report.kept} of {report.tasks} rewrites by {report.model} in {report.path}; rejected: {rejected}")
    return 0
