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

The result, a :class:`CalibratedThresholds`, is a JSON file (:meth:`CalibratedThresholds.save`,
:meth:`CalibratedThresholds.load`) that ``GroundednessChecker(thresholds=...)``,
``ground check --thresholds`` and ``ground eval --thresholds`` use. The cut is one per task and
domain where the data has more than one, and one pooled cut for everything else.

The guarantee is about answers like the calibration examples (same judge, same kind of data):
recalibrate when either changes.
"""

from __future__ import annotations

import functools
import json
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from .errors import ConfigurationError, InvalidInputError
from .judges.base import Thresholds
from .models import Domain, JudgeInfo, Task

__all__ = [
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

#: Version of the thresholds file format.
FORMAT = "ground-thresholds/1"


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


# -- exact binomial arithmetic (no scipy in the core install) -----------------------------------


def _log_pmf(i: int, n: int, p: float) -> float:
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
    logs = [_log_pmf(i, n, p) for i in range(k + 1)]
    top = max(logs)
    if top == -math.inf:
        return 0.0
    return min(1.0, math.exp(top) * sum(math.exp(x - top) for x in logs))


def needed_not_grounded(max_pass_rate: float, confidence: float) -> int:
    """The fewest notGrounded examples for which some cut meets the bound: the smallest ``n``
    with ``(1 - max_pass_rate) ** n <= 1 - confidence``."""
    _check_levels(max_pass_rate, confidence)
    return math.ceil(math.log(1.0 - confidence) / math.log1p(-max_pass_rate) - 1e-12)


@functools.lru_cache(maxsize=256)
def max_rank(n: int, max_pass_rate: float, confidence: float) -> int:
    """The largest ``k`` with ``P(Binomial(n, max_pass_rate) <= k - 1) <= 1 - confidence``
    (0 when even ``k = 1`` fails): how many of the highest notGrounded scores the cut may sit
    at or below."""
    _check_levels(max_pass_rate, confidence)
    delta = 1.0 - confidence
    cdf = 0.0
    rank = 0
    for k in range(1, n + 1):
        cdf += math.exp(_log_pmf(k - 1, n, max_pass_rate))
        if cdf > delta * (1 + 1e-12):
            break
        rank = k
    return rank


#: Above this rank the file's bound is not re-derived on load (it costs one term per rank; a
#: real calibration never gets near it).
_RECHECKED_RANK = 1_000_000


def _check_rank(group: GroupCut, max_pass_rate: float, confidence: float) -> None:
    """A group's cut must keep the promise its file states: at least the examples the bound
    needs, and a rank no higher than :func:`max_rank` allows (summed as it sums)."""
    needed = needed_not_grounded(max_pass_rate, confidence)
    if group.n_not_grounded < needed:
        raise ValueError(
            f"group {group.name}: {group.n_not_grounded} notGrounded examples cannot bound the "
            f"pass rate at {max_pass_rate:g} with {confidence:g} confidence (need {needed})"
        )
    if group.rank > _RECHECKED_RANK:
        return
    cdf = 0.0
    for k in range(1, group.rank + 1):
        cdf += math.exp(_log_pmf(k - 1, group.n_not_grounded, max_pass_rate))
    if cdf > (1.0 - confidence) * (1 + 1e-9):
        raise ValueError(
            f"group {group.name}: rank {group.rank} of {group.n_not_grounded} notGrounded "
            f"examples does not bound the pass rate at {max_pass_rate:g} with "
            f"{confidence:g} confidence (at most rank "
            f"{max_rank(group.n_not_grounded, max_pass_rate, confidence)})"
        )


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


def _check_levels(max_pass_rate: float, confidence: float) -> None:
    if not 0.0 < max_pass_rate < 1.0:
        raise ConfigurationError(
            f"max_pass_rate must be strictly between 0 and 1 (e.g. 0.05), got {max_pass_rate}"
        )
    if not 0.0 < confidence < 1.0:
        raise ConfigurationError(
            f"confidence must be strictly between 0 and 1 (e.g. 0.9), got {confidence}"
        )


# -- the file --------------------------------------------------------------------------------


class GroupCut(BaseModel):
    """The calibrated cut of one group (a task, a task and domain, or everything pooled)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task: str | None = None
    domain: str | None = None
    cut: float = Field(ge=0.0, le=1.0, description="Flag (notGrounded) when score < cut.")
    n_not_grounded: int = Field(ge=0)
    n_grounded: int = Field(ge=0)
    rank: int = Field(
        ge=1, description="The cut lies just above the rank-th highest notGrounded score."
    )
    passed_not_grounded: int = Field(
        ge=0, description="Calibration notGrounded examples the cut lets pass."
    )
    blocked_grounded: int = Field(ge=0, description="Calibration grounded examples it blocks.")
    blocked_rate: float | None = Field(
        None, description="Share of grounded examples blocked (None without grounded examples)."
    )
    blocked_interval: tuple[float, float] | None = None

    @field_validator("task", "domain", mode="before")
    @classmethod
    def _known(cls, value: Any, info: Any) -> Any:
        """A task or domain the checker knows, spelled as it spells it (case is forgiven): a
        group named ``"QnAx"`` would never match a request and silently never apply."""
        if value is None or not isinstance(value, str):
            return value
        kind = Task if info.field_name == "task" else Domain
        for member in kind:
            if member.value.casefold() == value.strip().casefold():
                return member.value
        raise ValueError(
            f"unknown {info.field_name} {value!r} (expected "
            + " or ".join(m.value for m in kind)
            + ")"
        )

    @model_validator(mode="after")
    def _consistent(self) -> GroupCut:
        """The counts of a group must be ones a calibration can produce."""
        if not self.cut > 0.0:
            raise ValueError(
                "cut must be above 0: a cut of 0 lets every answer pass, contradicted ones "
                "included (a calibrated cut lies just above a notGrounded score)"
            )
        if self.rank > self.n_not_grounded:
            raise ValueError(f"rank ({self.rank}) exceeds n_not_grounded ({self.n_not_grounded})")
        if self.passed_not_grounded >= self.rank:
            raise ValueError(
                f"passed_not_grounded ({self.passed_not_grounded}) must be below rank "
                f"({self.rank}): the cut flags the rank-th highest notGrounded score"
            )
        if self.blocked_grounded > self.n_grounded:
            raise ValueError(
                f"blocked_grounded ({self.blocked_grounded}) exceeds n_grounded ({self.n_grounded})"
            )
        if self.n_grounded == 0:
            if self.blocked_rate is not None or self.blocked_interval is not None:
                raise ValueError(
                    "blocked_rate and blocked_interval need grounded examples (n_grounded is 0)"
                )
            return self
        rate = self.blocked_grounded / self.n_grounded
        if self.blocked_rate is not None and not math.isclose(
            self.blocked_rate, rate, rel_tol=1e-9, abs_tol=1e-12
        ):
            raise ValueError(
                f"blocked_rate ({self.blocked_rate}) is not blocked_grounded / n_grounded "
                f"({self.blocked_grounded}/{self.n_grounded})"
            )
        if self.blocked_interval is not None:
            low, high = self.blocked_interval
            if not (0.0 <= low <= high <= 1.0) or not (low - 1e-9 <= rate <= high + 1e-9):
                raise ValueError(
                    f"blocked_interval {list(self.blocked_interval)} must be [low, high] with "
                    f"0 <= low <= {rate:.6g} (the blocked share) <= high <= 1"
                )
        return self

    @property
    def name(self) -> str:
        parts = [p for p in (self.task, self.domain) if p]
        return "/".join(parts) if parts else "all"

    @property
    def thresholds(self) -> Thresholds:
        """The cut as the checker's :class:`Thresholds` (no notSure band)."""
        return Thresholds(grounded=self.cut, not_grounded=self.cut)


class CalibratedThresholds(BaseModel):
    """Cuts calibrated by :func:`calibrate`: one per task/domain group and a pooled default.

    Load one with :meth:`load` and pass it to ``GroundednessChecker(thresholds=...)``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: str = FORMAT
    judge: JudgeInfo | None = Field(
        None, description="The judge whose scores were calibrated; the checker insists on it."
    )
    max_pass_rate: float = Field(gt=0.0, lt=1.0)
    confidence: float = Field(gt=0.0, lt=1.0)
    default: GroupCut
    groups: list[GroupCut] = Field(default_factory=list)

    @model_validator(mode="after")
    def _coherent(self) -> CalibratedThresholds:
        """One cut per group, every cut backed by enough examples for the stated bound, and
        groups that partition the pooled examples."""
        if self.default.task is not None or self.default.domain is not None:
            raise ValueError("default is the pooled cut: it names no task or domain")
        seen: set[tuple[str | None, str | None]] = set()
        for g in self.groups:
            key = (g.task, g.domain)
            if key == (None, None):
                raise ValueError("a group names no task or domain: that is the default's role")
            if key in seen:
                raise ValueError(f"two groups for {g.name}: each task/domain has one cut")
            seen.add(key)
        for g in [self.default, *self.groups]:
            _check_rank(g, self.max_pass_rate, self.confidence)
        if self.groups:
            for count in ("n_not_grounded", "n_grounded"):
                parts = sum(getattr(g, count) for g in self.groups)
                if parts != getattr(self.default, count):
                    raise ValueError(
                        f"the groups' {count} add up to {parts}, but the pooled default has "
                        f"{getattr(self.default, count)}; the groups split the pooled examples"
                    )
        return self

    def group_for(self, task: Task | str | None, domain: Domain | str | None) -> GroupCut:
        """The group whose cut applies to a request: its task and domain's, else its task's,
        else its domain's, else the pooled default."""
        t = task.value if isinstance(task, Task) else task
        d = domain.value if isinstance(domain, Domain) else domain
        for want_task, want_domain in ((t, d), (t, None), (None, d)):
            for g in self.groups:
                if (g.task, g.domain) == (want_task, want_domain):
                    return g
        return self.default

    def for_request(self, task: Task | str | None, domain: Domain | str | None) -> Thresholds:
        """The cut for a request: its task and domain's, else its task's, else the pooled one."""
        return self.group_for(task, domain).thresholds

    def check_judge(self, info: JudgeInfo) -> None:
        """Raise :class:`ConfigurationError` unless the cuts were calibrated for this judge."""
        if self.judge is None:
            return
        if (self.judge.name, self.judge.version) != (info.name, info.version):
            raise ConfigurationError(
                f"these thresholds were calibrated for judge {self.judge.name} "
                f"{self.judge.version}, but the checker uses {info.name} {info.version}; "
                "a cut means nothing for another judge's scores. Recalibrate with "
                f"`ground calibrate DATA.jsonl --judge {info.name} ...`."
            )

    @classmethod
    def load(cls, path: str | Path) -> CalibratedThresholds:
        """Read a thresholds file written by :meth:`save` (or ``ground calibrate``)."""
        try:
            # utf-8-sig: a file saved by an editor that writes a byte-order mark reads the same
            text = Path(path).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise ConfigurationError(
                f"cannot read thresholds file {path}: {why}; "
                "write one with `ground calibrate DATA.jsonl -o thresholds.json`"
            ) from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"{path} is not valid JSON ({exc.msg})") from exc
        except RecursionError:
            raise ConfigurationError(
                f"{path} is not a thresholds file: its JSON is nested too deeply"
            ) from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ConfigurationError(
                f'{path} is not a thresholds file (expected "format": "{FORMAT}"); '
                "write one with `ground calibrate`"
            )
        try:
            table = cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "file"
            msg = first["msg"].removeprefix("Value error, ")
            raise ConfigurationError(f"{path}: {where}: {msg}") from None
        if table.judge is None:
            raise ConfigurationError(
                f"{path}: judge: missing; a cut only means something for the judge whose "
                "scores it was calibrated on. Recalibrate with `ground calibrate DATA.jsonl "
                "--judge NAME -o thresholds.json`"
            )
        return table

    def save(self, path: str | Path) -> None:
        """Write the thresholds as JSON.

        Raises :class:`ConfigurationError` when ``judge`` is None: a file must name the judge
        its cuts were calibrated for (``calibrate(..., judge=checker.judge.info)``), since
        :meth:`load` refuses one that does not.
        """
        if self.judge is None:
            raise ConfigurationError(
                "these thresholds name no judge, so no checker could load them safely; "
                "calibrate with judge=checker.judge.info (ground calibrate does)"
            )
        Path(path).write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")

    def summary(self) -> str:
        """A table of the cuts and their price, one line per group."""
        head = (
            f"{'group':24s} {'cut':>7s} {'nG':>5s} {'passed':>6s} {'G':>5s} "
            f"{'blocked':>7s}  interval ({self.confidence:.0%})"
        )
        lines = [
            f"at most {self.max_pass_rate:.1%} of notGrounded answers pass, "
            f"with {self.confidence:.0%} confidence",
            head,
        ]
        for g in [*self.groups, self.default]:
            rate = "-" if g.blocked_rate is None else f"{g.blocked_rate:.3f}"
            interval = (
                "-"
                if g.blocked_interval is None
                else f"[{g.blocked_interval[0]:.3f}, {g.blocked_interval[1]:.3f}]"
            )
            lines.append(
                f"{g.name:24s} {g.cut:7.4f} {g.n_not_grounded:5d} {g.passed_not_grounded:6d} "
                f"{g.n_grounded:5d} {rate:>7s}  {interval}"
            )
        return "\n".join(lines)


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
