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
"""

from __future__ import annotations

import asyncio
import re
import time
from bisect import bisect_right
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from ._markers import (
    _ID_LIKE,
    _INLINE_CODE,
    _LABEL_WORD,
    _NUMBER_ITEM,
    _SEPARATOR,
    _URL,
    DEFAULT_CITATION_PATTERN,
    _not_a_citation,
    _spans,
)
from .errors import ConfigurationError, InvalidInputError, UngroundedAnswerError
from .judges._lexicon import STOPWORDS
from .models import Domain, GroundednessResult, IndexDetails, JudgeInfo, Task, Verdict
from .text import fold, split_sentences, word_spans

if TYPE_CHECKING:  # pragma: no cover
    from .checker import ContextLike, GroundednessChecker
    from .policies import Decision, Policy

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

# -- the marker grammar (in ._markers, which the judges share) ---------------------------------

_ITEM_SPLIT = re.compile(_SEPARATOR, re.IGNORECASE)
_LABEL_PREFIX = re.compile(rf"^\s*{_LABEL_WORD}#?", re.IGNORECASE)
_RANGE = re.compile(r"^(\d{1,3})\s*[-\u2013]\s*(?:" + _LABEL_WORD + r")?#?(\d{1,3})$", re.I)
_MAX_RANGE = 20


def compile_pattern(pattern: str | re.Pattern[str] | None) -> re.Pattern[str]:
    """The citation regex: ``None`` gives :data:`DEFAULT_CITATION_PATTERN`.

    A custom pattern must have a named group ``refs`` holding the labels (split at commas,
    semicolons and "and") and must not match the empty string; otherwise
    :class:`ConfigurationError` says what to change. Example: ``r"\\(see (?P<refs>\\d+)\\)"``.
    """
    if pattern is None:
        return re.compile(DEFAULT_CITATION_PATTERN, re.IGNORECASE)
    if isinstance(pattern, re.Pattern):
        compiled = pattern
    elif isinstance(pattern, str):
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise ConfigurationError(
                f"citation pattern {pattern!r} is not a valid regular expression: {exc}"
            ) from None
    else:
        raise ConfigurationError(
            f"citation pattern must be a str or a compiled regex, got {type(pattern).__name__}"
        )
    if "refs" not in compiled.groupindex:
        raise ConfigurationError(
            f"citation pattern {compiled.pattern!r} has no named group 'refs'; wrap the part "
            r"that holds the source labels in (?P<refs>...), e.g. r'\[(?P<refs>\d+)\]'."
        )
    if compiled.fullmatch("") is not None:
        raise ConfigurationError(
            f"citation pattern {compiled.pattern!r} matches the empty string; it must match "
            "the marker's characters (e.g. its brackets)."
        )
    return compiled


def _id_pattern(ids: Sequence[str]) -> re.Pattern[str]:
    """The default grammar widened to known ids and id-like labels."""
    known = "|".join(re.escape(i) for i in sorted(set(ids), key=len, reverse=True) if i)
    item = f"(?:{known}|{_NUMBER_ITEM}|{_ID_LIKE})" if known else f"(?:{_NUMBER_ITEM}|{_ID_LIKE})"
    return re.compile(rf"\[\^?\s*(?P<refs>{item}(?:{_SEPARATOR}{item})*)\s*\]", re.IGNORECASE)


def _labels(refs: str) -> list[str]:
    """The labels of one marker's ``refs`` group: "Source 1, 3-4" -> ["1", "3", "4"]."""
    out: list[str] = []
    for raw in _ITEM_SPLIT.split(refs):
        item = raw.strip()
        if not item:
            continue
        numeric = _LABEL_PREFIX.sub("", item).strip()
        rng = _RANGE.match(numeric)
        if rng is not None:
            lo, hi = int(rng.group(1)), int(rng.group(2))
            if lo <= hi and hi - lo < _MAX_RANGE:
                out.extend(str(n) for n in range(lo, hi + 1))
                continue
        out.append(numeric if numeric.isdigit() else item.lstrip("#"))
    return out


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class CitationMarker(_Model):
    """One citation marker in the answer: its text, the labels it holds, and where it is."""

    text: str
    labels: list[str] = Field(description="Source labels as written: numbers or ids.")
    start: int = Field(ge=0, description="Code-point offset in the answer.")
    end: int = Field(ge=0)
    offset: IndexDetails
    length: IndexDetails


def find_citations(
    answer: str,
    *,
    pattern: str | re.Pattern[str] | None = None,
    ids: Sequence[str | None] = (),
) -> list[CitationMarker]:
    """The citation markers of ``answer``, in order, with offsets in three units.

    ``ids``: the passages' ids, so that ``[doc-7]`` style labels are recognised (only with the
    default grammar; a custom ``pattern`` decides for itself).
    """
    known = [i for i in ids if i]
    regex = compile_pattern(pattern) if pattern is not None or not known else _id_pattern(known)
    protected = _spans(_URL, answer) + _spans(_INLINE_CODE, answer)
    out = []
    for m in regex.finditer(answer):
        if m.end() == m.start() or _not_a_citation(answer, m.start(), m.end(), protected):
            continue
        labels = _labels(m.group("refs") or "")
        if not labels:
            continue
        out.append(
            CitationMarker(
                text=m.group(),
                labels=labels,
                start=m.start(),
                end=m.end(),
                offset=IndexDetails.offset_of(answer, m.start()),
                length=IndexDetails.length_of(m.group()),
            )
        )
    return out


# -- passages ---------------------------------------------------------------------------------


def _id_of(item: Any, id_key: str | None) -> str | None:
    node = getattr(item, "node", None)  # a LlamaIndex NodeWithScore
    if node is not None and not isinstance(item, Mapping):
        item = node
    if id_key is not None:
        meta = item if isinstance(item, Mapping) else getattr(item, "metadata", None)
        found = meta.get(id_key) if isinstance(meta, Mapping) else None
        if (
            found is None
            and isinstance(item, Mapping)
            and isinstance(item.get("metadata"), Mapping)
        ):
            found = item["metadata"].get(id_key)
        return None if found is None else str(found)
    if isinstance(item, Mapping):
        found = item.get("id")
        return None if found is None else str(found)
    for attr in ("node_id", "id"):
        found = getattr(item, attr, None)
        if isinstance(found, str | int) and not isinstance(found, bool) and str(found):
            return str(found)
    return None


def passage_ids(context: Any, *, id_key: str | None = None) -> list[str | None]:
    """The id of each passage of ``context``, or ``None`` where it has none.

    By default: a LlamaIndex node's ``node_id``, a LangChain document's ``id``, a mapping's
    ``"id"``. With ``id_key``: ``metadata[id_key]`` (or the mapping's own key), e.g.
    ``id_key="source"``.
    """
    if isinstance(context, str) or not isinstance(context, Sequence):
        context = [context]
    return [_id_of(item, id_key) for item in context]


class PassageRef(_Model):
    """A passage: its 0-based ``index`` in the context, 1-based ``number``, and id if any."""

    index: int = Field(ge=0)
    number: int = Field(ge=1)
    id: str | None = None

    def label(self, by_id: bool = False) -> str:
        return self.id if by_id and self.id else str(self.number)


def _resolve(label: str, refs: list[PassageRef]) -> PassageRef | None:
    """A label is an id when some passage has it (exactly, then ignoring case), else a 1-based
    position; ``None`` when it is neither."""
    for ref in refs:
        if ref.id is not None and ref.id == label:
            return ref
    folded = label.casefold()
    for ref in refs:
        if ref.id is not None and ref.id.casefold() == folded:
            return ref
    if label.isdigit() and 1 <= int(label) <= len(refs):
        return refs[int(label) - 1]
    return None


# -- results ----------------------------------------------------------------------------------


class CitationStatus(str, Enum):
    OK = "ok"
    MISCITED = "miscited"  # supported, but by another passage than the one it cites
    UNSUPPORTED = "unsupported"  # no passage supports it
    UNCITED_CLAIM = "uncited_claim"  # a claim without a citation, where citations are expected
    DANGLING = "dangling"  # cites a passage that does not exist

    def __str__(self) -> str:
        return self.value


class CitationSupport(_Model):
    """A sentence judged against some passages: which, the verdict and the score."""

    passages: list[int] = Field(description="0-based indices of the passages judged against.")
    verdict: Verdict
    score: float = Field(ge=0.0, le=1.0)


class CitedSentence(_Model):
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


class CitationResult(_Model):
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
        return _strip_markers(self.answer, self.markers).text

    def describe(self) -> str:
        """The subject of a policy decision's reason: "citations are notGrounded (1 miscited)"."""
        summary = ", ".join(f"{n} {k}" for k, n in self.counts().items() if n and k != "ok")
        return f"citations are {self.verdict.value}" + (f" ({summary})" if summary else "")

    def _repr_html_(self) -> str:
        """Jupyter's view: the verdict, the answer with its problem sentences highlighted and
        each sentence's citations (:mod:`ground_integrations.display`)."""
        from .display import render_html

        return render_html(self)

    def _repr_markdown_(self) -> str:
        """The same view in Markdown, for renderers without HTML."""
        from .display import render_markdown

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


# -- the check --------------------------------------------------------------------------------


@dataclass
class _Clean:
    """The answer without its markers, and the way back to original offsets."""

    text: str
    starts: list[int]  # clean offset where each kept segment begins
    origins: list[int]  # original offset of the same point
    marker_at: list[int]  # clean offset where each marker was removed

    def original(self, index: int, *, end: bool) -> int:
        """Original offset of clean ``index``; for an ``end`` the end of the preceding char."""
        i = bisect_right(self.starts, index - 1 if end and index > 0 else index) - 1
        i = max(i, 0)
        return self.origins[i] + (index - self.starts[i])


def _strip_markers(answer: str, markers: list[CitationMarker]) -> _Clean:
    parts: list[str] = []
    starts: list[int] = []
    origins: list[int] = []
    marker_at: list[int] = []
    cursor = 0
    size = 0
    for m in markers:
        cut = m.start
        while cut > cursor and answer[cut - 1] in " \t":  # "tall [2]." -> "tall."
            cut -= 1
        if cut == 0 or answer[cut - 1] == "\n":
            cut = m.start
        starts.append(size)
        origins.append(cursor)
        parts.append(answer[cursor:cut])
        size += cut - cursor
        marker_at.append(size)
        cursor = m.end
    starts.append(size)
    origins.append(cursor)
    parts.append(answer[cursor:])
    return _Clean("".join(parts), starts, origins, marker_at)


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
_Plan = Generator[list[Request], list[GroundednessResult], CitationResult]
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
    return worst.verdict, worst.score


def _plan(
    passages: tuple[str, ...],
    answer: str,
    markers: list[CitationMarker],
    refs: list[PassageRef],
    options: Request,
    require_citations: bool,
    sources: list[str],
    judge: JudgeInfo,
    started: float,
) -> _Plan:
    """The whole check as a generator: it yields batches of core check requests and receives
    their results, so the sync and async entry points share every decision."""
    clean = _strip_markers(answer, markers)
    options = {**options, "answer": clean.text}
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
            ref = _resolve(label, refs)
            if ref is None:
                if label not in s.dangling:
                    s.dangling.append(label)
            elif ref not in s.cited:
                s.cited.append(ref)
                by_id = by_id or (ref.id is not None and ref.id.casefold() == label.casefold())
    uses_citations = bool(markers or sources)

    # Round 1: each distinct set of cited passages against the sentences that cite it.
    def key_of(s: _Sentence) -> tuple[int, ...]:
        return tuple(sorted(r.index for r in s.cited))

    citing: dict[tuple[int, ...], list[int]] = {}
    for i, s in enumerate(sentences):
        if s.cited:
            citing.setdefault(key_of(s), []).append(i)
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
        key = key_of(s)
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

        def names(items: list[PassageRef]) -> str:
            return ", ".join(f"[{r.label(by_id)}]" for r in items)

        if s.dangling:
            status = CitationStatus.DANGLING
            reason = (
                f"cites {', '.join(f'[{d}]' for d in s.dangling)}, which "
                f"{'is' if len(s.dangling) == 1 else 'are'} not among the "
                f"{len(passages)} passages"
            )
            if elsewhere:
                reason += f"; {names(elsewhere)} supports it"
        elif sup is not None and sup.verdict is Verdict.GROUNDED:
            status, reason = CitationStatus.OK, f"supported by {names(s.cited)}"
        elif sup is not None and elsewhere:
            status = CitationStatus.MISCITED
            reason = (
                f"cites {names(s.cited)}, which does not support it "
                f"({sup.verdict.value}, score {sup.score:.2f}); cite {names(elsewhere)} instead"
            )
        elif sup is not None:
            status = CitationStatus.UNSUPPORTED
            reason = (
                f"cites {names(s.cited)}, but no passage supports it "
                f"({sup.verdict.value}, score {sup.score:.2f})"
            )
        elif cite_mode and claim:
            status = CitationStatus.UNCITED_CLAIM
            reason = (
                f"makes a claim without a citation; cite {names(elsewhere)}"
                if elsewhere
                else "makes a claim without a citation, and no passage supports it"
            )
        else:
            status, reason = CitationStatus.OK, "cites nothing and makes no claim to cite"
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
) -> _Plan:
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
    return _plan(
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
    """Check each cited sentence of ``answer`` against the passages it cites (see the module
    docstring); :meth:`GroundednessChecker.check_citations` is the usual entry point.

    ``sources``: labels or ids the answer cites as a whole, for answers that list their sources
    apart from the text (LangChain's cited-answer recipe); a sentence without markers of its
    own cites these.
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


# -- policies ---------------------------------------------------------------------------------


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
    from .policies import Policy

    policy = policy or Policy()
    return policy.decide(result, attempt=attempt, can_regenerate=can_regenerate)


def citation_blocked_error(result: CitationResult, decision: Decision) -> UngroundedAnswerError:
    """The error a blocked answer raises, naming the problem sentences."""
    return UngroundedAnswerError(
        f"Answer blocked: {decision.reason}. {result.feedback()}", decision=decision
    )
