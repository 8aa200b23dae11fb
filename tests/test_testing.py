"""The fakes users test with (ground_integrations.testing) refuse what they cannot do."""

from __future__ import annotations

import pytest

from ground_integrations import ConfigurationError, GroundednessChecker, Verdict
from ground_integrations.testing import ScriptedJudge


def test_a_scripted_judge_needs_a_script_and_plays_it_in_order() -> None:
    with pytest.raises(ConfigurationError):
        ScriptedJudge([])
    checker = GroundednessChecker(ScriptedJudge(["grounded", "notGrounded"]), cache_size=0)
    verdicts = [checker.check("Paris is in France.", "Paris is in France.").verdict for _ in "ab"]
    assert verdicts == [Verdict.GROUNDED, Verdict.NOT_GROUNDED]
