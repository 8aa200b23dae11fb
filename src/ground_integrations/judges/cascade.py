"""CascadeJudge: a fast judge first, a slower one only where the fast one is unsure.

Azure's fast (non-reasoning) and reasoning modes as one object: e.g. the embedded heuristic for
every check, escalating to an LLM judge for ``notSure`` answers (and, optionally, for
``notGrounded`` ones, to get the stronger judge's reasons).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import ConfigurationError, JudgeError
from ..models import GroundednessRequest, Verdict
from .base import Judge, Judgement

__all__ = ["CascadeJudge"]


def _verdict(judge: Judge, judgement: Judgement) -> Verdict:
    if judgement.abstained:
        return Verdict.NOT_SURE
    if judgement.verdict is not None:
        return judgement.verdict
    assert judgement.score is not None
    return judge.default_thresholds.verdict(judgement.score)


class CascadeJudge(Judge):
    """Asks each judge in turn until one gives a verdict not in ``escalate_on``.

    Each judge's verdict is read with its own calibrated thresholds; the result's
    ``judge.decided_by`` names the judge that decided. With ``escalate_on_error=True`` a failing
    judge passes the question on instead of failing the check (the last judge's error stands).
    """

    name = "cascade"
    version = "1"

    def __init__(
        self,
        judges: Sequence[Judge],
        *,
        escalate_on: Iterable[Verdict | str] = (Verdict.NOT_SURE,),
        escalate_on_error: bool = False,
    ) -> None:
        if len(judges) < 2 or not all(isinstance(j, Judge) for j in judges):
            raise ConfigurationError(
                "CascadeJudge needs at least two Judge instances, fastest first"
            )
        self.judges = list(judges)
        self.escalate_on = frozenset(Verdict(v) for v in escalate_on)
        self.escalate_on_error = escalate_on_error
        limits = [j.max_context_chars for j in judges if j.max_context_chars is not None]
        self.max_context_chars = min(limits) if limits else None

    def __repr__(self) -> str:
        escalate = sorted(v.value for v in self.escalate_on)
        return f"CascadeJudge({self.judges!r}, escalate_on={escalate})"

    def cache_key(self) -> str:
        inner = ",".join(j.cache_key() for j in self.judges)
        return f"{self.name}:{inner}:{sorted(self.escalate_on)}:{self.escalate_on_error}"

    def config(self) -> dict[str, object]:
        return {
            "escalate_on": sorted(v.value for v in self.escalate_on),
            "escalate_on_error": self.escalate_on_error,
        }

    def _decided(self, judge: Judge, judgement: Judgement) -> Judgement:
        return judgement.model_copy(
            update={
                "verdict": _verdict(judge, judgement),
                "decided_by": f"{judge.name} {judge.version}",
            }
        )

    def _escalate(self, index: int, judge: Judge, judgement: Judgement) -> bool:
        return index < len(self.judges) - 1 and _verdict(judge, judgement) in self.escalate_on

    def _usable(self, judge: Judge, judgement: Judgement) -> bool:
        """False for a reply that carries nothing: notSure with only raw text (unparsed)."""
        return not (
            _verdict(judge, judgement) is Verdict.NOT_SURE
            and judgement.raw is not None
            and not judgement.sentences
            and not judgement.ungrounded_details
        )

    def _step(
        self,
        i: int,
        judge: Judge,
        out: Judgement,
        earlier: tuple[Judge, Judgement] | None,
    ) -> Judgement | None:
        """The cascade's answer after judge ``i`` answered ``out``, or None to escalate."""
        if earlier is not None and not self._usable(judge, out):
            first, kept = earlier
            decided = self._decided(first, kept)
            note = f"{decided.decided_by}; escalation to {judge.name} gave no usable verdict"
            return decided.model_copy(update={"decided_by": note})
        if not self._escalate(i, judge, out):
            return self._decided(judge, out)
        return None

    def judge(self, request: GroundednessRequest) -> Judgement:
        earlier: tuple[Judge, Judgement] | None = None
        for i, judge in enumerate(self.judges):
            try:
                out = judge.run(request)
            except JudgeError:
                if self.escalate_on_error and i < len(self.judges) - 1:
                    continue
                raise
            decided = self._step(i, judge, out, earlier)
            if decided is not None:
                return decided
            earlier = (judge, out)  # the latest usable result
        raise AssertionError("unreachable: the last judge always decides")  # pragma: no cover

    async def ajudge(self, request: GroundednessRequest) -> Judgement:
        earlier: tuple[Judge, Judgement] | None = None
        for i, judge in enumerate(self.judges):
            try:
                out = await judge.arun(request)
            except JudgeError:
                if self.escalate_on_error and i < len(self.judges) - 1:
                    continue
                raise
            decided = self._step(i, judge, out, earlier)
            if decided is not None:
                return decided
            earlier = (judge, out)  # the latest usable result
        raise AssertionError("unreachable: the last judge always decides")  # pragma: no cover

    def close(self) -> None:
        for judge in self.judges:
            judge.close()

    async def aclose(self) -> None:
        for judge in self.judges:
            await judge.aclose()
