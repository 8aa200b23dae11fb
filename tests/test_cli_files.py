"""The CLI and its files: it never destroys an input, checks its outputs before any work, keeps
going past bad lines, and ends every failure with one line instead of a traceback."""

from __future__ import annotations

import contextlib
import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from ground_integrations import GroundednessChecker
from ground_integrations.cli import main
from ground_integrations.evaluation import compute_metrics

from .conftest import MAUNA_KEA
from .test_cli import _records, _write

HEURISTIC = ["--judge", "heuristic", "--no-progress"]


@pytest.fixture
def checks(monkeypatch) -> list[int]:
    """Counts the checks the command runs (to show that it refused before any work)."""
    calls: list[int] = []
    real = GroundednessChecker.check
    monkeypatch.setattr(
        GroundednessChecker, "check", lambda self, *a, **k: calls.append(1) or real(self, *a, **k)
    )
    return calls


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# -- outputs that are inputs --------------------------------------------------------------------


@pytest.mark.parametrize(
    "case",
    ["report-is-input", "output-is-input-fresh", "report-is-output", "symlink", "hard-link"],
)
def test_an_output_that_is_an_input_is_refused_and_the_input_kept(
    tmp_path, capsys, checks, case
) -> None:
    data = tmp_path / "a.jsonl"
    _write(data, _records()[:3])
    results = tmp_path / "a.results.jsonl"
    assert main(["eval", str(data), *HEURISTIC]) == 0  # writes a.results.jsonl
    before = {p.name: p.read_bytes() for p in (data, results)}
    capsys.readouterr()
    checks.clear()
    args = {
        "report-is-input": ["--report", str(data)],
        "output-is-input-fresh": ["-o", str(data), "--fresh"],
        "report-is-output": ["--report", str(results)],
        "symlink": ["-o", str(tmp_path / "link.jsonl"), "--fresh"],
        "hard-link": ["--report", str(tmp_path / "hard.html")],
    }[case]
    if case == "symlink":
        (tmp_path / "link.jsonl").symlink_to(data)
    if case == "hard-link":
        os.link(data, tmp_path / "hard.html")
    assert main(["eval", str(data), *args, *HEURISTIC]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "is the same file as" in line and "choose another path" in line
    assert {p.name: p.read_bytes() for p in (data, results)} == before
    assert checks == []


def test_calibrate_refuses_to_write_its_thresholds_over_its_input(tmp_path, capsys) -> None:
    data = tmp_path / "a.jsonl"
    _write(data, _records()[:3])
    before = data.read_bytes()
    assert main(["calibrate", str(data), "-o", str(data), *HEURISTIC]) == 2
    assert "the same file as the input" in _one_line(capsys.readouterr().err)
    assert data.read_bytes() == before


# -- outputs that cannot be written fail before any work ----------------------------------------


@pytest.mark.parametrize("where", ["directory", "missing-folder"])
@pytest.mark.parametrize("option", ["--report", "-o"])
def test_an_unwritable_output_fails_before_any_check(
    tmp_path, capsys, checks, where, option
) -> None:
    data = tmp_path / "a.jsonl"
    _write(data, _records()[:3])
    target = tmp_path / "out"
    if where == "directory":
        target.mkdir()
    else:
        target = tmp_path / "no" / "such" / "folder" / "out.html"
    assert main(["eval", str(data), option, str(target), *HEURISTIC]) == 2
    line = _one_line(capsys.readouterr().err)
    assert str(target) in line
    assert ("is a directory" if where == "directory" else "cannot write there") in line
    assert checks == [] and not (tmp_path / "a.results.jsonl").exists()


def test_calibrate_checks_its_output_before_scoring(tmp_path, capsys, checks) -> None:
    data = tmp_path / "a.jsonl"
    _write(data, _records()[:3])
    target = tmp_path / "missing" / "t.json"
    assert main(["calibrate", str(data), "-o", str(target), *HEURISTIC]) == 2
    assert "cannot write there" in _one_line(capsys.readouterr().err)
    assert checks == []


# -- bad lines are skipped with a reason; the run ends with its summary -------------------------


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"spans": [[0, 5]]}, 'spans[0] must be {"start": int, "end": int}, got [0, 5]'),
        ({"spans": "0-5"}, "spans must be a list"),
        ({"spans": [{"start": "a", "end": 3}]}, "spans[0] must be"),
        ({"spans": [{"start": 0}]}, "spans[0] must be"),
        ({"spans": [{"start": True, "end": 3}]}, "spans[0] must be"),
        ({"spans": [{"start": 0, "end": 10_000_000}]}, "is not a range of the answer"),
        ({"spans": [{"start": 5, "end": 2}]}, "is not a range of the answer"),
        ({"dataset": ["toy"]}, "dataset must be a string"),
        ({"task": {"QnA": 1}}, "task must be a string"),
        ({"query": 5}, "query must be a string"),
        ({"id": [1]}, "id must be a string or a number"),
    ],
)
def test_a_malformed_record_is_skipped_with_its_reason(tmp_path, capsys, change, reason) -> None:
    data = tmp_path / "a.jsonl"
    records = _records()[:3]
    records[1] = {**records[1], **change}
    _write(data, records)
    code = main(["eval", str(data), *HEURISTIC])
    out = capsys.readouterr().out
    assert code == 5, out
    assert "(2/2 records" in out and "1 record(s) not evaluated" in out
    assert "line 2" in out and reason in out
    assert "bal.acc" in out  # the summary is printed


def test_deeply_nested_lines_are_skipped_not_a_crash(tmp_path, capsys) -> None:
    data = tmp_path / "a.jsonl"
    _write(data, _records()[:2])
    with open(data, "a", encoding="utf-8") as fh:
        fh.write("[" * 50_000 + "]" * 50_000 + "\n")
    assert main(["eval", str(data), *HEURISTIC]) == 5
    assert "line 3: JSON nested too deeply" in capsys.readouterr().out


def test_span_f1_costs_the_number_of_spans_not_their_length() -> None:
    row = {
        "label": "notGrounded",
        "verdict": "notGrounded",
        "gold_spans": [{"start": 0, "end": 10_000_000}],
        "spans": [{"start": 5, "end": 20_000_000}],
        "latency_ms": 1.0,
    }
    tracemalloc.start()
    m = compute_metrics([row], with_spans=True)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1_000_000  # bytes: two ranges, not ten million characters
    assert m.span_f1 == pytest.approx(2 * 9_999_995 / (2 * 9_999_995 + 10_000_000 + 5))


def test_span_f1_of_ranges_equals_the_character_count() -> None:
    """The interval arithmetic agrees with counting characters, overlaps and touches included."""
    rng = random.Random(3)

    def spans() -> list[dict[str, int]]:
        out = []
        for _ in range(rng.randint(0, 5)):
            a, b = sorted((rng.randint(0, 60), rng.randint(0, 60)))
            out.append({"start": a, "end": b})
        return out

    def chars(items: list[dict[str, int]]) -> set[int]:
        return {c for s in items for c in range(s["start"], s["end"])}

    for _ in range(300):
        rows = [
            {
                "label": "notGrounded",
                "verdict": "notGrounded",
                "gold_spans": spans(),
                "spans": spans(),
            }
            for _ in range(3)
        ]
        tp = sum(len(chars(r["gold_spans"]) & chars(r["spans"])) for r in rows)
        fp = sum(len(chars(r["spans"]) - chars(r["gold_spans"])) for r in rows)
        fn = sum(len(chars(r["gold_spans"]) - chars(r["spans"])) for r in rows)
        expected = 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) else None
        got = compute_metrics(rows, with_spans=True).span_f1
        assert got == (pytest.approx(expected) if expected is not None else None)


def test_a_byte_order_mark_does_not_lose_the_first_record(tmp_path, capsys) -> None:
    data = tmp_path / "bom.jsonl"
    _write(data, _records()[:3])
    data.write_bytes(b"\xef\xbb\xbf" + data.read_bytes())
    assert main(["eval", str(data), *HEURISTIC]) == 0
    assert "(3/3 records" in capsys.readouterr().out


def test_labels_are_read_in_any_case_like_tasks(tmp_path, capsys) -> None:
    data = tmp_path / "case.jsonl"
    records = _records()[:3]
    records[0]["label"] = "NotGrounded"
    records[1]["label"] = " GROUNDED"
    records[2]["task"] = "summarization"
    _write(data, records)
    assert main(["eval", str(data), *HEURISTIC]) == 0
    assert "(3/3 records" in capsys.readouterr().out
    rows = [json.loads(line) for line in (tmp_path / "case.results.jsonl").read_text().splitlines()]
    assert [r["label"] for r in rows] == ["notGrounded", "grounded", "grounded"]


# -- a full disk, a second writer ---------------------------------------------------------------


def _ground(*args: str, file_size: int | None = None) -> subprocess.CompletedProcess[str]:
    """``ground`` in a child process; ``file_size`` caps the size of any file it writes (the OS
    then fails the write, as a full disk does)."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a killed process
        if file_size is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))

    return subprocess.run(
        [sys.executable, "-m", "ground_integrations.cli", *args],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        timeout=120,
    )


def test_a_failed_write_is_one_line_and_the_run_resumes(tmp_path) -> None:
    data, out = tmp_path / "a.jsonl", tmp_path / "out.jsonl"
    _write(data, _records()[:3])
    first = _ground("eval", str(data), "-o", str(out), "--limit", "1", *HEURISTIC)
    assert first.returncode == 0, first.stderr
    size = out.stat().st_size
    full = _ground("eval", str(data), "-o", str(out), *HEURISTIC, file_size=size + 40)
    assert full.returncode == 2, full.stderr
    line = _one_line(full.stderr)
    assert "cannot write" in line and "run again to resume" in line
    assert out.stat().st_size <= size + 40  # the OS refused the rest of the second record
    again = _ground("eval", str(data), "-o", str(out), *HEURISTIC)
    assert again.returncode == 0, again.stderr
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert ids == ["a", "b", "c"]  # the cut line dropped, nothing lost, nothing twice


def test_two_runs_never_write_one_outcomes_file_at_once(tmp_path, capsys) -> None:
    data, out = tmp_path / "a.jsonl", tmp_path / "out.jsonl"
    _write(data, _records()[:3])
    holder = subprocess.Popen(  # another process in the middle of `ground eval -o out.jsonl`
        [
            sys.executable,
            "-c",
            "import sys; from filelock import FileLock; "
            f"lock = FileLock({str(out) + '.lock'!r}); lock.acquire(); print('held', flush=True); "
            "sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert main(["eval", str(data), "-o", str(out), *HEURISTIC]) == 2
        line = _one_line(capsys.readouterr().err)
        assert "being written by another" in line and "--output" in line
        assert not out.exists() or out.read_text() == ""
    finally:
        holder.communicate("", timeout=30)
    assert main(["eval", str(data), "-o", str(out), *HEURISTIC]) == 0
    assert main(["eval", str(data), "-o", str(out), *HEURISTIC]) == 0  # the lock was released
    assert len(out.read_text().splitlines()) == 3


# -- calibrate: count before scoring; Ctrl-C is one line -----------------------------------------


def _labelled(tmp_path, n_not_grounded: int, n_grounded: int) -> Path:
    data = tmp_path / "labelled.jsonl"
    rows = [
        {
            "id": f"n{i}",
            "context": [MAUNA_KEA],
            "answer": f"It is {i} m tall.",
            "label": "notGrounded",
        }
        for i in range(n_not_grounded)
    ] + [
        {"id": f"g{i}", "context": [MAUNA_KEA], "answer": "It is a volcano.", "label": "Grounded"}
        for i in range(n_grounded)
    ]
    _write(data, rows)
    return data


def test_calibrate_counts_labels_before_scoring_anything(tmp_path, capsys, checks) -> None:
    data = _labelled(tmp_path, 30, 60)
    assert main(["calibrate", str(data), "-o", str(tmp_path / "t.json"), *HEURISTIC]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "too few notGrounded examples: 30, need at least 45" in line
    assert checks == []  # refused on the labels alone
    assert not (tmp_path / "t.json").exists()


def test_calibrate_interrupted_is_one_line_and_writes_nothing(
    tmp_path, capsys, monkeypatch
) -> None:
    import ground_integrations.evaluation as evaluation

    data = _labelled(tmp_path, 50, 10)
    real = evaluation.outcome_row
    seen: list[int] = []

    def interrupted_midway(checker, record, **kw):  # Ctrl-C during the tenth check
        seen.append(1)
        if len(seen) == 10:
            raise KeyboardInterrupt
        return real(checker, record, **kw)

    monkeypatch.setattr(evaluation, "outcome_row", interrupted_midway)
    out = tmp_path / "t.json"
    try:
        code = main(["calibrate", str(data), "-o", str(out), *HEURISTIC])
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C escaped from `ground calibrate` (a traceback for the user)")
    assert code == 130
    line = _one_line(capsys.readouterr().err)
    assert "interrupted" in line and "nothing written" in line
    assert not out.exists()


def _wait_reading_stdin(pid: int, timeout: float = 60.0) -> None:
    """Until the process sits in read(0, ...) (Linux: /proc/PID/syscall), past its imports."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            fields = Path(f"/proc/{pid}/syscall").read_text().split()
        except OSError:
            time.sleep(10)  # no /proc: a generous pause instead
            return
        if fields[:1] in (["0"], ["63"]) and fields[1:2] == ["0x0"]:  # read (x86-64, arm64)
            return
        time.sleep(0.1)
    pytest.fail("the command never read its standard input")


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_an_interrupted_command_exits_130_without_a_traceback() -> None:
    """A real SIGINT while `ground check` reads its context from a pipe that never ends."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ground_integrations.cli",
            "check",
            "--context",
            "-",
            "--answer",
            "x",
        ],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        # a shell's background job (`pytest &`) ignores SIGINT, and a child inherits that:
        # Python would then install no handler and the command could not be interrupted
        preexec_fn=_sigint_default,
    )
    try:
        _wait_reading_stdin(proc.pid)
        proc.send_signal(signal.SIGINT)
        # wait with its standard input still open: closing it could end the read (empty
        # context, exit 2) before the signal is handled
        proc.wait(timeout=30)
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    assert proc.returncode == 130
    assert "interrupted" in _one_line(err)


def test_a_deeply_nested_line_in_the_outcomes_file_is_redone_not_a_crash(tmp_path, capsys) -> None:
    data, out = tmp_path / "a.jsonl", tmp_path / "out.jsonl"
    _write(data, _records()[:2])
    assert main(["eval", str(data), "-o", str(out), *HEURISTIC]) == 0
    first = out.read_text().splitlines()[0]
    out.write_text(first + "\n" + "[" * 50_000 + "]" * 50_000 + "\n")
    capsys.readouterr()
    assert main(["eval", str(data), "-o", str(out), *HEURISTIC]) == 0
    assert "(2/2 records" in capsys.readouterr().out
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["a", "b"]
