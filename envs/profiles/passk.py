"""pass@k and pass^k: a policy's best-of-k success and its reliability over k tries.

pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code") is the chance that at
least one of k tries succeeds; pass^k (tau-bench, Yao et al. 2024, "tau-bench: A Benchmark for
Tool-Agent-User Interaction") the chance that all k do. Both are the unbiased estimators from ``n``
tries with ``c`` successes; over a task set they are means over its tasks. A policy whose pass@k
climbs while its pass^k falls is lucky, not reliable.

>>> pass_at_k(4, 2, 2), pass_hat_k(4, 2, 2)
(0.8333333333333334, 0.16666666666666666)
>>> mean_pass_rates([(4, 4), (4, 0)], 2)
{'k': 2, 'tasks': 2, 'pass_at_k': 0.5, 'pass_hat_k': 0.5}
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

__all__ = ["pass_at_k", "pass_hat_k", "mean_pass_rates"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``n`` episodes with ``c`` passes: ``1 - C(n-c, k) / C(n, k)`` (k capped at n).

    >>> pass_at_k(8, 0, 8), pass_at_k(8, 1, 8), pass_at_k(4, 2, 1)
    (0.0, 1.0, 0.5)
    """
    k = min(k, n)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k from ``n`` episodes with ``c`` passes: ``C(c, k) / C(n, k)`` (k capped at n).

    >>> pass_hat_k(8, 8, 8), pass_hat_k(8, 7, 8), pass_hat_k(4, 2, 1)
    (1.0, 0.0, 0.5)
    """
    k = min(k, n)
    return math.comb(c, k) / math.comb(n, k)


def mean_pass_rates(tasks: Iterable[tuple[int, int]], k: int | None = None) -> dict[str, Any]:
    """Mean pass@k and pass^k over tasks given as ``(episodes, passes)``; ``k`` defaults to the fewest
    episodes any task has (every task then has k tries). Tasks without episodes are left out."""
    counted = [(n, c) for n, c in tasks if n > 0]
    if not counted:
        return {"k": k, "tasks": 0, "pass_at_k": None, "pass_hat_k": None}
    k = min(n for n, _ in counted) if k is None else k
    return {"k": k, "tasks": len(counted),
            "pass_at_k": sum(pass_at_k(n, c, k) for n, c in counted) / len(counted),
            "pass_hat_k": sum(pass_hat_k(n, c, k) for n, c in counted) / len(counted)}
