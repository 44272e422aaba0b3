"""``stillweb check``: does this environment work at all? (OpenEnv's RFC 008 asks the same.)

:func:`check_environment` runs, on a registered environment or any user ``TextEnv`` (an
:class:`~stillweb.envs.check.target.EnvTarget`):

- gymnasium's ``check_env``;
- the reference agent (where the environment has one) earns the maximum on at least 95% of tasks;
- the floors (do nothing, a text-only answer, random valid tool calls) earn at most 5% of the maximum;
- no gold answer appears in an observation before the first tool call;
- two resets with one seed agree, and two processes with other ``PYTHONHASHSEED`` and ``TZ`` give
  identical step hashes;
- ``terminated``/``truncated``, their reasons and ``mask_from_loss`` agree with each ending;
- the cost of a step.

The :class:`~stillweb.envs.check.report.CheckReport` is Markdown and JSON; each failure names its task
and step.

>>> from stillweb.envs.check import EnvTarget, check_environment  # doctest: +SKIP
>>> check_environment(EnvTarget("stillweb/WikiQA-v0", kwargs={"snapshot": "snap/"})).ok  # doctest: +SKIP
True
"""

from __future__ import annotations

from stillweb.envs.check.report import CheckReport, CheckResult, Failure
from stillweb.envs.check.run import FLOOR_SHARE, REFERENCE_SHARE, check_environment
from stillweb.envs.check.target import EnvTarget

__all__ = ["CheckReport", "CheckResult", "EnvTarget", "FLOOR_SHARE", "Failure", "REFERENCE_SHARE", "check_environment"]
