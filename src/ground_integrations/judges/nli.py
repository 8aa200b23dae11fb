"""NLIJudge: a HuggingFace sequence-classification NLI model as the judge (extra ``[nli]``).

Each answer sentence is the hypothesis; each context chunk (sentence windows sized to the
model) is a premise. A sentence's score is its best entailment probability over the chunks,
and that chunk is its evidence. The model is loaded lazily, from a local path or the local
HuggingFace cache only (``local_files_only=True``): nothing is downloaded at run time.

Models known to work (download them yourself first, e.g. ``huggingface-cli download``):

======================================================  ====================  ==============
model                                                   entailment label      notes
======================================================  ====================  ==============
``cross-encoder/nli-deberta-v3-xsmall``                 ``entailment``        fast, 22M
``cross-encoder/nli-deberta-v3-base``                   ``entailment``        better, 86M
``MoritzLaurer/DeBERTa-v3-base-mnli-fever-anli``        ``entailment``        robust NLI
``MoritzLaurer/DeBERTa-v3-large-mnli-fever-anli-ling``  ``entailment``        best, slow
======================================================  ====================  ==============

Any model whose ``id2label`` names an entailment class works; pass ``entailment_label`` when
its name is unusual. Models that need ``trust_remote_code`` (e.g. Vectara's HHEM) are not
loaded by this judge.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, MissingDependencyError
from ..models import Evidence, GroundednessRequest, SentenceJudgement
from ..text import Span, split_sentences
from .base import Judge, Judgement, Thresholds

__all__ = ["DEFAULT_NLI_MODEL", "NLIJudge"]

DEFAULT_NLI_MODEL = "cross-encoder/nli-deberta-v3-xsmall"
#: What this judge imports to run (the ``[nli]`` extra).
REQUIRES = ("torch", "transformers")


def _missing() -> list[str]:
    return [name for name in REQUIRES if find_spec(name) is None]


def _require() -> None:
    """Raise :class:`MissingDependencyError` naming what is missing and the ``[nli]`` extra."""
    missing = _missing()
    if missing:
        raise MissingDependencyError(" and ".join(missing), "nli")


@dataclass(frozen=True)
class _Chunk:
    passage: int
    start: int
    end: int
    text: str


def _chunks(context: Sequence[str], size: int, overlap_sentences: int) -> list[_Chunk]:
    """Windows of whole sentences of at most ``size`` characters (a longer sentence alone)."""
    out: list[_Chunk] = []
    for p, passage in enumerate(context):
        spans = split_sentences(passage) or [Span(0, len(passage), passage)]
        i = 0
        while i < len(spans):
            j = i
            while j + 1 < len(spans) and spans[j + 1].end - spans[i].start <= size:
                j += 1
            out.append(
                _Chunk(p, spans[i].start, spans[j].end, passage[spans[i].start : spans[j].end])
            )
            if j + 1 >= len(spans):
                break
            i = max(i + 1, j + 1 - overlap_sentences)
    return out


class NLIJudge(Judge):
    """Entailment by a local NLI cross-encoder.

    Args:
        model: a local directory or a model id already in the local HuggingFace cache.
        entailment_label: the label of the entailment class (found in ``id2label`` if None).
        device: ``"cpu"``, ``"cuda"``, ``"mps"``... (None: CUDA if available, else CPU).
        batch_size: premise/hypothesis pairs per forward pass.
        max_length: tokens per pair (longer pairs are truncated, premise first).
        chunk_chars: context window size in characters (whole sentences).

    Without torch or transformers, building the judge raises :class:`MissingDependencyError`
    naming what is missing and the ``[nli]`` extra (nothing heavy is imported until the first
    check; only their presence is looked up).
    """

    name = "nli"
    version = "1"
    default_thresholds = Thresholds(grounded=0.5, not_grounded=0.3)

    def __init__(
        self,
        model: str | Path = DEFAULT_NLI_MODEL,
        *,
        entailment_label: str | None = None,
        device: str | None = None,
        batch_size: int = 16,
        max_length: int = 512,
        chunk_chars: int = 1_200,
        overlap_sentences: int = 1,
    ) -> None:
        _require()
        if batch_size < 1 or max_length < 16 or chunk_chars < 50:
            raise ConfigurationError(
                "batch_size >= 1, max_length >= 16 and chunk_chars >= 50, please"
            )
        self.model_name = str(model)
        self.entailment_label = entailment_label
        self.device = device
        self.batch_size = batch_size
        self.max_length = max_length
        self.chunk_chars = chunk_chars
        self.overlap_sentences = overlap_sentences
        self._loaded: tuple[Any, Any, int, str] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"NLIJudge(model={self.model_name!r})"

    def cache_key(self) -> str:
        settings = (self.model_name, self.entailment_label, self.chunk_chars, self.max_length)
        return f"{self.name}:{settings}"

    def config(self) -> dict[str, Any]:
        return {
            "model": self.model_name,
            "entailment_label": self.entailment_label,
            "batch_size": self.batch_size,
            "max_length": self.max_length,
            "chunk_chars": self.chunk_chars,
        }

    @property
    def loaded(self) -> bool:
        return self._loaded is not None

    def _load(self) -> tuple[Any, Any, int, str]:
        with self._lock:
            if self._loaded is not None:
                return self._loaded
            try:
                import torch
                from transformers import AutoModelForSequenceClassification, AutoTokenizer
            except ImportError as exc:
                missing = _missing() or ["transformers and torch"]
                raise MissingDependencyError(" and ".join(missing), "nli") from exc
            try:
                tokenizer = AutoTokenizer.from_pretrained(self.model_name, local_files_only=True)
                model = AutoModelForSequenceClassification.from_pretrained(
                    self.model_name, local_files_only=True
                )
            except OSError as exc:
                raise ConfigurationError(
                    f"NLIJudge could not load {self.model_name!r} from local files (it never "
                    "downloads): pass a local directory, or download the model into the "
                    f"HuggingFace cache first. ({exc})"
                ) from exc
            labels = {int(k): str(v) for k, v in model.config.id2label.items()}
            if self.entailment_label is not None:
                matches = [i for i, v in labels.items() if v == self.entailment_label]
            else:
                matches = [
                    i for i, v in labels.items() if "entail" in v.lower() and "not" not in v.lower()
                ]
            if len(matches) != 1:
                raise ConfigurationError(
                    f"cannot tell the entailment class of {self.model_name!r} (labels: {labels}); "
                    "pass entailment_label=..."
                )
            device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
            model.to(device).eval()
            self._loaded = (tokenizer, model, matches[0], device)
            return self._loaded

    def entailment(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Entailment probability of each (premise, hypothesis) pair, batched."""
        tokenizer, model, label, device = self._load()  # first: it says what is missing
        import torch

        out: list[float] = []
        with torch.inference_mode():
            for i in range(0, len(pairs), self.batch_size):
                batch = pairs[i : i + self.batch_size]
                encoded = tokenizer(
                    [p for p, _ in batch],
                    [h for _, h in batch],
                    padding=True,
                    truncation="only_first",
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(device)
                logits = model(**encoded).logits
                out.extend(torch.softmax(logits.float(), dim=-1)[:, label].tolist())
        return out

    def judge(self, request: GroundednessRequest) -> Judgement:
        spans = split_sentences(request.answer) or [Span(0, len(request.answer), request.answer)]
        chunks = _chunks(request.context, self.chunk_chars, self.overlap_sentences)
        probs = self.entailment([(c.text, s.text) for s in spans for c in chunks])
        cut = self.default_thresholds
        sentences = []
        for i, span in enumerate(spans):
            row = probs[i * len(chunks) : (i + 1) * len(chunks)]
            best = max(range(len(chunks)), key=row.__getitem__)
            score = float(row[best])
            chunk = chunks[best]
            verdict = cut.verdict(score)
            sentences.append(
                SentenceJudgement(
                    index=i,
                    text=span.text,
                    start=span.start,
                    end=span.end,
                    score=min(1.0, max(0.0, score)),
                    evidence=[
                        Evidence(
                            passage=chunk.passage,
                            start=chunk.start,
                            end=chunk.end,
                            text=chunk.text,
                            score=min(1.0, max(0.0, score)),
                        )
                    ],
                    reason=(
                        f"entailed by passage {chunk.passage} (p={score:.2f})"
                        if verdict.value == "grounded"
                        else f"no passage entails it (best p={score:.2f}, passage {chunk.passage})"
                    ),
                )
            )
        return Judgement(score=min(s.score for s in sentences), sentences=sentences)
