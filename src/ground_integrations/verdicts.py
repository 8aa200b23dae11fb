"""From a judge's scores to a result: the one place a verdict is decided.

The checker calls :func:`result_of` once per check, after merging the judgements of the context
chunks. It reads the answer's score under the cut that applies to the request
(:func:`~ground_integrations.thresholds.cut_for`), cuts every sentence the same way
(:func:`cut_sentence`), derives the ungrounded spans from the sentences it flags when the judge
gave none, and scales the confidence. A judge that labels (``Judgement.verdict``, a service
that returns only a label) keeps its label; a judge that abstains (``Judgement.abstained``: a
language it does not read, a reply it could not parse) gets notSure. Judges set no sentence
verdicts: each is cut here from the sentence's score.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .models import (
    GroundednessRequest,
    GroundednessResult,
    JudgeInfo,
    SentenceJudgement,
    UngroundedDetail,
    UngroundedKind,
    Verdict,
)
from .thresholds import CalibratedThresholds, Thresholds, ThresholdsLike, cut_for

if TYPE_CHECKING:  # pragma: no cover
    from .judges.base import Judgement

__all__ = ["cut_sentence", "result_of"]

#: The score of a labelling judge's verdict, for a judgement without a score.
LABEL_SCORES = {Verdict.GROUNDED: 1.0, Verdict.NOT_SURE: 0.5, Verdict.NOT_GROUNDED: 0.0}


def _distinct(a: float, b: float) -> tuple[str, str]:
    """``a`` and ``b`` printed with the fewest decimals (at least two) that tell them apart."""
    for digits in range(2, 18):
        x, y = f"{a:.{digits}f}", f"{b:.{digits}f}"
        if x != y:
            return x, y
    return repr(a), repr(b)


def result_of(
    request: GroundednessRequest,
    judgement: Judgement,
    *,
    thresholds: ThresholdsLike,
    judge: JudgeInfo,
    judge_thresholds: Thresholds,
    chunks: int,
    started: float,
) -> GroundednessResult:
    """The result of ``request`` from its (merged) ``judgement``, under ``thresholds`` (the
    checker's); ``judge_thresholds`` are the judge's own cut points, ``started`` the
    ``time.perf_counter()`` of the check's start."""
    cut = cut_for(thresholds, request.task, request.domain)
    sentences = [
        cut_sentence(s, cut, request, thresholds=thresholds, judge_thresholds=judge_thresholds)
        for s in judgement.sentences
    ]
    if judgement.score is not None:
        score = judgement.score
        verdict = cut.verdict(score)
    else:
        assert judgement.verdict is not None  # guaranteed by Judgement's validator
        verdict = judgement.verdict
        score = LABEL_SCORES[verdict]
    if judgement.verdict is not None and judgement.score is not None:
        verdict = judgement.verdict  # a judge that labels itself has the last word
    if judgement.abstained:
        verdict = Verdict.NOT_SURE  # the judge could not judge: its score decides nothing
    details = list(judgement.ungrounded_details)
    if not details:
        # each flagged sentence: the spans its judge narrowed it to, else the whole sentence
        for s in sentences:
            if s.verdict is Verdict.GROUNDED:
                continue
            details += s.ungrounded_details or [
                UngroundedDetail.from_span(
                    request.answer,
                    s.start,
                    s.end,
                    s.reason or None,
                    s.kind or UngroundedKind.UNSUPPORTED,
                )
            ]
    flagged = sum(d.length.code_point for d in details)
    confidence = judgement.confidence
    if confidence is None:
        confidence = cut.confidence(score) if judgement.score is not None else 1.0
    return GroundednessResult(
        verdict=verdict,
        score=score,
        confidence=round(confidence, 6),
        ungrounded_percentage=round(min(1.0, flagged / len(request.answer)), 6),
        ungrounded_details=details,
        sentences=sentences,
        answer=request.answer,
        task=request.task,
        domain=request.domain,
        reasoning=request.reasoning,
        judge=judge.model_copy(update={"decided_by": judgement.decided_by}),
        latency_ms=round((time.perf_counter() - started) * 1000, 3),
        chunks=chunks,
        correction=judgement.correction,
        raw=judgement.raw,
    )


def cut_sentence(
    s: SentenceJudgement,
    cut: Thresholds,
    request: GroundednessRequest,
    *,
    thresholds: ThresholdsLike,
    judge_thresholds: Thresholds,
) -> SentenceJudgement:
    """The sentence with its verdict under ``cut`` (the one
    :func:`~ground_integrations.thresholds.cut_for` picked from the checker's ``thresholds``).
    Where that cut, not the judge, flags a sentence the judge found grounded (its score passes
    ``judge_thresholds``, the judge's own cut points), its reason says so (the judge's
    "Supported by ..." would contradict the verdict)."""
    verdict = cut.verdict(s.score)
    # the judge's own reading, which its reason was worded for (a judge written when sentences
    # had to carry a verdict still sets it)
    own = s.verdict if s.verdict is not None else judge_thresholds.verdict(s.score)
    if verdict is Verdict.GROUNDED or own is not Verdict.GROUNDED:
        return s.model_copy(update={"verdict": verdict})
    if isinstance(thresholds, CalibratedThresholds):
        where = thresholds.group_for(request.task, request.domain).name
        name, group = "the calibrated cut", ("" if where == "all" else f" for {where}")
    elif cut == judge_thresholds:
        return s.model_copy(update={"verdict": verdict})
    else:
        name, group = "the checker's cut", ""
    bound = cut.not_grounded if verdict is Verdict.NOT_GROUNDED else cut.grounded
    score, line = _distinct(s.score, bound)
    band = "" if verdict is Verdict.NOT_GROUNDED else " (the notSure band)"
    return s.model_copy(
        update={
            "verdict": verdict,
            "reason": f"score {score} is below {name} {line}{group}{band}",
            "ungrounded_details": [],
        }
    )
