"""The structured reply :class:`~ground_integrations.judges.LLMJudge` asks a model for: one
assessment per numbered statement (a 0-10 score, a verbatim evidence quote, a reason).

Its own module because both backends need it (LangChain's ``with_structured_output``,
LlamaIndex's ``as_structured_llm``) and the reply parser validates text against it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["BatchedAssessment", "SentenceAssessment"]


class SentenceAssessment(BaseModel):
    index: int = Field(description="The statement's number, as given.")
    evidence: str = Field(description="A verbatim quote from the context, or NOTHING FOUND.")
    reason: str = Field(description="Why the score: what matches and what does not.")
    score: int = Field(ge=0, le=10, description="0 = no support, 10 = fully supported.")


class BatchedAssessment(BaseModel):
    """The model's structured reply for the batched strategy."""

    statements: list[SentenceAssessment]
