"""The README's LlamaIndex section runs as written (each code block on its own, offline)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text[
        text.index("## LlamaIndex\n") : text.index("\n## ", text.index("## LlamaIndex\n") + 1)
    ]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_section_has_its_examples() -> None:
    blocks = _blocks()
    assert len(blocks) >= 2
    assert any("GroundedChatEngine(" in b for b in blocks)
    assert any("from_defaults(" in b for b in blocks)
    assert any("LLMJudge(Settings.llm)" in b for b in blocks)


@pytest.mark.parametrize("index", range(len(_blocks())))
def test_each_code_block_runs_as_written(index, capsys) -> None:
    exec(compile(_blocks()[index], f"README.md LlamaIndex block {index}", "exec"), {})
