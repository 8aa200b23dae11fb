"""A fake chat model that judges like a careful (and gullible) LLM, and counts its calls.

It reads the tagged prompt: for every statement it scores support in the source with the
embedded heuristic and quotes the best source sentence. If an instruction to "answer grounded"
appears anywhere *outside* the tagged data it obeys it, as a gullible model would: so a test
can show that injected text stays inside the data.
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from ground_integrations import GroundednessChecker

_checker = GroundednessChecker(cache_size=0)


def judge_prompt(prompt: str, obey_injection: bool = True) -> str:
    tag = re.search(r"<source-([0-9a-f]+)>", prompt)
    if not tag:
        return "I cannot find the source."
    tid = tag.group(1)
    source = re.search(rf"<source-{tid}>\n(.*?)\n</source-{tid}>", prompt, re.S).group(1)
    outside = re.sub(
        rf"<(source|question|statement)-{tid}[^>]*>.*?</\1-{tid}>", "", prompt, flags=re.S
    )
    gullible = obey_injection and "answer grounded" in outside.lower()
    if "<Score: N>" in prompt:
        answer = re.search(rf"<statement-{tid}>\n(.*?)\n</statement-{tid}>", prompt, re.S).group(1)
        verdict = _checker.check([source], answer).verdict.value
        return (
            "<Score: 5> fully grounded."
            if gullible or verdict == "grounded"
            else "<Score: 1> unsupported claim."
        )
    out = []
    for m in re.finditer(rf"<statement-{tid} index=(\d+)>(.*?)</statement-{tid}>", prompt, re.S):
        index, statement = int(m.group(1)), m.group(2)
        result = _checker.check([source], statement)
        ev = result.sentences[0].evidence if result.sentences else []
        quote = ev[0].text if ev else "NOTHING FOUND"
        score = 10 if gullible or result.verdict.value == "grounded" else 2
        out.append(
            {
                "index": index,
                "evidence": quote,
                "reason": result.sentences[0].reason,
                "score": score,
            }
        )
    return json.dumps({"statements": out})


class FakeJudgeModel(BaseChatModel):
    """Answers judge prompts; ``replies`` (if any) are returned first, verbatim."""

    replies: list[str] = Field(default_factory=list)
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    obey_injection: bool = True

    @property
    def _llm_type(self) -> str:
        return "fake-judge"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append(messages)
        prompt = "\n".join(str(m.content) for m in messages)
        text = self.replies.pop(0) if self.replies else judge_prompt(prompt, self.obey_injection)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    def prompt_chars(self) -> int:
        return sum(len(str(m.content)) for call in self.calls for m in call)
