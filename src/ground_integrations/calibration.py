"""Risk-controlled thresholds: choose the judge's cut from your own labelled examples.

The question a team asks before turning a guard on is "how many ungrounded answers will get
through?". :func:`calibrate` answers it with a guarantee. Given ``n`` notGrounded examples
scored by the judge, it picks the lowest cut such that, with probability at least
``confidence`` over the draw of those examples, the share of *future* notGrounded answers that
pass (``score >= cut``, verdict grounded) is at most ``max_pass_rate``.

How: sort the notGrounded scores from the highest down, ``s(1) >= s(2) >= ... >= s(n)``, and
put the cut just above ``s(k)``. For exchangeable data, the probability mass of future
ungrounded scores above ``s(k)`` is at most a Beta(k, n - k + 1) variable (exactly, with no
ties), so the pass rate exceeds ``a = max_pass_rate`` with probability at most
``P(Binomial(n, a) <= k - 1)``. We take the largest ``k`` that keeps this at or below
``1 - confidence`` (the binomial tail bound used by conformal risk control and
learn-then-test). ``k`` must be at least 1, which needs ``(1 - a) ** n <= 1 - confidence``:
with fewer notGrounded examples than :func:`needed_not_grounded` no cut can promise the bound,
and :class:`NotEnoughExamplesError` says how many are missing.

The price is the share of grounded answers the cut blocks (``score < cut``), reported with an
exact (Clopper-Pearson) interval at the same confidence.

The result, a :class:`~ground_integrations.thresholds.CalibratedThresholds`, is a JSON file
(:meth:`~ground_integrations.thresholds.CalibratedThresholds.save`,
:meth:`~ground_integrations.thresholds.CalibratedThresholds.load`) that
``GroundednessChecker(thresholds=...)``, ``ground check --thresholds`` and
``ground eval --thresholds`` use. The cut is one per task and
domain where the data has more than one, and one pooled cut for everything else.

The guarantee is about answers like the calibration examples (same judge, same kind of data):
recalibrate when either changes.

This module is the offline procedure (fitting a cut, the Clopper-Pearson interval of its price);
the file it writes and the cut points the checker applies live in
:mod:`ground_integrations.thresholds`, the bound's arithmetic in ``_binomial``. Both are
importable from here too.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ._binomial import binomial_cdf, max_rank, needed_not_grounded
from ._binomial import check_levels as _check_levels
from .errors import InvalidInputError
from .models import JudgeInfo
from .thresholds import FORMAT, CalibratedThresholds, GroupCut

__all__ = [
    "FORMAT",
    "CalibratedThresholds",
    "GroupCut",
    "NotEnoughExamplesError",
    "binomial_cdf",
    "calibrate",
    "calibrate_cut",
    "clopper_pearson",
    "max_rank",
    "needed_not_grounded",
    "require_examples",
]


class NotEnoughExamplesError(InvalidInputError):
    """Too few notGrounded examples for the requested bound.

    ``group`` names the task/domain (``None`` for the pooled cut), ``have`` how many notGrounded
    examples it holds and ``needed`` how many the bound requires.
    """

    def __init__(self, message: str, *, group: str | None, have: int, needed: int) -> None:
        self.group = group
        self.have = have
        self.needed = needed
        super().__init__(message, field="label")


# -- the price of a cut: an exact interval ---------------------------------------------------


def _solve(f: Any, target: float, increasing: bool) -> float:
    """The ``p`` in [0, 1] where the monotone ``f(p)`` crosses ``target`` (bisection)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        above = f(mid) > target
        if above == increasing:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


def clopper_pearson(successes: int, n: int, confidence: float) -> tuple[float, float]:
    """Exact two-sided interval for a binomial proportion at ``confidence``."""
    if n <= 0:
        return (0.0, 1.0)
    tail = (1.0 - confidence) / 2
    lower = (
        0.0
        if successes == 0
        else _solve(lambda p: 1.0 - binomial_cdf(successes - 1, n, p), tail, increasing=True)
    )
    upper = (
        1.0
        if successes == n
        else _solve(lambda p: binomial_cdf(successes, n, p), tail, increasing=False)
    )
    return (lower, upper)


# -- calibration -----------------------------------------------------------------------------


def _above(score: float) -> float:
    """The smallest float above ``score``: the cut that lets ``score`` itself be flagged."""
    return math.nextafter(score, math.inf)


def calibrate_cut(
    not_grounded: Sequence[float],
    grounded: Sequence[float] = (),
    *,
    max_pass_rate: float = 0.05,
    confidence: float = 0.9,
    task: str | None = None,
    domain: str | None = None,
) -> GroupCut:
    """The lowest cut on ``score`` whose pass rate of notGrounded answers is at most
    ``max_pass_rate`` with probability ``confidence`` (see the module docstring).

    Raises :class:`NotEnoughExamplesError` when ``not_grounded`` is too short for the bound.
    """
    _check_levels(max_pass_rate, confidence)
    group = "/".join(p for p in (task, domain) if p) or None
    scores = sorted((float(s) for s in not_grounded), reverse=True)
    for s in [*scores, *grounded]:
        if not 0.0 <= s <= 1.0 or math.isnan(s):
            raise InvalidInputError(f"scores must lie in [0, 1], got {s}", field="score")
    n = len(scores)
    _require(n, group, max_pass_rate, confidence)
    rank = max_rank(n, max_pass_rate, confidence)
    anchor = scores[rank - 1]
    if anchor >= 1.0:
        raise InvalidInputError(
            f"the judge scores {rank} or more notGrounded examples"
            + (f" in group {group}" if group else "")
            + " at 1.0, so no cut below 1.0 meets the bound: this judge cannot separate them",
            field="score",
        )
    cut = _above(anchor)
    passed = sum(s >= cut for s in scores)
    blocked = sum(float(s) < cut for s in grounded)
    n_g = len(grounded)
    return GroupCut(
        task=task,
        domain=domain,
        cut=cut,
        n_not_grounded=n,
        n_grounded=n_g,
        rank=rank,
        passed_not_grounded=passed,
        blocked_grounded=blocked,
        blocked_rate=blocked / n_g if n_g else None,
        blocked_interval=clopper_pearson(blocked, n_g, confidence) if n_g else None,
    )


def _require(n: int, group: str | None, max_pass_rate: float, confidence: float) -> None:
    """Raise :class:`NotEnoughExamplesError` when ``n`` notGrounded examples are too few."""
    needed = needed_not_grounded(max_pass_rate, confidence)
    if n < needed:
        where = f" in group {group}" if group else ""
        raise NotEnoughExamplesError(
            f"too few notGrounded examples{where}: {n}, need at least {needed} to bound the "
            f"pass rate at {max_pass_rate:g} with {confidence:g} confidence "
            f"({needed - n} more labelled notGrounded answers"
            + (", or calibrate pooled with --pooled" if group else "")
            + ", or ask for a looser --max-pass-rate / lower --confidence)",
            group=group,
            have=n,
            needed=needed,
        )


def _label(row: Mapping[str, Any]) -> str:
    from .evaluation import canonical_label

    label = canonical_label(row.get("label"))
    if label is None:
        raise InvalidInputError(
            f"row {row.get('id')!r}: label must be 'grounded' or 'notGrounded', "
            f"got {row.get('label')!r}",
            field="label",
        )
    return label


def _groups(
    rows: Sequence[Mapping[str, Any]],
) -> list[tuple[str | None, str | None, list[Mapping[str, Any]]]]:
    """The per-group split :func:`calibrate` makes: by task where the rows hold more than one,
    by domain where they hold more than one; empty when that leaves a single group."""
    tasks = {r.get("task") or "Summarization" for r in rows}
    domains = {r.get("domain") or "Generic" for r in rows}
    by: dict[tuple[str | None, str | None], list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        key = (
            (r.get("task") or "Summarization") if len(tasks) > 1 else None,
            (r.get("domain") or "Generic") if len(domains) > 1 else None,
        )
        by[key].append(r)
    if len(by) < 2:
        return []
    return [(t, d, g) for (t, d), g in sorted(by.items(), key=lambda kv: str(kv[0]))]


def require_examples(
    rows: Sequence[Mapping[str, Any]],
    *,
    max_pass_rate: float = 0.05,
    confidence: float = 0.9,
    per_group: bool = True,
) -> None:
    """Raise :class:`NotEnoughExamplesError` now if labelled rows (scored or not yet) hold too
    few notGrounded examples for :func:`calibrate` with the same options: counting labels costs
    nothing, scoring every record first and then refusing costs a whole run."""
    _check_levels(max_pass_rate, confidence)
    labelled = [(r, _label(r)) for r in rows]
    _require(sum(label == "notGrounded" for _, label in labelled), None, max_pass_rate, confidence)
    if per_group:
        for task, domain, group in _groups(rows):
            name = "/".join(p for p in (task, domain) if p) or None
            count = sum(_label(r) == "notGrounded" for r in group)
            _require(count, name, max_pass_rate, confidence)


def calibrate(
    rows: Sequence[Mapping[str, Any]],
    *,
    max_pass_rate: float = 0.05,
    confidence: float = 0.9,
    judge: JudgeInfo | None = None,
    per_group: bool = True,
) -> CalibratedThresholds:
    """Calibrate cuts from scored, labelled rows (``score``, ``label`` and optionally ``task``
    and ``domain``: the outcome rows of ``ground eval`` have them).

    With ``per_group`` there is one cut per task (per task and domain where rows name more than
    one domain) when the rows hold more than one, plus the pooled default; each group must hold
    enough notGrounded rows (:class:`NotEnoughExamplesError` otherwise). Rows without a score
    (a failed check) are ignored.
    """
    _check_levels(max_pass_rate, confidence)
    scored = [{**r, "label": _label(r)} for r in rows if r.get("score") is not None]

    def cut_of(
        group: Sequence[Mapping[str, Any]], task: str | None, domain: str | None
    ) -> GroupCut:
        return calibrate_cut(
            [r["score"] for r in group if r["label"] == "notGrounded"],
            [r["score"] for r in group if r["label"] == "grounded"],
            max_pass_rate=max_pass_rate,
            confidence=confidence,
            task=task,
            domain=domain,
        )

    default = cut_of(scored, None, None)
    groups: list[GroupCut] = []
    if per_group:
        groups = [cut_of(g, t, d) for t, d, g in _groups(scored)]
    return CalibratedThresholds(
        judge=judge,
        max_pass_rate=max_pass_rate,
        confidence=confidence,
        default=default,
        groups=groups,
    )
