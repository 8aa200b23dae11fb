from __future__ import annotations

import json
import re
from operator import itemgetter
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.output_parsers import JsonOutputParser, StrOutputParser
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

from ground_integrations import (
    CitationResult,
    CitationStatus,
    ConfigurationError,
    InvalidInputError,
    Policy,
    UngroundedAnswerError,
)
from ground_integrations.langchain import CitationCheck, CitationGuard, with_citation_check

from ..conftest import MAUNA_KEA
from .conftest import Recorder, RecordingChatModel, make_model

DOCS = [
    Document(id="mauna-kea", page_content=MAUNA_KEA),
    Document(id="eiffel", page_content="The Eiffel Tower in Paris was completed in 1889."),
    Document(
        id="python",
        page_content="Python was created by Guido van Rossum and first released in 1991.",
    ),
]
QUESTION = "When was the Eiffel Tower completed?"
MISCITED = "The Eiffel Tower in Paris was completed in 1889 [mauna-kea]."
CITED = "The Eiffel Tower in Paris was completed in 1889 [eiffel]."


def numbered(docs: list[Document]) -> str:
    return "\n\n".join(f"Source {i}: [{d.id}] {d.page_content}" for i, d in enumerate(docs, 1))


def rag_chain(
    model: Runnable[Any, Any], parser: Runnable[Any, Any] | None = None
) -> Runnable[Any, Any]:
    """retrieve -> numbered prompt (with optional feedback) -> model -> parser, keeping context."""
    store = InMemoryVectorStore.from_documents(DOCS, DeterministicFakeEmbedding(size=32))
    retriever = store.as_retriever(search_kwargs={"k": 3})
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Answer from these sources, citing them:\n{sources}\n\n{feedback}"),
            ("human", "{question}"),
        ]
    )
    generate = (
        RunnablePassthrough.assign(sources=lambda x: numbered(x["context"]))
        | prompt
        | model
        | (parser or StrOutputParser())
    )
    return RunnablePassthrough.assign(context=itemgetter("question") | retriever).assign(
        answer=generate
    )


class NumberCitingModel(RecordingChatModel):
    """Cites the Eiffel Tower by the number its source has in the prompt (or ``offset`` off)."""

    offset: int = 0

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.prompts.append(messages)
        number = int(re.search(r"Source (\d+): \[eiffel\]", str(messages[0].content)).group(1))  # type: ignore[union-attr]
        cited = (number - 1 + self.offset) % 3 + 1
        text = f"The Eiffel Tower in Paris was completed in 1889 [Source {cited}]."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


def run(chain: Runnable[Any, Any]) -> dict[str, Any]:
    return chain.invoke({"question": QUESTION, "feedback": ""})


def test_citation_check_in_a_chain_resolves_document_ids() -> None:
    recorder = Recorder()
    chain = rag_chain(make_model([MISCITED])) | CitationCheck()
    result = chain.invoke({"question": QUESTION, "feedback": ""}, config={"callbacks": [recorder]})
    assert isinstance(result, CitationResult) and result.by_id
    (sentence,) = result.sentences
    assert sentence.status is CitationStatus.MISCITED
    assert [r.id for r in sentence.cited] == ["mauna-kea"]
    assert [r.id for r in sentence.supported_elsewhere] == ["eiffel"]
    assert "cite [eiffel] instead" in sentence.reason
    assert any(name == "CitationCheck" for name, _, _ in recorder.starts)


@pytest.mark.parametrize(
    ("offset", "status"), [(0, CitationStatus.OK), (1, CitationStatus.MISCITED)]
)
def test_numbered_citations_follow_the_retrieved_order(offset: int, status: CitationStatus) -> None:
    model = NumberCitingModel(messages=iter(()), offset=offset)
    result = (rag_chain(model) | CitationCheck()).invoke({"question": QUESTION, "feedback": ""})
    assert result.sentences[0].status is status
    if status is CitationStatus.MISCITED:
        prompt = str(model.prompts[0][0].content)
        right = re.search(r"Source (\d+): \[eiffel\]", prompt).group(1)  # type: ignore[union-attr]
        assert [r.number for r in result.sentences[0].supported_elsewhere] == [int(right)]


def test_the_cited_answer_recipe_with_a_list_of_source_ids() -> None:
    """The answer lists its sources beside the text ({"answer", "citations"}), 0-based ids."""

    def answer_with(ids: list[int]) -> str:
        return json.dumps(
            {"answer": "The Eiffel Tower in Paris was completed in 1889.", "citations": ids}
        )

    store = InMemoryVectorStore.from_documents(DOCS, DeterministicFakeEmbedding(size=32))
    docs = store.similarity_search(QUESTION, k=3)
    right = [d.id for d in docs].index("eiffel")
    for ids, status in (([right], CitationStatus.OK), ([(right + 1) % 3], CitationStatus.MISCITED)):
        chain = rag_chain(make_model([answer_with(ids)]), JsonOutputParser())
        output = run(chain)
        flat = {"context": output["context"], **output["answer"]}
        result = CitationCheck().invoke(flat)
        assert result.uses_citations and result.sentences[0].status is status
        assert result.sentences[0].cited[0].number == ids[0] + 1


def test_guard_regenerates_with_feedback_naming_the_right_source() -> None:
    model = make_model([MISCITED, CITED])
    guarded = with_citation_check(rag_chain(model), policy=Policy(max_regenerations=2))
    output = guarded.invoke({"question": QUESTION})
    assert output["answer"] == CITED and output["citation_check"].ok
    assert len(model.prompts) == 2
    retry_prompt = str(model.prompts[1][0].content)
    assert (
        "cite [eiffel] instead" in retry_prompt
        and MISCITED.rstrip(".").replace(" [mauna-kea]", "") in retry_prompt
    )


async def test_guard_async_blocks_when_regenerations_run_out() -> None:
    model = make_model([MISCITED] * 3)
    guarded = CitationGuard(rag_chain(model), policy=Policy(max_regenerations=1))
    with pytest.raises(UngroundedAnswerError, match=r"cite \[eiffel\] instead") as caught:
        await guarded.ainvoke({"question": QUESTION})
    assert caught.value.decision is not None and caught.value.decision.attempt == 1
    assert len(model.prompts) == 2


def test_guard_after_a_chain_annotates_or_blocks() -> None:
    output = run(rag_chain(make_model([MISCITED])))
    annotated = CitationGuard(policy=Policy.annotate()).invoke(output)
    assert annotated["answer"] == MISCITED
    assert annotated["citation_check"].counts()["miscited"] == 1
    # after a chain there is nothing to regenerate: the policy's on_exhausted (block) applies
    with pytest.raises(UngroundedAnswerError):
        CitationGuard().invoke(output)
    fallback = CitationGuard(policy=Policy(fallback_message="I cannot cite that.")).invoke(output)
    assert fallback["answer"] == "I cannot cite that." and not fallback["citation_check"].ok
    good = CitationGuard().invoke(run(rag_chain(make_model([CITED]))))
    assert good["answer"] == CITED and good["citation_check"].ok


def test_bad_options_and_inputs_raise_typed_errors() -> None:
    with pytest.raises(ConfigurationError, match="named group 'refs'"):
        CitationCheck(pattern=r"\[(\d+)\]")
    with pytest.raises(ConfigurationError):
        CitationCheck(answer_key=3)
    with pytest.raises(InvalidInputError, match="answer_key"):
        CitationCheck().invoke({"context": DOCS})
    with pytest.raises(InvalidInputError, match="context_key"):
        CitationCheck().invoke({"answer": CITED})
    with pytest.raises(InvalidInputError, match="list of source ids"):
        CitationCheck().invoke({"answer": CITED, "context": DOCS, "citations": {"a": 1}})


def test_custom_pattern_and_metadata_ids() -> None:
    docs = [Document(page_content=d.page_content, metadata={"key": d.id}) for d in DOCS]
    check = CitationCheck(pattern=r"\(cf\. (?P<refs>[\w-]+)\)", id_key="key")
    result = check.invoke(
        {"context": docs, "answer": "The Eiffel Tower in Paris was completed in 1889 (cf. eiffel)."}
    )
    assert result.ok and result.sentences[0].cited[0].id == "eiffel"


def test_judge_failures_follow_policy_on_error() -> None:
    from ground_integrations import GroundednessChecker
    from ground_integrations.testing import FailingJudge

    output = run(rag_chain(make_model([CITED])))
    broken = GroundednessChecker(FailingJudge())
    with pytest.raises(UngroundedAnswerError, match="fail closed"):
        CitationGuard(checker=broken).invoke(output)
    opened = CitationGuard(checker=broken, policy=Policy(on_error="annotate")).invoke(output)
    assert opened["answer"] == CITED and opened["citation_check"] is None
    assert "JudgeError" in opened["citation_check_error"]
