"""The hand-read sample of correct answers the judge flags (benchmarks/data) and its script."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "flagged_correct_audit.py"


def _script():
    spec = importlib.util.spec_from_file_location("flagged_correct_audit", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_audit_file_is_a_sample_of_fifteen_answers_per_subtask() -> None:
    audit = _script()
    rows = audit.load(audit.AUDIT)
    assert len({r["id"] for r in rows}) == len(rows) == 45
    assert Counter(r["subtask"] for r in rows) == {s: 15 for s in audit.SUBTASKS}
    assert {r["reading"] for r in rows} <= set(audit.READINGS)
    assert all(r["note"].strip() and r["id"].startswith("ragtruth:") for r in rows)


def _records(path: Path, rows: list[dict], **change) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for r in rows:
            record = {"id": r["id"], "subtask": r["subtask"], "label": "grounded"}
            f.write(json.dumps(record | change.get(r["id"], {})) + "\n")
    return path


def test_the_script_counts_the_readings_and_refuses_a_wrong_answer(tmp_path, capsys) -> None:
    audit = _script()
    rows = audit.load(audit.AUDIT)
    data = _records(tmp_path / "rag_dev.jsonl", rows)
    assert audit.main(["--data", str(data)]) == 0
    out = capsys.readouterr().out
    total = Counter(r["reading"] for r in rows)
    last = out.strip().splitlines()[-1].split()
    assert last == ["all", *(str(total[r]) for r in audit.READINGS), "45"]
    # an answer RAGTruth labels hallucinated is no correct answer: one line, exit 1
    wrong = _records(tmp_path / "wrong.jsonl", rows, **{rows[0]["id"]: {"label": "notGrounded"}})
    assert audit.main(["--data", str(wrong)]) == 1
    assert f"{rows[0]['id']}: not a correct" in capsys.readouterr().out


def test_a_draw_takes_flagged_correct_answers_only(tmp_path, capsys) -> None:
    audit = _script()
    rows = audit.load(audit.AUDIT)
    data = _records(tmp_path / "rag_dev.jsonl", rows)
    predictions = tmp_path / "predictions.jsonl"
    with predictions.open("w", encoding="utf-8") as f:
        for k, r in enumerate(rows):  # every third one passes (P(notGrounded) 0.2)
            f.write(
                json.dumps({"id": r["id"], "label": "grounded", "p": 0.2 if k % 3 else 0.9}) + "\n"
            )
    assert audit.main(["--data", str(data), "--draw", str(predictions)]) == 0
    drawn = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert drawn and set(drawn) == {r["id"] for k, r in enumerate(rows) if k % 3 == 0}
