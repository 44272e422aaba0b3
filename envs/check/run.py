"""The checks of ``stillweb check`` (see :mod:`stillweb.envs.check`)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

from gymnasium.utils.env_checker import check_env

from stillweb.envs.check.hashing import PROCESS_SETTINGS, hashes_in_subprocess, play_planned
from stillweb.envs.check.policies import FLOORS, PlayedSteps, canonical_step
from stillweb.envs.check.report import CheckReport, CheckResult, Failure
from stillweb.envs.check.target import (ANSWER_SHOWN_BY_DESIGN, EnvTarget, Planned, plan_episodes, reference_factory,
                                        tool_schemas)

__all__ = ["check_environment", "REFERENCE_SHARE", "FLOOR_SHARE"]

REFERENCE_SHARE = 0.95  # the reference agent earns the maximum on at least this share of tasks
FLOOR_SHARE = 0.05  # a floor policy earns at most this share of the maximum reward
MAX_REWARD = 1.0


def check_environment(target: EnvTarget, max_tasks: int = 20, max_steps: int = 64, determinism_tasks: int = 5,
                      subprocesses: bool = True) -> CheckReport:
    """Run every check on ``target`` over its first ``max_tasks`` tasks; the report."""
    env = target.make()
    base = env.unwrapped
    plan = plan_episodes(env, target.env_id, max_tasks)
    max_reward = float(getattr(base, "max_reward", MAX_REWARD))
    report = CheckReport(target.name, len(plan))
    report.results.append(_gym_checker(base))
    played: dict[str, list[PlayedSteps]] = {}
    if any(reference_factory(planned.member, planned.member_id) is not None for planned in plan):
        played["reference"] = [play_planned(env, planned, seed, max_steps) for seed, planned in enumerate(plan)]
    for floor in FLOORS:
        played[floor] = [play_planned(env, planned, seed, max_steps, floor) for seed, planned in enumerate(plan)]
    report.results.append(_reference(played.get("reference"), max_reward))
    has_schemas = any(tool_schemas(planned.member) for planned in plan)
    report.results += [_floor(floor, played[floor], max_reward, has_schemas) for floor in FLOORS]
    report.results.append(_leaks(target, plan, played))
    report.results.append(_endings(played, getattr(base, "mask_truncated", None)))
    report.results.append(_same_seed(env, plan[0]))
    if subprocesses:
        report.results.append(_two_processes(target, [planned.label for planned in plan[:determinism_tasks]], max_steps))
    report.results.append(_cost(played))
    env.close()
    return report


def _gym_checker(base: Any) -> CheckResult:
    """gymnasium's ``check_env`` (its warnings are kept as figures)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            check_env(base, skip_render_check=True)
        except Exception as error:  # noqa: BLE001 - the checker's verdict, reported
            return CheckResult("check_env", "fail", "gymnasium's check_env failed",
                               [Failure(None, None, f"{type(error).__name__}: {str(error)[:400]}")])
    notes = sorted({str(warning.message)[:200] for warning in caught})
    return CheckResult("check_env", "pass", "gymnasium's check_env passed" + (f" ({len(notes)} warnings)" if notes else ""),
                       figures={"warnings": notes})


def _reference(episodes: list[PlayedSteps] | None, max_reward: float) -> CheckResult:
    if episodes is None:
        return CheckResult("reference", "skip", "no reference agent (give the environment a reference_agent(task) method)")
    failures = [Failure(episode.task_id, len(episode.steps) - 1,
                        episode.error or f"the reference agent earned {episode.reward:g} of {max_reward:g}"
                        + ("" if episode.ended else " (the episode did not end)"))
                for episode in episodes if episode.error or episode.reward < max_reward - 1e-9]
    share = 1.0 - len(failures) / len(episodes)
    status = "pass" if share >= REFERENCE_SHARE else "fail"
    return CheckResult("reference", status, f"the reference agent earned the maximum on {share:.0%} of tasks "
                                            f"(needs {REFERENCE_SHARE:.0%})", failures, {"share": share})


def _floor(name: str, episodes: list[PlayedSteps], max_reward: float, has_schemas: bool) -> CheckResult:
    check = f"floor: {name}"
    if name == "random_calls" and not has_schemas:
        return CheckResult(check, "skip", "no tool schemas (give the environment tool_schemas or a registry)")
    mean = sum(episode.reward for episode in episodes) / len(episodes)
    share = mean / max_reward if max_reward else 0.0
    failures = [Failure(episode.task_id, len(episode.steps) - 1, f"{name} earned {episode.reward:g}")
                for episode in episodes if episode.reward > 0]
    failures += [Failure(episode.task_id, len(episode.steps) - 1, f"{name} raised {episode.error}")
                 for episode in episodes if episode.error]
    status = "pass" if share <= FLOOR_SHARE and not any(episode.error for episode in episodes) else "fail"
    return CheckResult(check, status, f"mean reward {share:.1%} of the maximum (at most {FLOOR_SHARE:.0%})",
                       failures if status == "fail" else [], {"share": share})


def _leaks(target: EnvTarget, plan: list[Planned], played: dict[str, list[PlayedSteps]]) -> CheckResult:
    """No gold answer in an observation before the first tool call: the reset's and every observation of the
    do-nothing episodes (which call no tool). A gold that every task's reset shows (the template's words, e.g.
    "done" in an app task's instructions) is no leak."""
    shown = sorted({planned.member_id for planned in plan if planned.member_id in ANSWER_SHOWN_BY_DESIGN})
    plan = [planned for planned in plan if planned.member_id not in ANSWER_SHOWN_BY_DESIGN]
    if not plan:
        return CheckResult("answer leak", "skip", "; ".join(ANSWER_SHOWN_BY_DESIGN[member_id] for member_id in shown))
    golds = {planned.label: [gold for gold in (getattr(planned.task, "golds", None) or (planned.task.answer,))
                             if str(gold).strip()] for planned in plan}
    resets = [episode.steps[0].observation for episode in played["do_nothing"] if episode.task_id in golds]
    failures = []
    for episode in played["do_nothing"]:
        if episode.task_id not in golds:
            continue
        secret = [gold for gold in golds[episode.task_id]
                  if len(resets) == 1 or not all(_contains(reset, str(gold)) for reset in resets)]
        for step in episode.steps:
            leaked = next((gold for gold in secret if _contains(step.observation, str(gold))), None)
            if leaked is not None:
                failures.append(Failure(episode.task_id, step.step, f"the observation shows the gold answer {leaked!r} "
                                                                      "before any tool call"))
                break
    status = "fail" if failures else "pass"
    return CheckResult("answer leak", status, f"{len(failures)} of {len(plan)} tasks show their answer before a tool call",
                       failures)


def _endings(played: dict[str, list[PlayedSteps]], mask_truncated: bool | None) -> CheckResult:
    """Every step before the last is neither terminated nor truncated; the last is exactly one of them, its
    reason key agrees, and ``mask_from_loss`` is set only on a truncation (and then as the env promises)."""
    failures = []
    for policy, episodes in played.items():
        for episode in episodes:
            if not episode.ended and not episode.error:
                failures.append(Failure(episode.task_id, len(episode.steps) - 1,
                                        f"{policy}: no ending within {len(episode.steps) - 1} steps"))
            for step in episode.steps[1:]:
                problem = _ending_problem(step, step is episode.steps[-1] and episode.ended, mask_truncated)
                if problem:
                    failures.append(Failure(episode.task_id, step.step, f"{policy}: {problem}"))
    status = "fail" if failures else "pass"
    return CheckResult("endings", status, "terminated/truncated, reasons and mask flags agree" if not failures
                       else f"{len(failures)} steps disagree with their ending", failures)


def _ending_problem(step: Any, last: bool, mask_truncated: bool | None) -> str | None:
    info = step.info
    if not last:
        return "terminated or truncated before the last step" if step.terminated or step.truncated else None
    if step.terminated == step.truncated:
        return f"terminated={step.terminated} and truncated={step.truncated}: an ending is exactly one of them"
    if "termination_reason" in info and bool(info["termination_reason"]) != step.terminated:
        return f"termination_reason {info['termination_reason']!r} but terminated={step.terminated}"
    if "truncation_reason" in info and bool(info["truncation_reason"]) != step.truncated:
        return f"truncation_reason {info['truncation_reason']!r} but truncated={step.truncated}"
    if "mask_from_loss" in info:
        expected = step.truncated and (mask_truncated if mask_truncated is not None else bool(info["mask_from_loss"]))
        if bool(info["mask_from_loss"]) != expected:
            return f"mask_from_loss={info['mask_from_loss']} on a {'truncated' if step.truncated else 'terminated'} episode"
    return None


def _same_seed(env: Any, planned: Planned) -> CheckResult:
    """Two resets with the same seed and options give the same observation and info, in this process."""
    task_id = planned.label
    first, second = (env.reset(seed=7, options=dict(planned.options)) for _ in range(2))
    if canonical_step(_as_step(*first)) != canonical_step(_as_step(*second)):
        return CheckResult("same seed", "fail", "two resets with seed 7 differ",
                           [Failure(task_id, 0, "the reset's observation or info differs under the same seed")])
    return CheckResult("same seed", "pass", "two resets with the same seed agree")


def _two_processes(target: EnvTarget, task_ids: list[str], max_steps: int) -> CheckResult:
    """Identical step hashes in two processes with other PYTHONHASHSEED and TZ."""
    runs = [hashes_in_subprocess(target, task_ids, max_steps, settings) for settings in PROCESS_SETTINGS]
    broken = next((run for run in runs if isinstance(run, str)), None)
    if broken is not None:
        return CheckResult("two processes", "fail", "a process could not play", [Failure(None, None, broken)])
    failures = []
    for task_id in task_ids:
        first, second = runs[0].get(task_id, []), runs[1].get(task_id, [])
        step = next((index for index, (a, b) in enumerate(zip(first, second)) if a != b),
                    None if len(first) == len(second) else min(len(first), len(second)))
        if step is not None:
            failures.append(Failure(task_id, step, "the episode differs between two processes "
                                                   f"({' vs '.join(' '.join(f'{k}={v}' for k, v in s.items()) for s in PROCESS_SETTINGS)})"))
    status = "fail" if failures else "pass"
    return CheckResult("two processes", status, f"{len(task_ids) - len(failures)} of {len(task_ids)} episodes hash "
                                                "the same under other PYTHONHASHSEED and TZ", failures)


def _cost(played: dict[str, list[PlayedSteps]]) -> CheckResult:
    times = sorted(step.seconds for episodes in played.values() for episode in episodes for step in episode.steps[1:])
    if not times:
        return CheckResult("step cost", "skip", "no step was played")
    mean = sum(times) / len(times)
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
    return CheckResult("step cost", "pass", f"{len(times)} steps: mean {mean * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms",
                       figures={"steps": len(times), "mean_ms": mean * 1000, "p95_ms": p95 * 1000})


def _as_step(observation: str, info: dict) -> Any:
    from stillweb.envs.check.policies import StepRecord

    return StepRecord(0, None, observation, 0.0, False, False, dict(info))


def _contains(text: str, gold: str) -> bool:
    """``gold`` in ``text`` as whole words, ignoring case and spacing."""
    words: Callable[[str], str] = lambda value: " ".join(re.findall(r"\w+", value.casefold()))
    needle = words(gold)
    return bool(needle) and f" {needle} " in f" {words(text)} "
