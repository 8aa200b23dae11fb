"""CrossEncoderJudge: a small fine-tuned claim-support cross-encoder, stacked with the heuristic.

The model (MiniLM-L6, fine-tuned by ``training/train_cross_encoder.py``, exported to int8 ONNX by
``training/export_onnx.py``) scores (context window, answer sentence) pairs. Each sentence gets
its best probability over the few context windows that share the most rare words with it (the
window widths and counts are set per task in ``stack.json``). The answer's weakest support, mean
support and share of unsupported sentences are stacked with :class:`HeuristicJudge`'s features
by a small logistic model per task; the heuristic's hard checks still apply, so a figure that
contradicts the context stays notGrounded whatever the model says. A task that ``stack.json``
has no stacker for is judged by the heuristic alone.

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
    _ContextIndex,
    answer_vector,
)

__all__ = [
    "BUNDLED_MODEL",
    "MODEL_FEATURES",
    "STACK_FEATURES",
    "CrossEncoderJudge",
    "bundled_model",
    "model_vector",
    "run_time_premises",
    "top_windows",
]

#: Where a wheel carries its model (``model.onnx``, ``tokenizer.json``, ``stack.json``).
BUNDLED_MODEL = Path(__file__).resolve().parent.parent / "_model"


def bundled_model() -> Path | None:
    """The model directory shipped inside this install, or None if it carries none."""
    if all((BUNDLED_MODEL / f).is_file() for f in ("model.onnx", "tokenizer.json", "stack.json")):
        return BUNDLED_MODEL
    return None


#: What the model adds to the heuristic's features, over the answer's checkable sentences.
MODEL_FEATURES = (
    "model_unsupported",  # 1 - the weakest sentence's support
    "model_mean_unsupported",  # 1 - the mean support
    "model_share_unsupported",  # share of sentences the model does not support (p < 0.5)
)
#: Stacker inputs: the heuristic's features, then the model's.
STACK_FEATURES = (*FEATURE_NAMES, *MODEL_FEATURES)
#: Candidate windows per sentence when stack.json says nothing: (sentences per window, count).
DEFAULT_WINDOWS = ((1, 3),)


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


#: The premise the model sees for one answer sentence: the context window of up to this many
#: consecutive sentences that shares the most rare words with it (one pair per sentence keeps a
#: check within a few model runs). Training builds its in-domain pairs with the same function.
PREMISE_WIDTH = 3


def run_time_premises(index: _ContextIndex, sentence: str, task: Task | None = None) -> list[str]:
    """The premise(s) the model is given for ``sentence`` (see :data:`PREMISE_WIDTH`)."""
    return top_windows(index, sentence, 1, PREMISE_WIDTH)


def model_vector(support: Sequence[float]) -> list[float]:
    """:data:`MODEL_FEATURES` from the supports of an answer's checkable sentences."""
    if not support:
        return [0.0] * len(MODEL_FEATURES)
    return [
        1.0 - min(support),
        1.0 - sum(support) / len(support),
        sum(p < 0.5 for p in support) / len(support),
    ]


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
        model_path: directory with ``model.onnx``, ``tokenizer.json`` and ``stack.json``;
            the model bundled with the package by default.
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
        model_path: str | Path | None = None,
        *,
        max_length: int = 128,
        batch_size: int = 32,
        threads: int | None = None,
    ) -> None:
        if model_path is None:
            model_path = bundled_model()
            if model_path is None:
                raise ConfigurationError(
                    "this install carries no bundled model: pass model_path= (a directory made by "
                    "training/export_onnx.py and benchmarks/fit_stacked.py --write)"
                )
        self.model_path = Path(model_path)
        for needed in ("model.onnx", "tokenizer.json"):
            if not (self.model_path / needed).exists():
                raise ConfigurationError(
                    f"CrossEncoderJudge: {self.model_path / needed} is missing"
                )
        self.stackers: dict[Task, _Stacker] | None = None
        self.windows: dict[Task, tuple[tuple[int, int], ...]] = dict.fromkeys(Task, DEFAULT_WINDOWS)
        stack = self.model_path / "stack.json"
        if stack.exists():  # absent only while fitting it (benchmarks/fit_stacked.py)
            meta = json.loads(stack.read_text(encoding="utf-8"))
            if tuple(meta["features"]) != STACK_FEATURES:
                raise ConfigurationError(
                    f"{stack} was fitted on other features; refit it with benchmarks/fit_stacked.py"
                )
            self.stackers = {
                Task(t): _Stacker(w["bias"], tuple(w["coef"])) for t, w in meta["tasks"].items()
            }
            for t, spec in meta.get("windows", {}).items():
                self.windows[Task(t)] = tuple((int(w), int(k)) for w, k in spec)
            self.default_thresholds = Thresholds(**meta["thresholds"])
            self._version = str(meta.get("version", "1"))
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
        return f"{self.name}:{self.version}:{self.model_path}:{self.max_length}"

    def config(self) -> dict[str, Any]:
        out: dict[str, Any] = {"max_length": self.max_length, "batch_size": self.batch_size}
        if self.model_path != BUNDLED_MODEL:
            out["model_path"] = str(self.model_path)
        return out

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

    def sentence_support(
        self, index: _ContextIndex, sentences: Sequence[str], checkable: Sequence[bool], task: Task
    ) -> list[float]:
        """Each sentence's best support over its candidate windows (1.0 when not checked)."""
        pairs: list[tuple[str, str]] = []
        owners: list[int] = []
        for i, (text, check) in enumerate(zip(sentences, checkable)):
            if not check:
                continue
            seen: set[str] = set()
            for width, count in self.windows[task]:
                for window in top_windows(index, text, count, width):
                    if window not in seen:
                        seen.add(window)
                        pairs.append((window, text))
                        owners.append(i)
        support = [1.0] * len(sentences)
        best: dict[int, float] = {}
        for owner, p in zip(owners, self.support(pairs) if pairs else []):
            best[owner] = max(best.get(owner, 0.0), p)
        for owner, p in best.items():
            support[owner] = p
        return support

    def features(
        self, request: GroundednessRequest
    ) -> tuple[list[str], list[SentenceFeatures], list[float]]:
        """Answer sentences, their heuristic features and their model support."""
        index, spans, feats = self.heuristic.analyse(request)
        sentences = [s.text for s in spans]
        support = self.sentence_support(
            index, sentences, [f.checkable for f in feats], request.task
        )
        return sentences, feats, support

    @staticmethod
    def stack_vector(feats: Sequence[SentenceFeatures], support: Sequence[float]) -> list[float]:
        """The stacker's input for a whole answer: heuristic answer vector + model aggregates."""
        checked = [p for f, p in zip(feats, support) if f.checkable]
        return [*answer_vector(feats), *model_vector(checked)]

    def _heuristic_only(self, request: GroundednessRequest) -> Judgement:
        judgement = self.heuristic.judge(request)
        return judgement.model_copy(
            update={"decided_by": f"{self.heuristic.name} {self.heuristic.version}"}
        )

    def judge(self, request: GroundednessRequest) -> Judgement:
        if self.stackers is None:
            raise ConfigurationError(
                f"{self.model_path / 'stack.json'} is missing: "
                "fit it with benchmarks/fit_stacked.py"
            )
        stacker = self.stackers.get(request.task)
        if stacker is None:
            # stack.json leaves this task to the heuristic (the model did not help it on dev)
            return self._heuristic_only(request)
        index, spans, feats = self.heuristic.analyse(request)
        if not any(f.checkable for f in feats):
            # nothing for the model to score (e.g. an answer that only asks a question)
            return self._heuristic_only(request)
        sentences = [s.text for s in spans]
        support = self.sentence_support(
            index, sentences, [f.checkable for f in feats], request.task
        )
        overall = 1.0
        if any(f.checkable or f.values["opens_with_question"] for f in feats):
            overall = stacker.score(self.stack_vector(feats, support))
            for f in feats:
                if f.checkable:
                    overall = self.heuristic._cap(overall, f)
        scores = []
        for f, p in zip(feats, support):
            if not f.checkable and not f.values["opens_with_question"]:
                scores.append(1.0)
                continue
            model = model_vector([p]) if f.checkable else model_vector([])
            scores.append(self.heuristic._cap(stacker.score([*f.vector(), *model]), f))
        notes = [
            f"the model's support: {p:.2f}" if f.checkable else "" for f, p in zip(feats, support)
        ]
        judgement = self.heuristic.judgement(request, index, spans, feats, overall, scores, notes)
        return judgement
