"""The report of ``stillweb check``: one result per check, each failure naming its task and step;
Markdown for people, JSON for machines."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["CheckReport", "CheckResult", "Failure"]

SHOWN_FAILURES = 10  # failures listed per check in the Markdown (the JSON has all)


@dataclass(frozen=True)
class Failure:
    """What went wrong where: the task, the step (0: the reset) and the message."""

    task_id: str | None
    step: int | None
    message: str

    def describe(self) -> str:
        """``task T, step S: message``."""
        where = ", ".join(part for part in (f"task {self.task_id}" if self.task_id is not None else "",
                                             f"step {self.step}" if self.step is not None else "") if part)
        return f"{where}: {self.message}" if where else self.message


@dataclass
class CheckResult:
    """One check: ``status`` ``pass``, ``fail`` or ``skip`` (with the reason in ``summary``)."""

    name: str
    status: str
    summary: str
    failures: list[Failure] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)


@dataclass
class CheckReport:
    """Every check of one environment."""

    target: str
    tasks: int
    results: list[CheckResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No check failed."""
        return all(result.status != "fail" for result in self.results)

    def as_dict(self) -> dict[str, Any]:
        """The JSON report."""
        return {"target": self.target, "tasks": self.tasks, "ok": self.ok,
                "checks": [{**asdict(result), "failures": [asdict(failure) for failure in result.failures]}
                           for result in self.results]}

    def to_json(self) -> str:
        """The JSON report as text."""
        return json.dumps(self.as_dict(), indent=2, sort_keys=True, default=str)

    def markdown(self) -> str:
        """The Markdown report: a table of the checks, then each failing check's failures."""
        verdict = "PASS" if self.ok else "FAIL"
        lines = [f"# stillweb check: {self.target}", "", f"**{verdict}** on {self.tasks} tasks", "",
                 "| check | status | summary |", "|---|---|---|"]
        lines += [f"| {result.name} | {result.status} | {result.summary} |" for result in self.results]
        for result in self.results:
            if result.failures:
                lines += ["", f"## {result.name}: {len(result.failures)} failures", ""]
                lines += [f"- {failure.describe()}" for failure in result.failures[:SHOWN_FAILURES]]
                if len(result.failures) > SHOWN_FAILURES:
                    lines.append(f"- and {len(result.failures) - SHOWN_FAILURES} more (see the JSON report)")
        return "\n".join(lines) + "\n"
