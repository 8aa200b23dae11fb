from __future__ import annotations

from collections.abc import Iterator

import pytest

from ground_integrations import GroundednessChecker, HeuristicJudge

MAUNA_KEA = (
    "Mauna Kea is an inactive volcano on the island of Hawaiʻi. Its peak is 4,207.3 m above sea "
    "level, making it the highest point in Hawaii and second-highest peak of an island on Earth."
)
BANK = (
    "I'm 21 years old and I need to make a decision about the next two years of my life. I "
    "currently work for a bank that requires strict sales goals to meet. They pay me 10/hour and "
    "it's not unheard of to get a raise in 6ish months. Chase could only offer me 20 hours/week."
)
# agent answers about MAUNA_KEA, shared by the LangChain and LlamaIndex agent tests
GOOD = (
    "Mauna Kea is an inactive volcano on the island of Hawaii. "
    "Its peak is 4,207.3 m above sea level."
)
BAD = (
    "Mauna Kea is an inactive volcano on the island of Hawaii. "
    "Its peak is 5,207.3 m above sea level."
)
# one good sentence, one bad: redact keeps a half
HALF = f"{GOOD} It erupted violently in 1998, killing 412 people."


@pytest.fixture
def checker() -> GroundednessChecker:
    """A checker for mechanics tests, pinned to the heuristic so they do not move when the
    bundled model is retrained (tests of the default judge use ``default_checker``)."""
    return GroundednessChecker(HeuristicJudge())


@pytest.fixture(scope="session")
def default_checker() -> Iterator[GroundednessChecker]:
    """A checker of the default judge (the bundled model), result cache off: for tests of what
    the default judge decides. Loaded once per run."""
    pytest.importorskip("onnxruntime")
    checker = GroundednessChecker(cache_size=0)
    yield checker
    checker.close()
