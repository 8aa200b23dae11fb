"""How an actor builds its judge (no Ray needed): one model thread per reserved CPU."""

from __future__ import annotations

from ground_integrations.batch import JudgeSpec
from ground_integrations.judges.cross_encoder import CrossEncoderJudge


def test_the_default_judge_runs_the_threads_an_actor_reserves() -> None:
    judge = JudgeSpec(threads=1).build_judge()
    assert isinstance(judge, CrossEncoderJudge) and judge.threads == 1
    assert JudgeSpec().build_judge().threads is None  # onnxruntime's default: every core


def test_a_named_cross_encoder_keeps_its_own_thread_setting() -> None:
    assert JudgeSpec("cross-encoder", threads=1).build_judge().threads == 1
    assert JudgeSpec("cross-encoder", {"threads": 2}, threads=1).build_judge().threads == 2
