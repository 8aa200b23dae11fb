"""Pydantic models: the request, the verdict, spans with three kinds of offsets, the result.

Field names are Pythonic (``code_point``); the exporters produce the exact wire shapes of the
reference APIs (Azure's camelCase ``codePoint``, Upstage's chat.completion, TruLens's tuple).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any, Protocol, Union, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import ConfigurationError
from .text import code_point_to_utf8, code_point_to_utf16

__all__ = [
    "AZURE_LIMITS",
    "AZURE_MAX_QUERY_CHARS",
    "AZURE_MAX_SOURCES_CHARS",
    "AZURE_MAX_TEXT_CHARS",
    "DEFAULT_LIMITS",
    "Domain",
    "Evidence",
    "GroundednessRequest",
    "GroundednessResult",
    "HasGetContent",
    "HasPageContent",
    "IndexDetails",
    "JudgeInfo",
    "Limits",
    "PassageLike",
    "SentenceJudgement",
    "Task",
    "UngroundedDetail",
    "UngroundedKind",
    "Verdict",
    "configuration_error",
]


def configuration_error(owner: str, exc: ValidationError) -> ConfigurationError:
    """A pydantic ``ValidationError`` about options, as the ``ConfigurationError`` it is."""
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or owner}: {e['msg']} (got {e.get('input')!r})"
        for e in exc.errors()
    )
    return ConfigurationError(f"invalid {owner}: {problems}")


@runtime_checkable
class HasPageContent(Protocol):
    """A LangChain-style document."""

    @property
    def page_content(self) -> str: ...


@runtime_checkable
class HasGetContent(Protocol):
    """A LlamaIndex-style node."""

    def get_content(self) -> str: ...


#: One retrieved passage: a str, a document, a node, or a mapping with ``page_content``,
#: ``text`` or ``content``.
PassageLike = Union[str, HasPageContent, HasGetContent, Mapping[str, Any]]


@dataclass(frozen=True)
class Limits:
    """Size limits in characters (code points), checked before any judge runs; over a limit
    raises :class:`~ground_integrations.errors.InputTooLongError`. ``None`` means unlimited."""

    max_context_chars: int | None = None
    max_answer_chars: int | None = None
    max_query_chars: int | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigurationError(
                    f"Limits.{f.name} must be a positive int or None, got {value!r}"
                )


#: The default bound on one check: within these sizes a check by the default judge finishes
#: within 2 s on one thread, its model run on its whole pair budget included (checking time grows
#: linearly with the answer and the context; ``benchmarks/bench_scaling.py`` measures both). A
#: request beyond them is refused; raise them by passing ``limits=Limits(...)`` (or
#: ``limits=None`` for no bound) to the checker.
DEFAULT_LIMITS = Limits(max_context_chars=200_000, max_answer_chars=20_000, max_query_chars=10_000)

#: Azure detectGroundedness's limits in characters: its ``groundingSources`` together, its
#: ``text`` and its ``qna.query``. The judge, the service's Azure route and :data:`AZURE_LIMITS`
#: read them here.
AZURE_MAX_SOURCES_CHARS = 55_000
AZURE_MAX_TEXT_CHARS = 7_500
AZURE_MAX_QUERY_CHARS = 7_500

#: The limits of Azure's detectGroundedness: 55,000 characters of sources, 7,500 of text and query.
AZURE_LIMITS = Limits(
    max_context_chars=AZURE_MAX_SOURCES_CHARS,
    max_answer_chars=AZURE_MAX_TEXT_CHARS,
    max_query_chars=AZURE_MAX_QUERY_CHARS,
)


class Verdict(str, Enum):
    """Upstage's vocabulary."""

    GROUNDED = "grounded"
    NOT_GROUNDED = "notGrounded"
    NOT_SURE = "notSure"

    def __str__(self) -> str:
        return self.value


class Task(str, Enum):
    """Azure's task types. In ``QnA`` a query is required and its words count as given."""

    QNA = "QnA"
    SUMMARIZATION = "Summarization"

    def __str__(self) -> str:
        return self.value


class Domain(str, Enum):
    """Azure's domains. ``Medical`` makes judges stricter about doses, units and drug names."""

    GENERIC = "Generic"
    MEDICAL = "Medical"

    def __str__(self) -> str:
        return self.value


class UngroundedKind(str, Enum):
    """Why a span is ungrounded: the context says otherwise (``contradicted``: a changed figure,
    an opposite, a flipped negation) or says nothing about it (``unsupported``: added content).
    Users act differently on the two: a contradiction is wrong, an addition may only be unsourced.
    """

    CONTRADICTED = "contradicted"
    UNSUPPORTED = "unsupported"

    def __str__(self) -> str:
        return self.value

    @property
    def phrase(self) -> str:
        """What a statement of this kind does: ``"contradicts the context"`` or ``"is not
        supported by the context"``."""
        if self is UngroundedKind.CONTRADICTED:
            return "contradicts the context"
        return "is not supported by the context"

    @property
    def label(self) -> str:
        """A span's label in a reason: ``"Contradicted by the context"`` or ``"Not supported by
        the context"``."""
        if self is UngroundedKind.CONTRADICTED:
            return "Contradicted by the context"
        return "Not supported by the context"


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="forbid")


class IndexDetails(_Model):
    """A position or a length in three units (Azure's ``IndexDetails``)."""

    utf8: int = Field(ge=0)
    utf16: int = Field(ge=0)
    code_point: int = Field(ge=0, alias="codePoint")

    @classmethod
    def offset_of(cls, text: str, index: int) -> IndexDetails:
        """The offset of code point ``index`` of ``text`` in all three units."""
        return cls(
            utf8=code_point_to_utf8(text, index),
            utf16=code_point_to_utf16(text, index),
            code_point=index,
        )

    @classmethod
    def length_of(cls, piece: str) -> IndexDetails:
        """The length of ``piece`` in all three units."""
        return cls(
            utf8=len(piece.encode("utf-8", "surrogatepass")),
            utf16=len(piece.encode("utf-16-le", "surrogatepass")) // 2,
            code_point=len(piece),
        )


class Evidence(_Model):
    """Where in the context a sentence finds support: passage index and code-point offsets."""

    passage: int = Field(ge=0, description="Index of the passage in the request's context.")
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str
    score: float = Field(ge=0.0, le=1.0, description="How much of the sentence it covers.")


class UngroundedDetail(_Model):
    """An ungrounded span of the answer (Azure's ``UngroundednessDetails``), and whether the
    context contradicts it or merely does not support it (``kind``, an extra field)."""

    text: str
    offset: IndexDetails
    length: IndexDetails
    reason: str | None = None
    correction: str | None = Field(None, description="A corrected text, when the judge gives one.")
    kind: UngroundedKind = Field(
        UngroundedKind.UNSUPPORTED,
        description="Whether the context contradicts the span or merely does not support it.",
    )

    @classmethod
    def from_span(
        cls,
        answer: str,
        start: int,
        end: int,
        reason: str | None,
        kind: UngroundedKind = UngroundedKind.UNSUPPORTED,
    ) -> UngroundedDetail:
        """The detail of ``answer[start:end]`` (code-point offsets), in all three units."""
        piece = answer[start:end]
        return cls(
            text=piece,
            offset=IndexDetails.offset_of(answer, start),
            length=IndexDetails.length_of(piece),
            reason=reason,
            kind=kind,
        )


class SentenceJudgement(_Model):
    """One answer sentence, judged (the TruLens shape: statement, score, evidence, reason).

    A judge fills the score and the evidence; the checker sets ``verdict`` from the score
    (:mod:`ground_integrations.verdicts`), so every sentence of a result has one. A sentence not
    judged grounded may say why in ``kind`` and point at the words at fault in
    ``ungrounded_details`` (narrower than the sentence; empty when the judge does not narrow).
    """

    index: int = Field(ge=0)
    text: str
    start: int = Field(ge=0, description="Code-point offset in the answer.")
    end: int = Field(ge=0)
    score: float = Field(ge=0.0, le=1.0)
    verdict: Verdict | None = Field(
        None,
        description="Set by the checker from the score under its thresholds; a judge leaves "
        "it unset.",
    )
    evidence: list[Evidence] = Field(default_factory=list)
    reason: str = ""
    unsupported: list[str] = Field(
        default_factory=list, description="Words or figures the judge found no support for."
    )
    kind: UngroundedKind | None = Field(
        None,
        description="For a sentence not judged grounded: whether the context contradicts it "
        "or merely does not support it (None: the judge does not say).",
    )
    ungrounded_details: list[UngroundedDetail] = Field(
        default_factory=list,
        description="For a sentence not judged grounded: the spans of the answer (offsets in "
        "the whole answer) holding the words the context lacks or contradicts.",
    )


class JudgeInfo(_Model):
    name: str
    version: str
    decided_by: str | None = Field(
        None, description="For a judge that delegates (a cascade): which judge decided."
    )


class GroundednessRequest(_Model):
    """A normalised request. Build it through :class:`GroundednessChecker`, which validates it."""

    context: tuple[str, ...]
    answer: str
    query: str | None = None
    task: Task = Task.SUMMARIZATION
    domain: Domain = Domain.GENERIC
    reasoning: bool = False

    @field_validator("context", mode="before")
    @classmethod
    def _tuple(cls, value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    def to_azure(self) -> dict[str, Any]:
        """The request in Azure's ``detectGroundedness`` body shape."""
        body: dict[str, Any] = {
            "domain": self.domain.value,
            "task": self.task.value,
            "text": self.answer,
            "groundingSources": list(self.context),
            "reasoning": self.reasoning,
        }
        if self.query is not None:
            body["qna"] = {"query": self.query}
        return body


class GroundednessResult(_Model):
    """What a check found. Exporters give the Azure, Upstage and TruLens shapes."""

    verdict: Verdict
    score: float = Field(ge=0.0, le=1.0, description="Groundedness of the whole answer, 1 = fully.")
    confidence: float = Field(ge=0.0, le=1.0, description="Confidence in the verdict.")
    ungrounded_percentage: float = Field(
        ge=0.0, le=1.0, description="Share of the answer's characters judged ungrounded."
    )
    ungrounded_details: list[UngroundedDetail] = Field(default_factory=list)
    sentences: list[SentenceJudgement] = Field(default_factory=list)
    answer: str
    task: Task = Task.SUMMARIZATION
    domain: Domain = Domain.GENERIC
    reasoning: bool = False
    judge: JudgeInfo
    latency_ms: float = Field(ge=0.0, description="Wall time of the check, cache lookups included.")
    cached: bool = False
    chunks: int = Field(1, ge=1, description="How many context chunks the judge saw.")
    correction: str | None = Field(None, description="The judge's corrected answer, if any.")
    raw: str | None = Field(None, description="A judge's unparsed output, kept when unclear.")

    @field_validator("sentences")
    @classmethod
    def _judged(cls, sentences: list[SentenceJudgement]) -> list[SentenceJudgement]:
        if any(s.verdict is None for s in sentences):
            raise ValueError("every sentence of a result has the checker's verdict")
        return sentences

    @property
    def is_grounded(self) -> bool:
        return self.verdict is Verdict.GROUNDED

    @property
    def ungrounded_detected(self) -> bool:
        """Azure's ``ungroundedDetected``: notGrounded, or notSure with flagged spans."""
        if self.verdict is Verdict.NOT_SURE:
            return bool(self.ungrounded_details)
        return self.verdict is Verdict.NOT_GROUNDED

    def _repr_html_(self) -> str:
        """Jupyter's view: the verdict, the answer with its flagged spans highlighted and the
        sentences with their evidence (:mod:`ground_integrations.display`)."""
        from .display import render_html

        return render_html(self)

    def _repr_markdown_(self) -> str:
        """The same view in Markdown, for renderers without HTML."""
        from .display import render_markdown

        return render_markdown(self)

    def to_azure(self, *, include_confidence: bool = False) -> dict[str, Any]:
        """Azure's ``AnalyzeTextGroundednessResult`` (api-version 2024-02-15-preview).

        ``reason`` is included only when the request asked for reasoning, as the service does.
        ``include_confidence`` adds the ``confidenceScore`` of the preview guide's fast mode.
        Each detail carries one field the service does not send, ``kind``
        (``"contradicted"`` or ``"unsupported"``, see :class:`UngroundedKind`); a client that
        reads the service's shape ignores it.
        """
        details = []
        for d in self.ungrounded_details:
            item: dict[str, Any] = {
                "text": d.text,
                "offset": d.offset.model_dump(by_alias=True),
                "length": d.length.model_dump(by_alias=True),
            }
            if self.reasoning and d.reason is not None:
                item["reason"] = d.reason
            item["kind"] = d.kind.value
            if d.correction is not None:
                item["correctionText"] = d.correction
            details.append(item)
        out: dict[str, Any] = {
            "ungroundedDetected": self.ungrounded_detected,
            "ungroundedPercentage": self.ungrounded_percentage,
            "ungroundedDetails": details,
        }
        if include_confidence:
            out["confidenceScore"] = self.confidence
        if self.correction is not None:
            out["correctionText"] = self.correction
        return out

    def to_upstage(self) -> str:
        """Upstage's answer: ``"grounded"``, ``"notGrounded"`` or ``"notSure"``."""
        return self.verdict.value

    def to_upstage_completion(
        self, *, model: str = "solar-1-mini-groundedness-check"
    ) -> dict[str, Any]:
        """A whole ``chat.completion`` object as Upstage's groundedness check returns it."""
        return {
            "id": str(uuid.uuid4()),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": self.verdict.value},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            "system_fingerprint": None,
        }

    def to_trulens(self, scale: int = 10) -> tuple[float, dict[str, str]]:
        """TruLens's ``(score, {"reasons": ...})``: the mean sentence score in [0, 1], and per
        statement the criteria, evidence and the score on a 0-``scale`` scale (10 in the
        reference; TruLens now defaults to 3)."""
        if scale < 1:
            raise ValueError("scale must be a positive integer, e.g. 10 or 3")
        reasons = []
        for s in self.sentences:
            evidence = " ".join(f'"{e.text}"' for e in s.evidence) or "NOTHING FOUND"
            reasons.append(
                f"STATEMENT {s.index}:\nCriteria: {s.text}\nSupporting Evidence: {evidence}"
                + (f"\nReason: {s.reason}" if s.reason else "")
                + f"\nScore: {round(s.score * scale)}\n"
            )
        scores = [round(s.score * scale) / scale for s in self.sentences]
        mean = sum(scores) / len(scores) if scores else self.score
        return mean, {"reasons": "".join(reasons)}

    def feedback(self, max_items: int = 12) -> str:
        """Plain-language feedback naming each ungrounded sentence, whether it contradicts the
        context or is merely not supported by it, the words at fault and why (for regeneration).

        A sentence the answer repeats is listed once, with how often it occurs (small models
        loop); at most ``max_items`` are listed, then how many more there are.
        """
        # normalised text -> [text, kind, words at fault, reason, count]
        items: dict[str, list[Any]] = {}
        flagged: list[tuple[str, UngroundedKind, list[str], str | None]] = [
            (
                s.text,
                s.kind or UngroundedKind.UNSUPPORTED,
                [d.text.strip() for d in s.ungrounded_details if d.text.strip() != s.text.strip()],
                s.reason or None,
            )
            for s in self.sentences
            if s.verdict is not Verdict.GROUNDED
        ] or [(d.text, d.kind, [], d.reason) for d in self.ungrounded_details]
        for text, kind, words, reason in flagged:
            key = " ".join(text.split()).casefold()
            if key in items:
                items[key][4] += 1
            else:
                items[key] = [text.strip(), kind, words, reason, 1]
        if not items:
            return f"The answer was judged {self.verdict.value} as a whole."
        lines = [
            f'- "{text}" {kind.phrase}'
            + (" (" + ", ".join(f'"{w}"' for w in words) + ")" if words else "")
            + (f": {reason}" if reason else "")
            + (f" (repeated {count} times)" if count > 1 else "")
            for text, kind, words, reason, count in list(items.values())[:max_items]
        ]
        if len(items) > max_items:
            lines.append(f"- and {len(items) - max_items} more unsupported statements")
        contradicted = any(kind is UngroundedKind.CONTRADICTED for _, kind, *_ in items.values())
        head = "contradicted or not supported by" if contradicted else "not supported by"
        return f"These statements are {head} the context:\n" + "\n".join(lines)
