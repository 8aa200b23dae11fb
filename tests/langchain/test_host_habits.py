"""The guard fits LangChain code as people write it."""

from __future__ import annotations

import warnings
from operator import itemgetter
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

from ground_integrations import Policy, UngroundedAnswerError, Verdict
from ground_integrations.langchain import GroundednessCheck, GroundednessGuard
from ground_integrations.langchain._guard import FeedbackWarning

from ..conftest import MAUNA_KEA
from .conftest import DOCS, GROUNDED, HALLUCINATION, QUESTION, make_model


def retriever():
    store = InMemoryVectorStore.from_documents(DOCS, DeterministicFakeEmbedding(size=32))
    return store.as_retriever(search_kwargs={"k": 3})


def format_docs(docs) -> str:
    return "\n\n".join(d.page_content for d in docs)


def tutorial_chain(model, parse: bool = True):
    """The LangChain RAG tutorial's chain, as written there."""
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from this context:\n{context}"), ("human", "{question}")]
    )
    chain = (
        {"context": retriever() | format_docs, "question": RunnablePassthrough()} | prompt | model
    )
    return chain | StrOutputParser() if parse else chain


class Events(BaseCallbackHandler):
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
        self.seen.append((name, data))


def test_the_tutorial_chain_is_guarded_as_it_is() -> None:
    model = make_model([GROUNDED])
    events = Events()
    guard = GroundednessGuard(tutorial_chain(model), policy=Policy.annotate())
    out = guard.invoke(QUESTION, config={"callbacks": [events]})
    assert out == GROUNDED  # a str stays a str
    ((name, data),) = events.seen
    assert name == "groundedness_result" and data["verdict"] == "grounded"
    # the context is what the retriever returned inside the run: the evidence quotes it
    quotes = [e["text"] for s in data["result"]["sentences"] for e in s["evidence"]]
    assert quotes and all(q in MAUNA_KEA for q in quotes)


def test_a_feedback_variable_carries_the_feedback_into_the_retry() -> None:
    model = make_model([HALLUCINATION, GROUNDED])
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from this context:\n{context}\n{feedback}"), ("human", "{question}")]
    )
    chain = (
        {
            "context": itemgetter("question") | retriever() | format_docs,
            "question": itemgetter("question"),
            "feedback": itemgetter("feedback"),
        }
        | prompt
        | model
        | StrOutputParser()
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        guard = GroundednessGuard(chain)
    assert guard.invoke({"question": QUESTION}) == GROUNDED
    first, second = (str(p[0].content) for p in model.prompts)
    assert "not supported" not in first
    assert HALLUCINATION in second and "Answer again using only" in second


async def test_a_messages_placeholder_gets_the_feedback_as_a_message() -> None:
    model = make_model([HALLUCINATION, GROUNDED])
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Answer from this context:\n{context}"),
            ("human", "{question}"),
            MessagesPlaceholder("feedback", optional=True),
        ]
    )
    chain = (
        RunnablePassthrough.assign(context=itemgetter("question") | retriever() | format_docs)
        | prompt
        | model
    )
    guard = GroundednessGuard(chain)
    out = await guard.ainvoke({"question": QUESTION})
    assert isinstance(out, AIMessage) and out.content == GROUNDED
    assert out.response_metadata["groundedness"]["verdict"] == "grounded"
    first, second = model.prompts
    assert len(first) == 2 and isinstance(second[-1], HumanMessage)
    assert HALLUCINATION in str(second[-1].content)


async def test_the_result_event_shows_in_astream_events() -> None:
    guard = GroundednessGuard(tutorial_chain(make_model([HALLUCINATION])), policy=Policy.annotate())
    events = [e async for e in guard.astream_events(QUESTION, version="v2")]
    custom = [e for e in events if e["event"] == "on_custom_event"]
    assert [e["name"] for e in custom] == ["groundedness_result"]
    assert (
        custom[0]["data"]["verdict"] == "notGrounded" and custom[0]["data"]["action"] == "annotate"
    )
    retrievals = [e for e in events if e["event"] == "on_retriever_end"]
    assert len(retrievals) == 1


def test_a_chain_without_retriever_or_context_is_a_clear_error() -> None:
    from ground_integrations import InvalidInputError

    guard = GroundednessGuard(RunnableLambda(lambda q: "an answer"), policy=Policy.annotate())
    with pytest.raises(InvalidInputError, match="no retriever ran inside the guarded chain"):
        guard.invoke(QUESTION)


def test_schemas_are_real() -> None:
    chain = tutorial_chain(make_model([GROUNDED]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FeedbackWarning)
        guard = GroundednessGuard(chain)
    assert guard.get_input_jsonschema() == chain.get_input_jsonschema()
    assert guard.get_output_jsonschema() == chain.get_output_jsonschema()
    check = GroundednessCheck(answer_key="response")
    props = check.get_input_jsonschema()["properties"]
    assert {"context", "response", "query"} <= set(props)
    assert check.get_output_jsonschema()["title"] == "GroundednessResult"
    result = check.invoke({"context": [DOCS[0]], "response": HALLUCINATION})
    assert result.verdict is Verdict.NOT_GROUNDED


# -- point 4: streaming says what happened -------------------------------------------------


def test_sentence_streaming_refuses_a_policy_that_would_regenerate() -> None:
    from ground_integrations import ConfigurationError

    chain = tutorial_chain(make_model([GROUNDED]))
    with pytest.raises(ConfigurationError, match="cannot regenerate"):
        GroundednessGuard(chain, streaming="sentence")  # the default policy regenerates
    with pytest.raises(ConfigurationError, match="streaming='buffer'"):
        GroundednessGuard(chain, policy=Policy(on_not_sure="regenerate"), streaming="sentence")


def test_a_dict_stream_ends_with_the_outcome() -> None:
    from .conftest import make_rag_chain

    guard = GroundednessGuard(
        make_rag_chain(make_model([GROUNDED])), policy=Policy.block(), streaming="sentence"
    )
    chunks = list(guard.stream({"question": QUESTION}))
    last = chunks[-1]
    assert set(last) == {"groundedness"}
    summary = last["groundedness"]
    assert summary["verdict"] == "grounded" and summary["action"] == "pass"
    assert not summary["blocked"] and len(summary["sentences"]) == 2
    assert all(
        set(c) <= {"question", "context", "feedback", "answer", "groundedness"} for c in chunks
    )


async def test_a_message_stream_ends_with_metadata_and_a_str_stream_with_an_event() -> None:
    prompt = ChatPromptTemplate.from_messages([("system", "{context}"), ("human", "{question}")])
    guard = GroundednessGuard(
        prompt | make_model([HALLUCINATION]), policy=Policy.annotate(), streaming="sentence"
    )
    chunks = [c async for c in guard.astream({"question": QUESTION, "context": GROUNDED})]
    from langchain_core.messages import AIMessageChunk

    assert chunks and all(isinstance(c, AIMessageChunk) for c in chunks)
    merged = chunks[0]
    for c in chunks[1:]:
        merged = merged + c
    assert merged.content == HALLUCINATION
    assert merged.response_metadata["groundedness"]["verdict"] == "notGrounded"
    text_guard = GroundednessGuard(
        prompt | make_model([GROUNDED]) | StrOutputParser(),
        policy=Policy.annotate(),
        streaming="sentence",
    )
    events = [
        e
        async for e in text_guard.astream_events(
            {"question": QUESTION, "context": GROUNDED}, version="v2"
        )
    ]
    custom = [e for e in events if e["event"] == "on_custom_event"]
    assert [e["data"]["verdict"] for e in custom] == ["grounded"]


def test_a_blocked_stream_reports_before_it_raises() -> None:
    events = Events()
    prompt = ChatPromptTemplate.from_messages([("system", "{context}"), ("human", "{question}")])
    guard = GroundednessGuard(
        prompt | make_model([HALLUCINATION]) | StrOutputParser(),
        policy=Policy.block(),
        streaming="sentence",
    )
    with pytest.raises(UngroundedAnswerError):
        list(
            guard.stream(
                {"question": QUESTION, "context": GROUNDED}, config={"callbacks": [events]}
            )
        )
    ((name, data),) = events.seen
    assert name == "groundedness_result" and data["blocked"] and data["verdict"] == "notGrounded"
