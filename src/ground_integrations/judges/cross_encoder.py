"""CrossEncoderJudge, the default judge: a fine-tuned cross-encoder behind a fast lexical stage.

Every check first reads the answer the way :class:`HeuristicJudge` does (sentences, the words
and figures the context lacks, the best-supporting window) and scores it with a small logistic
model over those answer-level features (:mod:`._features`). Only when that score is uncertain
(inside the profile's ``band``) is the model run: a MiniLM-L6 cross-encoder (fine-tuned by
``training/train_cross_encoder.py``, exported to int8 ONNX by ``training/export_onnx.py``) scores
the lexically weakest answer sentences against their best context windows, and a second
logistic model combines both. Most checks therefore cost about a millisecond, and the uncertain
ones a few model runs. Whatever the band, the model also reads the sentences whose negation word
order cannot confirm against their window (``SentenceFeatures.unconfirmed``; at most
:data:`UNCONFIRMED_SENTENCES` a check): a low support makes the negation a contradiction.
The heuristic's hard checks still apply: a figure that contradicts the context stays
notGrounded whatever the models say.

The fitted models are chosen per *profile* (:func:`profile_of`): QnA over several retrieved
passages, QnA over one passage, Summarization (and its one- or two-sentence form), and
Summarization over JSON records (data-to-text). Every fitted number is in ``stack.json`` beside
the model, written by ``benchmarks/fit_default.py``.

Runs on ``onnxruntime`` + ``tokenizers``: no torch, no transformers, no network. The model
directory holds ``model.onnx``, ``tokenizer.json`` and ``stack.json``.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..deadline import checkpoint
from ..errors import ConfigurationError, MissingDependencyError
from ..models import GroundednessRequest, Task, Verdict
from ..text import Span
from ._analysis import SentenceFeatures, cap, confirmed
from ._checks import written_as_context
from ._features import (
    MODEL_FEATURES,
    lexical_vector,
    model_vector,
    plain_missing,
    plain_tokens,
)
from ._index import ContextIndex
from ._language import language_checked
from ._narrowing import Narrower, read_spans_fit
from ._profiles import (
    STACK_FEATURES,
    Profile,
    profile_of,
    run_time_premises,
    top_windows,
)
from ._ranking import Ranker, outranked, rank_vectors, read_margins, rerank, spans_fit
from ._revision import LEXICAL_CODE
from .base import Judge, Judgement, Thresholds
from .heuristic import INDEX_CACHE_BYTES, HeuristicJudge

__all__ = [
    "BUNDLED_MODEL",
    "MODEL_FEATURES",
    "MODEL_PACKAGES",
    "MODEL_PACKAGES_INSTALL",
    "STACK_FEATURES",
    "CrossEncoderJudge",
    "Profile",
    "bundled_model",
    "model_vector",
    "profile_of",
    "run_time_premises",
    "top_windows",
]

#: What the model runs on: part of the core install (a trimmed environment may lack them).
MODEL_PACKAGES = ("onnxruntime", "tokenizers", "numpy")
#: The command that brings them back.
MODEL_PACKAGES_INSTALL = "pip install " + " ".join(MODEL_PACKAGES)
#: Where a wheel carries its model (``model.onnx``, ``tokenizer.json``, ``stack.json``).
BUNDLED_MODEL = Path(__file__).resolve().parent.parent / "_model"
#: The ``stack.json`` format this code reads (written by ``benchmarks/fit_default.py``).
STACK_VERSION = "3"
#: Model pairs per check at most by default (``CrossEncoderJudge``): about 0.6 s on one thread.
MAX_MODEL_PAIRS = 24
#: A negation word order cannot confirm (``SentenceFeatures.unconfirmed``) is a contradiction
#: when the model's support for its sentence against its 3-sentence window is below this; the
#: model reads at most :data:`UNCONFIRMED_SENTENCES` such sentences a check.
UNCONFIRMED_VETO = 0.2
UNCONFIRMED_SENTENCES = 4
_WORDS = re.compile(r"\w+")


def bundled_model() -> Path | None:
    """The model directory shipped inside this install, or None if it carries none."""
    if all((BUNDLED_MODEL / f).is_file() for f in ("model.onnx", "tokenizer.json", "stack.json")):
        return BUNDLED_MODEL
    return None


def model_digest(model: bytes) -> str:
    """How ``stack.json`` names the model it was fitted with: sha256 of model.onnx, 12 hex."""
    return hashlib.sha256(model).hexdigest()[:12]


def length_buckets(lengths: Sequence[int], batch_size: int, waste: float = 0.15) -> list[list[int]]:
    """Indices of ``lengths`` grouped for batched runs: sorted by length, a bucket closes when
    padding it to its longest member would waste more than ``waste`` of its tokens or when it
    holds ``batch_size`` items. Deterministic for a given list."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    buckets: list[list[int]] = []
    current: list[int] = []
    total = 0
    for i in order:
        n = lengths[i]
        # ascending order: the new item is the bucket's longest
        if current and (
            len(current) >= batch_size
            or n * (len(current) + 1) - (total + n) > waste * n * (len(current) + 1)
        ):
            buckets.append(current)
            current, total = [], 0
        current.append(i)
        total += n
    if current:
        buckets.append(current)
    return buckets


def context_words(request: GroundednessRequest) -> int:
    """How many words the context has (a feature: long contexts make overlap easier)."""
    return sum(len(_WORDS.findall(p)) for p in request.context)


def given_tokens(request: GroundednessRequest) -> frozenset[str]:
    """The plain tokens an answer may use: the context's, and in QnA the query's."""
    query = request.query if request.task is Task.QNA and request.query else ""
    return frozenset(plain_tokens(" ".join(request.context) + " " + query))


def window_pairs(
    index: ContextIndex,
    spans: Sequence[Span],
    feats: Sequence[SentenceFeatures],
    sentences: Sequence[int],
) -> list[tuple[str, str]]:
    """One model pair for each of ``sentences``: its 3-sentence window
    (:func:`run_time_premises`) and the sentence with the figures the figure check matched
    written the context's way."""
    return [
        (
            (run_time_premises(index, spans[i].text) or [""])[0],
            written_as_context(spans[i].text, feats[i].as_context),
        )
        for i in sentences
    ]


class CrossEncoderJudge(Judge):
    """The default judge: a lexical stage, and the trained cross-encoder where it is unsure.

    Args:
        model_path: directory with ``model.onnx``, ``tokenizer.json`` and ``stack.json``;
            the model bundled with the package by default.
        max_length: tokens per (window, sentence) pair.
        batching: how the model's pairs are run; the stackers were fitted on supports
            computed one way, so ``stack.json`` says which (``None``: its ``"batching"``,
            ``"padded"`` when it says nothing). ``"pair"``: each (window, sentence) pair alone,
            so its support does not depend on the rest of the answer (the int8 model quantises
            activations per run) and no pair pays for another's padding. ``"padded"``: the
            pairs of a check in batches padded to their longest, as the bundled stackers were
            fitted.
        batch_size: pairs per ONNX run (default 32 for ``"padded"``, 1 for ``"pair"``; above
            1, ``"pair"`` runs buckets of similar token length).
        threads: onnxruntime intra-op threads per model run; 1 by default, the fastest on a
            busy 2-core machine (``benchmarks/results/threads.txt``: a batch of four pairs took
            225 ms on one thread against 258 on two and 289 with onnxruntime's default, every
            core, while another process kept one core busy); None: onnxruntime's default.
        always_run_model: run the model on every check (not only uncertain ones), on as many
            sentences as the profile says; slower, for audits that can afford it.
        index_cache_size: contexts indexed recently are kept for the lexical stage (a
            regenerate loop or a chat reuses them); 0 indexes every context anew.
        index_cache_bytes: the memory those kept indexes may take in all (see
            :class:`HeuristicJudge`; 256 MiB by default).
        max_model_pairs: at most this many (window, sentence) pairs are run through the model
            in one check, the lexically weakest sentences first, then the negations it confirms
            (about 25 ms a pair on one thread): it bounds a check's cost whatever the answer's
            length. Sentences beyond it are judged by the lexical stage alone.
    """

    name = "cross-encoder"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        max_length: int = 128,
        batching: str | None = None,
        batch_size: int | None = None,
        threads: int | None = 1,
        always_run_model: bool = False,
        index_cache_size: int = 32,
        index_cache_bytes: int = INDEX_CACHE_BYTES,
        max_model_pairs: int = MAX_MODEL_PAIRS,
    ) -> None:
        if model_path is None:
            model_path = bundled_model()
            if model_path is None:
                raise ConfigurationError(
                    "this install carries no bundled model: pass model_path= (a directory made by "
                    "training/export_onnx.py and benchmarks/fit_default.py --write)"
                )
        self.model_path = Path(model_path)
        for needed in ("model.onnx", "tokenizer.json"):
            if not (self.model_path / needed).exists():
                raise ConfigurationError(
                    f"CrossEncoderJudge: {self.model_path / needed} is missing"
                )
        self.profiles: dict[str, Profile] | None = None
        self._stack_version = "none"
        self._model_digest: str | None = None
        self._fit_digest: str | None = None
        self._stack_batching = "padded"
        #: per profile (``spans.json``; absent: none): which doubted sentences of a flagged
        #: answer carry the blame (:mod:`._ranking`), which words of a flagged sentence
        #: (:mod:`._narrowing`), how far above the weakest flagged one a flagged one may score
        self.rankers: dict[str, Ranker] = {}
        self.narrowers: dict[str, Narrower] = {}
        self.margins: dict[str, float] = {}
        stack = self.model_path / "stack.json"
        if stack.exists():  # absent only while fitting it (benchmarks/fit_default.py)
            self._read_stack(stack)
        self.max_length = max_length
        if batching is None:
            batching = self._stack_batching
        if batching not in ("pair", "padded"):
            raise ConfigurationError(f"batching must be 'pair' or 'padded', not {batching!r}")
        self.batching = batching
        self.batch_size = batch_size or (1 if batching == "pair" else 32)
        self.threads = threads
        self.always_run_model = always_run_model
        if max_model_pairs < 1:
            raise ConfigurationError(f"max_model_pairs must be at least 1, not {max_model_pairs}")
        self.max_model_pairs = max_model_pairs
        self.heuristic = HeuristicJudge(
            index_cache_size=index_cache_size, index_cache_bytes=index_cache_bytes
        )
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _read_stack(self, stack: Path) -> None:
        raw = stack.read_bytes()
        meta = json.loads(raw.decode("utf-8"))
        if str(meta.get("version")) != STACK_VERSION:
            raise ConfigurationError(
                f"{stack} has format version {meta.get('version')!r}; this release reads "
                f"version {STACK_VERSION}: refit it with benchmarks/fit_default.py --write"
            )
        try:
            self.profiles = {
                name: Profile.from_json(spec) for name, spec in meta["profiles"].items()
            }
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(
                f"{stack} was fitted on other features ({exc}); refit it with "
                "benchmarks/fit_default.py --write"
            ) from exc
        self.default_thresholds = Thresholds(**meta["thresholds"])
        self._stack_version = STACK_VERSION
        spans = stack.with_name("spans.json")
        if spans.exists():
            ranking = spans.read_bytes()
            try:
                fitted = spans_fit(ranking)  # parsed once, read twice
                self.rankers, self.narrowers = read_spans_fit(fitted)
                self.margins = read_margins(fitted)
            except (KeyError, TypeError, ValueError) as exc:
                raise ConfigurationError(
                    f"{spans} is not a ranking this release reads ({exc}); refit it with "
                    "benchmarks/fit_spans.py --write"
                ) from exc
            raw += ranking
        # the fit (every fitted number, the ranking's too, the model's digest) is part of the
        # version: results, caches and calibrated thresholds of one fit are not another's
        self._fit_digest = hashlib.sha256(raw).hexdigest()[:8]
        # the model the stackers were fitted with (model.onnx's sha256), checked at load
        self._model_digest = meta.get("model")
        self._stack_batching = str(meta.get("batching", "padded"))

    @property
    def version(self) -> str:  # type: ignore[override]
        # the fit, then the revision of the code that reads words (:mod:`._revision`)
        if self._fit_digest:
            return f"2+stack.{self._stack_version}+{self._fit_digest}+lex.{LEXICAL_CODE}"
        return f"2+stack.{self._stack_version}+lex.{LEXICAL_CODE}"

    def __repr__(self) -> str:
        return f"CrossEncoderJudge(model_path={str(self.model_path)!r})"

    def cache_key(self) -> str:
        return (
            f"{self.name}:{self.version}:{self.model_path}:{self.max_length}:"
            f"{self.always_run_model}:{self.batching}:{self.max_model_pairs}"
        )

    def config(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "max_length": self.max_length,
            "batching": self.batching,
            "batch_size": self.batch_size,
        }
        if self.model_path != BUNDLED_MODEL:
            out["model_path"] = str(self.model_path)
        if self.always_run_model:
            out["always_run_model"] = True
        if self.max_model_pairs != MAX_MODEL_PAIRS:
            out["max_model_pairs"] = self.max_model_pairs
        return out

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                try:
                    import onnxruntime as ort
                    from tokenizers import Tokenizer
                except ImportError as exc:
                    raise MissingDependencyError(
                        "onnxruntime and tokenizers", None, install=MODEL_PACKAGES_INSTALL
                    ) from exc
                options = ort.SessionOptions()
                if self.threads:
                    options.intra_op_num_threads = self.threads
                model = (self.model_path / "model.onnx").read_bytes()
                if self._model_digest and not model_digest(model).startswith(self._model_digest):
                    raise ConfigurationError(
                        f"{self.model_path / 'stack.json'} was fitted for model "
                        f"{self._model_digest}, but model.onnx is {model_digest(model)}: refit "
                        "it with benchmarks/fit_default.py --write (or restore the model)"
                    )
                self._session = ort.InferenceSession(
                    model, options, providers=["CPUExecutionProvider"]
                )
                tokenizer = Tokenizer.from_file(str(self.model_path / "tokenizer.json"))
                tokenizer.enable_truncation(self.max_length, strategy="longest_first")
                tokenizer.no_padding()  # support() pads each length bucket itself
                self._tokenizer = tokenizer
            return self._session, self._tokenizer

    def support(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(supported) for each (premise, claim) pair.

        ``batching="padded"``: consecutive batches of ``batch_size``, padded to their longest.
        ``"pair"``: one pair per run, or with ``batch_size`` > 1 buckets of similar token length
        (see :func:`length_buckets`): on a CPU the cost is the padded token count, and one
        check mixes 3-sentence windows with single sentences, which padded together cost
        about three times as much."""
        import numpy as np

        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch(list(pairs))
        out = [0.0] * len(pairs)
        if self.batching == "pair":
            buckets = length_buckets([len(e.ids) for e in encodings], self.batch_size)
        else:
            step = self.batch_size
            buckets = [
                list(range(i, min(i + step, len(pairs)))) for i in range(0, len(pairs), step)
            ]
        for bucket in buckets:
            checkpoint()  # a Deadline (ground_integrations.deadline) stops the check here
            width = max(len(encodings[i].ids) for i in bucket)
            feed = {
                name: np.zeros((len(bucket), width), dtype=np.int64)
                for name in ("input_ids", "attention_mask", "token_type_ids")
            }
            for row, i in enumerate(bucket):
                e = encodings[i]
                n = len(e.ids)
                feed["input_ids"][row, :n] = e.ids
                feed["attention_mask"][row, :n] = e.attention_mask
                feed["token_type_ids"][row, :n] = e.type_ids
            logits = session.run(None, feed)[0]
            if logits.size != len(bucket):
                raise ConfigurationError(
                    f"{self.model_path / 'model.onnx'} gives {logits.size // len(bucket)} "
                    "outputs per pair; the cross-encoder needs one logit (P(supported)): "
                    "export a single-label classifier (training/export_onnx.py)"
                )
            for i, x in zip(bucket, logits.reshape(-1)):
                out[i] = float(1.0 / (1.0 + np.exp(-x)))
        return out

    def _heuristic_only(self, request: GroundednessRequest) -> Judgement:
        judgement = self.heuristic.judge(request)
        return judgement.model_copy(
            update={"decided_by": f"{self.heuristic.name} {self.heuristic.version}"}
        )

    def judge(self, request: GroundednessRequest) -> Judgement:
        if self.profiles is None:
            raise ConfigurationError(
                f"{self.model_path / 'stack.json'} is missing: "
                "fit it with benchmarks/fit_default.py --write"
            )
        index, spans, feats = self.heuristic.analyse(request)
        name = profile_of(request, feats)
        profile = self.profiles.get(name) or self.profiles.get(request.task.value)
        if profile is None:
            # stack.json leaves this task to the heuristic
            return self._heuristic_only(request)
        if not any(f.checkable for f in feats):
            # nothing to score (e.g. an answer that only asks a question)
            return self._heuristic_only(request)
        words = context_words(request)
        given = given_tokens(request)
        plain = plain_missing([s.text for s, f in zip(spans, feats) if f.checkable], given)
        lexical = lexical_vector(feats, request.answer, words, plain)
        overall = profile.lexical.score(lexical)
        support: dict[int, float] = {}
        used = 0
        if profile.model is not None and (self.always_run_model or profile.runs_model(overall)):
            support, used = self._weakest_support(index, spans, feats, request.task, profile)
            overall = profile.model.score([*lexical, *model_vector(list(support.values()))])
        feats, vetoed, confirming = self._confirm_negations(
            index, spans, feats, self.max_model_pairs - used
        )
        used += confirming
        support.update(vetoed)
        for f in feats:
            if f.checkable:
                overall = cap(overall, f)
        scores = self._sentence_scores(profile, spans, feats, words, given, support)
        cleared: dict[int, float] = {}
        outscored: dict[int, float] = {}
        suspected: dict[int, str] = {}
        if self.default_thresholds.verdict(overall) is not Verdict.GROUNDED:
            ranker = self.rankers.get(name) or self.rankers.get(request.task.value)
            if ranker is not None:
                scores, cleared, suspected = self._rank(
                    name,
                    ranker,
                    index,
                    spans,
                    feats,
                    scores,
                    support,
                    given,
                    self.max_model_pairs - used,
                )
            margin = self.margins.get(name)
            if margin is not None:
                scores, outscored = outranked(scores, feats, margin, self.default_thresholds)
        notes = [
            suspected.get(i) or (f"the model's support: {support[i]:.2f}" if i in support else "")
            for i in range(len(spans))
        ]
        found = (index, spans, feats, overall, scores, notes)
        narrower = self.narrowers.get(name)
        judgement = self.heuristic.judgement(
            request,
            *found,
            support=support,
            cleared=cleared,
            outscored=outscored,
            narrower=narrower,
        )
        # language honesty (_language.py): an unread language is notSure unless words decide
        return language_checked(request, judgement, feats, self.default_thresholds)

    def _confirm_negations(
        self,
        index: ContextIndex,
        spans: Sequence[Span],
        feats: Sequence[SentenceFeatures],
        budget: int,
    ) -> tuple[list[SentenceFeatures], dict[int, float], int]:
        """The sentences whose unconfirmed negations the model reads as contradicted (support
        below :data:`UNCONFIRMED_VETO` against the sentence's 3-sentence window) get them as
        conflicts; returned with those sentences' supports and how many pairs ran. One pair a
        sentence, for at most :data:`UNCONFIRMED_SENTENCES` sentences and ``budget`` pairs
        (what is left of ``max_model_pairs``)."""
        pending = [i for i, f in enumerate(feats) if f.checkable and f.unconfirmed]
        pending = pending[: max(0, min(UNCONFIRMED_SENTENCES, budget))]
        if not pending:
            return list(feats), {}, 0
        pairs = window_pairs(index, spans, feats, pending)
        out = list(feats)
        vetoed: dict[int, float] = {}
        for i, p in zip(pending, self.support(pairs)):
            if p < UNCONFIRMED_VETO:
                out[i] = confirmed(feats[i])
                vetoed[i] = p
        return out, vetoed, len(pairs)

    def _rank_vectors(
        self,
        index: ContextIndex,
        spans: Sequence[Span],
        feats: Sequence[SentenceFeatures],
        scores: Sequence[float],
        support: dict[int, float],
        given: frozenset[str],
        budget: int,
    ) -> dict[int, list[float]]:
        """What the ranker reads of the doubted sentences (:func:`._ranking.rank_vectors`); the
        model reads each against its 3-sentence window, at most ``budget`` pairs."""

        def read(need: list[int]) -> dict[int, float]:
            need = need[: max(0, budget)]
            pairs = window_pairs(index, spans, feats, need)
            return dict(zip(need, self.support(pairs))) if pairs else {}

        cut = self.default_thresholds
        return rank_vectors(spans, feats, scores, support, given, cut, read)

    def _rank(
        self,
        name: str,
        ranker: Ranker,
        index: ContextIndex,
        spans: Sequence[Span],
        feats: Sequence[SentenceFeatures],
        scores: list[float],
        support: dict[int, float],
        given: frozenset[str],
        budget: int,
    ) -> tuple[list[float], dict[int, float], dict[int, str]]:
        """``scores`` after the ranker of profile ``name`` (:func:`._ranking.rerank`), the
        sentences it cleared with its probability that they invent something, and a note for
        each passing sentence it flagged."""
        vectors = self._rank_vectors(index, spans, feats, scores, support, given, budget)
        scores, cleared, added = rerank(ranker, vectors, feats, scores, self.default_thresholds)
        notes = {
            i: f"the span ranker reads it as an invention: probability {p:.2f}, the model's "
            f"support {1.0 - vectors[i][0]:.2f}"
            for i, p in added.items()
        }
        return scores, cleared, notes

    def _weakest_support(
        self,
        index: ContextIndex,
        spans: Sequence[Span],
        feats: Sequence[SentenceFeatures],
        task: Task,
        profile: Profile,
    ) -> tuple[dict[int, float], int]:
        """The model's support for the profile's number of lexically weakest checked sentences,
        each the best over its candidate windows, and how many pairs it ran."""
        checked = [i for i, f in enumerate(feats) if f.checkable]
        weakest = sorted(checked, key=lambda i: (self.heuristic.sentence_score(feats[i], task), i))
        pairs: list[tuple[str, str]] = []
        owners: list[int] = []
        per_sentence = sum(count for _, count in profile.windows)
        budget = max(1, self.max_model_pairs // max(1, per_sentence))
        for i in weakest[: min(profile.sentences, budget)]:
            checkpoint()
            premises: list[str] = []
            for width, count in profile.windows:
                premises += [
                    w for w in top_windows(index, spans[i].text, count, width) if w not in premises
                ]
            # the figures the figure check matched, written as the context writes them
            claim = written_as_context(spans[i].text, feats[i].as_context)
            for premise in premises or [""]:
                pairs.append((premise, claim))
                owners.append(i)
        # a budget below one sentence's windows reads its best-ranked windows only
        pairs, owners = pairs[: self.max_model_pairs], owners[: self.max_model_pairs]
        best: dict[int, float] = {}
        for i, p in zip(owners, self.support(pairs) if pairs else []):
            best[i] = max(best.get(i, 0.0), p)
        return best, len(pairs)

    def _sentence_scores(
        self,
        profile: Profile,
        spans: Sequence[Span],
        feats: Sequence[SentenceFeatures],
        words: int,
        given: frozenset[str],
        support: dict[int, float],
    ) -> list[float]:
        """Each sentence judged alone by the same stackers (1.0 when there is nothing to check)."""
        scores = []
        for i, (span, f) in enumerate(zip(spans, feats)):
            checkpoint()
            if not f.checkable and not f.values["opens_with_question"]:
                scores.append(1.0)
                continue
            lexical = lexical_vector([f], span.text, words, plain_missing([span.text], given))
            if i in support and profile.model is not None:
                score = profile.model.score([*lexical, *model_vector([support[i]])])
            else:
                score = profile.lexical.score(lexical)
            scores.append(cap(score, f) if f.checkable else score)
        return scores
