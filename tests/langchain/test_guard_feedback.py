"""A guard's regeneration always tells the model what was wrong, whatever the chain looks like."""

from __future__ import annotations

import warnings
from operator import itemgetter

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from ground_integrations import ConfigurationError, Policy, UngroundedAnswerError
from ground_integrations.langchain import GroundednessGuard
from ground_integrations.langchain._guard import FeedbackWarning

from .conftest import GROUNDED, HALLUCINATION, QUESTION, make_model
from .test_host_habits import format_docs, retriever, tutorial_chain

ONE_RETRY = Policy(max_regenerations=1)
FEEDBACK_OPENING = "Your previous answer was not supported"


def texts(messages) -> list[str]:
    return [str(m.content) for m in messages]


def slot_prompt() -> ChatPromptTemplate:
    return ChatPromptTemplate.from_messages(
        [("system", "Answer from this context:\n{context}\n{feedback}"), ("human", "{question}")]
    )


@pytest.fixture(autouse=True)
def _feedback_warnings_fail_the_test():
    """A FeedbackWarning nobody expected is a failure here."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", FeedbackWarning)
        yield


def test_the_tutorial_chain_without_a_slot_regenerates_with_the_feedback_as_a_message() -> None:
    model = make_model([HALLUCINATION, GROUNDED])
    guard = GroundednessGuard(tutorial_chain(model), policy=ONE_RETRY)
    assert guard.invoke(QUESTION) == GROUNDED
    first, second = model.prompts
    assert [type(m) for m in first] == [SystemMessage, HumanMessage]
    # the same request, with the feedback added after the user's question
    assert texts(second[:2]) == texts(first)
    assert isinstance(second[2], HumanMessage) and len(second) == 3
    assert second[2].content.startswith(FEEDBACK_OPENING)
    assert HALLUCINATION in second[2].content  # it names the sentence at fault


async def test_the_tutorial_chain_regenerates_the_same_way_async() -> None:
    model = make_model([HALLUCINATION, GROUNDED])
    guard = GroundednessGuard(tutorial_chain(model), policy=ONE_RETRY)
    assert await guard.ainvoke(QUESTION) == GROUNDED
    assert len(model.prompts[0]) == 2 and FEEDBACK_OPENING in model.prompts[1][-1].content


def test_a_partial_feedback_value_does_not_hide_the_slot() -> None:
    """The chain from the field: the map in front drops the key, the partial fills it with ""."""
    model = make_model([HALLUCINATION, GROUNDED])
    chain = (
        {
            "context": itemgetter("question") | retriever() | format_docs,
            "question": itemgetter("question"),
        }
        | slot_prompt().partial(feedback="")
        | model
        | StrOutputParser()
    )
    guard = GroundednessGuard(chain, policy=ONE_RETRY)
    assert guard.invoke({"question": QUESTION}) == GROUNDED
    first, second = model.prompts
    assert first != second  # the retry's prompt differs...
    assert FEEDBACK_OPENING not in first[0].content
    assert FEEDBACK_OPENING in second[0].content  # ...by the feedback, in the prompt's slot
    assert HALLUCINATION in second[0].content and len(second) == 2


def test_the_tutorial_chain_with_a_slot_and_a_str_input_fills_the_slot() -> None:
    model = make_model([HALLUCINATION, GROUNDED])
    chain = (
        {"context": retriever() | format_docs, "question": RunnablePassthrough()}
        | slot_prompt().partial(feedback="")
        | model
        | StrOutputParser()
    )
    assert GroundednessGuard(chain, policy=ONE_RETRY).invoke(QUESTION) == GROUNDED
    assert FEEDBACK_OPENING in model.prompts[1][0].content and len(model.prompts[1]) == 2


def test_a_model_behind_bind_and_a_dict_output_still_gets_the_message() -> None:
    model = make_model([HALLUCINATION, GROUNDED])
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Context:\n{context_text}"), ("human", "{question}")]
    )
    answer = (
        RunnablePassthrough.assign(
            context_text=lambda x: "\n\n".join(d.page_content for d in x["context"])
        )
        | prompt
        | model.bind(stop=["\n\n\n"]).with_config(run_name="answerer")
    )
    rag = RunnablePassthrough.assign(context=itemgetter("question") | retriever()).assign(
        answer=answer
    )
    out = GroundednessGuard(rag, policy=ONE_RETRY).invoke({"question": QUESTION})
    assert out["answer"].content == GROUNDED
    assert FEEDBACK_OPENING in model.prompts[1][-1].content


def opaque_chain(model, prompt=None):
    """The model and its prompt inside a function: nothing the guard can rebuild."""
    prompt = prompt or ChatPromptTemplate.from_messages(
        [("system", "Answer from this context:\n{context}"), ("human", "{question}")]
    )

    def answer(inputs: dict) -> str:
        context = format_docs(retriever().invoke(inputs["question"]))
        return (prompt | model | StrOutputParser()).invoke(
            {"context": context, "question": inputs["question"]}
        )

    return RunnableLambda(answer)


def test_a_guard_that_truly_cannot_regenerate_warns_only_when_a_regeneration_is_due() -> None:
    model = make_model([GROUNDED, HALLUCINATION, HALLUCINATION])
    guard = GroundednessGuard(opaque_chain(model), policy=ONE_RETRY)  # no warning here
    assert guard.invoke({"question": QUESTION}) == GROUNDED  # nor for a grounded answer
    with (
        pytest.warns(FeedbackWarning, match=r"no chat model it can reach") as caught,
        pytest.raises(UngroundedAnswerError),
    ):
        guard.invoke({"question": QUESTION})
    assert len(caught) == 1 and "feedback_slot='append'" in str(caught[0].message)
    assert len(model.prompts) == 2  # the identical prompt was not sent again
    with pytest.raises(UngroundedAnswerError):
        guard.invoke({"question": QUESTION})  # warned once per guard, not per call
    assert len(model.prompts) == 3


def test_a_retry_whose_request_lacks_the_feedback_is_reported() -> None:
    model = make_model([HALLUCINATION, GROUNDED])
    prompt = slot_prompt().partial(feedback="")  # filled inside the function, not by the guard
    guard = GroundednessGuard(opaque_chain(model, prompt), policy=ONE_RETRY, feedback_slot="text")
    with pytest.warns(FeedbackWarning, match="did not contain the feedback"):
        assert guard.invoke({"question": QUESTION}) == GROUNDED
    first, second = model.prompts
    assert texts(first) == texts(second)  # what the warning is about


def test_append_is_refused_where_there_is_nothing_to_append_to() -> None:
    with pytest.raises(ConfigurationError, match="feedback_slot='append'"):
        GroundednessGuard(opaque_chain(make_model([])), feedback_slot="append")


def test_the_chain_given_is_never_changed() -> None:
    model = make_model([HALLUCINATION, GROUNDED, HALLUCINATION])
    chain = tutorial_chain(model)
    before = [type(s).__name__ for s in chain.steps]
    GroundednessGuard(chain, policy=ONE_RETRY).invoke(QUESTION)
    assert [type(s).__name__ for s in chain.steps] == before
    assert chain.invoke(QUESTION) == HALLUCINATION and len(model.prompts[-1]) == 2


# -- sentence streaming with the retriever inside the guarded chain ------------------------


STREAM_POLICY = Policy(on_not_grounded="block", fallback_message="[not in the sources]")


def test_sentence_streaming_works_when_the_retriever_runs_inside_the_chain() -> None:
    guard = GroundednessGuard(
        tutorial_chain(make_model([GROUNDED])), policy=STREAM_POLICY, streaming="sentence"
    )
    chunks = list(guard.stream(QUESTION))
    assert len(chunks) == 2 and "".join(chunks) == GROUNDED  # sentence by sentence


async def test_a_rejected_sentence_never_streams_when_the_retriever_runs_inside() -> None:
    answer = f"Mauna Kea is an inactive volcano on the island of Hawaii. {HALLUCINATION}"
    guard = GroundednessGuard(
        tutorial_chain(make_model([answer])), policy=STREAM_POLICY, streaming="sentence"
    )
    chunks = [c async for c in guard.astream(QUESTION)]
    assert "5,207.3" not in "".join(chunks)
    assert chunks[0].startswith("Mauna Kea is an inactive volcano")
    assert chunks[-1].strip() == "[not in the sources]"
