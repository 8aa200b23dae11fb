"""What every ``ground`` command shares: its exit codes and the judge it runs.

``--judge-config`` is read here, once, for every command (``check``, ``eval``, ``calibrate``,
``serve``, and the Ray engine's actors): a JSON object, or one line saying what is wrong.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..checker import GroundednessChecker
from ..errors import InvalidInputError

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_JUDGE",
    "EXIT_NOT_GROUNDED",
    "EXIT_NOT_SURE",
    "EXIT_OK",
    "EXIT_PARTIAL",
    "EXIT_USAGE",
    "NAMED_FAILURES",
    "judge_settings",
    "make_checker",
    "make_judge",
]

EXIT_OK, EXIT_NOT_GROUNDED, EXIT_USAGE, EXIT_NOT_SURE, EXIT_JUDGE, EXIT_PARTIAL = 0, 1, 2, 3, 4, 5
EXIT_INTERRUPTED = 130
#: How many failed records the eval summary names (then it counts the rest).
NAMED_FAILURES = 10


def judge_settings(text: str | None) -> dict[str, Any] | None:
    """``--judge-config`` as a dict (None when the option was not given)."""
    if text is None:
        return None
    try:
        settings = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"--judge-config is not valid JSON: {exc.msg}", field="judge-config"
        ) from exc
    if not isinstance(settings, dict):
        raise InvalidInputError("--judge-config must be a JSON object", field="judge-config")
    return settings


def make_judge(args: argparse.Namespace) -> Any:
    """The judge ``--judge`` names with the ``--judge-config`` settings (read by
    :func:`judge_settings`), else the default judge."""
    from ..judges import default_judge, load_judge

    settings = args.judge_config or {}
    if args.judge is None:
        if settings:
            raise InvalidInputError("--judge-config needs --judge", field="judge-config")
        return default_judge()
    return load_judge(args.judge, **settings)


def make_checker(args: argparse.Namespace, **options: Any) -> GroundednessChecker:
    """A checker of :func:`make_judge`'s judge, with the ``--thresholds`` file when given."""
    thresholds = None
    if getattr(args, "thresholds", None) is not None:
        from ..calibration import CalibratedThresholds

        thresholds = CalibratedThresholds.load(args.thresholds)
    return GroundednessChecker(make_judge(args), thresholds=thresholds, **options)
