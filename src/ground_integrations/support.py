"""How much each retrieved passage supports a query or a draft answer: retrieval filtering,
before any answer exists (what LlamaIndex's ``GroundednessPostprocessor`` uses).

* Against a query (:func:`query_support`): a question is not a claim a judge can ground, so a
  passage's support is the share of the query's content words it contains: stop words dropped,
  words stemmed, figures compared as numbers ("4,207.3" and "4207.3" are one figure), as the
  embedded judges read text. A passage sharing one of three content words has 0.33.
* Against a draft answer (:func:`draft_support`, :func:`adraft_support`): the checker's score for
  the best draft sentence the passage gives evidence for, checked against that passage alone
  (0.0 when it gives evidence for none: a score without evidence is the judge's prior; for a
  judge that only labels, its answer score).

>>> query_support("Where is Mauna Kea?", ["Mauna Kea is in Hawaii.", "Kea birds", "Paris"])
[1.0, 0.5, 0.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .judges._tokens import analyse
from .models import Domain, GroundednessResult

if TYPE_CHECKING:  # pragma: no cover
    from .checker import GroundednessChecker

__all__ = [
    "adraft_support",
    "content_terms",
    "draft_support",
    "query_support",
    "result_support",
]


def content_terms(text: str) -> frozenset[str]:
    """The content words of ``text`` (stemmed, stop words dropped) and its figures (as values)."""
    tokens = analyse(text)
    return frozenset((*tokens.stems, *tokens.figures))


def query_support(query: str, passages: Sequence[str]) -> list[float] | None:
    """Per passage, the share of the query's content terms it contains; None when the query
    has none (nothing to score the passages against)."""
    terms = content_terms(query) if query and query.strip() else frozenset()
    if not terms:
        return None
    return [len(terms & content_terms(p)) / len(terms) for p in passages]


def result_support(result: GroundednessResult) -> float:
    """The score of the best sentence a check found evidence for (0.0 when none: a score
    without evidence is the judge's prior); a judge that only labels gives its answer score."""
    if not result.sentences:
        return result.score
    return max((s.score for s in result.sentences if s.evidence), default=0.0)


def draft_support(
    checker: GroundednessChecker,
    draft: str,
    passages: Sequence[str],
    *,
    domain: Domain | str = Domain.GENERIC,
) -> list[float]:
    """Per passage, :func:`result_support` of ``draft`` checked against that passage alone."""
    return [result_support(checker.check([p], draft, domain=domain)) for p in passages]


async def adraft_support(
    checker: GroundednessChecker,
    draft: str,
    passages: Sequence[str],
    *,
    domain: Domain | str = Domain.GENERIC,
) -> list[float]:
    """Async twin of :func:`draft_support`."""
    return [result_support(await checker.acheck([p], draft, domain=domain)) for p in passages]
