from __future__ import annotations

import pytest
from llama_index.core.base.response.schema import Response
from llama_index.core.schema import NodeWithScore, TextNode

from ground_integrations import Policy
from ground_integrations.llama_index import GroundednessPostprocessor

from ..conftest import MAUNA_KEA
from .conftest import GROUNDED, HALLUCINATION, QUESTION, ScriptedLLM, engine


def _response(text: str) -> Response:
    nodes = [
        NodeWithScore(node=TextNode(text=MAUNA_KEA), score=0.9),
        NodeWithScore(node=TextNode(text="Python was released in 1991."), score=0.2),
    ]
    return Response(text, source_nodes=nodes)


def test_the_old_response_methods_delegate_with_a_deprecation_warning() -> None:
    post = GroundednessPostprocessor(policy=Policy(), markers=True)
    with pytest.warns(DeprecationWarning, match=r"response_policy\.process_response"):
        out = post.process_response(_response(HALLUCINATION), QUESTION, can_regenerate=True)
    with pytest.warns(DeprecationWarning, match="needs_regeneration"):
        assert post.needs_regeneration(out)
    direct = post.response_policy.process_response(
        _response(HALLUCINATION), QUESTION, can_regenerate=True
    )
    assert out.metadata["groundedness"].score == direct.metadata["groundedness"].score
    assert post.response_policy.markers is True  # configured like the postprocessor
    for name in (
        "task_for",
        "check_response",
        "acheck_response",
        "aprocess_response",
        "apply",
        "finish",
        "fallback",
    ):
        with pytest.warns(DeprecationWarning):
            assert callable(getattr(post, name))


def test_as_node_postprocessor_drops_nodes_that_support_nothing_of_the_query(index) -> None:
    post = GroundednessPostprocessor(min_support=0.3)
    qe = engine(index, ScriptedLLM(), node_postprocessors=[post])
    response = qe.query(QUESTION)
    sources = [n.node.metadata["source"] for n in response.source_nodes]
    assert sources == ["mauna-kea"]
    assert response.source_nodes[0].node.metadata["groundedness_support"] >= 0.3
    drafted = GroundednessPostprocessor(
        min_support=0.3, draft_answer="Python was released in 1991."
    )
    kept = drafted.postprocess_nodes(index.as_retriever(similarity_top_k=3).retrieve(QUESTION))
    assert [n.node.metadata["source"] for n in kept] == ["python"]


def test_node_filter_copies_nodes_and_hides_its_metadata_from_the_llm() -> None:
    from llama_index.core.schema import MetadataMode

    nodes = _response(HALLUCINATION).source_nodes
    originals = [dict(n.node.metadata) for n in nodes]
    post = GroundednessPostprocessor(min_support=0.0)
    kept = post.postprocess_nodes(nodes, query_str=QUESTION)
    assert [dict(n.node.metadata) for n in nodes] == originals  # the input is never mutated
    assert kept and all(k.node is not n.node for k, n in zip(kept, nodes))
    for node in kept:
        assert "groundedness_support" in node.node.metadata
        assert "groundedness_support" in node.node.excluded_llm_metadata_keys
        assert "groundedness_support" not in node.node.get_content(MetadataMode.LLM)


def test_blank_query_and_no_draft_keep_every_node_unscored() -> None:
    nodes = _response(HALLUCINATION).source_nodes
    kept = GroundednessPostprocessor(min_support=0.9).postprocess_nodes(nodes, query_str="  ")
    assert kept == nodes  # nothing to score against: the nodes as given


# -- support means something, stays out of the prompt and the embedding ----------------------


def _nodes(*texts: str) -> list[NodeWithScore]:
    return [
        NodeWithScore(node=TextNode(text=t, metadata={"n": i}), score=0.5)
        for i, t in enumerate(texts)
    ]


def test_one_shared_word_is_not_full_support() -> None:
    nodes = _nodes(
        MAUNA_KEA, "Kea birds live in the mountains of New Zealand.", "Paris has a tower."
    )
    post = GroundednessPostprocessor(min_support=0.0)
    kept = post.postprocess_nodes(nodes, query_str=QUESTION)  # content words: high, mauna, kea
    support = [k.node.metadata["groundedness_support"] for k in kept]
    assert support[1] == pytest.approx(1 / 3, abs=1e-3)  # "kea" only: one of three, not 1.0
    assert support[0] == pytest.approx(2 / 3, abs=1e-3)  # "mauna" and "kea"
    assert support[2] == 0.0
    strict = GroundednessPostprocessor(min_support=0.5).postprocess_nodes(nodes, query_str=QUESTION)
    assert [k.node.metadata["n"] for k in strict] == [0]


def test_draft_support_is_the_judges_sentence_score(checker) -> None:
    draft = "Python was first released in 1991."
    nodes = _nodes(
        "Python was created by Guido van Rossum and first released in 1991.",
        "Kea birds live in New Zealand.",
    )
    post = GroundednessPostprocessor(checker=checker, min_support=0.0, draft_answer=draft)
    kept = post.postprocess_nodes(nodes, query_str="ignored when a draft is set")
    expected = checker.check([nodes[0].node.get_content()], draft).sentences[0].score
    assert kept[0].node.metadata["groundedness_support"] == pytest.approx(expected, abs=1e-4)
    assert kept[1].node.metadata["groundedness_support"] == 0.0  # no evidence in that node


async def test_async_filter_matches_sync(checker) -> None:
    nodes = _nodes(MAUNA_KEA, "Python was released in 1991.")
    for post in (
        GroundednessPostprocessor(checker=checker, min_support=0.2),
        GroundednessPostprocessor(checker=checker, min_support=0.2, draft_answer=GROUNDED),
    ):
        sync = post.postprocess_nodes(nodes, query_str=QUESTION)
        asyn = await post.apostprocess_nodes(nodes, query_str=QUESTION)
        assert [n.node.metadata for n in sync] == [n.node.metadata for n in asyn]


def test_added_metadata_is_hidden_from_llm_and_embedder_and_nodes_are_copies() -> None:
    from llama_index.core.schema import MetadataMode

    original = TextNode(
        text=MAUNA_KEA,
        metadata={"source": "mauna-kea"},
        excluded_llm_metadata_keys=["internal"],
        excluded_embed_metadata_keys=["internal"],
    )
    before = original.model_dump()
    kept = GroundednessPostprocessor(min_support=0.0).postprocess_nodes(
        [NodeWithScore(node=original, score=0.7)], query_str=QUESTION
    )
    copy = kept[0].node
    assert copy is not original and original.model_dump() == before  # never mutated
    assert copy.metadata["groundedness_support"] > 0 and kept[0].score == 0.7
    assert copy.excluded_llm_metadata_keys == ["internal", "groundedness_support"]
    assert copy.excluded_embed_metadata_keys == ["internal", "groundedness_support"]
    for mode in (MetadataMode.LLM, MetadataMode.EMBED):
        assert "groundedness_support" not in copy.get_content(mode)
        assert "mauna-kea" in copy.get_content(mode)
    assert "groundedness_support" in copy.get_content(MetadataMode.ALL)
