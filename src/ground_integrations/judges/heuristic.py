"""The embedded offline judge: deterministic, no model, no network.

It reads each answer sentence as :mod:`._analysis` does (the words, figures and names the
context lacks, the best-supporting window, the hard checks) and combines those signals with a
small logistic model per task whose weights live in ``_model/heuristic.json``, written by
``benchmarks/fit_heuristic.py``. The score of an answer is the model applied to its weakest
sentence's features, capped by any hard check. In ``QnA`` the query's words count as given. In
the ``Medical`` domain every figure, unit, dose frequency and route must appear in the
supporting window itself.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..deadline import checkpoint
from ..errors import ConfigurationError
from ..models import (
    Evidence,
    GroundednessRequest,
    SentenceJudgement,
    Task,
    UngroundedDetail,
    UngroundedKind,
    Verdict,
)
from ..text import Span, split_sentences, stem
from ._analysis import (
    FEATURE_NAMES,
    SentenceFeatures,
    answer_features,
    answer_sentences,
    answer_vector,
    cap,
)
from ._index import ContextIndex, index_context
from ._narrowing import Narrower
from ._revision import LEXICAL_CODE
from ._spans import MODEL_REJECTS, ungrounded_details
from ._tokens import Tokens, analyse
from .base import Judge, Judgement, Thresholds

__all__ = [
    "DEFAULT_WEIGHTS",
    "FEATURE_NAMES",
    "HeuristicJudge",
    "HeuristicWeights",
    "answer_features",
    "answer_vector",
]

#: Where the fitted weights live (written by ``benchmarks/fit_heuristic.py --write``).
WEIGHTS_FILE = Path(__file__).resolve().parent.parent / "_model" / "heuristic.json"


@dataclass(frozen=True)
class HeuristicWeights:
    """A logistic model over :data:`FEATURE_NAMES` (badness: higher = less grounded)."""

    bias: float
    coef: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.coef) != len(FEATURE_NAMES):
            raise ValueError(f"need {len(FEATURE_NAMES)} coefficients, got {len(self.coef)}")


def load_weights(path: Path = WEIGHTS_FILE) -> dict[Task, HeuristicWeights]:
    """The per-task weights in ``path`` (see :data:`WEIGHTS_FILE`)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if tuple(data["features"]) != FEATURE_NAMES:
        raise ConfigurationError(
            f"{path} was fitted on other features: refit it with "
            "benchmarks/fit_heuristic.py --write"
        )
    return {
        Task(task): HeuristicWeights(float(w["bias"]), tuple(float(c) for c in w["coef"]))
        for task, w in data["tasks"].items()
    }


#: Fitted by ``benchmarks/fit_heuristic.py`` on the development set (one model per task).
DEFAULT_WEIGHTS: dict[Task, HeuristicWeights] = load_weights()


#: A context index takes about this many bytes per character of its context, and
#: :data:`INDEX_BYTES_FIXED` more: measured (tracemalloc) at 50-120 per character on every context
#: of the development sets and on the synthetic ones of ``benchmarks/bench_scaling.py``, so this
#: errs high.
INDEX_BYTES_PER_CHAR = 128
INDEX_BYTES_FIXED = 16_384
#: The default memory budget of a judge's context-index cache.
INDEX_CACHE_BYTES = 256 * 2**20


def index_bytes(context: Sequence[str]) -> int:
    """The memory a context's index is estimated to take (see :data:`INDEX_BYTES_PER_CHAR`)."""
    return INDEX_BYTES_FIXED + INDEX_BYTES_PER_CHAR * sum(len(p) for p in context)


#: a hyphen between two letters: what joins the parts of a hyphenated word
_HYPHEN = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")


class HeuristicJudge(Judge):
    """The embedded offline judge. Deterministic; about a millisecond per short check.

    Args:
        weights: one logistic model per task (defaults: :data:`DEFAULT_WEIGHTS`).
        window: how many consecutive context sentences may jointly support one sentence.
        index_cache_size: at most this many contexts indexed recently are kept (regenerate
            loops reuse them); 0 keeps none.
        index_cache_bytes: and at most this much memory in all, as :func:`index_bytes`
            estimates it (128 bytes per context character). The cache's ceiling is therefore
            this (256 MiB by default: ten contexts of 200,000 characters, or 32 of 60,000),
            and a context whose index alone would exceed it is not kept.
    """

    name = "heuristic"
    # the weights are in cache_key; the code that reads a sentence is named here
    version = f"1.4+lex.{LEXICAL_CODE}"
    default_thresholds = Thresholds(grounded=0.5, not_grounded=0.45)

    def __init__(
        self,
        *,
        weights: dict[Task, HeuristicWeights] | None = None,
        window: int = 3,
        index_cache_size: int = 32,
        index_cache_bytes: int = INDEX_CACHE_BYTES,
    ) -> None:
        if window < 1:
            raise ConfigurationError(f"window must be at least 1 sentence, got {window}")
        self.weights = {**DEFAULT_WEIGHTS, **(weights or {})}
        # Load NLTK's tokenizer and stemmer now (about a second, once per process) rather than
        # inside the first check, where it would show up as that check's latency.
        split_sentences("Warm up. Done.")
        stem("warming")
        self.window = window
        # context -> (its index, index_bytes(context)), least recently used first
        self._index_cache: OrderedDict[tuple[str, ...], tuple[ContextIndex, int]] = OrderedDict()
        self._index_cache_size = index_cache_size
        self._index_cache_bytes = index_cache_bytes
        self._lock = threading.Lock()

    def cache_key(self) -> str:
        return f"{self.name}:{self.version}:{sorted(self.weights.items())}:{self.window}"

    def config(self) -> dict[str, Any]:
        return {
            "window": self.window,
            "index_cache_size": self._index_cache_size,
            "index_cache_bytes": self._index_cache_bytes,
        }

    def __repr__(self) -> str:
        return f"HeuristicJudge(window={self.window})"

    def _index(self, context: tuple[str, ...]) -> ContextIndex:
        with self._lock:
            hit = self._index_cache.get(context)
            if hit is not None:
                self._index_cache.move_to_end(context)
                return hit[0]
        index = index_context(context)
        size = index_bytes(context)
        if self._index_cache_size < 1 or size > self._index_cache_bytes:
            return index
        with self._lock:
            self._index_cache[context] = (index, size)
            cache = self._index_cache
            while (
                len(cache) > self._index_cache_size
                or sum(b for _, b in cache.values()) > self._index_cache_bytes
            ):
                cache.popitem(last=False)
        return index

    def _score(self, vector: Sequence[float], task: Task) -> float:
        w = self.weights[task]
        z = w.bias + sum(c * x for c, x in zip(w.coef, vector))
        return 1.0 / (1.0 + math.exp(min(50.0, max(-50.0, z))))

    @staticmethod
    def _cap(score: float, feats: SentenceFeatures) -> float:
        return cap(score, feats)

    def sentence_score(self, feats: SentenceFeatures, task: Task) -> float:
        """Groundedness of one sentence in [0, 1] from its features."""
        if not feats.checkable and not feats.values["opens_with_question"]:
            return 1.0
        return self._cap(self._score(feats.vector(), task), feats)

    def answer_score(self, feats: Sequence[SentenceFeatures], task: Task) -> float:
        """Groundedness of the answer: the model applied to :func:`answer_vector` (what the
        weights were fitted on), capped by any sentence's hard failure."""
        if not any(f.checkable or f.values["opens_with_question"] for f in feats):
            return 1.0
        score = self._score(answer_vector(feats), task)
        for f in feats:
            if f.checkable:
                score = self._cap(score, f)
        return score

    def judge(self, request: GroundednessRequest) -> Judgement:
        index, spans, all_feats = self.analyse(request)
        overall = self.answer_score(all_feats, request.task)
        scores = [self.sentence_score(f, request.task) for f in all_feats]
        return self.judgement(request, index, spans, all_feats, overall, scores)

    def analyse(
        self, request: GroundednessRequest
    ) -> tuple[ContextIndex, list[Span], list[SentenceFeatures]]:
        """The context index, the answer's sentences and their features."""
        index = self._index(request.context)
        given = self.given(request)
        spans = answer_sentences(request.answer)
        all_feats = answer_features(
            index, [span.text for span in spans], given, request.domain, self.window
        )
        return index, spans, all_feats

    @staticmethod
    def given(request: GroundednessRequest) -> Tokens | None:
        """What the request gives besides the context: in QnA, the query's words, and each
        word of one hyphenated in it ("michigan-how much...", "state-run": "michigan", "state")."""
        if request.task is not Task.QNA or not request.query:
            return None
        tokens = analyse(request.query)
        if "-" in request.query:
            parts = analyse(_HYPHEN.sub(" ", request.query))
            words, stems = set(tokens.words), set(tokens.stems)
            tokens.words.extend(w for w in dict.fromkeys(parts.words) if w not in words)
            tokens.stems.extend(s for s in dict.fromkeys(parts.stems) if s not in stems)
        return tokens

    def judgement(
        self,
        request: GroundednessRequest,
        index: ContextIndex,
        spans: Sequence[Span],
        all_feats: Sequence[SentenceFeatures],
        overall: float,
        scores: list[float],
        notes: Sequence[str] | None = None,
        support: Mapping[int, float] | None = None,
        cleared: Mapping[int, float] | None = None,
        outscored: Mapping[int, float] | None = None,
        narrower: Narrower | None = None,
    ) -> Judgement:
        """A Judgement from an answer score and per-sentence scores, with evidence and reasons.

        ``notes`` (one per sentence, may be empty) is appended to a flagged sentence's reason.
        ``support``: the model's support for the sentences it scored (by sentence index); a
        flagged sentence gets its kind and narrowed spans from :func:`._spans.ungrounded_details`.
        ``cleared``: the sentences of a flagged answer that :mod:`._ranking` cleared, with its
        probability that they invent something (their reason says so). ``outscored``: the
        flagged sentences cleared for scoring well above the answer's weakest flagged one
        (:func:`._ranking.outranked`), with how far above it. ``narrower``: the
        profile's learned narrowing of a flagged sentence's spans (:mod:`._narrowing`).
        """
        given = self.given(request)
        cut = self.default_thresholds
        scores = list(scores)
        if cut.verdict(overall) is Verdict.GROUNDED:
            # The answer as a whole is cleared; no sentence is flagged below it.
            scores = [max(s, overall) for s in scores]
        elif all(cut.verdict(s) is Verdict.GROUNDED for s in scores):
            # The answer as a whole falls short: pin that on its weakest sentence.
            weakest = min(range(len(scores)), key=scores.__getitem__)
            scores[weakest] = min(scores[weakest], overall)
        sentences: list[SentenceJudgement] = []
        for i, (span, feats, score) in enumerate(zip(spans, all_feats, scores)):
            checkpoint()
            verdict = cut.verdict(score)
            evidence = []
            if feats.window is not None and feats.window.coverage > 0:
                first = index.sentences[feats.window.first]
                last = index.sentences[feats.window.last]
                passage = request.context[first.passage]
                evidence.append(
                    Evidence(
                        passage=first.passage,
                        start=first.start,
                        end=last.end,
                        text=passage[first.start : last.end],
                        score=round(min(1.0, feats.window.coverage), 4),
                    )
                )
            if verdict is not Verdict.GROUNDED and feats.values["opens_with_question"]:
                reason = "it asks a question instead of stating what the context supports"
            elif feats.lead_in:
                reason = "nothing to check: it introduces what follows"
            elif feats.courtesy:
                reason = "nothing to check: a courtesy to the reader, not a claim"
            elif feats.coverage_note:
                reason = "nothing to check: it says what the passages do not cover"
            elif feats.about_the_text:
                reason = (
                    "nothing to check: it speaks of the passages or the question, not the subject"
                )
            elif feats.referral:
                reason = "nothing to check: it sends the reader to someone else, not a claim"
            elif feats.citation:
                reason = "nothing to check: it only names the passages it draws on"
            elif not feats.checkable:
                reason = "nothing to check: no content words or figures"
            elif verdict is Verdict.GROUNDED and cleared and i in cleared:
                reason = (
                    "likely supported: the words the context lacks read as its own wording, "
                    f"not an invention (probability {cleared[i]:.2f}); the answer's likelier "
                    "inventions are flagged"
                )
            elif verdict is Verdict.GROUNDED and outscored and i in outscored:
                reason = (
                    "likely supported: the words the context lacks read as the answer's own "
                    f"wording; it scores {outscored[i]:.2f} above the answer's weakest sentence, "
                    "which is flagged"
                )
            elif verdict is Verdict.GROUNDED:
                reason = "supported by the context" + (
                    f" (passage {evidence[0].passage})" if evidence else ""
                )
            else:
                reason = _flagged_reason(feats, (support or {}).get(i), notes[i] if notes else None)
            kind: UngroundedKind | None = None
            details: list[UngroundedDetail] = []
            if verdict is not Verdict.GROUNDED:
                kind = UngroundedKind.UNSUPPORTED
                if feats.checkable:
                    kind, details = ungrounded_details(
                        request.answer,
                        span,
                        feats,
                        index,
                        reason,
                        given,
                        (support or {}).get(i),
                        narrower,
                        round(score, 6),
                    )
            sentences.append(
                SentenceJudgement(
                    index=i,
                    text=span.text,
                    start=span.start,
                    end=span.end,
                    score=round(score, 6),
                    evidence=evidence,
                    reason=reason[:1].upper() + reason[1:],
                    unsupported=feats.unsupported if verdict is not Verdict.GROUNDED else [],
                    kind=kind,
                    ungrounded_details=details,
                )
            )
        return Judgement(score=overall, sentences=sentences)


def _flagged_reason(feats: SentenceFeatures, support: float | None, note: str | None) -> str:
    """Why a checkable sentence is not grounded: what its checks found; else, when every content
    word is in its best passage and the model scored it, that the model reads it otherwise;
    else weak overlap. ``note``: the judge's note on it (the model's support), appended."""
    if feats.reasons:
        reason = "; ".join(feats.reasons)
    elif feats.window is not None and feats.values["missing_local"] == 0 and support is not None:
        if support < MODEL_REJECTS:
            reason = "its words are the context's, but the model reads it as saying otherwise"
        else:
            reason = (
                "its words are the context's, but few stand together as the context writes them"
            )
    else:
        reason = "weakly supported: little overlap with the context"
    return f"{reason} ({note})" if note else reason
