"""Batch checks on Ray Data (extra ``[ray]``): one checker per actor, no logic of its own.

:func:`check_dataset` takes a ``ray.data.Dataset`` and returns one with the result columns
added; every other column (an ``id``, say) passes through unchanged. Read and write with Ray
Data itself (``ray.data.read_json(path, lines=True)``, ``ray.data.read_parquet``,
``Dataset.write_parquet`` / ``write_json``), local paths or any filesystem Ray supports.

Input columns (rename with ``columns={"context": "passages", ...}``):

=========== ===========================================================================
``context`` a list of passages, or one string (required)
``answer``  the answer to check (required)
``query``   the user's question (optional; needed for task QnA)
``task``    ``QnA`` or ``Summarization`` per row (optional; else ``task=``)
``domain``  ``Generic`` or ``Medical`` per row (optional; else ``domain=``)
=========== ===========================================================================

Result columns:

==================== ==================================================================
``verdict``          ``grounded``, ``notGrounded`` or ``notSure`` (string); null on error
``score``            groundedness of the whole answer, 0 to 1 (float); null on error
``confidence``       confidence in the verdict, 0 to 1 (float); null on error
``ungrounded_spans`` list of structs ``{text, start, end, reason, kind}``: the ungrounded
                     text, its code-point offsets in the answer (``end`` exclusive), the
                     judge's reason (may be null) and whether the context contradicts it
                     (``contradicted``) or does not support it (``unsupported``); empty when
                     grounded, null on error
``judge_name``       the judge that decided (string)
``judge_version``    its version (string)
``error``            ``"ErrorType: message"`` when the record could not be checked, else null
==================== ==================================================================

Each actor builds one :class:`~ground_integrations.GroundednessChecker` in its constructor,
so a model loads once per worker; each record is checked by
:func:`ground_integrations.evaluation.evaluate_record`, as ``ground eval`` checks it.
Importing this module does not import Ray; calling :func:`check_dataset` without it raises
:class:`~ground_integrations.MissingDependencyError`.
"""

from __future__ import annotations

from ._dataset import check_dataset
from ._worker import RESULT_COLUMNS, JudgeSpec

__all__ = ["RESULT_COLUMNS", "JudgeSpec", "check_dataset"]
