"""Every check is an OpenTelemetry span, every policy decision an event."""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ground_integrations import EmptyInputError, GroundednessChecker, Policy, telemetry
from ground_integrations.policies import enforce

from .conftest import MAUNA_KEA

BAD = "Mauna Kea is 5,207.3 meters tall."
GOOD = "Mauna Kea is an inactive volcano on the island of Hawaii."


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.configure(tracer_provider=provider)
    yield exporter, provider.get_tracer("host")
    telemetry.configure()


def test_a_check_is_a_span_with_figures_but_no_text(spans, checker) -> None:
    exporter, _ = spans
    result = checker.check([MAUNA_KEA], BAD, task="Summarization")
    (span,) = exporter.get_finished_spans()
    a = span.attributes
    assert span.name == "groundedness.check"
    assert a["groundedness.verdict"] == "notGrounded" == result.verdict.value
    assert a["groundedness.score"] == result.score
    assert a["groundedness.judge.name"] == "heuristic"
    assert a["groundedness.task"] == "Summarization" and a["groundedness.domain"] == "Generic"
    assert a["groundedness.ungrounded.count"] == 1 and a["groundedness.latency_ms"] >= 0
    assert not any(BAD in str(v) or "5,207.3" in str(v) for v in a.values())


def test_texts_are_recorded_only_when_asked(spans, checker, monkeypatch) -> None:
    exporter, _ = spans
    monkeypatch.setenv("GROUND_OTEL_CAPTURE_TEXT", "1")
    checker.check([MAUNA_KEA], BAD)
    (span,) = exporter.get_finished_spans()
    assert span.attributes["groundedness.answer"] == BAD
    # the words at fault, as the result's details give them
    assert list(span.attributes["groundedness.ungrounded.texts"]) == ["5,207.3 meters tall"]


async def test_spans_nest_in_the_hosts_span_and_failures_are_errors(spans, checker) -> None:
    exporter, host = spans
    with host.start_as_current_span("host request") as parent:
        await checker.acheck([MAUNA_KEA], GOOD)
        with pytest.raises(EmptyInputError):
            checker.check([MAUNA_KEA], "   ")
    finished = {s.name: s for s in exporter.get_finished_spans() if s.name != "host request"}
    checks = [s for s in exporter.get_finished_spans() if s.name == "groundedness.check"]
    assert len(checks) == 2 and finished
    for s in checks:
        assert s.parent.span_id == parent.get_span_context().span_id
    failed = next(s for s in checks if "groundedness.verdict" not in s.attributes)
    assert failed.status.status_code.name == "ERROR"
    assert any(e.name == "exception" for e in failed.events)


def test_policy_decisions_are_events_on_the_current_span(spans, checker) -> None:
    exporter, host = spans
    answers = iter([BAD, GOOD])
    with host.start_as_current_span("rag turn"):
        enforce(
            checker,
            context=[MAUNA_KEA],
            answer=next(answers),
            regenerate=lambda fb, n: next(answers),
        )
    (turn,) = [s for s in exporter.get_finished_spans() if s.name == "rag turn"]
    events = [e for e in turn.events if e.name == "groundedness.decision"]
    assert [e.attributes["groundedness.action"] for e in events] == ["regenerate", "pass"]
    assert events[0].attributes["groundedness.verdict"] == "notGrounded"
    assert events[1].attributes["groundedness.final"] is True
    assert Policy().decide(None, error=RuntimeError("x")).action.value == "block"  # no span: no-op


def test_a_langchain_check_nests_under_the_hosts_span(spans) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document

    from ground_integrations import HeuristicJudge
    from ground_integrations.langchain import GroundednessCheck

    exporter, host = spans
    check = GroundednessCheck(checker=GroundednessChecker(HeuristicJudge()))
    with host.start_as_current_span("chain") as parent:
        check.invoke({"context": [Document(page_content=MAUNA_KEA)], "answer": BAD})
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "groundedness.check"]
    assert span.parent.span_id == parent.get_span_context().span_id


def test_without_a_provider_nothing_is_recorded(checker) -> None:
    telemetry.configure()
    assert checker.check([MAUNA_KEA], GOOD).verdict.value == "grounded"


# -- the GenAI semantic conventions' gen_ai.evaluation.result event --------------------------


@pytest.fixture
def otel():
    """Spans and log-record events, each to the SDK's in-memory exporter."""
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    span_exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    logs = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    telemetry.configure(tracer_provider=tracer_provider, logger_provider=logger_provider)
    yield span_exporter, logs, tracer_provider.get_tracer("host")
    telemetry.configure()


def evaluation_events(logs) -> list:
    return [
        r.log_record
        for r in logs.get_finished_logs()
        if r.log_record.event_name == "gen_ai.evaluation.result"
    ]


def test_a_check_inside_a_generation_span_is_an_evaluation_event_parented_to_it(
    otel, checker
) -> None:
    span_exporter, logs, host = otel
    with host.start_as_current_span(
        "chat my-model", attributes={"gen_ai.operation.name": "chat"}
    ) as generation:
        result = checker.check([MAUNA_KEA], BAD)
    (event,) = evaluation_events(logs)
    a = event.attributes
    assert a["gen_ai.evaluation.name"] == "groundedness"
    assert a["gen_ai.evaluation.score.value"] == result.score
    assert a["gen_ai.evaluation.score.label"] == "notGrounded"
    assert "1 of 1 sentence(s) judged notGrounded" in a["gen_ai.evaluation.explanation"]
    assert not any("5,207.3" in str(v) for v in a.values())  # no text unless asked
    assert event.span_id == generation.get_span_context().span_id
    assert event.trace_id == generation.get_span_context().trace_id
    (check,) = [s for s in span_exporter.get_finished_spans() if s.name == "groundedness.check"]
    assert check.parent.span_id == generation.get_span_context().span_id  # the span stays too


def test_judging_names_a_generation_that_already_ended_and_its_response_id(otel, checker) -> None:
    _, logs, host = otel
    with host.start_as_current_span("rag turn"):
        with host.start_as_current_span("chat my-model") as generation:
            pass  # the model answered; the check comes after
        with telemetry.judging(generation, response_id="chatcmpl-42"):
            checker.check([MAUNA_KEA], GOOD)
        checker.check([MAUNA_KEA], GOOD)  # outside the block: back to the usual parent
    first, second = evaluation_events(logs)
    assert first.span_id == generation.get_span_context().span_id
    assert first.attributes["gen_ai.response.id"] == "chatcmpl-42"
    assert first.attributes["gen_ai.evaluation.score.label"] == "grounded"
    assert "gen_ai.response.id" not in second.attributes
    assert second.span_id != generation.get_span_context().span_id


def test_without_a_generation_the_event_is_parented_to_the_check_span(otel, checker) -> None:
    span_exporter, logs, host = otel
    with host.start_as_current_span("web request"):  # not a GenAI span
        checker.check([MAUNA_KEA], BAD)
    (event,) = evaluation_events(logs)
    (check,) = [s for s in span_exporter.get_finished_spans() if s.name == "groundedness.check"]
    assert event.span_id == check.context.span_id


def test_a_failed_check_is_an_evaluation_event_with_its_error_type(otel, checker) -> None:
    _, logs, _ = otel
    with pytest.raises(EmptyInputError):
        checker.check([MAUNA_KEA], "   ")
    (event,) = evaluation_events(logs)
    assert event.attributes["error.type"] == "EmptyInputError"
    assert "gen_ai.evaluation.score.value" not in event.attributes


def test_the_explanation_quotes_the_answer_only_when_texts_are_captured(
    otel, checker, monkeypatch
) -> None:
    _, logs, _ = otel
    monkeypatch.setenv("GROUND_OTEL_CAPTURE_TEXT", "1")
    checker.check([MAUNA_KEA], BAD)
    (event,) = evaluation_events(logs)
    assert BAD in event.attributes["gen_ai.evaluation.explanation"]


def test_a_guarded_langchain_generation_gets_its_evaluation_event(otel) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.prompts import ChatPromptTemplate

    from ground_integrations import HeuristicJudge, Policy
    from ground_integrations.langchain import GroundednessGuard

    _, logs, host = otel
    prompt = ChatPromptTemplate.from_messages([("system", "{context}"), ("human", "{question}")])
    model = GenericFakeChatModel(messages=iter([AIMessage(BAD)]))
    guard = GroundednessGuard(
        prompt | model,
        checker=GroundednessChecker(HeuristicJudge()),
        policy=Policy.annotate(),
    )
    with host.start_as_current_span(
        "invoke_agent rag", attributes={"gen_ai.operation.name": "invoke_agent"}
    ) as agent:
        out = guard.invoke({"context": MAUNA_KEA, "question": "How high is Mauna Kea?"})
    (event,) = evaluation_events(logs)
    assert (
        event.attributes["gen_ai.evaluation.score.label"]
        == out.response_metadata["groundedness"]["verdict"]
    )
    assert event.span_id == agent.get_span_context().span_id
