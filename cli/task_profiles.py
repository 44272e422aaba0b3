"""``stillweb tasks profile|filter|reverify``: difficulty profiles of a task set under a policy.

``register(actions)`` adds the three actions to the ``tasks`` command (called by ``cli/tasks.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from stillweb.corpora.errors import UsageError
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.envs.profiles.players import AGENTS
from stillweb.sandboxes.formats import FORMATS

__all__ = ["register", "run_profile", "run_filter", "run_reverify", "retrieval_table"]

PROFILE_EXAMPLES = """examples:
  stillweb tasks profile snapshots/syn hard --policy http://127.0.0.1:8000/v1 -k 8 --workers 2
  stillweb tasks profile snapshots/syn hard --agent reference -k 1
  stillweb tasks profile snapshots/syn hard --policy http://10.0.0.5:8000/v1 --model Qwen/Qwen3-8B --ray
  stillweb tasks profile snapshots/syn hard --agent reference -k 4 --retrieval golden --retrieval none --retrieval bm25

With --retrieval each mode is profiled as POLICY.MODE and the modes' pass@1, pass@k and pass^k
are printed side by side (is the policy failing at search or at reasoning?).

A killed run resumes where it stopped: run the same command again.
The profile is written to SNAPSHOT/tasks/NAME/profile/POLICY.parquet (POLICY: --name,
else the agent's name or the endpoint's model id).
"""

FILTER_EXAMPLES = """examples:
  stillweb tasks filter snapshots/syn hard --profile reference --pass-rate 0.1:0.9 --out hard-band
"""

REVERIFY_EXAMPLES = """examples:
  stillweb tasks reverify snapshots/syn hard --profile reference
  stillweb tasks reverify snapshots/syn hard --profile reference --reward '{"outcome": 0.8, "citation_recall": 0.2}'
"""


def register(actions: argparse._SubParsersAction) -> None:
    """Add ``profile``, ``filter`` and ``reverify`` to the ``tasks`` actions."""
    from stillweb.sandboxes.tools.retrieval import RETRIEVAL_MODES

    profile = actions.add_parser(
        "profile", help="pass@1, pass@k, pass^k, turns and truncations per task under a policy", epilog=PROFILE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run k episodes per task with a policy behind an OpenAI-compatible chat endpoint "
                    "(or a built-in agent) and write per-task pass rates beside the task set.")
    profile.add_argument("snapshot", metavar="SNAPSHOT", help="snapshot directory")
    profile.add_argument("name", metavar="NAME", help="task set name")
    who = profile.add_mutually_exclusive_group(required=True)
    who.add_argument("--policy", metavar="URL", help="the endpoint's API root, e.g. http://127.0.0.1:8000/v1")
    who.add_argument("--agent", choices=AGENTS, help="a built-in agent instead of an endpoint")
    profile.add_argument("-k", type=int, default=8, help="episodes per task (default 8)")
    profile.add_argument("--model", help="model id to ask the endpoint for (default: its first listed model)")
    profile.add_argument("--policy-name", dest="policy_name", help="name of the profile file (default: the agent or model id)")
    profile.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default 1.0)")
    profile.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling mass (default 1.0)")
    profile.add_argument("--max-tokens", type=int, default=2048, help="longest reply per turn, in tokens (default 2048)")
    profile.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for one reply (default 60)")
    profile.add_argument("--retries", type=int, default=3, help="retries of a failed request, with backoff (default 3)")
    profile.add_argument("--split", action="append", choices=SPLITS,
                         help="profile only this split (repeatable; default all three)")
    profile.add_argument("--tool-format", default="tongyi", choices=tuple(FORMATS),
                         help="the environment's call format (default tongyi)")
    profile.add_argument("--max-turns", type=int, default=None,
                         help="turns before an episode is truncated (default: the task set's own, as the environment "
                              "derives it: 1.5x the reference agent's p99 steps; recorded in the profile)")
    profile.add_argument("--retrieval", action="append", choices=list(RETRIEVAL_MODES), metavar="MODE",
                         help="profile under this retrieval ablation (repeatable, compared side by side): "
                              + "; ".join(f"{mode}: {meaning}" for mode, meaning in RETRIEVAL_MODES.items()))
    profile.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    profile.add_argument("--ray", action="store_true", help="play the episodes as Ray tasks (needs stillweb[ray])")
    profile.set_defaults(handler=run_profile)

    keep = _profiled_set_action(actions, "filter", help="a new task set of the tasks whose pass@1 is in a band",
                                epilog=FILTER_EXAMPLES,
                                description="Keep the tasks of a profiled set whose pass@1 lies in LOW:HIGH "
                                            "and write them, with a card, as a new task set.")
    keep.add_argument("--pass-rate", required=True, metavar="LOW:HIGH", help="the band of pass@1 to keep, e.g. 0.1:0.9")
    keep.add_argument("--out", required=True, metavar="NEW_NAME", help="name of the new task set")
    keep.set_defaults(handler=run_filter)

    again = _profiled_set_action(actions, "reverify", help="re-score a profile's stored episodes under a reward config",
                                 epilog=REVERIFY_EXAMPLES,
                                 description="Re-play every stored episode's actions under the given reward "
                                             "config and rewrite the profile with the new scores.")
    again.add_argument("-k", type=int, default=None, help="samples per task in the rewritten profile (default: as stored)")
    again.add_argument("--reward", metavar="JSON", default=None,
                       help="RewardConfig fields as JSON (default: the default config, outcome only)")
    again.set_defaults(handler=run_reverify)


def _profiled_set_action(actions: argparse._SubParsersAction, name: str, **parser_options) -> argparse.ArgumentParser:
    """An action on a profiled task set: ``SNAPSHOT NAME --profile POLICY`` (``filter``, ``reverify``)."""
    action = actions.add_parser(name, formatter_class=argparse.RawDescriptionHelpFormatter, **parser_options)
    action.add_argument("snapshot", metavar="SNAPSHOT", help="snapshot directory")
    action.add_argument("name", metavar="NAME", help="the profiled task set")
    action.add_argument("--profile", required=True, metavar="POLICY", help="which profile (the policy name)")
    return action


def run_profile(args: argparse.Namespace) -> int:
    """Handler of ``tasks profile``: plays the episodes, writes the profile, prints a summary."""
    from stillweb.envs.agents.chat_policy import Sampling
    from stillweb.envs.agents.loop import PolicyFailure
    from stillweb.envs.profiles import PolicySpec, ProfileRun, profile_tasks, read_profile, truncation_warning

    if args.k < 1 or args.workers < 1:
        raise UsageError(f"-k and --workers must be at least 1, got -k {args.k} --workers {args.workers}")
    if args.agent:
        policy = PolicySpec(args.agent, args.policy_name or args.agent)
    else:
        try:
            policy = PolicySpec.for_endpoint(
                args.policy, args.model, args.policy_name, Sampling(args.temperature, args.top_p, args.max_tokens),
                timeout_s=args.timeout, retries=args.retries)
        except PolicyFailure as failure:
            raise UsageError(f"cannot ask {args.policy} for its model id ({failure.reason}); pass --model") from None
    env_kwargs = {"tool_format": args.tool_format, **({"max_turns": args.max_turns} if args.max_turns is not None else {})}
    if args.ray:
        _init_ray()
    by_mode = {}
    for mode in dict.fromkeys(args.retrieval or [None]):
        played = replace(policy, name=f"{policy.name}.{mode}") if mode else policy
        run = ProfileRun(args.snapshot, args.name, played, args.k, tuple(args.split or ("train", "dev", "test")),
                         {**env_kwargs, **({"retrieval": mode} if mode else {})})
        path = profile_tasks(run, workers=args.workers, on_ray=args.ray)
        rows = by_mode[mode] = read_profile(args.snapshot, args.name, played.name)
        rated = [row["pass_at_1"] for row in rows if row["pass_at_1"] is not None]
        failed = sum(row["failed_episodes"] for row in rows)
        mean = sum(rated) / len(rated) if rated else float("nan")
        rates = _rates(rows, args.k)
        turns = sorted({(row["split"], row["max_turns"]) for row in rows}, key=lambda pair: SPLITS.index(pair[0]))
        print(f"wrote {path}: {len(rows)} tasks, mean pass@1 {mean:.3f}, pass@{args.k} {rates[0]}, "
              f"pass^{args.k} {rates[1]}, {failed} failed episodes (policy {played.name}, model {played.model}; "
              f"max_turns {', '.join(f'{split} {n}' for split, n in turns)})")
        _warn(truncation_warning(played.name, rows))
    if args.retrieval:
        print(retrieval_table(by_mode, args.k))
    return 0


def retrieval_table(by_mode: dict, k: int) -> str:
    """The modes' mean pass@1, pass@k and pass^k side by side (a Markdown table).

    >>> print(retrieval_table({"golden": [{"pass_at_1": 1.0, "pass_at_k": 1.0, "pass_hat_k": 1.0}],
    ...                        "none": [{"pass_at_1": 0.5, "pass_at_k": 0.75, "pass_hat_k": 0.25}]}, 2))
    | retrieval | tasks | pass@1 | pass@2 | pass^2 |
    |---|---|---|---|---|
    | golden | 1 | 1.000 | 1.000 | 1.000 |
    | none | 1 | 0.500 | 0.750 | 0.250 |
    """
    lines = [f"| retrieval | tasks | pass@1 | pass@{k} | pass^{k} |", "|---|---|---|---|---|"]
    for mode, rows in by_mode.items():
        rated = [row for row in rows if row["pass_at_1"] is not None]
        pass_1 = f"{sum(row['pass_at_1'] for row in rated) / len(rated):.3f}" if rated else "-"
        lines.append(f"| {mode} | {len(rated)} | {pass_1} | {' | '.join(_rates(rows, k))} |")
    return "\n".join(lines)


def _rates(rows: list, k: int) -> tuple[str, str]:
    """Mean pass@k and pass^k of profile rows, as text ("-" when no task was rated; pass^k of a profile
    written before it was kept is "-")."""
    rated = [row for row in rows if row["pass_at_k"] is not None]
    hat = [row.get("pass_hat_k") for row in rated]
    at_k = f"{sum(row['pass_at_k'] for row in rated) / len(rated):.3f}" if rated else "-"
    hat_k = f"{sum(hat) / len(hat):.3f}" if rated and None not in hat else "-"
    return at_k, hat_k


def run_filter(args: argparse.Namespace) -> int:
    """Handler of ``tasks filter``."""
    from stillweb.envs.profiles import filter_by_pass_rate, parse_band, read_profile, truncation_warning

    _warn(truncation_warning(args.profile, read_profile(args.snapshot, args.name, args.profile)))
    path, kept, profiled = filter_by_pass_rate(args.snapshot, args.name, args.profile, parse_band(args.pass_rate), args.out)
    print(f"wrote {path}: {kept} of {profiled} profiled tasks have pass@1 in {args.pass_rate}")
    return 0


def run_reverify(args: argparse.Namespace) -> int:
    """Handler of ``tasks reverify``."""
    from stillweb.envs.profiles import read_profile, reverify

    try:
        reward = json.loads(args.reward) if args.reward else None
    except json.JSONDecodeError as error:
        raise UsageError(f"--reward is not JSON ({error}): pass e.g. '{{\"outcome\": 1.0}}'") from None
    k = args.k or read_profile(args.snapshot, args.name, args.profile)[0]["k"]
    path, played, changed = reverify(args.snapshot, args.name, args.profile, k, reward)
    print(f"re-scored {played} episodes ({changed} changed reward); wrote {path}")
    return 0


def _warn(warning: str | None) -> None:
    if warning:
        print(f"warning: {warning}", file=sys.stderr)


def _init_ray() -> None:
    """Join the cluster in RAY_ADDRESS, or start a local Ray."""
    import ray

    if not ray.is_initialized():
        ray.init(configure_logging=False, log_to_driver=False)
