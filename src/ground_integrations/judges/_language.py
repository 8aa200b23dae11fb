"""Language honesty: what a judge that reads English only says about another language.

The bundled cross-encoder (MiniLM fine-tuned on English pairs) and the lexical analysis (an
English stemmer and word lists) read English only. On an answer or a context in another language
they still give a score, and it looks as sure as any other. :func:`language_checked` turns such a
judgement into an abstention (the checker's verdict is ``notSure``) with a reason that says so,
unless the lexical evidence alone decides (:func:`decisive_evidence`: a verbatim copy is
grounded, a contradicted figure notGrounded). Which language a text is in is
:mod:`._language_detection`'s job; its names are importable from here as before.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from ..models import GroundednessRequest, SentenceJudgement, Verdict
from ._analysis import SentenceFeatures
from ._language_detection import (
    ENGLISH,
    FUNCTION_WORDS,
    SAMPLE_CHARS,
    Language,
    context_language,
    detect,
    spaceless,
)
from .base import Judgement, Thresholds

__all__ = [
    "ENGLISH",
    "FUNCTION_WORDS",
    "SAMPLE_CHARS",
    "Language",
    "context_language",
    "decisive_evidence",
    "detect",
    "language_checked",
]

#: An answer copied verbatim from the context decides "grounded" only if its checked sentences
#: have at least this many characters ("Ja." is in almost any German text).
VERBATIM_MIN_CHARS = 12
#: A figure decides "notGrounded" only with at least this many digits: small numbers may be
#: spelled out in the context's language ("fünf"), which the English lexicon does not read.
DECISIVE_FIGURE_DIGITS = 2
#: The confidence of an abstention here: that of a score at the centre of the notSure band.
NOT_SURE_CONFIDENCE = 0.5


_EDGES = " \t\r\n\"'“”‘’«»„‚‹›()[]{}.,;:!?…-–—*•。，、；：！？"
_DIGIT_SEPARATOR = re.compile(r"(?<=\d)[ .,'’\u00a0\u2009\u202f](?=\d)")
_DIGITS = re.compile(r"\d+")


def _glued(text: str, i: int, edge: str) -> bool:
    """Whether ``text[i]`` would run on into a word that ends (or starts) with ``edge``."""
    if not 0 <= i < len(text):
        return False
    near = text[i]
    return near.isalnum() and edge.isalnum() and not (spaceless(near) or spaceless(edge))


def _verbatim(sentence: str, passages: Sequence[str]) -> bool:
    """Whether ``sentence`` (case, spacing and its surrounding punctuation aside) occurs in a
    passage as whole words."""
    needle = " ".join(sentence.casefold().split()).strip(_EDGES)
    if not needle:
        return False
    for passage in passages:
        start = passage.find(needle)
        while start != -1:
            end = start + len(needle)
            if not (_glued(passage, start - 1, needle[0]) or _glued(passage, end, needle[-1])):
                return True
            start = passage.find(needle, start + 1)
    return False


def _figures(text: str) -> set[str]:
    """The figures of ``text`` as bare digits: separators dropped, so "1,500", "1 500" and
    "1.500" (and "3,5" and "3.5") are the same figure in any language's convention."""
    return {_bare(d) for d in _DIGITS.findall(_DIGIT_SEPARATOR.sub("", text))}


def _bare(digits: str) -> str:
    """``digits`` in ASCII without leading zeros (no ``int``: a figure may be any length)."""
    if not digits.isascii():
        digits = "".join(str(unicodedata.decimal(c, 0)) for c in digits)
    return digits.lstrip("0") or "0"


def decisive_evidence(
    request: GroundednessRequest,
    sentences: Sequence[str],
    feats: Sequence[SentenceFeatures],
) -> tuple[Verdict, str] | None:
    """A verdict the lexical evidence alone supports, in any language, and why; or None.

    notGrounded: a checked sentence fails the figure check and states a figure of at least
    :data:`DECISIVE_FIGURE_DIGITS` digits that no figure of the context has, whatever its
    separators. Grounded: every checked sentence occurs verbatim in the context (case and
    spacing aside), :data:`VERBATIM_MIN_CHARS` characters at least.
    """
    checked = [(s, f) for s, f in zip(sentences, feats) if f.checkable]
    if not checked:
        return None
    context_figures = _figures("\n".join(request.context))
    for sentence, f in checked:
        if f.figure_mismatch and any(
            len(g) >= DECISIVE_FIGURE_DIGITS and g not in context_figures
            for g in _figures(sentence)
        ):
            return Verdict.NOT_GROUNDED, "a figure of the answer contradicts the context"
    if sum(len(s.strip()) for s, _ in checked) >= VERBATIM_MIN_CHARS:
        passages = [" ".join(p.casefold().split()) for p in request.context]
        if all(_verbatim(s, passages) for s, _ in checked):
            return Verdict.GROUNDED, "the answer is copied verbatim from the context"
    return None


def _where(answer: Language, context: Language) -> str:
    if not answer.english and not context.english:
        if answer == context:
            return f"The answer and the context are in {answer.name}"
        return f"The answer is in {answer.name} and the context in {context.name}"
    if not answer.english:
        return f"The answer is in {answer.name}"
    return f"The context is in {context.name}"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _restated(sentence: SentenceJudgement, **update: Any) -> SentenceJudgement:
    """``sentence`` with ``update``, less the kind and narrowed spans a judge may have given
    it: they came from reading a language the lexicon does not read."""
    fields = type(sentence).model_fields
    dropped: dict[str, Any] = {
        k: v for k, v in (("kind", None), ("ungrounded_details", [])) if k in fields
    }
    return sentence.model_copy(update={**dropped, **update})


def language_checked(
    request: GroundednessRequest,
    judgement: Judgement,
    feats: Sequence[SentenceFeatures],
    thresholds: Thresholds,
) -> Judgement:
    """``judgement`` as it stands when the answer and the context are English; otherwise an
    abstention with the reason, unless :func:`decisive_evidence` decides. ``feats`` are the
    features of the judgement's sentences, in order; ``thresholds`` the judge's own cut points.

    Abstention: the judgement is ``abstained`` (the checker's verdict is notSure), and each
    checked sentence gets the reason and a score in the middle of the notSure band, so that its
    verdict, the ungrounded spans the checker derives from the sentences and a merge of context
    chunks agree; the lexical reading stays in the reason. Decisive evidence labels the
    judgement: a figure contradiction keeps it otherwise (notGrounded); an answer copied
    verbatim is grounded, each checked sentence scored at least at the grounded cut.
    ``decided_by`` names the languages:
    ``language check (answer de, context en)``, or ``lexical evidence (answer fr, context fr):
    ...`` when the evidence decided.
    """
    answer = detect(request.answer)
    context = context_language(request.context)
    if answer.english and context.english:
        return judgement
    where = _where(answer, context)
    tags = f"answer {answer.code}, context {context.code}"
    evidence = decisive_evidence(request, [s.text for s in judgement.sentences], feats)
    if evidence is not None:
        verdict, why = evidence
        decided_by = f"lexical evidence ({tags}): {why}"
        if verdict is Verdict.NOT_GROUNDED:  # the hard figure check already capped the score
            return judgement.model_copy(update={"verdict": verdict, "decided_by": decided_by})
        # copied verbatim: grounded, whatever a model that does not read the language said
        reason = f"Copied verbatim from the context ({_lower_first(where)}, not English)"
        sentences = [
            _restated(s, score=thresholds.grounded, reason=reason, unsupported=[])
            if f.checkable and s.score < thresholds.grounded
            else s
            for s, f in zip(judgement.sentences, feats)
        ]
        score = max(judgement.score or 0.0, thresholds.grounded)
        return judgement.model_copy(
            update={
                "verdict": verdict,
                "score": score,
                "sentences": sentences,
                "ungrounded_details": [],
                "decided_by": decided_by,
            }
        )
    note = (
        f"{where}, not English: the bundled model and the lexical checks read English only, "
        "so this verdict is not sure"
    )
    middle = (thresholds.grounded + thresholds.not_grounded) / 2
    sentences = [
        _restated(
            s,
            score=middle,
            reason=f"{note} (read lexically: {_lower_first(s.reason)})" if s.reason else note,
        )
        if f.checkable
        else s
        for s, f in zip(judgement.sentences, feats)
    ]
    return judgement.model_copy(
        update={
            "abstained": True,
            "score": middle,
            "confidence": NOT_SURE_CONFIDENCE,
            "sentences": sentences,
            "ungrounded_details": [],
            "decided_by": f"language check ({tags})",
        }
    )
