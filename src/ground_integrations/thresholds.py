"""Cut points: where a score becomes a verdict, and the files that hold calibrated ones.

Two kinds, one home. :class:`Thresholds` is a pair of cut points (``score >= grounded`` is
grounded, ``score < not_grounded`` notGrounded, notSure between); every judge declares the ones
its scores were calibrated for. :class:`CalibratedThresholds` is a thresholds file written by
``ground calibrate`` (:func:`ground_integrations.calibration.calibrate` fits it): one cut per
task and domain plus a pooled one, each with the bound it promises, re-checked on
:meth:`~CalibratedThresholds.load` and written by :meth:`~CalibratedThresholds.save`.
:func:`cut_for` picks the pair that applies to a request. The checker alone applies them
(:mod:`ground_integrations.verdicts`); this module sits below the judges and the checker and
imports neither.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ._binomial import log_pmf, max_rank, needed_not_grounded
from .errors import ConfigurationError
from .models import Domain, JudgeInfo, Task, Verdict, configuration_error

__all__ = [
    "FORMAT",
    "CalibratedThresholds",
    "GroupCut",
    "Thresholds",
    "ThresholdsLike",
    "cut_for",
]

#: Version of the thresholds file format.
FORMAT = "ground-thresholds/1"


class Thresholds(BaseModel):
    """Score-to-verdict cut points.

    ``score >= grounded`` is grounded, ``score < not_grounded`` is notGrounded, and anything in
    between is notSure. Equal cut points mean no notSure band.
    """

    model_config = ConfigDict(frozen=True)

    grounded: float = Field(0.5, ge=0.0, le=1.0, strict=True)
    not_grounded: float = Field(0.5, ge=0.0, le=1.0, strict=True)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise configuration_error("Thresholds", exc) from None

    @model_validator(mode="after")
    def _ordered(self) -> Thresholds:
        if self.not_grounded > self.grounded:
            raise ConfigurationError(
                f"Thresholds: not_grounded ({self.not_grounded}) must not exceed grounded "
                f"({self.grounded}); the notSure band lies between them."
            )
        return self

    @classmethod
    def around(cls, cut: float, band: float = 0.0) -> Thresholds:
        """A cut point with a notSure band of total width ``band`` centred on it."""
        half = band / 2
        return cls(grounded=min(1.0, cut + half), not_grounded=max(0.0, cut - half))

    @staticmethod
    def load(path: str | Path) -> CalibratedThresholds:
        """The cuts of a thresholds file written by ``ground calibrate`` (one per task and
        domain), ready for ``GroundednessChecker(thresholds=...)``; see
        :meth:`CalibratedThresholds.load`."""
        return CalibratedThresholds.load(path)

    def verdict(self, score: float) -> Verdict:
        if score >= self.grounded:
            return Verdict.GROUNDED
        if score < self.not_grounded:
            return Verdict.NOT_GROUNDED
        return Verdict.NOT_SURE

    def confidence(self, score: float) -> float:
        """How far the score is from the undecided zone, scaled to [0, 1]."""
        if score >= self.grounded:
            span = 1.0 - self.grounded
            return 1.0 if span <= 0 else min(1.0, 0.5 + 0.5 * (score - self.grounded) / span)
        if score < self.not_grounded:
            span = self.not_grounded
            return 1.0 if span <= 0 else min(1.0, 0.5 + 0.5 * (self.not_grounded - score) / span)
        return (
            0.0
            if self.grounded == self.not_grounded
            else 0.5
            * (
                1
                - abs(score - (self.grounded + self.not_grounded) / 2)
                / ((self.grounded - self.not_grounded) / 2)
            )
        )


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
        cdf += math.exp(log_pmf(k - 1, group.n_not_grounded, max_pass_rate))
    if cdf > (1.0 - confidence) * (1 + 1e-9):
        raise ValueError(
            f"group {group.name}: rank {group.rank} of {group.n_not_grounded} notGrounded "
            f"examples does not bound the pass rate at {max_pass_rate:g} with "
            f"{confidence:g} confidence (at most rank "
            f"{max_rank(group.n_not_grounded, max_pass_rate, confidence)})"
        )


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
    """Cuts calibrated by :func:`~ground_integrations.calibration.calibrate`: one per task/domain
    group and a pooled default.

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


#: What ``GroundednessChecker(thresholds=...)`` accepts.
ThresholdsLike = Union[Thresholds, CalibratedThresholds]


def cut_for(
    thresholds: ThresholdsLike, task: Task | str | None, domain: Domain | str | None
) -> Thresholds:
    """The cut points that apply to a request of ``task`` and ``domain``: ``thresholds``
    itself, or the calibrated group's cut (:meth:`CalibratedThresholds.for_request`)."""
    if isinstance(thresholds, CalibratedThresholds):
        return thresholds.for_request(task, domain)
    return thresholds
