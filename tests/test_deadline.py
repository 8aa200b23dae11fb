"""A cooperative Deadline stops a check from inside: the checker and the embedded judges look at
it between sentences, windows and model batches; an HTTP judge never waits past it."""

from __future__ import annotations

import asyncio
import pickle
import random
import threading
import time

import pytest

from ground_integrations import (
    CheckCancelledError,
    ConfigurationError,
    GroundednessChecker,
    HeuristicJudge,
    JudgeTimeoutError,
)
from ground_integrations.deadline import Deadline, checkpoint, current_deadline
from ground_integrations.judges.upstage import UpstageJudge

from .judges import fake_services


def _heavy() -> tuple[str, str]:
    """Inside the default limits, but seconds of work: 12,000 short context sentences and an
    answer of 500 sentences that share words with all of them."""
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta", "zeta", "rho"]

    def sentence(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n)).capitalize() + "."

    context = " ".join(sentence(2) for _ in range(12_000))[:190_000]
    return context, " ".join(sentence(4) for _ in range(500))[:19_000]


@pytest.fixture(scope="module")
def heavy() -> tuple[str, str]:
    return _heavy()


@pytest.mark.parametrize("which", ["heuristic", "default"])
def test_a_check_past_its_deadline_stops_soon_after_it(
    which: str, heavy: tuple[str, str], default_checker: GroundednessChecker
) -> None:
    checker = (
        default_checker
        if which == "default"
        else GroundednessChecker(HeuristicJudge(), cache_size=0)
    )
    context, answer = heavy
    started = time.perf_counter()
    checker.check([context + " Once."], answer)
    alone = time.perf_counter() - started
    limit = alone / 4
    started = time.perf_counter()
    with pytest.raises(JudgeTimeoutError) as stopped, Deadline(limit):
        checker.check([context + " Twice."], answer)
    took = time.perf_counter() - started
    assert stopped.value.deadline == limit and not stopped.value.is_retryable
    assert took < limit + alone / 4, (took, limit, alone)  # long before the check's end


def test_a_cancelled_check_stops_with_the_reason(heavy: tuple[str, str]) -> None:
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    deadline = Deadline()  # no time limit, only the switch
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with deadline:
                checker.check([heavy[0]], heavy[1])
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run)
    started = time.perf_counter()
    thread.start()
    time.sleep(0.2)
    deadline.cancel("the client disconnected")
    thread.join(30)
    assert len(errors) == 1 and isinstance(errors[0], CheckCancelledError)
    assert errors[0].reason == "the client disconnected"
    assert time.perf_counter() - started < 1.5
    again = pickle.loads(pickle.dumps(errors[0]))
    assert again.reason == "the client disconnected"


def test_a_generous_deadline_changes_nothing() -> None:
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    context = ["Mauna Kea is 4,207.3 m high. It is an inactive volcano."]
    plain = checker.check(context, "Mauna Kea is 5,207.3 m high.")
    with Deadline(60) as deadline:
        timed = checker.check(context, "Mauna Kea is 5,207.3 m high.")
        assert current_deadline() is deadline
    assert current_deadline() is None
    assert timed.model_dump(exclude={"latency_ms"}) == plain.model_dump(exclude={"latency_ms"})


def test_the_deadline_follows_async_checks(heavy: tuple[str, str]) -> None:
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)

    async def main() -> None:
        with Deadline(0.3):
            await checker.acheck([heavy[0]], heavy[1])

    started = time.perf_counter()
    with pytest.raises(JudgeTimeoutError):
        asyncio.run(main())
    assert time.perf_counter() - started < 2.0


def test_an_http_judge_never_waits_past_the_deadline() -> None:
    """A service that takes 5 s to answer: with its own 30 s timeout the judge would wait for
    it; under a 1 s Deadline each read is cut to the time left."""
    service = fake_services.start()
    try:
        service.faults.append(("delay", 5))
        judge = UpstageJudge(api_key=fake_services.API_KEY, base_url=f"{service.url}/v1/solar")
        checker = GroundednessChecker(judge, cache_size=0)
        started = time.perf_counter()
        with pytest.raises(JudgeTimeoutError) as late, Deadline(1.0):
            checker.check(["The sky is blue."], "The sky is blue.")
        assert time.perf_counter() - started < 2.0
        assert late.value.deadline is not None and late.value.deadline <= 1.0
        judge.close()
    finally:
        service.close()


def test_checkpoints_outside_a_deadline_do_nothing_and_bad_limits_are_refused() -> None:
    checkpoint()  # no deadline: returns
    with Deadline(10), Deadline(0.001):
        time.sleep(0.01)
        with pytest.raises(JudgeTimeoutError):
            checkpoint()  # the inner one has passed
    for bad in (0, -1, True, float("nan")):
        with pytest.raises(ConfigurationError):
            Deadline(bad)  # type: ignore[arg-type]
