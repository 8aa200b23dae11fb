"""Reading an LLM judge's reply: the model's own assessments or rating, never the data's.

Only the model's own output is parsed: structured output when the model has it, else the last
JSON object in the reply that matches the schema and does not restate the supplied data (an
answer ending in a fake verdict is data, not a verdict). Restating is judged loosely: an object
that copies schema-like text of the data with a few characters changed (see :data:`NEAR_COPY`),
or completes an object the data left open, is the data's, not the model's. A ``scale_1_5``
rating is the first ``Score: N`` of the reply that neither sits in an echoed line of the data
nor repeats a rating the data itself holds. A reply with none raises :class:`Unparsed`.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from pydantic import ValidationError

from ..models import GroundednessRequest
from ..text import split_sentences
from ._llm_schema import BatchedAssessment, SentenceAssessment

__all__ = ["NEAR_COPY", "Unparsed", "message_text", "parse_assessments", "parse_scale"]

_SCORE = re.compile(r"<?\s*Score\s*:\s*\[?\s*([1-5])\b", re.IGNORECASE)
#: How alike (difflib ratio, whitespace ignored) a reply object and schema-like text of the data
#: must be for the object to count as the data's: a copy with a character changed, or an object
#: the data left open and the reply closed, is near 1; the model's own assessment of the same
#: statements differs in its evidence, reason and score.
NEAR_COPY = 0.9
#: Characters compared (after removing whitespace): a near copy is near from its first ones.
_COMPARED_CHARS = 1_000
#: Schema-like openings of the data kept for comparison, per check.
_MAX_OPENINGS = 64
_KEY = re.compile(r'"\s*statements\s*"')
_SPACE = re.compile(r"\s+")


class Unparsed(Exception):
    """A reply with nothing of the model's own to read; ``raw`` is its text."""

    def __init__(self, raw: str) -> None:
        self.raw = raw
        super().__init__(raw[:200])


def message_text(message: Any) -> str:
    """The text of a reply: a message's ``text`` or ``content``, or the reply itself."""
    text = getattr(message, "text", None)
    if isinstance(text, str):
        return text
    content = getattr(message, "content", message)
    return content if isinstance(content, str) else json.dumps(content)


def _schema_objects(text: str) -> list[tuple[int, int, BatchedAssessment]]:
    """Every well-formed JSON object in ``text`` that matches the output schema, in order."""
    decoder = json.JSONDecoder()
    found: list[tuple[int, int, BatchedAssessment]] = []
    start = text.find("{")
    while start != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        try:
            found.append((start, end, BatchedAssessment.model_validate(value)))
        except ValidationError:
            start = text.find("{", start + 1)  # look inside: the object may wrap one
            continue
        start = text.find("{", end)
    return found


def _canonical(assessment: BatchedAssessment) -> str:
    return assessment.model_dump_json()


def _squash(text: str) -> str:
    return _SPACE.sub("", text)


class _Supplied:
    """The data the model was given: anything in its reply that repeats it is not its own."""

    def __init__(self, request: GroundednessRequest) -> None:
        self.texts = [t for t in (request.answer, request.query or "", *request.context) if t]
        self.objects = {_canonical(a) for t in self.texts for _, _, a in _schema_objects(t)}
        # where the data holds schema-like text (an injected verdict, closed or not): from the
        # "{" before each "statements" key
        self.openings: list[str] = []
        for text in self.texts:
            for key in _KEY.finditer(text):
                start = text.rfind("{", 0, key.start())
                if start != -1 and len(self.openings) < _MAX_OPENINGS:
                    piece = _squash(text[start : start + 4 * _COMPARED_CHARS])
                    self.openings.append(piece[: 2 * _COMPARED_CHARS])
        ratings = (int(m.group(1)) for t in self.texts for m in _SCORE.finditer(t))
        self.ratings = set(ratings)

    def restates(self, text: str, assessment: BatchedAssessment) -> bool:
        """Whether a schema object of the reply is the data's: an exact restatement, or a near
        copy of schema-like text in the data (see :data:`NEAR_COPY`)."""
        if _canonical(assessment) in self.objects:
            return True
        mine = _squash(text)[:_COMPARED_CHARS]
        for opening in self.openings:
            theirs = opening[: len(mine) + 32]
            matcher = difflib.SequenceMatcher(None, mine, theirs, autojunk=False)
            if (
                matcher.real_quick_ratio() >= NEAR_COPY
                and matcher.quick_ratio() >= NEAR_COPY
                and matcher.ratio() >= NEAR_COPY
            ):
                return True
        return False

    def own(self, reply: str) -> BatchedAssessment:
        """The last schema object in the reply that is the model's own, not restated data."""
        own = [
            a for start, end, a in _schema_objects(reply) if not self.restates(reply[start:end], a)
        ]
        if not own:
            raise ValueError("no JSON object of the model's own in the reply")
        return own[-1]

    def without_echoes(self, reply: str, pattern: re.Pattern[str]) -> str:
        """The reply minus restated pieces of data (sentences, lines) that match ``pattern``."""
        for text in self.texts:
            if not pattern.search(text):
                continue
            pieces = {s.text for s in split_sentences(text)} | set(text.splitlines())
            for piece in sorted(pieces, key=len, reverse=True):
                if piece.strip() and pattern.search(piece):
                    reply = reply.replace(piece.strip(), " ")
        return reply


def parse_assessments(request: GroundednessRequest, reply: Any) -> list[SentenceAssessment]:
    """The model's own assessments: structured output, else the last schema object in its
    text that does not restate the supplied data (an answer can end in a fake verdict)."""
    supplied = _Supplied(request)
    if isinstance(reply, dict) and "raw" in reply:  # structured output with include_raw
        parsed = reply.get("parsed")
        if isinstance(parsed, BatchedAssessment) and not supplied.restates(
            _canonical(parsed), parsed
        ):
            return list(parsed.statements)
        reply = reply["raw"]
    text = message_text(reply)
    try:
        return supplied.own(text).statements
    except ValueError as exc:
        raise Unparsed(text) from exc


def parse_scale(request: GroundednessRequest, reply: Any) -> tuple[int, str]:
    """The model's rating and reason: the first ``Score: N`` outside echoed lines of the data
    whose ``N`` is not a rating the data holds (a quoted fragment "<Score: 5>" of the answer is
    not the model's rating, wherever the reply quotes it)."""
    text = message_text(reply)
    supplied = _Supplied(request)
    own = supplied.without_echoes(text, _SCORE)
    for match in _SCORE.finditer(own):
        if int(match.group(1)) in supplied.ratings:
            continue
        reason = own[match.end() :].lstrip(" ]>").strip()
        return int(match.group(1)), reason
    raise Unparsed(text)
