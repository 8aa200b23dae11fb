"""The citation check's entry points: :func:`check_citations` and its async twin, which validate
the inputs, find the markers and drive the plan (:mod:`._plan`), and the policy's call on a
citation result (:func:`citation_decision`, :func:`citation_blocked_error`)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..decisions import Decision, Policy, blocked_error
from ..errors import ConfigurationError, InvalidInputError, UngroundedAnswerError
from ..inputs import ContextLike
from ..models import Domain, GroundednessResult, Task
from ._grammar import compile_pattern, find_citations
from ._passages import PassageRef, passage_ids
from ._plan import Plan, Request, citation_plan
from ._results import CitationResult

if TYPE_CHECKING:  # pragma: no cover
    from ..checker import GroundednessChecker

__all__ = ["acheck_citations", "check_citations", "citation_blocked_error", "citation_decision"]


def _start(
    checker: GroundednessChecker,
    context: ContextLike,
    answer: Any,
    query: str | None,
    *,
    ids: Sequence[str | None] | None,
    id_key: str | None,
    pattern: str | re.Pattern[str] | None,
    task: Task | str,
    domain: Domain | str,
    require_citations: bool,
    sources: Sequence[str | int] | None,
) -> Plan:
    started = time.perf_counter()
    regex = compile_pattern(pattern) if pattern is not None else None
    request = checker.build_request(context, answer, query, task=task, domain=domain)
    passages = request.context
    found_ids = list(ids) if ids is not None else passage_ids(context, id_key=id_key)
    if len(found_ids) != len(passages):
        raise InvalidInputError(
            f"ids has {len(found_ids)} entries for {len(passages)} passages; give one id (or "
            "None) per passage.",
            field="ids",
        )
    if not isinstance(require_citations, bool):
        raise ConfigurationError(
            f"require_citations must be True or False, not {require_citations!r}"
        )
    refs = [
        PassageRef(index=i, number=i + 1, id=None if d is None else str(d))
        for i, d in enumerate(found_ids)
    ]
    markers = find_citations(request.answer, pattern=regex, ids=[r.id for r in refs if r.id])
    if sources is not None and (
        isinstance(sources, str | bytes) or not isinstance(sources, Sequence)
    ):
        raise InvalidInputError(
            f"sources must be a list of source labels or ids, got {type(sources).__name__}.",
            field="sources",
        )
    options: Request = {"query": request.query, "task": request.task, "domain": request.domain}
    return citation_plan(
        passages,
        request.answer,
        markers,
        refs,
        options,
        require_citations,
        [str(x) for x in sources or ()],
        checker.judge.info,
        started,
    )


def _finish(result: CitationResult, started: float) -> CitationResult:
    latency = round((time.perf_counter() - started) * 1000, 3)
    return result.model_copy(update={"latency_ms": latency})


def check_citations(
    checker: GroundednessChecker,
    context: ContextLike,
    answer: Any,
    query: str | None = None,
    *,
    ids: Sequence[str | None] | None = None,
    id_key: str | None = None,
    pattern: str | re.Pattern[str] | None = None,
    task: Task | str = Task.SUMMARIZATION,
    domain: Domain | str = Domain.GENERIC,
    require_citations: bool = False,
    sources: Sequence[str | int] | None = None,
) -> CitationResult:
    """Is each cited sentence of ``answer`` supported by the passages it cites? (See
    :mod:`ground_integrations.citations`.) ``checker.check_citations(...)`` forwards here; the
    checker's judge, limits, chunking and cache apply.

    Markers (``[1]``, ``[1, 3]``, ``[Source 2]``, or ``pattern``, a regex with a named group
    ``refs``) map to passages 1-based, or by id: ``ids`` (one per passage, or None), else the
    passages' own ids, or ``metadata[id_key]``. ``sources``: labels or ids the answer cites as a
    whole, for answers that list their sources apart from the text (LangChain's cited-answer
    recipe); a sentence without markers of its own cites these. ``require_citations``: an
    uncited claim is a problem even in an answer that cites nothing.
    """
    started = time.perf_counter()
    plan = _start(
        checker,
        context,
        answer,
        query,
        ids=ids,
        id_key=id_key,
        pattern=pattern,
        task=task,
        domain=domain,
        require_citations=require_citations,
        sources=sources,
    )
    try:
        batch = next(plan)
        while True:
            batch = plan.send([checker.check(**kw) for kw in batch])
    except StopIteration as done:
        return _finish(done.value, started)


async def acheck_citations(
    checker: GroundednessChecker,
    context: ContextLike,
    answer: Any,
    query: str | None = None,
    *,
    ids: Sequence[str | None] | None = None,
    id_key: str | None = None,
    pattern: str | re.Pattern[str] | None = None,
    task: Task | str = Task.SUMMARIZATION,
    domain: Domain | str = Domain.GENERIC,
    require_citations: bool = False,
    sources: Sequence[str | int] | None = None,
) -> CitationResult:
    """Async twin of :func:`check_citations`: each batch of checks runs concurrently, at most
    ``checker.max_concurrency`` at a time."""
    started = time.perf_counter()
    plan = _start(
        checker,
        context,
        answer,
        query,
        ids=ids,
        id_key=id_key,
        pattern=pattern,
        task=task,
        domain=domain,
        require_citations=require_citations,
        sources=sources,
    )
    semaphore = asyncio.Semaphore(checker.max_concurrency)

    async def one(kw: Request) -> GroundednessResult:
        async with semaphore:
            return await checker.acheck(**kw)

    try:
        batch = next(plan)
        while True:
            results = await asyncio.gather(*(one(kw) for kw in batch))
            batch = plan.send(list(results))
    except StopIteration as done:
        return _finish(done.value, started)


# -- decisions ------------------------------------------------------------------------------


def citation_decision(
    result: CitationResult,
    policy: Policy | None = None,
    *,
    attempt: int = 0,
    can_regenerate: bool = True,
) -> Decision:
    """A :class:`~ground_integrations.Policy` decision for a citation result.

    The result counts as :attr:`CitationResult.verdict` says (a miscited or dangling citation
    is notGrounded, an uncited claim notSure), so ``on_not_grounded`` / ``on_not_sure`` apply;
    a regeneration's feedback names each sentence and the source that does support it. The
    same as ``policy.decide(result, ...)`` (a ``groundedness.decision`` telemetry event
    included); ``redact`` and ``correct`` fall to ``on_exhausted``.
    """
    policy = policy or Policy()
    return policy.decide(result, attempt=attempt, can_regenerate=can_regenerate)


def citation_blocked_error(result: CitationResult, decision: Decision) -> UngroundedAnswerError:
    """The error a blocked answer raises, naming the problem sentences
    (:func:`~ground_integrations.decisions.blocked_error`, with the citation result only)."""
    return blocked_error(None, decision, result)
