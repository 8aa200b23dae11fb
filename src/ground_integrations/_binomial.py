"""Exact binomial arithmetic: the bound a calibrated cut promises (no scipy in the core install).

With ``n`` notGrounded examples, a cut just above the ``k``-th highest score lets more than a
share ``a`` of future notGrounded answers pass with probability at most
``P(Binomial(n, a) <= k - 1)``; :func:`max_rank` is the largest ``k`` that keeps this at or
below ``1 - confidence``, and :func:`needed_not_grounded` the fewest examples for which ``k = 1``
qualifies. :mod:`ground_integrations.thresholds` re-derives the bound when it reads a file;
:mod:`ground_integrations.calibration` uses it to fit one.
"""

from __future__ import annotations

import functools
import math

from .errors import ConfigurationError

__all__ = ["binomial_cdf", "check_levels", "log_pmf", "max_rank", "needed_not_grounded"]


def log_pmf(i: int, n: int, p: float) -> float:
    if p <= 0.0:
        return 0.0 if i == 0 else -math.inf
    if p >= 1.0:
        return 0.0 if i == n else -math.inf
    return (
        math.lgamma(n + 1)
        - math.lgamma(i + 1)
        - math.lgamma(n - i + 1)
        + i * math.log(p)
        + (n - i) * math.log1p(-p)
    )


def binomial_cdf(k: int, n: int, p: float) -> float:
    """``P(Binomial(n, p) <= k)``, exact up to floating point."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    logs = [log_pmf(i, n, p) for i in range(k + 1)]
    top = max(logs)
    if top == -math.inf:
        return 0.0
    return min(1.0, math.exp(top) * sum(math.exp(x - top) for x in logs))


def needed_not_grounded(max_pass_rate: float, confidence: float) -> int:
    """The fewest notGrounded examples for which some cut meets the bound: the smallest ``n``
    with ``(1 - max_pass_rate) ** n <= 1 - confidence``."""
    check_levels(max_pass_rate, confidence)
    return math.ceil(math.log(1.0 - confidence) / math.log1p(-max_pass_rate) - 1e-12)


@functools.lru_cache(maxsize=256)
def max_rank(n: int, max_pass_rate: float, confidence: float) -> int:
    """The largest ``k`` with ``P(Binomial(n, max_pass_rate) <= k - 1) <= 1 - confidence``
    (0 when even ``k = 1`` fails): how many of the highest notGrounded scores the cut may sit
    at or below."""
    check_levels(max_pass_rate, confidence)
    delta = 1.0 - confidence
    cdf = 0.0
    rank = 0
    for k in range(1, n + 1):
        cdf += math.exp(log_pmf(k - 1, n, max_pass_rate))
        if cdf > delta * (1 + 1e-12):
            break
        rank = k
    return rank


def check_levels(max_pass_rate: float, confidence: float) -> None:
    if not 0.0 < max_pass_rate < 1.0:
        raise ConfigurationError(
            f"max_pass_rate must be strictly between 0 and 1 (e.g. 0.05), got {max_pass_rate}"
        )
    if not 0.0 < confidence < 1.0:
        raise ConfigurationError(
            f"confidence must be strictly between 0 and 1 (e.g. 0.9), got {confidence}"
        )
