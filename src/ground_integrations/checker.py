"""GroundednessChecker: one check, from raw inputs to a result, and batches of them.

It validates the inputs (read by :mod:`ground_integrations.inputs`), enforces the size limits,
splits long context into overlapping chunks and merges the judge's judgements of them, caches
results by content, and hands the merged judgement to :mod:`ground_integrations.verdicts`, where
the cut points turn scores into verdicts. Everything a judge should not have to think about
lives here, once, for every judge; sync and async alike.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import telemetry
from .deadline import checkpoint
from .errors import ConfigurationError, InputTooLongError, InvalidInputError
from .inputs import (
    ContextLike,
    answer_text,
    normalize_answer,
    normalize_context,
    normalize_enum,
    normalize_query,
)
from .judges.base import Judge, Judgement
from .models import (
    AZURE_LIMITS,
    DEFAULT_LIMITS,
    Domain,
    Evidence,
    GroundednessRequest,
    GroundednessResult,
    Limits,
    SentenceJudgement,
    Task,
    Verdict,
)
from .text import split_sentences
from .thresholds import CalibratedThresholds, Thresholds
from .verdicts import result_of

if TYPE_CHECKING:  # pragma: no cover
    from .citations import CitationResult

__all__ = [
    "AZURE_LIMITS",
    "DEFAULT_LIMITS",
    "ContextLike",
    "GroundednessChecker",
    "Limits",
    "answer_text",
    "normalize_answer",
    "normalize_context",
]


def _int_option(name: str, value: Any, *, minimum: int) -> int:
    """``value`` if it is an int (not a bool) of at least ``minimum``; else ConfigurationError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigurationError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ConfigurationError(f"{name} must be at least {minimum}, got {value}")
    return value


class _LRU:
    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[str, GroundednessResult] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> GroundednessResult | None:
        with self._lock:
            hit = self._data.get(key)
            if hit is not None:
                self._data.move_to_end(key)
            return hit

    def put(self, key: str, value: GroundednessResult) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


@dataclass(frozen=True)
class _Piece:
    passage: int
    offset: int
    text: str


class GroundednessChecker:
    """Checks whether an answer is supported by its context.

    Args:
        judge: what decides; by default :func:`~ground_integrations.judges.default_judge`: the
            bundled offline cross-encoder if this install carries one, else
            :class:`HeuristicJudge`.
        thresholds: score cut points; the judge's calibrated ones by default. A
            :class:`~ground_integrations.calibration.CalibratedThresholds` (from
            ``ground calibrate``; ``CalibratedThresholds.load(path)``) picks the cut per
            request's task and domain, and must have been calibrated for this judge.
        limits: size limits that raise :class:`InputTooLongError`. By default the judge's own
            (``judge.limits``, e.g. Azure's) or else ``DEFAULT_LIMITS`` (200,000 characters of
            context, 20,000 of answer, 10,000 of query); pass ``Limits(...)`` to raise them or
            ``None`` to check any size.
        chunk_chars: context larger than this is judged in overlapping chunks and a sentence is
            grounded if any chunk supports it. Defaults to the judge's ``max_context_chars``.
        chunk_overlap: characters shared by consecutive chunks of one passage.
        cache_size: results kept by content hash (0 disables), so regenerate loops re-checking
            the same answer cost nothing.
        max_concurrency: parallel checks in ``check_many`` / ``acheck_many``.
    """

    def __init__(
        self,
        judge: Judge | None = None,
        *,
        thresholds: Thresholds | CalibratedThresholds | None = None,
        limits: Limits | None = DEFAULT_LIMITS,
        chunk_chars: int | None = None,
        chunk_overlap: int = 200,
        cache_size: int = 256,
        max_concurrency: int = 4,
    ) -> None:
        self._owns_judge = judge is None
        if judge is None:
            from .judges.registry import default_judge

            judge = default_judge()
        if not isinstance(judge, Judge):
            raise ConfigurationError(
                f"judge must be a ground_integrations Judge, got {type(judge).__name__}"
            )
        if limits is DEFAULT_LIMITS and judge.limits is not None:
            limits = judge.limits
        if limits is not None and not isinstance(limits, Limits):
            raise ConfigurationError(
                f"limits must be a Limits or None, got {type(limits).__name__}"
            )
        chunk_chars = chunk_chars if chunk_chars is not None else judge.max_context_chars
        if chunk_chars is not None:
            _int_option("chunk_chars", chunk_chars, minimum=1)
        _int_option("chunk_overlap", chunk_overlap, minimum=0)
        if chunk_chars is not None and chunk_overlap >= chunk_chars:
            raise ConfigurationError("chunk_overlap must be >= 0 and smaller than chunk_chars")
        _int_option("cache_size", cache_size, minimum=0)
        _int_option("max_concurrency", max_concurrency, minimum=1)
        if isinstance(thresholds, CalibratedThresholds):
            thresholds.check_judge(judge.info)
        elif thresholds is not None and not isinstance(thresholds, Thresholds):
            raise ConfigurationError(
                "thresholds must be a Thresholds, a CalibratedThresholds (see "
                f"CalibratedThresholds.load) or None, got {type(thresholds).__name__}"
            )
        self.judge = judge
        self.thresholds: Thresholds | CalibratedThresholds = thresholds or judge.default_thresholds
        self.limits = limits
        self.chunk_chars = chunk_chars
        self.chunk_overlap = chunk_overlap
        self.max_concurrency = max_concurrency
        self._cache = _LRU(cache_size)

    def __repr__(self) -> str:
        return f"GroundednessChecker(judge={self.judge!r}, thresholds={self.thresholds!r})"

    # -- requests ---------------------------------------------------------------------------

    def build_request(
        self,
        context: ContextLike,
        answer: Any,
        query: str | None = None,
        *,
        task: Task | str = Task.SUMMARIZATION,
        domain: Domain | str = Domain.GENERIC,
        reasoning: bool = False,
    ) -> GroundednessRequest:
        """Validate and normalise inputs into a request (raises typed errors naming the field)."""
        passages = normalize_context(context)
        text = normalize_answer(answer)
        task_ = normalize_enum(task, Task, "task")
        domain_ = normalize_enum(domain, Domain, "domain")
        query = normalize_query(query)
        if task_ is Task.QNA and query is None:
            raise InvalidInputError(
                "task 'QnA' requires the user's query; pass query=... or use task='Summarization'.",
                field="query",
            )
        if not isinstance(reasoning, bool):
            raise InvalidInputError("reasoning must be True or False.", field="reasoning")
        self._enforce_limits(passages, text, query)
        return GroundednessRequest(
            context=passages,
            answer=text,
            query=query,
            task=task_,
            domain=domain_,
            reasoning=reasoning,
        )

    def _enforce_limits(self, passages: tuple[str, ...], answer: str, query: str | None) -> None:
        if self.limits is None:
            return
        checks = [
            ("context", sum(len(p) for p in passages), self.limits.max_context_chars),
            ("answer", len(answer), self.limits.max_answer_chars),
            ("query", len(query or ""), self.limits.max_query_chars),
        ]
        for field, actual, limit in checks:
            if limit is not None and actual > limit:
                raise InputTooLongError(
                    f"{field} has {actual:,} characters, over the limit of {limit:,}; "
                    f"shorten it, split the check, or raise the limit: GroundednessChecker("
                    f"limits=Limits(max_{field}_chars=...)), or limits=None for no limit.",
                    field=field,
                    limit=limit,
                    actual=actual,
                )

    def _coerce(self, item: GroundednessRequest | Mapping[str, Any]) -> GroundednessRequest:
        if isinstance(item, GroundednessRequest):
            return self.build_request(
                item.context,
                item.answer,
                item.query,
                task=item.task,
                domain=item.domain,
                reasoning=item.reasoning,
            )
        if isinstance(item, Mapping):
            unknown = set(item) - {"context", "answer", "query", "task", "domain", "reasoning"}
            if unknown:
                raise InvalidInputError(
                    f"unknown keys {sorted(unknown)}; expected context, answer, query, task, "
                    "domain, reasoning.",
                    field=sorted(unknown)[0],
                )
            if "answer" not in item or "context" not in item:
                missing = "answer" if "answer" not in item else "context"
                raise InvalidInputError(f"item has no {missing!r}.", field=missing)
            return self.build_request(**item)
        raise InvalidInputError(
            f"batch items must be dicts or GroundednessRequest, got {type(item).__name__}.",
            field="item",
        )

    # -- chunking ---------------------------------------------------------------------------

    def _chunks(self, request: GroundednessRequest) -> list[list[_Piece]]:
        size = self.chunk_chars
        if size is None or sum(len(p) for p in request.context) <= size:
            return [[_Piece(i, 0, p) for i, p in enumerate(request.context)]]
        pieces: list[_Piece] = []
        for i, passage in enumerate(request.context):
            pieces.extend(self._split_passage(i, passage, size))
        chunks: list[list[_Piece]] = [[]]
        used = 0
        for piece in pieces:
            if chunks[-1] and used + len(piece.text) > size:
                chunks.append([])
                used = 0
            chunks[-1].append(piece)
            used += len(piece.text)
        return chunks

    def _split_passage(self, index: int, passage: str, size: int) -> list[_Piece]:
        if len(passage) <= size:
            return [_Piece(index, 0, passage)]
        # Cut at sentence boundaries where possible; consecutive windows overlap.
        bounds = [s.start for s in split_sentences(passage)] or [0]
        out: list[_Piece] = []
        start = 0
        while start < len(passage):
            end = min(len(passage), start + size)
            if end < len(passage):
                cut = max((b for b in bounds if start + size // 2 < b <= end), default=end)
                end = cut
            out.append(_Piece(index, start, passage[start:end]))
            if end >= len(passage):
                break
            nxt = max(start + 1, end - self.chunk_overlap)
            # Restart at a sentence boundary inside the overlap, if there is one.
            nxt = min((b for b in bounds if nxt <= b < end), default=nxt)
            start = nxt
        return out

    @staticmethod
    def _sub_request(request: GroundednessRequest, chunk: list[_Piece]) -> GroundednessRequest:
        return request.model_copy(update={"context": tuple(p.text for p in chunk)})

    # -- merging ----------------------------------------------------------------------------

    def _merge(
        self, request: GroundednessRequest, chunks: list[list[_Piece]], outs: list[Judgement]
    ) -> Judgement:
        if len(outs) == 1:
            return self._remap(outs[0], chunks[0])
        remapped = [self._remap(o, c) for o, c in zip(outs, chunks)]
        if all(o.sentences for o in remapped) and len({len(o.sentences) for o in remapped}) == 1:
            best: list[SentenceJudgement] = []
            for i in range(len(remapped[0].sentences)):
                best.append(max((o.sentences[i] for o in remapped), key=lambda s: s.score))
            return Judgement(score=min(s.score for s in best), sentences=best)
        scores = [o.score for o in remapped if o.score is not None]
        # a chunk's label, or notSure where its judge abstained
        verdicts = [Verdict.NOT_SURE if o.abstained else o.verdict for o in remapped]
        for v in (Verdict.GROUNDED, Verdict.NOT_SURE, Verdict.NOT_GROUNDED):
            if v in verdicts:
                return Judgement(score=max(scores) if scores else None, verdict=v)
        return Judgement(score=max(scores))

    @staticmethod
    def _remap(out: Judgement, chunk: list[_Piece]) -> Judgement:
        if all(p.offset == 0 and p.passage == i for i, p in enumerate(chunk)):
            return out
        sentences = []
        for s in out.sentences:
            evidence = [
                Evidence(
                    passage=chunk[e.passage].passage,
                    start=e.start + chunk[e.passage].offset,
                    end=e.end + chunk[e.passage].offset,
                    text=e.text,
                    score=e.score,
                )
                for e in s.evidence
                if e.passage < len(chunk)
            ]
            sentences.append(s.model_copy(update={"evidence": evidence}))
        return out.model_copy(update={"sentences": sentences})

    # -- results ----------------------------------------------------------------------------

    def _result(
        self, request: GroundednessRequest, judgement: Judgement, chunks: int, started: float
    ) -> GroundednessResult:
        return result_of(
            request,
            judgement,
            thresholds=self.thresholds,
            judge=self.judge.info,
            judge_thresholds=self.judge.default_thresholds,
            chunks=chunks,
            started=started,
        )

    def _cache_key(self, request: GroundednessRequest) -> str:
        payload = json.dumps(
            [self.judge.cache_key(), self.thresholds.model_dump(), request.model_dump(mode="json")],
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()

    def _cached(self, key: str, started: float) -> GroundednessResult | None:
        # The cache keeps its own deep copy and hands out deep copies: a caller mutating a result
        # (``r.ungrounded_details.clear()``) cannot change what the next identical check returns.
        hit = self._cache.get(key)
        if hit is None:
            return None
        return hit.model_copy(
            deep=True,
            update={"cached": True, "latency_ms": round((time.perf_counter() - started) * 1000, 3)},
        )

    def _remember(self, key: str, result: GroundednessResult) -> None:
        if self._cache.size > 0:
            self._cache.put(key, result.model_copy(deep=True))

    def clear_cache(self) -> None:
        self._cache.clear()

    # -- public API ---------------------------------------------------------------------------

    def check(
        self,
        context: ContextLike,
        answer: Any,
        query: str | None = None,
        *,
        task: Task | str = Task.SUMMARIZATION,
        domain: Domain | str = Domain.GENERIC,
        reasoning: bool = False,
    ) -> GroundednessResult:
        """Check one answer against its context."""
        started = time.perf_counter()
        with telemetry.check_span() as span:
            request = self.build_request(
                context, answer, query, task=task, domain=domain, reasoning=reasoning
            )
            span.request(request)
            result = self._check_request(request, started)
            span.result(result)
            return result

    def _check_request(self, request: GroundednessRequest, started: float) -> GroundednessResult:
        key = self._cache_key(request)
        hit = self._cached(key, started)
        if hit is not None:
            return hit
        chunks = self._chunks(request)
        outs = []
        for c in chunks:
            checkpoint()  # a Deadline (ground_integrations.deadline) stops the check here
            outs.append(self.judge.run(self._sub_request(request, c)))
        result = self._result(request, self._merge(request, chunks, outs), len(chunks), started)
        self._remember(key, result)
        return result

    async def acheck(
        self,
        context: ContextLike,
        answer: Any,
        query: str | None = None,
        *,
        task: Task | str = Task.SUMMARIZATION,
        domain: Domain | str = Domain.GENERIC,
        reasoning: bool = False,
    ) -> GroundednessResult:
        """Async twin of :meth:`check`."""
        started = time.perf_counter()
        with telemetry.check_span() as span:
            request = self.build_request(
                context, answer, query, task=task, domain=domain, reasoning=reasoning
            )
            span.request(request)
            result = await self._acheck_request(request, started)
            span.result(result)
            return result

    async def _acheck_request(
        self, request: GroundednessRequest, started: float
    ) -> GroundednessResult:
        key = self._cache_key(request)
        hit = self._cached(key, started)
        if hit is not None:
            return hit
        chunks = self._chunks(request)
        checkpoint()
        outs = await asyncio.gather(
            *(self.judge.arun(self._sub_request(request, c)) for c in chunks)
        )
        result = self._result(
            request, self._merge(request, chunks, list(outs)), len(chunks), started
        )
        self._remember(key, result)
        return result

    def _workers(self, max_concurrency: int | None) -> int:
        if max_concurrency is None:
            return self.max_concurrency
        return _int_option("max_concurrency", max_concurrency, minimum=1)

    def check_many(
        self,
        items: Iterable[GroundednessRequest | Mapping[str, Any]],
        *,
        max_concurrency: int | None = None,
        return_exceptions: bool = True,
    ) -> list[GroundednessResult | Exception]:
        """Check many items with bounded concurrency. Order is kept; a failing item yields its
        exception in place (or raises, with ``return_exceptions=False``) and loses no other."""
        items = list(items)
        workers = self._workers(max_concurrency)

        def one(item: Any) -> GroundednessResult | Exception:
            try:
                return self._check_request(self._coerce(item), time.perf_counter())
            except Exception as exc:
                if not return_exceptions:
                    raise
                return exc

        if workers == 1 or len(items) <= 1:
            return [one(i) for i in items]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ground") as pool:
            return list(pool.map(one, items))

    async def acheck_many(
        self,
        items: Iterable[GroundednessRequest | Mapping[str, Any]],
        *,
        max_concurrency: int | None = None,
        return_exceptions: bool = True,
    ) -> list[GroundednessResult | Exception]:
        """Async twin of :meth:`check_many`."""
        semaphore = asyncio.Semaphore(self._workers(max_concurrency))

        async def one(item: Any) -> GroundednessResult | Exception:
            async with semaphore:
                try:
                    return await self._acheck_request(self._coerce(item), time.perf_counter())
                except Exception as exc:
                    if not return_exceptions:
                        raise
                    return exc

        return list(await asyncio.gather(*(one(i) for i in items)))

    # -- kept for compatibility: the citation check's entry points are in citations ---------

    def check_citations(
        self, context: ContextLike, answer: Any, query: str | None = None, **options: Any
    ) -> CitationResult:
        """``citations.check_citations(self, context, answer, query, **options)``: is each cited
        sentence supported by the passages it cites? See
        :func:`ground_integrations.citations.check_citations` for the options."""
        from .citations import check_citations

        return check_citations(self, context, answer, query, **options)

    async def acheck_citations(
        self, context: ContextLike, answer: Any, query: str | None = None, **options: Any
    ) -> CitationResult:
        """Async twin of :meth:`check_citations`
        (:func:`ground_integrations.citations.acheck_citations`)."""
        from .citations import acheck_citations

        return await acheck_citations(self, context, answer, query, **options)

    def close(self) -> None:
        """Close the judge if this checker created it (a judge you passed in stays yours)."""
        if self._owns_judge:
            self.judge.close()

    async def aclose(self) -> None:
        if self._owns_judge:
            await self.judge.aclose()

    def __enter__(self) -> GroundednessChecker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> GroundednessChecker:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
