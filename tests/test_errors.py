"""The exception tree: errors carry their data across processes and say what to install."""

from __future__ import annotations

import pickle

import pytest

from ground_integrations.errors import (
    InputTooLongError,
    InvalidInputError,
    JudgeHTTPError,
    JudgeTimeoutError,
    MissingDependencyError,
    RateLimitError,
)


@pytest.mark.parametrize(
    "error",
    [
        JudgeHTTPError("bad", status_code=400, body={"e": 1}, headers={"x": "y"}, judge="azure"),
        RateLimitError("slow", retry_after=2.0, judge="azure"),
        InputTooLongError("long", field="answer", limit=3, actual=4),
        MissingDependencyError("langchain-core", "langchain"),
        MissingDependencyError("onnxruntime", None, install="pip install onnxruntime"),
        InvalidInputError("bad", field="answer"),
        JudgeTimeoutError("slow", judge="x"),
    ],
)
def test_errors_survive_pickling(error) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and str(copy) == str(error)
    assert vars(copy) == vars(error)


def test_a_missing_dependency_names_the_command_that_installs_it() -> None:
    extra = MissingDependencyError("langchain-core", "langchain")
    assert str(extra).endswith(
        "pip install -e '.[langchain]' (in the ground-integrations checkout)"
    )
    assert extra.extra == "langchain" and isinstance(extra, ImportError)
    core = MissingDependencyError("onnxruntime", None, install="pip install onnxruntime")
    assert str(core).endswith("Install it with: pip install onnxruntime")
    assert core.extra is None and "[" not in str(core)  # a core package: no extra to name
