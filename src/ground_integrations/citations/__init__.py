"""Citation check: is each cited sentence supported by the passage it cites?

An answer that cites its sources ("Mauna Kea is 4,207.3 m tall [2].") makes a second claim per
sentence: *this* passage says so. :func:`check_citations` reads the markers, maps them to
passages, and judges each cited sentence against the passages it cites and nothing else, with
the checker's own judge (so limits, chunking and caching apply as for any check).

How it works:

1. **Markers.** :func:`find_citations` finds ``[1]``, ``[1, 3]``, ``[1-3]``, ``[1][2]``,
   ``[Source 2]``, ``[^2]`` and, when passages carry ids, ``[doc-7]``. Brackets glued inside a
   word or number (``a[1]b``, ``2[0]1``), inside a URL or inline code, followed by ``=`` or a
   member access (``x[1].y``), and footnote definitions (``[^1]:`` at a line start) are not
   citations. A different grammar is a regex with a named group ``refs`` (see
   :func:`compile_pattern`).
2. **Passages.** A label is an id when a passage has that id (a LangChain ``Document.id``, a
   LlamaIndex node id, a mapping's ``"id"``, or ``metadata[id_key]``), else a 1-based position.
   A label that resolves to nothing makes the sentence ``dangling``; it is a status, not an error.
3. **Sentences.** Markers are removed before judging (a judge would otherwise read ``[2]`` as an
   unsupported figure). The cleaned answer is split into sentences and each marker belongs to the
   sentence it sits in, or to the one it follows (``... tall.[2] Next``).
4. **Judging.** The sentences that cite one set of passages are checked together against that
   set (markers removed, in the answer's words and order); a sentence takes the verdict of its
   own span. Only when a sentence fails, or cites nothing in an answer that cites elsewhere, is
   it checked against each other passage alone to find where support lies: every passage when
   there are at most :data:`SEARCH_PASSAGES`, else the ones sharing the most content words with
   it. Each sentence is judged a bounded number of times, so the cost grows with the answer,
   not with the answer times its number of distinct citations.

Statuses: ``ok`` (supported by what it cites, or not a claim), ``miscited`` (supported by another
passage, not by what it cites), ``unsupported`` (supported by no passage), ``uncited_claim`` (a
claim without a citation, in an answer that cites elsewhere, or with ``require_citations``), and
``dangling`` (cites a passage that does not exist).

A claim is a sentence some passage supports, or one that states a figure or a name; a sentence
like "I hope this helps." is not.

One concern per module: ``_grammar`` (markers: finding, reading, removing), ``_passages`` (ids
and which passage a label names), ``_results`` (the result models), ``_plan`` (what to judge
against what, as a generator of check batches) and ``_check`` (the entry points and the
policy's call on a result).
"""

from __future__ import annotations

from .._markers import DEFAULT_CITATION_PATTERN
from ._check import acheck_citations, check_citations, citation_blocked_error, citation_decision
from ._grammar import CitationMarker, compile_pattern, find_citations
from ._passages import PassageRef, passage_ids
from ._plan import SEARCH_PASSAGES
from ._results import CitationResult, CitationStatus, CitationSupport, CitedSentence

__all__ = [
    "DEFAULT_CITATION_PATTERN",
    "SEARCH_PASSAGES",
    "CitationMarker",
    "CitationResult",
    "CitationStatus",
    "CitationSupport",
    "CitedSentence",
    "PassageRef",
    "acheck_citations",
    "check_citations",
    "citation_blocked_error",
    "citation_decision",
    "compile_pattern",
    "find_citations",
    "passage_ids",
]
