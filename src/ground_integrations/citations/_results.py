"""What a citation check found: per sentence a :class:`CitationStatus` and its reason, and the
:class:`CitationResult` with its verdict, feedback and exports (``to_azure``, ``to_dict``)."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import Field

from ..models import IndexDetails, JudgeInfo, Verdict
from ._grammar import CitationMarker, Model, strip_markers
from ._passages import PassageRef

__all__ = ["CitationResult", "CitationStatus", "CitationSupport", "CitedSentence"]


class CitationStatus(str, Enum):
    OK = "ok"
    MISCITED = "miscited"  # supported, but by another passage than the one it cites
    UNSUPPORTED = "unsupported"  # no passage supports it
    UNCITED_CLAIM = "uncited_claim"  # a claim without a citation, where citations are expected
    DANGLING = "dangling"  # cites a passage that does not exist

    def __str__(self) -> str:
        return self.value


class CitationSupport(Model):
    """A sentence judged against some passages: which, the verdict and the score."""

    passages: list[int] = Field(description="0-based indices of the passages judged against.")
    verdict: Verdict
    score: float = Field(ge=0.0, le=1.0)


class CitedSentence(Model):
    """One answer sentence, its citations and what they are worth."""

    index: int = Field(ge=0)
    text: str = Field(description="The sentence as written, markers included.")
    claim_text: str = Field(description="The sentence without its markers, as judged.")
    start: int = Field(ge=0, description="Code-point offset in the answer.")
    end: int = Field(ge=0)
    offset: IndexDetails
    length: IndexDetails
    markers: list[CitationMarker] = Field(default_factory=list)
    cited: list[PassageRef] = Field(default_factory=list, description="Cited passages that exist.")
    dangling: list[str] = Field(default_factory=list, description="Labels that match no passage.")
    claim: bool = True
    supported_by_cited: CitationSupport | None = None
    supported_elsewhere: list[PassageRef] = Field(
        default_factory=list, description="Passages it does not cite that support it on their own."
    )
    status: CitationStatus
    reason: str = ""


_PROBLEM_VERDICT = {
    CitationStatus.UNSUPPORTED: Verdict.NOT_GROUNDED,
    CitationStatus.MISCITED: Verdict.NOT_GROUNDED,
    CitationStatus.DANGLING: Verdict.NOT_GROUNDED,
    CitationStatus.UNCITED_CLAIM: Verdict.NOT_SURE,
}


class CitationResult(Model):
    """What a citation check found, per sentence. ``to_azure`` and ``to_dict`` export it."""

    answer: str
    sentences: list[CitedSentence]
    markers: list[CitationMarker]
    passages: list[PassageRef]
    uses_citations: bool = Field(description="Whether the answer cites anything at all.")
    by_id: bool = Field(False, description="Whether the answer cites passages by id.")
    judge: JudgeInfo
    checks: int = Field(ge=0, description="Core checks run (one per passage set judged).")
    latency_ms: float = Field(ge=0.0)

    @property
    def problems(self) -> list[CitedSentence]:
        return [s for s in self.sentences if s.status is not CitationStatus.OK]

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def verdict(self) -> Verdict:
        """grounded when every sentence is ok; notGrounded when a sentence is unsupported,
        miscited or dangling (its citation says something false); notSure for uncited claims."""
        verdicts = {_PROBLEM_VERDICT[s.status] for s in self.problems}
        if Verdict.NOT_GROUNDED in verdicts:
            return Verdict.NOT_GROUNDED
        return Verdict.NOT_SURE if verdicts else Verdict.GROUNDED

    def counts(self) -> dict[str, int]:
        """How many sentences have each status (every status listed)."""
        return {s.value: sum(x.status is s for x in self.sentences) for s in CitationStatus}

    @property
    def unmarked_answer(self) -> str:
        """The answer without its citation markers, as its sentences were judged (what a
        groundedness check beside this one should read: ``[7]`` is not a figure)."""
        return strip_markers(self.answer, self.markers).text

    def describe(self) -> str:
        """The subject of a policy decision's reason: "citations are notGrounded (1 miscited)"."""
        summary = ", ".join(f"{n} {k}" for k, n in self.counts().items() if n and k != "ok")
        return f"citations are {self.verdict.value}" + (f" ({summary})" if summary else "")

    def _repr_html_(self) -> str:
        """Jupyter's view: the verdict, the answer with its problem sentences highlighted and
        each sentence's citations (:mod:`ground_integrations.display`)."""
        from ..display import render_html

        return render_html(self)

    def _repr_markdown_(self) -> str:
        """The same view in Markdown, for renderers without HTML."""
        from ..display import render_markdown

        return render_markdown(self)

    def _label(self, ref: PassageRef) -> str:
        return f"[{ref.label(self.by_id)}]"

    def to_azure(self, *, include_ok: bool = False) -> dict[str, Any]:
        """An Azure-like shape: ``citationProblemDetected``, the share of the answer's characters
        in problem sentences, and ``citationDetails`` with camelCase offsets (problem sentences
        only, unless ``include_ok``)."""
        details = []
        flagged = 0
        for s in self.sentences:
            if s.status is not CitationStatus.OK:
                flagged += s.length.code_point
            elif not include_ok:
                continue
            item: dict[str, Any] = {
                "text": s.text,
                "status": s.status.value,
                "offset": s.offset.model_dump(by_alias=True),
                "length": s.length.model_dump(by_alias=True),
                "citations": [r.label(self.by_id) for r in s.cited] + list(s.dangling),
                "supportedBy": [r.label(self.by_id) for r in s.supported_elsewhere],
                "reason": s.reason,
            }
            if s.supported_by_cited is not None:
                item["citedScore"] = s.supported_by_cited.score
            details.append(item)
        return {
            "citationProblemDetected": not self.ok,
            "citationProblemPercentage": round(min(1.0, flagged / max(1, len(self.answer))), 6),
            "citationDetails": details,
        }

    def to_dict(self) -> dict[str, Any]:
        """A plain JSON-ready dict: every field, snake_case, plus ``ok`` and ``verdict``."""
        out = self.model_dump(mode="json")
        out["ok"] = self.ok
        out["verdict"] = self.verdict.value
        return out

    def feedback(self, max_items: int = 12) -> str:
        """Plain-language feedback naming each problem sentence and the source that supports
        it, if any (for regeneration or an annotation)."""
        lines = []
        for s in self.problems[:max_items]:
            lines.append(f'- "{s.claim_text}": {s.reason}')
        if not lines:
            return "Every cited sentence is supported by the passages it cites."
        if len(self.problems) > max_items:
            lines.append(f"- and {len(self.problems) - max_items} more citation problems")
        return "These sentences have citation problems:\n" + "\n".join(lines)
