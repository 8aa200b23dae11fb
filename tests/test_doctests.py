"""Docstring examples are executed, so the documentation cannot drift from the code."""

from __future__ import annotations

import doctest

import pytest

import ground_integrations
import ground_integrations.streaming
import ground_integrations.support
import ground_integrations.testing
import ground_integrations.timeouts


@pytest.mark.parametrize(
    "module",
    [
        ground_integrations,
        ground_integrations.testing,
        ground_integrations.streaming,
        ground_integrations.support,
        ground_integrations.timeouts,
    ],
)
def test_docstring_examples_run(module) -> None:
    failures, tried = doctest.testmod(module, verbose=False)
    assert tried > 0 and failures == 0
