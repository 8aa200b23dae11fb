"""GroundednessResponsePolicy: a policy applied to a synthesized Response, one attempt."""

from __future__ import annotations

import pytest
from llama_index.core.base.response.schema import Response
from llama_index.core.schema import NodeWithScore, TextNode

from ground_integrations import Policy, UngroundedAnswerError, Verdict
from ground_integrations.llama_index import GroundednessResponsePolicy

from ..conftest import MAUNA_KEA
from .conftest import GROUNDED, HALLUCINATION, QUESTION


def _response(text: str) -> Response:
    nodes = [
        NodeWithScore(node=TextNode(text=MAUNA_KEA), score=0.9),
        NodeWithScore(node=TextNode(text="Python was released in 1991."), score=0.2),
    ]
    return Response(text, source_nodes=nodes)


def test_annotates_and_tells_whether_to_regenerate() -> None:
    responses = GroundednessResponsePolicy(policy=Policy())
    out = responses.process_response(_response(HALLUCINATION), QUESTION, can_regenerate=True)
    assert responses.needs_regeneration(out)
    assert out.metadata["groundedness"].verdict is Verdict.NOT_GROUNDED
    assert out.response == HALLUCINATION
    good = responses.process_response(_response(GROUNDED), QUESTION)
    assert not responses.needs_regeneration(good) and good.metadata["groundedness"].is_grounded
    assert good.source_nodes[0].node.metadata["groundedness_support"] > 0.5


def test_blocks_when_it_cannot_regenerate() -> None:
    responses = GroundednessResponsePolicy(policy=Policy())
    with pytest.raises(UngroundedAnswerError):  # cannot regenerate: on_exhausted
        responses.process_response(_response(HALLUCINATION), QUESTION)
    fallback = GroundednessResponsePolicy(policy=Policy.block(fallback_message="-"))
    assert fallback.process_response(_response(HALLUCINATION)).response == "-"


async def test_async_matches_sync() -> None:
    responses = GroundednessResponsePolicy(policy=Policy.annotate())
    a = await responses.aprocess_response(_response(HALLUCINATION), QUESTION)
    b = responses.process_response(_response(HALLUCINATION), QUESTION)
    assert a.metadata["groundedness"].score == b.metadata["groundedness"].score


def test_support_goes_on_node_copies_hidden_from_the_llm() -> None:
    responses = GroundednessResponsePolicy(policy=Policy.annotate())
    given = _response(HALLUCINATION)
    out = responses.process_response(given, QUESTION)
    assert out.metadata["groundedness"].verdict is Verdict.NOT_GROUNDED
    support = out.source_nodes[0].node
    assert support is not given.source_nodes[0].node
    assert "groundedness_support" not in given.source_nodes[0].node.metadata
    assert "groundedness_support" in support.excluded_llm_metadata_keys
