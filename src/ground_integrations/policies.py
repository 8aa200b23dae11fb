"""Policies: what to do with an answer that is notGrounded or notSure, and the loop that does it.

The names of the policy layer, importable from here (and the main ones from
``ground_integrations`` itself). Each is defined in the module that does its one job:

- :mod:`ground_integrations.decisions`: pure decisions. A :class:`Policy` maps a check's result
  (or a judge failure) to a :class:`Decision` (:class:`Action`: pass, annotate, regenerate,
  redact, correct, block); :func:`stricter` picks between two.
- :mod:`ground_integrations.edits`: the text edits those decisions ask for
  (:func:`mark_ungrounded`, :func:`redact`, :func:`judge_correction`, :func:`splice`).
- :mod:`ground_integrations.enforcement`: :func:`enforce` / :func:`aenforce`, the whole loop for
  plain Python callers: check, regenerate with feedback up to the bound, then pass, annotate,
  block (raise :class:`~ground_integrations.errors.UngroundedAnswerError`) or substitute a
  fallback message, redact the ungrounded sentences, or correct them (the judge's correction,
  else a ``corrector``) and check the rewrite again. The loop is written once, as a generator
  of steps, and driven by a short sync and a short async driver.
"""

from __future__ import annotations

from .decisions import (
    ACTION_ORDER,
    EMPTY_ANSWER_FEEDBACK,
    Action,
    Decision,
    Judged,
    OnError,
    Policy,
    blocked_error,
    stricter,
)
from .edits import (
    Corrector,
    corrected_text,
    correction_requests,
    judge_correction,
    mark_ungrounded,
    redact,
    splice,
    with_text,
)
from .enforcement import (
    ARegenerateFn,
    CitationCheck,
    Enforced,
    Regenerated,
    RegenerateFn,
    Regeneration,
    aenforce,
    enforce,
)

#: The names these had before they were public (kept importable).
_corrected = corrected_text
_with_text = with_text

__all__ = [
    "ACTION_ORDER",
    "EMPTY_ANSWER_FEEDBACK",
    "ARegenerateFn",
    "Action",
    "CitationCheck",
    "Corrector",
    "Decision",
    "Enforced",
    "Judged",
    "OnError",
    "Policy",
    "RegenerateFn",
    "Regenerated",
    "Regeneration",
    "aenforce",
    "blocked_error",
    "corrected_text",
    "correction_requests",
    "enforce",
    "judge_correction",
    "mark_ungrounded",
    "redact",
    "splice",
    "stricter",
    "with_text",
]
