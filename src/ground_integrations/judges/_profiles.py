"""The profiles of the default judge and the premises its model reads.

A *profile* (:func:`profile_of`) picks which fitted models of ``stack.json`` judge a request:
QnA over retrieved passages or one passage, Summarization (and its brief form) and
Summarization over JSON records. :class:`Profile` holds one profile's fitted numbers.
:func:`run_time_premises` is the context window the model reads an answer sentence against,
the same at run time and in training (``training/train_cross_encoder.py``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..models import GroundednessRequest, Task
from ._analysis import SentenceFeatures
from ._dates import dates_in_words
from ._features import LEXICAL_FEATURES, MODEL_FEATURES, Stacker
from ._index import ContextIndex
from ._records import is_record
from ._search import ranked_spans
from ._tokens import analyse

__all__ = [
    "BRIEF_SENTENCES",
    "PREMISE_WIDTH",
    "RETRIEVED_PASSAGES",
    "STACK_FEATURES",
    "Profile",
    "profile_of",
    "run_time_premises",
    "top_windows",
]

#: The model stage's inputs: the lexical features, then the model's.
STACK_FEATURES = (*LEXICAL_FEATURES, *MODEL_FEATURES)
#: The premise the model sees for one answer sentence: the context window of up to this many
#: consecutive sentences that shares the most rare words with it. One pair per sentence keeps a
#: check to a few model runs; training builds its in-domain pairs with the same function.
PREMISE_WIDTH = 3
#: A summary of at most this many sentences is judged with the ``Summarization:brief`` models.
BRIEF_SENTENCES = 2
#: A QnA context of at least this many passages is judged with the ``QnA:passages`` models.
RETRIEVED_PASSAGES = 2


#: A sentence that opens by pointing back ("Its peak is ...", "He was born ...", "The latter
#: ..."): read alone, it has lost what it speaks of.
_REFERS_BACK = re.compile(
    r"^\W*(?:it|its|he|his|him|she|her|they|their|them|this|these|that|those|such|"
    r"the (?:latter|former|same))\b",
    re.IGNORECASE,
)


def top_windows(index: ContextIndex, sentence: str, k: int, width: int = 2) -> list[str]:
    """The ``k`` context windows (up to ``width`` consecutive sentences) sharing most rare words
    with ``sentence``; the first windows of the context when nothing is shared. The windows
    are ranked by the idf of the stems they share (then by position), and only the windows
    around the sentences sharing a stem are scored (:func:`._search.ranked_spans`); ``k`` below
    1 lists every window. A window of one sentence that points back to the one before it
    (:data:`_REFERS_BACK`: "Its peak is 4,207 m high.") is read with that sentence when it is
    of the same passage (and block, see :class:`._index.ContextSentence`), so that the model
    knows what "its" is."""
    stems = set(analyse(sentence).stems)
    weights = {s: index.idf.get(s, 0.0) for s in stems}
    sentences = index.sentences

    def text(i: int, j: int) -> str:
        if (
            i == j
            and i > 0
            and sentences[i - 1].block == sentences[i].block
            and _REFERS_BACK.match(sentences[i].text)
        ):
            i -= 1
        # numeric dates of certain order in words ("November 22, 2019"), as the model reads best
        return dates_in_words(" ".join(s.text for s in sentences[i : j + 1]))

    every = len(index.sentences) * width + 1
    spans = ranked_spans(index, stems, weights, k if k >= 1 else every, width, text)
    return [text(i, j) for i, j in spans]


def run_time_premises(index: ContextIndex, sentence: str, task: Task | None = None) -> list[str]:
    """The premise(s) the model is given for ``sentence`` (see :data:`PREMISE_WIDTH`)."""
    return top_windows(index, sentence, 1, PREMISE_WIDTH)


def profile_of(request: GroundednessRequest, sentences: Sequence[SentenceFeatures]) -> str:
    """Which fitted models judge this request, given the heuristic's ``sentences`` of its
    answer: only those that state something count (the checkable ones: a lead-in such as "Here
    is a summary:" or a closing question does not).

    ``QnA:passages`` when the context holds at least :data:`RETRIEVED_PASSAGES` passages (the
    usual RAG answer: several retrieved passages, an answer of several sentences drawing on
    them); ``QnA`` for a single passage (a knowledge snippet, a dialogue turn's grounding);
    ``Summarization:record`` when every passage is a JSON record (data-to-text);
    ``Summarization:brief`` for a summary of at most :data:`BRIEF_SENTENCES` such sentences
    (a one-line summary or a single claim, where a changed word matters more than a missing
    one); ``Summarization`` otherwise. A profile absent from ``stack.json`` falls back to the
    task's. (A short QnA answer gained nothing from a profile of its own on the development
    data.)
    """
    if request.task is Task.QNA:
        return "QnA:passages" if len(request.context) >= RETRIEVED_PASSAGES else "QnA"
    if all(is_record(p) for p in request.context):
        return "Summarization:record"
    if sum(f.checkable for f in sentences) <= BRIEF_SENTENCES:
        return "Summarization:brief"
    return "Summarization"


@dataclass(frozen=True)
class Profile:
    """The fitted models of one profile (one entry of ``stack.json``'s ``profiles``).

    ``lexical`` scores every request; when its score lies in ``band`` (inclusive), the model
    is run on the ``sentences`` lexically weakest sentences and ``model`` gives the score.
    """

    lexical: Stacker
    model: Stacker | None = None
    band: tuple[float, float] = (0.0, 0.0)
    sentences: int = 0
    #: premises per sentence: (context sentences per window, how many windows); the
    #: sentence's support is its best over them
    windows: tuple[tuple[int, int], ...] = ((PREMISE_WIDTH, 1),)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Profile:
        lexical = Stacker.from_json(data["lexical"])
        if lexical.features != LEXICAL_FEATURES:
            raise ValueError("its lexical stacker was fitted on other features")
        model = Stacker.from_json(data["model"]) if data.get("model") else None
        if model is not None and model.features != STACK_FEATURES:
            raise ValueError("its model stacker was fitted on other features")
        lo, hi = data.get("band", (0.0, 0.0))
        windows = tuple((int(w), int(k)) for w, k in data.get("windows", [(PREMISE_WIDTH, 1)]))
        if not windows or any(w < 1 or k < 1 for w, k in windows):
            raise ValueError("windows must be (sentences, count) pairs of positive numbers")
        return cls(lexical, model, (float(lo), float(hi)), int(data.get("sentences", 0)), windows)

    def runs_model(self, lexical_score: float) -> bool:
        lo, hi = self.band
        return (
            self.model is not None and self.sentences > 0 and hi > lo and lo <= lexical_score <= hi
        )
