"""Model calls and prompt size per check: LLMJudge "batched" against "per_sentence", in one run.

    python benchmarks/bench_llm_judge_calls.py ../shared/data/dev.jsonl [--limit N]

A counting fake chat model stands in for the LLM: it answers every statement in a prompt with a
valid assessment, so only the prompts differ. Prompt tokens are estimated as characters / 4
(no tokenizer download); the ratio between strategies is what matters.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from ground_integrations import GroundednessChecker
from ground_integrations.evaluation import read_jsonl
from ground_integrations.judges import LLMJudge


class CountingModel(BaseChatModel):
    calls: int = 0
    prompt_chars: int = 0
    completion_chars: int = 0

    @property
    def _llm_type(self) -> str:
        return "counting"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        prompt = "\n".join(str(m.content) for m in messages)
        indices = [int(i) for i in re.findall(r"<statement-[0-9a-f]+ index=(\d+)>", prompt)]
        reply = json.dumps(
            {
                "statements": [
                    {"index": i, "evidence": "NOTHING FOUND", "reason": "counted", "score": 10}
                    for i in indices
                ]
            }
        )
        self.calls += 1
        self.prompt_chars += len(prompt)
        self.completion_chars += len(reply)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", type=Path)
    ap.add_argument("--limit", type=int)
    args = ap.parse_args()
    records = list(read_jsonl(args.path))[: args.limit]
    rows = {}
    for strategy in ("batched", "per_sentence"):
        model = CountingModel()
        checker = GroundednessChecker(
            LLMJudge(model, strategy=strategy, max_concurrency=1), cache_size=0
        )
        for r in records:
            checker.check(r["context"], r["answer"], r.get("query"), task=r["task"])
        rows[strategy] = model
    n = len(records)
    print(f"{n} checks of {args.path}")
    print(
        f"{'strategy':14s} {'calls':>8s} {'calls/check':>12s} {'prompt tok':>12s} {'tok/check':>10s} {'completion tok':>15s}"
    )
    for name, m in rows.items():
        print(
            f"{name:14s} {m.calls:8d} {m.calls / n:12.2f} {m.prompt_chars // 4:12,d} "
            f"{m.prompt_chars / 4 / n:10,.0f} {m.completion_chars // 4:15,d}"
        )
    b, p = rows["batched"], rows["per_sentence"]
    print(
        f"per_sentence / batched: {p.calls / b.calls:.2f}x calls, {p.prompt_chars / b.prompt_chars:.2f}x prompt tokens"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
