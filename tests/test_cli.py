from __future__ import annotations

import contextlib
import json
import subprocess
import sys

import pytest

from ground_integrations.cli import main

from .conftest import MAUNA_KEA


def test_check_text_output_shows_verdict_span_and_reason(capsys) -> None:
    code = main(["check", "--context", MAUNA_KEA, "--answer", "Mauna Kea is 5,207.3 meters tall."])
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[0] == "notGrounded"
    assert '- "5,207.3 meters tall" contradicted [codePoint 13+19' in out  # the words at fault
    assert "reason:" in out and "4,207.3" in out


def test_check_formats_and_exit_codes(capsys, tmp_path) -> None:
    ctx = tmp_path / "ctx.txt"
    ctx.write_text(MAUNA_KEA, encoding="utf-8")
    assert (
        main(
            [
                "check",
                "-f",
                str(ctx),
                "-a",
                "Mauna Kea is 5,207.3 meters tall.",
                "--format",
                "azure",
                "--reasoning",
                "--exit-code",
            ]
        )
        == 1
    )
    azure = json.loads(capsys.readouterr().out)
    assert azure["ungroundedDetected"] is True and "reason" in azure["ungroundedDetails"][0]
    assert (
        main(
            [
                "check",
                "-f",
                str(ctx),
                "-a",
                "Mauna Kea is an inactive volcano on the island of Hawaii.",
                "--format",
                "upstage",
                "--exit-code",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.strip() == "grounded"
    assert main(["check", "-c", MAUNA_KEA, "-a", "It is tall.", "--format", "json"]) == 0
    judge = json.loads(capsys.readouterr().out)["judge"]
    # the default judge: the bundled model when this install has one (Summarization is left to
    # the heuristic, which it reports), else the heuristic itself
    from ground_integrations.judges.cross_encoder import bundled_model

    if bundled_model() is not None:
        assert judge["name"] == "cross-encoder" and "decided_by" in judge
    else:
        assert judge["name"] == "heuristic"
    assert main(["check", "-c", MAUNA_KEA, "-a", "It is tall.", "--judge", "heuristic"]) == 0


def test_check_bad_input_exits_2_with_message(capsys, tmp_path) -> None:
    assert main(["check", "-c", MAUNA_KEA, "-a", ""]) == 2
    assert "answer is empty" in capsys.readouterr().err
    assert main(["check", "-f", str(tmp_path / "missing.txt"), "-a", "x"]) == 2
    assert "cannot read context file" in capsys.readouterr().err
    assert main(["check", "-c", MAUNA_KEA, "-a", "x", "--task", "QnA"]) == 2
    with pytest.raises(SystemExit):
        main(["check"])


def test_check_reads_context_from_stdin() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ground_integrations.cli",
            "check",
            "--context",
            "-",
            "--answer",
            "Mauna Kea is 5,207.3 meters tall.",
            "--format",
            "upstage",
        ],
        input=MAUNA_KEA,
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.strip() == "notGrounded"


def _records() -> list[dict]:
    base = {"dataset": "toy", "task": "Summarization", "query": None, "context": [MAUNA_KEA]}
    return [
        {
            **base,
            "id": "a",
            "answer": "Mauna Kea is 5,207.3 meters tall.",
            "label": "notGrounded",
            "spans": [{"start": 13, "end": 32}],  # "5,207.3 meters tall"
        },
        {
            **base,
            "id": "b",
            "answer": "Mauna Kea is an inactive volcano on the island of Hawaii.",
            "label": "grounded",
            "spans": [],
        },
        {
            **base,
            "id": "c",
            "answer": "Its peak is 4,207.3 m above sea level.",
            "label": "grounded",
            "spans": [],
        },
        {**base, "id": "d", "answer": "", "label": "grounded", "spans": []},
    ]


def test_eval_reports_metrics_and_resumes_without_redoing(tmp_path, capsys) -> None:
    data = tmp_path / "toy.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _records()), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    # a first run stopped after one record, and the second line was cut mid-write
    main(["eval", str(data), "-o", str(out), "--limit", "2", "--no-progress"])
    capsys.readouterr()
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["a", "b"]
    out.write_text(lines[0] + "\n" + lines[1][:20], encoding="utf-8")
    code = main(["eval", str(data), "-o", str(out), "--no-progress", "--baseline"])
    report = capsys.readouterr().out
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert code == 5  # 'd' (an empty answer) could not be evaluated, and the summary says so
    assert "1 record(s) not evaluated" in report and "id 'd': EmptyInputError" in report
    assert [r["id"] for r in rows] == ["a", "b", "c", "d"]  # 'a' kept, the cut 'b' redone
    assert rows[0] == json.loads(lines[0])
    assert rows[3]["verdict"] is None and "EmptyInputError" in rows[3]["error"]
    assert "toy:Summarization" in report and "bal.acc" in report and "errors=1" in report
    assert "lexical baseline" in report
    toy_line = next(line for line in report.splitlines() if line.startswith("toy:Summarization"))
    assert toy_line.split()[2] == "1.000"  # balanced accuracy on the three valid records
    assert toy_line.split()[4] == "1.000"  # span F1: the flagged span is the annotated one


def test_eval_rejects_malformed_jsonl(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\nnot json\n', encoding="utf-8")
    assert main(["eval", str(bad), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl: no record to evaluate" in err and "line 2: not valid JSON" in err
    assert len(err.strip().splitlines()) == 1


def test_judge_can_be_chosen_by_name_with_settings(capsys) -> None:
    args = ["check", "-c", MAUNA_KEA, "-a", "Mauna Kea is an inactive volcano.", "--format", "json"]
    assert main([*args, "--judge", "lexical-baseline", "--judge-config", '{"cut": 0.9}']) == 0
    assert json.loads(capsys.readouterr().out)["judge"]["name"] == "lexical-baseline"
    assert main([*args, "--judge", "no-such-judge"]) == 2
    assert "unknown judge" in capsys.readouterr().err
    assert main([*args, "--judge-config", "[1]"]) == 2
    assert "JSON object" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["check", "eval", "calibrate", "serve"])
def test_every_command_reads_judge_config_the_same_way(tmp_path, capsys, command) -> None:
    data = tmp_path / "toy.jsonl"
    data.write_text("", encoding="utf-8")
    args = {
        "check": ["check", "-c", MAUNA_KEA, "-a", "Mauna Kea is a volcano."],
        "eval": ["eval", str(data), "--no-progress"],
        "calibrate": ["calibrate", str(data), "-o", str(tmp_path / "t.json")],
        "serve": ["serve", "--port", "1"],  # refused before anything starts
    }[command]
    for bad, says in (("{not json", "is not valid JSON"), ("[1]", "must be a JSON object")):
        assert main([*args, "--judge", "heuristic", "--judge-config", bad]) == 2
        err = capsys.readouterr().err
        assert f"--judge-config {says}" in err and len(err.strip().splitlines()) == 1


def test_judge_config_needs_a_judge(capsys) -> None:
    args = ["check", "-c", MAUNA_KEA, "-a", "Mauna Kea is a volcano."]
    assert main([*args, "--judge-config", '{"window": 2}']) == 2
    assert "--judge-config needs --judge" in capsys.readouterr().err


def test_eval_groups_never_pool_subtasks() -> None:
    from ground_integrations.evaluation import grouped_metrics

    def row(sub: str, label: str, verdict: str) -> dict:
        return {
            "dataset": "ragtruth",
            "task": "Summarization",
            "subtask": sub,
            "label": label,
            "verdict": verdict,
            "score": 0.5,
            "gold_spans": [],
            "spans": [],
            "latency_ms": 1.0,
        }

    rows = [
        row("Summary", "grounded", "grounded"),
        row("Summary", "notGrounded", "grounded"),
        row("Data2txt", "notGrounded", "notGrounded"),
        row("Data2txt", "grounded", "notGrounded"),
    ]
    groups = grouped_metrics(rows)
    assert set(groups) == {
        "ragtruth:Summarization:Summary",
        "ragtruth:Summarization:Data2txt",
        "all",
    }
    assert groups["ragtruth:Summarization:Summary"].balanced_accuracy == 0.5


def _write(path, records) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_resume_never_empties_the_results_file(tmp_path, capsys, monkeypatch) -> None:
    import pathlib

    data, out = tmp_path / "toy.jsonl", tmp_path / "out.jsonl"
    _write(data, _records())
    main(["eval", str(data), "-o", str(out), "--limit", "2", "--no-progress"])
    lines = out.read_text(encoding="utf-8").splitlines()
    out.write_text(lines[0] + "\n" + lines[1][:20], encoding="utf-8")  # a crash mid-line

    def killed_mid_write(self, *args, **kwargs):  # truncates, then the process dies
        open(self, "w").close()
        raise KeyboardInterrupt

    monkeypatch.setattr(pathlib.Path, "write_text", killed_mid_write)
    with contextlib.suppress(KeyboardInterrupt):
        main(["eval", str(data), "-o", str(out), "--no-progress"])
    monkeypatch.undo()
    kept = out.read_text(encoding="utf-8").splitlines()
    assert kept and kept[0] == lines[0]
    assert not list(tmp_path.glob("*.tmp"))


def test_unwritable_ids_do_not_block_runs(tmp_path, capsys) -> None:
    data, out = tmp_path / "toy.jsonl", tmp_path / "out.jsonl"
    records = _records()[:3]
    records[0] = {**records[0], "id": "bad\ud800id"}
    _write(data, records)
    assert main(["eval", str(data), "-o", str(out), "--no-progress"]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["bad\ud800id", "b", "c"]
    capsys.readouterr()
    assert main(["eval", str(data), "-o", str(out), "--no-progress"]) == 0  # resume works
    assert "(3/3 records" in capsys.readouterr().out
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3


def test_duplicate_ids_are_checked_once(tmp_path, capsys, monkeypatch) -> None:
    from ground_integrations import GroundednessChecker

    data, out = tmp_path / "toy.jsonl", tmp_path / "out.jsonl"
    a = _records()[0]
    _write(data, [a, a, a, _records()[2]])
    calls = []
    real = GroundednessChecker.check
    monkeypatch.setattr(
        GroundednessChecker, "check", lambda self, *a, **k: calls.append(1) or real(self, *a, **k)
    )
    assert main(["eval", str(data), "-o", str(out), "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert len(calls) == 2 and "(2/2 records" in captured.out
    assert "duplicate id" in captured.err


@pytest.mark.parametrize("value", ["-1", "-5"])
def test_a_negative_limit_is_refused(tmp_path, capsys, value) -> None:
    data = tmp_path / "toy.jsonl"
    _write(data, _records())
    with pytest.raises(SystemExit) as info:
        main(["eval", str(data), "--limit", value, "--no-progress"])
    assert info.value.code == 2 and "--limit" in capsys.readouterr().err


def test_check_applies_the_default_limits(capsys) -> None:
    code = main(["check", "-c", MAUNA_KEA, "-a", "Mauna Kea is tall. " * 2_000])
    assert code == 2 and "over the limit of 20,000" in capsys.readouterr().err


# -- resumes are never stale, errors are one line ------------------------------------------


def test_an_edited_record_is_checked_again_on_resume(tmp_path, capsys) -> None:
    data, out = tmp_path / "toy.jsonl", tmp_path / "out.jsonl"
    records = _records()[:3]
    _write(data, records)
    assert main(["eval", str(data), "-o", str(out), "--no-progress", "--judge", "heuristic"]) == 0
    first = {json.loads(line)["id"]: json.loads(line) for line in out.read_text().splitlines()}
    assert first["a"]["verdict"] == "notGrounded"
    records[0] = {**records[0], "answer": "Mauna Kea is 4,207.3 m above sea level."}
    _write(data, records)
    capsys.readouterr()
    assert main(["eval", str(data), "-o", str(out), "--no-progress", "--judge", "heuristic"]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in lines] == ["a", "b", "c", "a"]  # only the edited one redone
    assert lines[-1]["verdict"] == "grounded" and lines[-1]["input"] != first["a"]["input"]
    assert "(3/3 records" in capsys.readouterr().out


def test_outcomes_of_another_judge_are_refused_not_mixed(tmp_path, capsys) -> None:
    data, out = tmp_path / "toy.jsonl", tmp_path / "out.jsonl"
    _write(data, _records()[:3])
    base = ["eval", str(data), "-o", str(out), "--no-progress"]
    assert main([*base, "--judge", "heuristic"]) == 0
    before = out.read_text()
    capsys.readouterr()
    assert main([*base, "--judge", "lexical-baseline"]) == 2
    err = capsys.readouterr().err
    assert "holds outcomes of heuristic" in err and "--fresh" in err
    assert len(err.strip().splitlines()) == 1 and out.read_text() == before
    assert main([*base, "--judge", "lexical-baseline", "--fresh"]) == 0
    assert "lexical-baseline" in capsys.readouterr().out
    assert main([*base, "--judge", "lexical-baseline", "--judge-config", '{"cut": 0.9}']) == 2
    assert "with other settings" in capsys.readouterr().err


def test_bad_lines_are_counted_and_named_and_the_rest_evaluated(tmp_path, capsys) -> None:
    data, out = tmp_path / "toy.jsonl", tmp_path / "out.jsonl"
    good = [json.dumps(r) for r in _records()[:3]]
    no_label = json.dumps({"id": "x", "context": ["c"], "answer": "a"})
    odd_label = json.dumps({"id": "y", "context": ["c"], "answer": "a", "label": "maybe"})
    no_context = json.dumps({"id": "z", "answer": "a", "label": "grounded"})
    body = "\n".join([good[0], no_label, "{not json", odd_label, good[1], no_context, good[2]])
    data.write_bytes(body.encode() + b"\n" + b'{"id": "w", "answer": "\xff"}\n')
    code = main(["eval", str(data), "-o", str(out), "--no-progress", "--judge", "heuristic"])
    report = capsys.readouterr().out
    assert code == 5
    assert "(3/3 records" in report and "5 record(s) not evaluated" in report
    assert "line 2 (id 'x'): no label" in report
    assert "line 3: not valid JSON" in report
    assert "line 4 (id 'y'): unknown label 'maybe'" in report
    assert "line 6 (id 'z'): no context" in report
    assert "line 8: not UTF-8" in report


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_an_unreadable_eval_path_is_one_line(tmp_path, capsys, kind) -> None:
    path = tmp_path / "nothing.jsonl"
    if kind == "directory":
        path.mkdir()
    assert main(["eval", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert ("no such file" if kind == "missing" else "is a directory") in err


def test_version_and_one_stdin(capsys) -> None:
    from ground_integrations import __version__

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out.strip() == f"ground {__version__}"
    assert main(["check", "--context", "-", "--answer", "-"]) == 2
    assert "cannot both read standard input" in capsys.readouterr().err
