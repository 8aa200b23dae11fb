"""CrossEncoderJudge: a small fine-tuned claim-support cross-encoder, stacked with the heuristic.

The model (MiniLM-L6, fine-tuned by ``training/train_cross_encoder.py``, exported to int8 ONNX by
``training/export_onnx.py``) scores (context window, answer sentence) pairs. Each sentence gets
its best probability over the few context windows that share the most rare words with it.
Those supports are stacked with :class:`HeuristicJudge`'s features by a small logistic model
per task; the heuristic's hard checks still apply, so a figure that contradicts the context
stays notGrounded whatever the model says.

Runs on ``onnxruntime`` + ``tokenizers`` (extra ``[model]``): no torch, no transformers, no
network. The model directory holds ``model.onnx``, ``tokenizer.json`` and ``stack.json``.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, MissingDependencyError
from ..models import GroundednessRequest, Task
from .base import Judge, Judgement, Thresholds
from .heuristic import (
    FEATURE_NAMES,
    HeuristicJudge,
    SentenceFeatures,
    _analyse,
    _answer_sentences,
    _ContextIndex,
    answer_features,
    answer_vector,
)

__all__ = ["STACK_FEATURES", "CrossEncoderJudge", "top_windows"]

#: Stacker inputs: the heuristic's features, then the model's (1 - support) for the sentence.
STACK_FEATURES = (*FEATURE_NAMES, "model_unsupported")


def top_windows(index: _ContextIndex, sentence: str, k: int, width: int = 2) -> list[str]:
    """The ``k`` context windows (up to ``width`` consecutive sentences) sharing most rare words
    with ``sentence``; the first windows of the context when nothing is shared."""
    stems = set(_analyse(sentence).stems)
    scored: list[tuple[float, int, int]] = []
    for i, first in enumerate(index.sentences):
        covered: set[str] = set()
        for j in range(i, min(len(index.sentences), i + width)):
            if index.sentences[j].passage != first.passage:
                break
            covered |= stems & index.sentences[j].stems
            scored.append((sum(index.idf.get(s, 0.0) for s in covered), i, j))
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    out: list[str] = []
    for _, i, j in scored:
        text = " ".join(s.text for s in index.sentences[i : j + 1])
        if text not in out:
            out.append(text)
        if len(out) == k:
            break
    return out


@dataclass(frozen=True)
class _Stacker:
    bias: float
    coef: tuple[float, ...]

    def score(self, vector: Sequence[float]) -> float:
        z = self.bias + sum(c * x for c, x in zip(self.coef, vector))
        return 1.0 / (1.0 + math.exp(min(50.0, max(-50.0, z))))


class CrossEncoderJudge(Judge):
    """The trained cross-encoder stacked with the heuristic's checks.

    Args:
        model_path: directory with ``model.onnx``, ``tokenizer.json`` and ``stack.json``.
        windows: candidate context windows scored per sentence.
        max_length: tokens per (window, sentence) pair.
        batch_size: pairs per ONNX run.
        threads: onnxruntime intra-op threads (None: its default).
    """

    name = "cross-encoder"
    _version = "1"

    @property
    def version(self) -> str:  # type: ignore[override]
        return f"1+stack.{self._version}"

    def __init__(
        self,
        model_path: str | Path,
        *,
        windows: int = 3,
        max_length: int = 128,
        batch_size: int = 32,
        threads: int | None = None,
    ) -> None:
        self.model_path = Path(model_path)
        for needed in ("model.onnx", "tokenizer.json"):
            if not (self.model_path / needed).exists():
                raise ConfigurationError(
                    f"CrossEncoderJudge: {self.model_path / needed} is missing"
                )
        self.stackers: dict[Task, _Stacker] | None = None
        stack = self.model_path / "stack.json"
        if stack.exists():  # absent only while fitting it (benchmarks/fit_stacked.py)
            meta = json.loads(stack.read_text(encoding="utf-8"))
            if tuple(meta["features"]) != STACK_FEATURES:
                raise ConfigurationError("stack.json was fitted on other features; refit it")
            self.stackers = {
                Task(t): _Stacker(w["bias"], tuple(w["coef"])) for t, w in meta["tasks"].items()
            }
            self.default_thresholds = Thresholds(**meta["thresholds"])
            self._version = str(meta.get("version", "1"))
        self.windows = windows
        self.max_length = max_length
        self.batch_size = batch_size
        self.threads = threads
        self.heuristic = HeuristicJudge()
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CrossEncoderJudge(model_path={str(self.model_path)!r})"

    def cache_key(self) -> str:
        return f"{self.name}:{self.version}:{self.model_path}:{self.windows}:{self.max_length}"

    def config(self) -> dict[str, Any]:
        return {
            "model_path": str(self.model_path),
            "windows": self.windows,
            "max_length": self.max_length,
            "batch_size": self.batch_size,
        }

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                try:
                    import onnxruntime as ort
                    from tokenizers import Tokenizer
                except ImportError as exc:
                    raise MissingDependencyError("onnxruntime and tokenizers", "model") from exc
                options = ort.SessionOptions()
                if self.threads:
                    options.intra_op_num_threads = self.threads
                self._session = ort.InferenceSession(
                    str(self.model_path / "model.onnx"), options, providers=["CPUExecutionProvider"]
                )
                tokenizer = Tokenizer.from_file(str(self.model_path / "tokenizer.json"))
                tokenizer.enable_truncation(self.max_length, strategy="longest_first")
                tokenizer.enable_padding()
                self._tokenizer = tokenizer
            return self._session, self._tokenizer

    def support(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(supported) for each (premise, claim) pair."""
        import numpy as np

        session, tokenizer = self._load()
        out: list[float] = []
        for i in range(0, len(pairs), self.batch_size):
            encodings = tokenizer.encode_batch(list(pairs[i : i + self.batch_size]))
            feed = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            logits = session.run(None, feed)[0].reshape(-1)
            out.extend(float(1.0 / (1.0 + np.exp(-x))) for x in logits)
        return out

    def features(
        self, request: GroundednessRequest
    ) -> tuple[list[str], list[SentenceFeatures], list[float]]:
        """Answer sentences, their heuristic features and their model support."""
        index = self.heuristic._index(request.context)
        given = _analyse(request.query) if request.task is Task.QNA and request.query else None
        sentences = [s.text for s in _answer_sentences(request.answer)]
        feats = answer_features(index, sentences, given, request.domain, self.heuristic.window)
        pairs: list[tuple[str, str]] = []
        owners: list[int] = []
        for i, (text, f) in enumerate(zip(sentences, feats)):
            if f.checkable:
                for window in top_windows(index, text, self.windows):
                    pairs.append((window, text))
                    owners.append(i)
        probs = self.support(pairs) if pairs else []
        support = [1.0] * len(sentences)
        best: dict[int, float] = {}
        for owner, p in zip(owners, probs):
            best[owner] = max(best.get(owner, 0.0), p)
        for owner, p in best.items():
            support[owner] = p
        return sentences, feats, support

    @staticmethod
    def stack_vector(feats: Sequence[SentenceFeatures], support: Sequence[float]) -> list[float]:
        """The stacker's input for a whole answer: heuristic answer vector + weakest support."""
        weakest = min((s for f, s in zip(feats, support) if f.checkable), default=1.0)
        return [*answer_vector(feats), 1.0 - weakest]

    def judge(self, request: GroundednessRequest) -> Judgement:
        if self.stackers is None:
            raise ConfigurationError(
                f"{self.model_path / 'stack.json'} is missing: "
                "fit it with benchmarks/fit_stacked.py"
            )
        _, feats, support = self.features(request)
        stacker = self.stackers[request.task]
        base = self.heuristic.judge(request)
        overall = 1.0
        if any(f.checkable or f.values["opens_with_question"] for f in feats):
            overall = stacker.score(self.stack_vector(feats, support))
            for f in feats:
                if f.checkable:
                    overall = self.heuristic._cap(overall, f)
        cut = self.default_thresholds
        out = []
        for s, f, p in zip(base.sentences, feats, support):
            score = stacker.score([*f.vector(), 1.0 - p]) if f.checkable else s.score
            score = self.heuristic._cap(score, f) if f.checkable else score
            if cut.verdict(overall).value == "grounded":
                score = max(score, overall)
            reason = s.reason
            if cut.verdict(score).value != "grounded" and f.checkable:
                reason = f"{reason} (the model's support: {p:.2f})"
            out.append(
                s.model_copy(
                    update={
                        "score": round(score, 6),
                        "verdict": cut.verdict(score),
                        "reason": reason,
                    }
                )
            )
        if cut.verdict(overall).value != "grounded" and all(
            cut.verdict(s.score).value == "grounded" for s in out
        ):
            weakest = min(range(len(out)), key=lambda i: out[i].score)
            out[weakest] = out[weakest].model_copy(
                update={"score": overall, "verdict": cut.verdict(overall)}
            )
        return Judgement(score=overall, sentences=out)
