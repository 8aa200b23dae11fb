from __future__ import annotations

import ground_integrations
import ground_integrations.core as core


def test_public_names_are_frozen() -> None:
    assert ground_integrations.__all__ == [
        "AZURE_LIMITS",
        "Action",
        "ConfigurationError",
        "Decision",
        "Domain",
        "EmptyInputError",
        "Enforced",
        "Evidence",
        "GroundednessChecker",
        "GroundednessError",
        "GroundednessRequest",
        "GroundednessResult",
        "HeuristicJudge",
        "IndexDetails",
        "InputTooLongError",
        "InvalidInputError",
        "Judge",
        "JudgeConnectionError",
        "JudgeError",
        "JudgeHTTPError",
        "JudgeInfo",
        "JudgeResponseError",
        "JudgeTimeoutError",
        "Judgement",
        "LexicalBaselineJudge",
        "Limits",
        "MissingDependencyError",
        "OnError",
        "Policy",
        "RateLimitError",
        "SentenceJudgement",
        "Task",
        "Thresholds",
        "UngroundedAnswerError",
        "UngroundedDetail",
        "Verdict",
        "__version__",
        "aenforce",
        "enforce",
        "mark_ungrounded",
    ]
    for name in ground_integrations.__all__:
        assert hasattr(ground_integrations, name), name
        assert getattr(core, name) is getattr(ground_integrations, name)


def test_error_tree() -> None:
    from ground_integrations import errors as e

    assert issubclass(e.EmptyInputError, e.InvalidInputError)
    assert issubclass(e.InvalidInputError, ValueError)
    assert issubclass(e.RateLimitError, e.JudgeHTTPError)
    assert e.RateLimitError("slow down", retry_after=2.0).is_retryable
    assert not e.JudgeHTTPError("bad", status_code=400).is_retryable
    assert e.JudgeHTTPError("down", status_code=503).is_retryable
    assert "pip install 'ground-integrations[langchain]'" in str(
        e.MissingDependencyError("langchain-core", "langchain")
    )


def test_verdict_is_a_str_enum() -> None:
    from ground_integrations import Verdict

    assert Verdict("notGrounded") == "notGrounded" and str(Verdict.NOT_SURE) == "notSure"
