"""The citation check's plan: which sentences to judge against which passages, and what the
judgements make of each citation.

:func:`citation_plan` is a generator. It yields batches of core check requests and receives their
results, so the sync and async entry points (:mod:`._check`) drive the same decisions with
their own way of running a batch. Round one judges each distinct set of cited passages against
the sentences that cite it (one check per set, a sentence taking the verdict of its own span);
round two searches where a failing or uncited claim's support lies, each candidate passage alone
(every other passage up to :data:`SEARCH_PASSAGES`, else those sharing the most content words).
Each sentence is judged a bounded number of times.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInputError
from ..models import GroundednessResult, IndexDetails, JudgeInfo, Verdict
from ..text import STOPWORDS, fold, split_sentences, word_spans
from ._grammar import CitationMarker, Clean, strip_markers
from ._passages import PassageRef, resolve
from ._results import CitationResult, CitationStatus, CitationSupport, CitedSentence

__all__ = ["SEARCH_PASSAGES", "Plan", "Request", "citation_plan"]


def _is_claim(text: str) -> bool:
    """Whether an uncited sentence states something one would cite: not a question or a lead-in
    ("Here is what I found:"), and a figure, a name after the first word, or three content
    words. "I hope this helps." is not a claim."""
    body = text.rstrip()
    if body.endswith(("?", ":", "\uff1f", "\uff1a")):
        return False
    words = word_spans(body)
    if any(ch.isdigit() for w in words for ch in w.text):
        return True
    if any(w.text[:1].isupper() and w.text.upper() != w.text for w in words[1:]):
        return True
    return sum(fold(w.text) not in STOPWORDS for w in words) >= 3


@dataclass
class _Sentence:
    start: int  # clean offsets
    end: int
    markers: list[CitationMarker]
    cited: list[PassageRef]
    dangling: list[str]


Request = dict[str, Any]
Plan = Generator[list[Request], list[GroundednessResult], CitationResult]
_Found = tuple[Verdict, float] | None

#: A sentence whose citation fails is checked against each passage it does not cite, to find
#: where its support lies; past this many passages, against the ones sharing the most content
#: words with it (a passage that shares none cannot support it).
SEARCH_PASSAGES = 16


def _excerpt(text: str, sentences: list[_Sentence], chosen: list[int]) -> tuple[str, list[int]]:
    """The clean answer cut down to the ``chosen`` sentences (in order), and where each starts
    in it: adjacent sentences keep what lies between them, others go on a line of their own.
    All the sentences: the clean answer itself."""
    if len(chosen) == len(sentences):
        return text, [sentences[i].start for i in chosen]
    parts: list[str] = []
    starts: list[int] = []
    size = 0
    for k, i in enumerate(chosen):
        if k:
            prev = chosen[k - 1]
            gap = text[sentences[prev].end : sentences[i].start] if prev == i - 1 else "\n"
            parts.append(gap)
            size += len(gap)
        starts.append(size)
        piece = text[sentences[i].start : sentences[i].end]
        parts.append(piece)
        size += len(piece)
    return "".join(parts), starts


def _content_words(text: str) -> set[str]:
    return {folded for w in word_spans(text) if (folded := fold(w.text)) not in STOPWORDS}


def _candidates(
    sentence: str, passages: tuple[str, ...], cited: set[int], words: dict[int, set[str]]
) -> list[int]:
    """The passages a failing sentence is searched in: every one it does not cite, or, past
    :data:`SEARCH_PASSAGES` of them, those sharing the most content words with it."""
    others = [p for p in range(len(passages)) if p not in cited]
    if len(others) <= SEARCH_PASSAGES:
        return others
    mine = _content_words(sentence)
    for p in others:
        if p not in words:
            words[p] = _content_words(passages[p])
    shared = [(len(mine & words[p]), p) for p in others]
    best = sorted((item for item in shared if item[0]), key=lambda item: (-item[0], item[1]))
    return sorted(p for _, p in best[:SEARCH_PASSAGES])


def _span_verdict(result: GroundednessResult, start: int, end: int) -> tuple[Verdict, float] | None:
    """The verdict of the clean span ``[start, end)`` in a check of the whole clean answer: the
    weakest judge sentence overlapping it; ``None`` if the judge gave no sentences."""
    overlapping = [s for s in result.sentences if s.start < end and start < s.end]
    if not overlapping:
        return None
    worst = min(overlapping, key=lambda s: s.score)
    assert worst.verdict is not None  # a result's sentences all have the checker's verdict
    return worst.verdict, worst.score


def _sentences(
    clean: Clean, markers: list[CitationMarker], refs: list[PassageRef], sources: list[str]
) -> tuple[list[_Sentence], bool]:
    """The clean answer's sentences, each with its markers and the passages they resolve to (or
    the labels that resolve to none); and whether the answer cites by id."""
    spans = split_sentences(clean.text)
    if not spans:
        raise InvalidInputError(
            "answer holds nothing but citation markers; there is no sentence to check.",
            field="answer",
        )
    sentences = [_Sentence(s.start, s.end, [], [], []) for s in spans]
    starts = [s.start for s in sentences]
    for marker, at in zip(markers, clean.marker_at):
        # the sentence it sits in, else the one it follows, else the first
        owner = max(0, bisect_right(starts, at) - 1)
        sentences[owner].markers.append(marker)
    by_id = False
    for s in sentences:
        own = [lb for m in s.markers for lb in m.labels]
        for label in own or sources:
            ref = resolve(label, refs)
            if ref is None:
                if label not in s.dangling:
                    s.dangling.append(label)
            elif ref not in s.cited:
                s.cited.append(ref)
                by_id = by_id or (ref.id is not None and ref.id.casefold() == label.casefold())
    return sentences, by_id


def _key(s: _Sentence) -> tuple[int, ...]:
    """The set of passages a sentence cites, as the key of the group it is judged in."""
    return tuple(sorted(r.index for r in s.cited))


def citation_plan(
    passages: tuple[str, ...],
    answer: str,
    markers: list[CitationMarker],
    refs: list[PassageRef],
    options: Request,
    require_citations: bool,
    sources: list[str],
    judge: JudgeInfo,
    started: float,
) -> Plan:
    """The whole check as a generator: it yields batches of core check requests and receives
    their results, so the sync and async entry points share every decision."""
    clean = strip_markers(answer, markers)
    options = {**options, "answer": clean.text}
    sentences, by_id = _sentences(clean, markers, refs, sources)
    uses_citations = bool(markers or sources)

    # Round 1: each distinct set of cited passages against the sentences that cite it.
    citing: dict[tuple[int, ...], list[int]] = {}
    for i, s in enumerate(sentences):
        if s.cited:
            citing.setdefault(_key(s), []).append(i)
    # (passages, sentence) -> (verdict, score)
    verdicts, checks = yield from _judge_groups(
        clean.text,
        sentences,
        [([passages[p] for p in key], key, members) for key, members in sorted(citing.items())],
        options,
    )

    def cited_support(i: int, s: _Sentence) -> CitationSupport | None:
        if not s.cited:
            return None
        key = _key(s)
        found = verdicts[(key, i)]
        assert found is not None  # filled above, by span or by a sentence check
        return CitationSupport(passages=list(key), verdict=found[0], score=round(found[1], 6))

    supports = [cited_support(i, s) for i, s in enumerate(sentences)]
    cite_mode = uses_citations or require_citations
    needs_search = [
        i
        for i, (s, sup) in enumerate(zip(sentences, supports))
        if (sup is not None and sup.verdict is not Verdict.GROUNDED)
        or (s.dangling and not s.cited)
        or (not s.cited and cite_mode and _is_claim(clean.text[s.start : s.end]))
    ]

    # Round 2: where does support lie? Each candidate passage alone, against the failing
    # sentences it is a candidate for.
    searched: dict[int, list[int]] = {}
    searching: dict[int, list[int]] = {}
    words: dict[int, set[str]] = {}
    for i in needs_search:
        text = clean.text[sentences[i].start : sentences[i].end]
        cited_idx = {r.index for r in sentences[i].cited}
        searched[i] = _candidates(text, passages, cited_idx, words)
        for p in searched[i]:
            searching.setdefault(p, []).append(i)
    alone, searches = yield from _judge_groups(
        clean.text,
        sentences,
        [([passages[p]], (p,), members) for p, members in sorted(searching.items())],
        options,
    )
    checks += searches

    out: list[CitedSentence] = []
    for i, (s, sup) in enumerate(zip(sentences, supports)):
        elsewhere = [
            refs[p]
            for p in searched.get(i, [])
            if (v := alone[((p,), i)]) is not None and v[0] is Verdict.GROUNDED
        ]
        claim_text = clean.text[s.start : s.end]
        claim = bool(s.cited or s.dangling) or _is_claim(claim_text)
        status, reason = _status(s, sup, elsewhere, claim, cite_mode, len(passages), by_id)
        start = clean.original(s.start, end=False)
        end = clean.original(s.end, end=True)
        end = max([end] + [m.end for m in s.markers if m.start >= start])
        out.append(
            CitedSentence(
                index=i,
                text=answer[start:end],
                claim_text=claim_text,
                start=start,
                end=end,
                offset=IndexDetails.offset_of(answer, start),
                length=IndexDetails.length_of(answer[start:end]),
                markers=s.markers,
                cited=s.cited,
                dangling=s.dangling,
                claim=claim,
                supported_by_cited=sup,
                supported_elsewhere=elsewhere,
                status=status,
                reason=reason,
            )
        )
    return CitationResult(
        answer=answer,
        sentences=out,
        markers=markers,
        passages=refs,
        uses_citations=uses_citations,
        by_id=by_id,
        judge=judge,
        checks=checks,
        latency_ms=round((time.perf_counter() - started) * 1000, 3),
    )


def _status(
    s: _Sentence,
    sup: CitationSupport | None,
    elsewhere: list[PassageRef],
    claim: bool,
    cite_mode: bool,
    n_passages: int,
    by_id: bool,
) -> tuple[CitationStatus, str]:
    """A sentence's status and its reason, from what its citations and the search found."""

    def names(items: list[PassageRef]) -> str:
        return ", ".join(f"[{r.label(by_id)}]" for r in items)

    if s.dangling:
        reason = (
            f"cites {', '.join(f'[{d}]' for d in s.dangling)}, which "
            f"{'is' if len(s.dangling) == 1 else 'are'} not among the "
            f"{n_passages} passages"
        )
        if elsewhere:
            reason += f"; {names(elsewhere)} supports it"
        return CitationStatus.DANGLING, reason
    if sup is not None and sup.verdict is Verdict.GROUNDED:
        return CitationStatus.OK, f"supported by {names(s.cited)}"
    if sup is not None and elsewhere:
        return CitationStatus.MISCITED, (
            f"cites {names(s.cited)}, which does not support it "
            f"({sup.verdict.value}, score {sup.score:.2f}); cite {names(elsewhere)} instead"
        )
    if sup is not None:
        return CitationStatus.UNSUPPORTED, (
            f"cites {names(s.cited)}, but no passage supports it "
            f"({sup.verdict.value}, score {sup.score:.2f})"
        )
    if cite_mode and claim:
        return CitationStatus.UNCITED_CLAIM, (
            f"makes a claim without a citation; cite {names(elsewhere)}"
            if elsewhere
            else "makes a claim without a citation, and no passage supports it"
        )
    return CitationStatus.OK, "cites nothing and makes no claim to cite"


def _judge_groups(
    text: str,
    sentences: list[_Sentence],
    groups: list[tuple[list[str], tuple[int, ...], list[int]]],
    options: Request,
) -> Generator[
    list[Request], list[GroundednessResult], tuple[dict[tuple[tuple[int, ...], int], _Found], int]
]:
    """Judge each group's sentences against its passages: one check per group of the excerpt
    of its sentences, then, for a judge that gives no sentence verdicts, one check per sentence.
    Returns ``{(passages key, sentence): (verdict, score)}`` and the number of checks."""
    if not groups:
        return {}, 0
    excerpts = [_excerpt(text, sentences, members) for _, _, members in groups]
    results = yield [
        {**options, "context": context, "answer": excerpt}
        for (context, _, _), (excerpt, _) in zip(groups, excerpts)
    ]
    checks = len(groups)
    found: dict[tuple[tuple[int, ...], int], _Found] = {}
    for (_, key, members), (_, starts), result in zip(groups, excerpts, results):
        for i, start in zip(members, starts):
            length = sentences[i].end - sentences[i].start
            found[(key, i)] = _span_verdict(result, start, start + length)
    # A judge without sentence verdicts: judge each sentence's text alone instead.
    missing = [(context, key, i) for context, key, members in groups for i in members]
    missing = [item for item in missing if found[(item[1], item[2])] is None]
    if missing:
        results = yield [
            {
                **options,
                "context": context,
                "answer": text[sentences[i].start : sentences[i].end],
            }
            for context, _, i in missing
        ]
        checks += len(missing)
        for (_, key, i), result in zip(missing, results):
            found[(key, i)] = (result.verdict, result.score)
    return found, checks
