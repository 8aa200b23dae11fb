"""ground_integrations.batch and ``ground eval --engine ray`` on a real local Ray instance.

Ray starts once for the module (``ray.init(num_cpus=2)``) and stops after it. Without the
``[ray]`` extra these tests are skipped, except the one checking that the module imports and
fails with the install command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ground_integrations import HeuristicJudge, MissingDependencyError
from ground_integrations.cli import main
from ground_integrations.errors import InvalidInputError

from ..conftest import MAUNA_KEA

DEV = Path("/work/shared/data/dev.jsonl")
if not DEV.exists():  # a checkout beside the shared data
    DEV = Path(__file__).resolve().parents[3] / "shared" / "data" / "dev.jsonl"


#: The Ray workers and the local reference runs hash strings differently on purpose: a judge's
#: outcome must not depend on Python's per-process string hashing (set order).
WORKER_HASH_SEED = "1"
LOCAL_HASH_SEED = "2"


@pytest.fixture(scope="module")
def ray_local() -> Any:
    ray = pytest.importorskip("ray", reason="the [ray] extra is not installed")
    pytest.importorskip("ray.data", reason="the [ray] extra (ray[data]) is not installed")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="ERROR",
        runtime_env={"env_vars": {"PYTHONHASHSEED": WORKER_HASH_SEED}},
    )
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield ray
    ray.shutdown()


def _dev_sample(path: Path, every: int = 6) -> list[str]:
    """About 250 lines of dev.jsonl, every ``every``-th one: all its datasets and tasks."""
    if not DEV.exists():
        pytest.skip(f"{DEV} is not here")
    lines = DEV.read_text(encoding="utf-8").splitlines()[::every]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines


def _in_another_process(*args: str, code: str | None = None, stdin: str = "") -> str:
    """Run ``ground ARGS`` (or Python ``code``) in a fresh interpreter that hashes strings
    unlike the workers."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYTHONHASHSEED": LOCAL_HASH_SEED}
    cmd = (
        [sys.executable, "-c", code]
        if code
        else [sys.executable, "-m", "ground_integrations.cli", *args]
    )
    proc = subprocess.run(cmd, env=env, input=stdin, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 5), proc.stderr[-3000:]
    return proc.stdout


#: The local reference of check_dataset: GroundednessChecker(HeuristicJudge()) record by record.
_LOCAL_CHECK = """
import json, sys
from ground_integrations import GroundednessChecker, HeuristicJudge
checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
for line in sys.stdin:
    r = json.loads(line)
    try:
        res = checker.check(r["context"], r["answer"], r.get("query"), task=r.get("task") or "Summarization")
    except Exception as exc:
        print(json.dumps({"id": r["id"], "error": type(exc).__name__}))
        continue
    spans = [
        {"text": d.text, "start": d.offset.code_point, "end": d.offset.code_point + d.length.code_point, "reason": d.reason,
         "kind": d.kind.value}
        for d in res.ungrounded_details
    ]
    print(json.dumps({"id": r["id"], "verdict": res.verdict.value, "score": res.score,
                      "confidence": res.confidence, "ungrounded_spans": spans}))
"""


def _local_checks(records: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    out = _in_another_process(
        code=_LOCAL_CHECK, stdin="".join(json.dumps(r) + "\n" for r in records)
    )
    return {row["id"]: row for row in map(json.loads, out.splitlines())}


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {r["id"]: r for r in rows}


def _without_latency(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != "latency_ms"}


def _table(out: str) -> list[list[str]]:
    """The metrics table without the latency columns (wall time differs between runs)."""
    lines = out.split("outcomes:")[0].splitlines()[1:]
    return [line.split()[:6] for line in lines]


# -- without ray ------------------------------------------------------------------------------


def test_batch_imports_without_ray_and_names_the_extra(monkeypatch, tmp_path, capsys) -> None:
    for name in [m for m in sys.modules if m == "ray" or m.startswith("ray.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    import ground_integrations.batch as batch

    with pytest.raises(MissingDependencyError) as info:
        batch.check_dataset(object())
    assert "'.[ray]'" in str(info.value)
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"context": ["c"], "answer": "a", "label": "grounded"}) + "\n")
    assert main(["eval", str(data), "--engine", "ray", "--no-progress"]) == 2
    assert "'.[ray]'" in capsys.readouterr().err
    assert not (tmp_path / "d.results.jsonl").exists()


# -- ground eval --engine ray -----------------------------------------------------------------


def test_eval_on_ray_equals_local_record_for_record(ray_local, tmp_path, capsys) -> None:
    data = tmp_path / "dev.jsonl"
    lines = _dev_sample(data)
    assert len(lines) >= 200
    local, on_ray = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    out_local = _in_another_process("eval", str(data), "-o", str(local), "--no-progress")
    on_two_actors = ["--engine", "ray", "--workers", "2", "--shard-size", "40"]
    code_ray = main(["eval", str(data), "-o", str(on_ray), "--no-progress", *on_two_actors])
    out_ray = capsys.readouterr().out
    assert code_ray in (0, 5)
    a, b = _rows(local), _rows(on_ray)
    assert len(a) == len(lines) and set(a) == set(b)
    for key in a:  # verdict, score, spans, sentences, errors, input key, judge stamp
        assert _without_latency(b[key]) == _without_latency(a[key]), key
    assert len({r["dataset"] for r in a.values()}) > 1
    assert _table(out_ray) == _table(out_local)
    assert len(_table(out_ray)) > 2  # several groups, then "all"


def test_eval_on_ray_counts_bad_lines_and_error_rows_as_local_does(ray_local, tmp_path, capsys):
    good = [
        {
            "id": "a",
            "context": [MAUNA_KEA],
            "answer": "Mauna Kea is 4,207.3 m tall.",
            "label": "grounded",
        },
        {
            "id": "b",
            "context": MAUNA_KEA,
            "answer": "Mauna Kea is 9,000 m tall.",
            "label": "notGrounded",
        },
        {"id": "c", "context": [MAUNA_KEA], "answer": "", "label": "grounded"},  # EmptyInputError
    ]
    body = [
        json.dumps(good[0]),
        "{not json",
        json.dumps({"id": "x", "context": ["c"], "answer": "a"}),
    ]
    body += [json.dumps(good[1]), json.dumps(good[2])]
    data = tmp_path / "toy.jsonl"
    data.write_text("\n".join(body) + "\n", encoding="utf-8")
    reports = {}
    for engine in ("local", "ray"):
        out = tmp_path / f"{engine}.jsonl"
        code = main(
            [
                "eval",
                str(data),
                "-o",
                str(out),
                "--no-progress",
                "--engine",
                engine,
                "--judge",
                "heuristic",
            ]
        )
        assert code == 5
        reports[engine] = capsys.readouterr().out
        rows = _rows(out)
        assert rows["c"]["verdict"] is None and rows["c"]["error"].startswith("EmptyInputError: ")
        assert rows["b"]["verdict"] == "notGrounded" and rows["b"]["spans"]
    ray_lines, local_lines = reports["ray"].splitlines(), reports["local"].splitlines()
    failures = local_lines[local_lines.index("3 record(s) not evaluated:") :]
    assert failures == ray_lines[ray_lines.index("3 record(s) not evaluated:") :]
    assert (
        "  line 2: not valid JSON (Expecting property name enclosed in double quotes)" in failures
    )
    assert "  line 3 (id 'x'): no label (grounded or notGrounded)" in failures
    assert any(line.startswith("  id 'c': EmptyInputError") for line in failures)


def test_eval_on_ray_resumes_without_redoing_finished_shards(
    ray_local, tmp_path, capsys, monkeypatch
) -> None:
    from ground_integrations.batch import _dataset

    data = tmp_path / "dev.jsonl"
    lines = _dev_sample(data, every=12)[:120]
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    real = _dataset.eval_outcomes
    asked: list[int] = []

    def interrupted_after_one_shard(records, spec, **options):
        asked.append(len(records))
        shards = real(records, spec, **options)
        yield next(shards)
        shards.close()
        raise KeyboardInterrupt

    monkeypatch.setattr(_dataset, "eval_outcomes", interrupted_after_one_shard)
    args = [
        "eval",
        str(data),
        "-o",
        str(out),
        "--no-progress",
        "--engine",
        "ray",
        "--judge",
        "heuristic",
    ]
    assert main([*args, "--shard-size", "50", "--workers", "2"]) == 130
    assert "run again to resume" in capsys.readouterr().err
    first = out.read_text(encoding="utf-8").splitlines()
    assert 0 < len(first) <= 50  # one finished shard (at most --shard-size), written whole

    def counting(records, spec, **options):
        asked.append(len(records))
        yield from real(records, spec, **options)

    monkeypatch.setattr(_dataset, "eval_outcomes", counting)
    assert main([*args, "--shard-size", "50"]) in (0, 5)
    assert asked == [120, 120 - len(first)]  # the finished shard was not sent again
    final = out.read_text(encoding="utf-8").splitlines()
    assert final[: len(first)] == first  # kept as written
    ids = [json.loads(line)["id"] for line in final]
    assert len(ids) == len(set(ids)) == 120  # nothing checked twice
    # a third run has nothing to do and does not start any work
    assert main([*args]) in (0, 5)
    assert asked == [120, 120 - len(first), 0]
    assert out.read_text(encoding="utf-8").splitlines() == final
    local = tmp_path / "local.jsonl"
    _in_another_process(
        "eval", str(data), "-o", str(local), "--no-progress", "--judge", "heuristic"
    )
    a, b = _rows(local), _rows(out)
    assert {k: _without_latency(v) for k, v in a.items()} == {
        k: _without_latency(v) for k, v in b.items()
    }


# -- check_dataset ----------------------------------------------------------------------------


def _picky_judge() -> Any:
    """A zero-argument factory (pickled by value: defined in a function) of a heuristic judge
    that raises on answers containing BOOM."""

    class Picky(HeuristicJudge):
        def judge(self, request):
            if "BOOM" in request.answer:
                raise RuntimeError("kaboom")
            return super().judge(request)

    return Picky


def _toy_items() -> list[dict[str, Any]]:
    return [
        {
            "id": 1,
            "context": [MAUNA_KEA],
            "answer": "Mauna Kea is 4,207.3 m above sea level.",
            "query": None,
            "task": None,
        },
        {
            "id": 2,
            "context": [MAUNA_KEA],
            "answer": "Mauna Kea is 9,000 m tall and active.",
            "query": None,
            "task": None,
        },
        {
            "id": 3,
            "context": [MAUNA_KEA, "Hawaiʻi is in the Pacific."],
            "answer": "How tall? 4,207.3 m.",
            "query": "How tall is Mauna Kea?",
            "task": "QnA",
        },
        {"id": 4, "context": [MAUNA_KEA], "answer": "", "query": None, "task": None},
        {
            "id": 5,
            "context": [MAUNA_KEA],
            "answer": "BOOM goes the volcano.",
            "query": None,
            "task": None,
        },
        {
            "id": 6,
            "context": [MAUNA_KEA],
            "answer": "It is 4,207.3 m high.",
            "query": None,
            "task": "QnA",
        },  # QnA without a query
    ]


def test_check_dataset_adds_results_and_keeps_every_column(ray_local) -> None:
    from ground_integrations.batch import RESULT_COLUMNS, check_dataset

    items = _toy_items()
    ds = ray_local.data.from_items([{**item, "note": f"n{item['id']}"} for item in items])
    out = check_dataset(ds, judge=_picky_judge(), concurrency=2, batch_size=2)
    rows = {r["id"]: r for r in out.take_all()}
    assert list(out.schema().names) == [
        "id",
        "context",
        "answer",
        "query",
        "task",
        "note",
        *RESULT_COLUMNS,
    ]
    local = _local_checks(items)
    for item in items:
        row = rows[item["id"]]
        assert row["note"] == f"n{item['id']}" and row["answer"] == item["answer"]
        assert row["judge_name"] == "heuristic"
        if item["id"] in (4, 5, 6):
            continue
        want = local[item["id"]]
        assert row["error"] is None
        assert {k: row[k] for k in want if k != "id"} == {
            k: v for k, v in want.items() if k != "id"
        }
    assert rows[2]["verdict"] == "notGrounded"
    # the words at fault, and that the context gives the height otherwise
    assert rows[2]["ungrounded_spans"][0]["text"].startswith("9,000 m")
    assert rows[2]["ungrounded_spans"][0]["kind"] == "contradicted"
    for bad, kind in ((4, "EmptyInputError: "), (5, "JudgeError: "), (6, "InvalidInputError: ")):
        assert rows[bad]["error"].startswith(kind), rows[bad]["error"]
        assert (rows[bad]["verdict"], rows[bad]["score"], rows[bad]["ungrounded_spans"]) == (
            None,
            None,
            None,
        )
    assert "kaboom" in rows[5]["error"]


def test_check_dataset_refuses_a_missing_column_before_any_work(ray_local) -> None:
    from ground_integrations.batch import check_dataset

    ds = ray_local.data.from_items([{"id": 1, "passages": ["x"], "reply": "y"}])
    with pytest.raises(InvalidInputError) as info:
        check_dataset(ds, judge="heuristic")
    assert "'context'" in str(info.value) and "passages, reply" in str(info.value)
    assert info.value.field == "context"
    with pytest.raises(InvalidInputError, match="no column 'reply_text'"):
        check_dataset(
            ds, judge="heuristic", columns={"context": "passages", "answer": "reply_text"}
        )
    clash = ray_local.data.from_items([{"context": ["x"], "answer": "y", "score": 1}])
    with pytest.raises(InvalidInputError, match="'score'"):
        check_dataset(clash, judge="heuristic")
    out = check_dataset(ds, judge="heuristic", columns={"context": "passages", "answer": "reply"})
    assert out.take_all()[0]["verdict"] in ("grounded", "notGrounded", "notSure")


@pytest.mark.parametrize("fmt", ["parquet", "json"])
def test_jsonl_in_results_out_round_trip(ray_local, tmp_path, fmt) -> None:
    import pyarrow as pa

    from ground_integrations.batch import check_dataset

    data = tmp_path / "dev.jsonl"
    lines = _dev_sample(data, every=25)
    # only the inputs and an id: the annotated spans of dev.jsonl are not the check's business
    keep = ("id", "context", "answer", "query", "task")
    data.write_text(
        "".join(json.dumps({k: json.loads(x).get(k) for k in keep}) + "\n" for x in lines)
    )
    ds = ray_local.data.read_json(str(data), lines=True)
    target = tmp_path / f"out-{fmt}"
    checked = check_dataset(ds, judge="heuristic", concurrency=1, batch_size=16)
    if fmt == "parquet":
        checked.write_parquet(str(target))
        back = ray_local.data.read_parquet(str(target))
        spans_type = back.schema().types[list(back.schema().names).index("ungrounded_spans")]
        assert pa.types.is_list(spans_type) and pa.types.is_struct(spans_type.value_type)
        assert [spans_type.value_type.field(i).name for i in range(5)] == [
            "text",
            "start",
            "end",
            "reason",
            "kind",
        ]
    else:
        checked.write_json(str(target))
        back = ray_local.data.read_json(str(target), lines=True)
    rows = {r["id"]: r for r in back.take_all()}
    assert len(rows) == len(lines)
    records = [json.loads(line) for line in lines]
    local = _local_checks(records)
    for record in records:
        row, want = rows[record["id"]], local[record["id"]]
        assert list(row["context"]) == record["context"] and row["answer"] == record["answer"]
        assert (row["verdict"], row["error"]) == (want["verdict"], None)
        # Parquet keeps every bit; Ray's JSON writer (pandas) rounds floats to 10 digits
        assert row["score"] == (
            want["score"] if fmt == "parquet" else pytest.approx(want["score"], abs=1e-9)
        )
        assert [dict(s) for s in row["ungrounded_spans"]] == want["ungrounded_spans"]


def test_eval_on_ray_uses_calibrated_thresholds_as_local_does(ray_local, tmp_path, capsys) -> None:
    data = tmp_path / "dev.jsonl"
    _dev_sample(data)
    thresholds = tmp_path / "thresholds.json"
    calibrate = ["calibrate", str(data), "-o", str(thresholds), "--judge", "heuristic"]
    assert main([*calibrate, "--pooled", "--no-progress"]) == 0
    plain, local, on_ray = (tmp_path / f"{name}.jsonl" for name in ("plain", "local", "ray"))
    common = ["--no-progress", "--judge", "heuristic"]
    _in_another_process("eval", str(data), "-o", str(plain), *common)
    _in_another_process(
        "eval", str(data), "-o", str(local), *common, "--thresholds", str(thresholds)
    )
    main(
        [
            "eval",
            str(data),
            "-o",
            str(on_ray),
            *common,
            "--thresholds",
            str(thresholds),
            "--engine",
            "ray",
        ]
    )
    capsys.readouterr()
    a, b, c = _rows(local), _rows(on_ray), _rows(plain)
    assert {k: _without_latency(v) for k, v in a.items()} == {
        k: _without_latency(v) for k, v in b.items()
    }
    assert any(a[k]["verdict"] != c[k]["verdict"] for k in a)  # the cut was applied
