"""Calibrated thresholds: the binomial arithmetic, the guarantee (by simulation), the file, the
checker and the CLI."""

from __future__ import annotations

import json
import math
import random

import pytest

from ground_integrations import GroundednessChecker, HeuristicJudge, Thresholds
from ground_integrations.calibration import (
    CalibratedThresholds,
    GroupCut,
    NotEnoughExamplesError,
    binomial_cdf,
    calibrate,
    calibrate_cut,
    clopper_pearson,
    max_rank,
    needed_not_grounded,
)
from ground_integrations.cli import main
from ground_integrations.errors import ConfigurationError, InvalidInputError
from ground_integrations.judges.base import Judge, Judgement
from ground_integrations.models import GroundednessRequest

# -- arithmetic ------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "p"), [(1, 0.3), (10, 0.05), (37, 0.5), (120, 0.9)])
def test_binomial_cdf_matches_the_direct_sum(n: int, p: float) -> None:
    for k in range(-1, n + 1):
        direct = sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))
        assert binomial_cdf(k, n, p) == pytest.approx(direct, abs=1e-12)


def test_needed_not_grounded_is_the_smallest_sample_that_allows_a_cut() -> None:
    needed = needed_not_grounded(0.05, 0.9)
    assert needed == 45
    assert (1 - 0.05) ** (needed - 1) > 0.1 >= (1 - 0.05) ** needed
    assert max_rank(needed - 1, 0.05, 0.9) == 0
    assert max_rank(needed, 0.05, 0.9) == 1


def test_max_rank_is_the_largest_rank_within_the_risk() -> None:
    n, a, conf = 500, 0.05, 0.9
    k = max_rank(n, a, conf)
    assert binomial_cdf(k - 1, n, a) <= 1 - conf < binomial_cdf(k, n, a)


def test_clopper_pearson_known_values() -> None:
    # x = 0: the upper end solves (1 - p) ** n = tail.
    lower, upper = clopper_pearson(0, 10, 0.95)
    assert lower == 0.0 and upper == pytest.approx(1 - 0.025 ** (1 / 10), abs=1e-9)
    lower, upper = clopper_pearson(10, 10, 0.95)
    assert upper == 1.0 and lower == pytest.approx(0.025 ** (1 / 10), abs=1e-9)
    # The interval's ends are where the binomial tails equal (1 - confidence) / 2.
    lower, upper = clopper_pearson(3, 20, 0.9)
    assert 1 - binomial_cdf(2, 20, lower) == pytest.approx(0.05, abs=1e-9)
    assert binomial_cdf(3, 20, upper) == pytest.approx(0.05, abs=1e-9)


@pytest.mark.parametrize(("rate", "conf"), [(0.0, 0.9), (1.0, 0.9), (0.05, 1.0), (0.05, 0.0)])
def test_levels_outside_zero_one_are_a_configuration_error(rate: float, conf: float) -> None:
    with pytest.raises(ConfigurationError, match="strictly between 0 and 1"):
        calibrate_cut([0.1] * 100, max_pass_rate=rate, confidence=conf)


# -- the guarantee, by simulation --------------------------------------------------------------


def _simulate(
    trials: int, n: int, rate: float, conf: float, *, grid: float | None, seed: int
) -> float:
    """Share of calibration draws whose cut lets more than ``rate`` of future notGrounded
    answers pass. notGrounded scores are ``U ** 2`` with U uniform (so P(S >= c) = 1 - sqrt(c)),
    optionally rounded down to a grid (ties)."""
    rng = random.Random(seed)

    def draw() -> float:
        s = rng.random() ** 2
        return math.floor(s / grid) * grid if grid else s

    def true_pass_rate(cut: float) -> float:
        if grid is None:
            return 1 - math.sqrt(cut)
        # Scores take the values m * g; P(score >= cut) = P(S >= m * g) for the first
        # such value at or above the cut.
        steps = round(1 / grid)
        m = next((m for m in range(steps + 1) if m * grid >= cut), steps + 1)
        return 1 - math.sqrt(min(1.0, m * grid))

    exceed = 0
    for _ in range(trials):
        cut = calibrate_cut([draw() for _ in range(n)], max_pass_rate=rate, confidence=conf).cut
        exceed += true_pass_rate(cut) > rate
    return exceed / trials


def test_guarantee_holds_by_simulation_continuous_scores() -> None:
    trials, conf = 3000, 0.9
    share = _simulate(trials, n=150, rate=0.1, conf=conf, grid=None, seed=7)
    delta = 1 - conf
    # At most 1 - confidence, up to Monte Carlo noise (3 standard errors) ...
    assert share <= delta + 3 * math.sqrt(delta * (1 - delta) / trials)
    # ... and not vacuous: the exact bound is P(Bin(150, 0.1) <= k - 1), near delta.
    k = max_rank(150, 0.1, conf)
    exact = binomial_cdf(k - 1, 150, 0.1)
    assert abs(share - exact) <= 4 * math.sqrt(exact * (1 - exact) / trials)


def test_guarantee_holds_with_tied_scores() -> None:
    trials, conf = 1500, 0.8
    share = _simulate(trials, n=100, rate=0.15, conf=conf, grid=0.05, seed=11)
    delta = 1 - conf
    assert share <= delta + 3 * math.sqrt(delta * (1 - delta) / trials)


# -- calibrate -----------------------------------------------------------------------------------


def _rows(
    seed: int, n_ng: int, n_g: int, task: str = "QnA", domain: str | None = None
) -> list[dict]:
    rng = random.Random(seed)
    rows = [
        {"label": "notGrounded", "score": rng.betavariate(2, 5), "task": task, "domain": domain}
        for _ in range(n_ng)
    ]
    rows += [
        {"label": "grounded", "score": rng.betavariate(5, 2), "task": task, "domain": domain}
        for _ in range(n_g)
    ]
    return rows


def test_calibrate_cut_reports_the_price_on_grounded_answers() -> None:
    rows = _rows(1, 300, 200)
    ng = [r["score"] for r in rows if r["label"] == "notGrounded"]
    g = [r["score"] for r in rows if r["label"] == "grounded"]
    cut = calibrate_cut(ng, g, max_pass_rate=0.05, confidence=0.9)
    assert cut.rank == max_rank(300, 0.05, 0.9)
    assert cut.passed_not_grounded == sum(s >= cut.cut for s in ng) == cut.rank - 1
    assert cut.blocked_grounded == sum(s < cut.cut for s in g)
    assert cut.blocked_rate == pytest.approx(cut.blocked_grounded / 200)
    lo, hi = cut.blocked_interval or (math.nan, math.nan)
    assert lo <= cut.blocked_rate <= hi
    # The rank-th highest notGrounded score itself is flagged (the cut lies just above it).
    assert sorted(ng, reverse=True)[cut.rank - 1] < cut.cut


def test_too_few_not_grounded_examples_says_how_many_are_needed() -> None:
    with pytest.raises(NotEnoughExamplesError) as info:
        calibrate_cut([0.2] * 30, [0.9] * 100, max_pass_rate=0.05, confidence=0.9)
    err = info.value
    assert (err.have, err.needed) == (30, 45)
    assert "need at least 45" in str(err) and "15 more" in str(err)
    assert isinstance(err, InvalidInputError)


def test_calibrate_per_task_and_pooled() -> None:
    rows = _rows(2, 120, 80, task="QnA") + _rows(3, 60, 50, task="Summarization")
    table = calibrate(rows, max_pass_rate=0.05, confidence=0.9)
    assert [g.task for g in table.groups] == ["QnA", "Summarization"]
    assert table.default.n_not_grounded == 180
    qna = [r["score"] for r in rows if r["task"] == "QnA" and r["label"] == "notGrounded"]
    assert table.groups[0].cut == calibrate_cut(qna, max_pass_rate=0.05, confidence=0.9).cut
    assert table.for_request("QnA", "Generic") == table.groups[0].thresholds
    assert table.for_request("Summarization", None) == table.groups[1].thresholds
    # A group a request does not match falls back to the pooled cut.
    pooled_only = calibrate(rows, per_group=False)
    assert pooled_only.groups == [] and pooled_only.for_request("QnA", None).grounded == (
        pooled_only.default.cut
    )


def test_calibrate_names_the_group_that_is_too_small() -> None:
    rows = _rows(4, 120, 80, task="QnA") + _rows(5, 20, 50, task="Summarization")
    with pytest.raises(NotEnoughExamplesError, match="group Summarization") as info:
        calibrate(rows, max_pass_rate=0.05, confidence=0.9)
    assert info.value.group == "Summarization" and "--pooled" in str(info.value)
    assert calibrate(rows, per_group=False).default.n_not_grounded == 140


def test_calibrate_per_domain_when_the_data_has_domains() -> None:
    rows = _rows(6, 80, 40, task="QnA", domain="Generic") + _rows(
        7, 80, 40, task="QnA", domain="Medical"
    )
    table = calibrate(rows)
    assert [(g.task, g.domain) for g in table.groups] == [(None, "Generic"), (None, "Medical")]
    assert table.for_request("QnA", "Medical") == table.groups[1].thresholds


def test_bad_labels_and_scores_are_invalid_input() -> None:
    with pytest.raises(InvalidInputError, match="label must be"):
        calibrate([{"label": "maybe", "score": 0.3}])
    with pytest.raises(InvalidInputError, match=r"\[0, 1\]"):
        calibrate_cut([1.5] * 50)


# -- the file and the checker ----------------------------------------------------------------


class _FixedScore(Judge):
    """Scores every answer ``score``; no verdict of its own (the checker's cut decides)."""

    name = "fixed"
    version = "1"

    def __init__(self, score: float) -> None:
        self.score = score

    def judge(self, request: GroundednessRequest) -> Judgement:
        return Judgement(score=self.score)


def _table(judge: Judge, qna: float, summ: float, pooled: float) -> CalibratedThresholds:
    def cut(value: float, task: str | None) -> GroupCut:
        n = 200 if task is None else 100  # the pooled default holds both groups' examples
        return GroupCut(
            task=task,
            cut=value,
            n_not_grounded=n,
            n_grounded=n,
            rank=1,
            passed_not_grounded=0,
            blocked_grounded=0,
        )

    return CalibratedThresholds(
        judge=judge.info,
        max_pass_rate=0.05,
        confidence=0.9,
        default=cut(pooled, None),
        groups=[cut(qna, "QnA"), cut(summ, "Summarization")],
    )


def test_save_and_load_round_trip(tmp_path) -> None:
    table = calibrate(_rows(8, 100, 100), judge=HeuristicJudge().info)
    path = tmp_path / "thresholds.json"
    table.save(path)
    assert json.loads(path.read_text())["format"] == "ground-thresholds/1"
    assert CalibratedThresholds.load(path) == table
    assert Thresholds.load(path) == table  # the spelling: the same file, the same cuts


def test_load_errors_say_what_to_do(tmp_path) -> None:
    with pytest.raises(ConfigurationError, match="ground calibrate"):
        CalibratedThresholds.load(tmp_path / "missing.json")
    other = tmp_path / "other.json"
    other.write_text('{"grounded": 0.5}')
    with pytest.raises(ConfigurationError, match="not a thresholds file"):
        CalibratedThresholds.load(other)
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "ground-thresholds/1", "max_pass_rate": 2}')
    with pytest.raises(ConfigurationError, match="max_pass_rate"):
        CalibratedThresholds.load(broken)


def test_checker_uses_the_cut_of_the_request_task() -> None:
    judge = _FixedScore(0.6)
    checker = GroundednessChecker(judge, thresholds=_table(judge, qna=0.7, summ=0.5, pooled=0.9))
    qna = checker.check("Paris is in France.", "Paris is in France.", "Where?", task="QnA")
    summ = checker.check("Paris is in France.", "Paris is in France.", task="Summarization")
    assert qna.verdict.value == "notGrounded" and summ.verdict.value == "grounded"
    # Existing signatures keep working: a plain Thresholds, or none.
    assert (
        GroundednessChecker(judge, thresholds=Thresholds.around(0.65))
        .check("Paris is in France.", "Paris is in France.")
        .verdict.value
        == "notGrounded"
    )
    assert GroundednessChecker(judge).thresholds == judge.default_thresholds


def test_checker_refuses_thresholds_of_another_judge() -> None:
    table = _table(_FixedScore(0.6), 0.5, 0.5, 0.5)
    with pytest.raises(ConfigurationError, match="calibrated for judge fixed 1"):
        GroundednessChecker(HeuristicJudge(), thresholds=table)
    with pytest.raises(ConfigurationError, match=r"CalibratedThresholds\.load"):
        GroundednessChecker(HeuristicJudge(), thresholds="thresholds.json")  # type: ignore[arg-type]


# -- the CLI -----------------------------------------------------------------------------------


def _outcomes(path, rows: list[dict], judge: str | dict) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for i, r in enumerate(rows):
            fh.write(json.dumps({"id": f"r{i}", **r, "judge": judge}) + "\n")


def test_cli_calibrate_from_eval_outcomes(tmp_path, capsys) -> None:
    info = HeuristicJudge().info
    data = tmp_path / "outcomes.jsonl"
    _outcomes(  # the stamp `ground eval` writes
        data,
        _rows(9, 150, 100, task="QnA") + _rows(10, 80, 60, task="Summarization"),
        {"name": info.name, "version": info.version, "key": "0123"},
    )
    out = tmp_path / "thresholds.json"
    code = main(
        [
            "calibrate",
            str(data),
            "--judge",
            "heuristic",
            "--max-pass-rate",
            "0.05",
            "--confidence",
            "0.9",
            "-o",
            str(out),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0, printed
    table = CalibratedThresholds.load(out)
    assert table.judge == info and [g.name for g in table.groups] == ["QnA", "Summarization"]
    assert "QnA" in printed and "blocked" in printed


def test_cli_calibrate_too_few_examples_exits_2(tmp_path, capsys) -> None:
    info = HeuristicJudge().info
    data = tmp_path / "outcomes.jsonl"
    _outcomes(data, _rows(12, 20, 100), f"{info.name} {info.version}")
    code = main(["calibrate", str(data), "--judge", "heuristic", "-o", str(tmp_path / "t.json")])
    assert code == 2
    assert "need at least 45" in capsys.readouterr().err


def test_cli_calibrate_refuses_outcomes_of_another_judge(tmp_path, capsys) -> None:
    data = tmp_path / "outcomes.jsonl"
    _outcomes(data, _rows(13, 100, 100), "cross-encoder 9")
    code = main(["calibrate", str(data), "--judge", "heuristic", "-o", str(tmp_path / "t.json")])
    assert code == 2 and "same --judge" in capsys.readouterr().err


def test_cli_calibrate_scores_labelled_records_with_the_judge(tmp_path, capsys) -> None:
    data = tmp_path / "data.jsonl"
    with open(data, "w", encoding="utf-8") as fh:
        for i in range(50):
            fh.write(
                json.dumps(
                    {
                        "id": f"g{i}",
                        "task": "Summarization",
                        "label": "grounded",
                        "context": [f"The museum opened in {1900 + i} and has {i + 3} rooms."],
                        "answer": f"The museum opened in {1900 + i}.",
                    }
                )
                + "\n"
            )
            fh.write(
                json.dumps(
                    {
                        "id": f"n{i}",
                        "task": "Summarization",
                        "label": "notGrounded",
                        "context": [f"The museum opened in {1900 + i} and has {i + 3} rooms."],
                        "answer": f"The museum opened in {2100 + i} under Napoleon's nephew.",
                    }
                )
                + "\n"
            )
    out = tmp_path / "t.json"
    code = main(
        [
            "calibrate",
            str(data),
            "--judge",
            "heuristic",
            "--max-pass-rate",
            "0.1",
            "--confidence",
            "0.9",
            "-o",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    table = CalibratedThresholds.load(out)
    assert table.default.n_not_grounded == 50 and table.default.n_grounded == 50


def test_cli_check_and_eval_use_the_thresholds_file(tmp_path, capsys) -> None:
    judge = HeuristicJudge()
    strict, lax = tmp_path / "strict.json", tmp_path / "lax.json"
    _table(judge, 0.999, 0.999, 0.999).save(strict)
    _table(judge, 0.0001, 0.0001, 0.0001).save(lax)
    args = [
        "check",
        "-c",
        "The museum opened in 1901.",
        "-a",
        "The museum opened in 1901.",
        "--judge",
        "heuristic",
        "--format",
        "json",
    ]
    assert main([*args, "--thresholds", str(lax)]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "grounded"
    assert main([*args, "--thresholds", str(strict)]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "notGrounded"
    # The wrong judge's file is refused with the fix.
    assert main([*args[:-4], "--format", "json", "--thresholds", str(strict)]) == 2
    assert "Recalibrate" in capsys.readouterr().err

    data = tmp_path / "d.jsonl"
    data.write_text(
        json.dumps(
            {
                "id": "a",
                "task": "Summarization",
                "label": "grounded",
                "context": ["The museum opened in 1901."],
                "answer": "The museum opened in 1901.",
            }
        )
        + "\n"
    )
    out = tmp_path / "d.results.jsonl"
    assert (
        main(
            [
                "eval",
                str(data),
                "-o",
                str(out),
                "--judge",
                "heuristic",
                "--no-progress",
                "--thresholds",
                str(strict),
            ]
        )
        == 0
    )
    assert json.loads(out.read_text().splitlines()[0])["verdict"] == "notGrounded"
    capsys.readouterr()
    # Other cuts decide other verdicts: outcomes written under the strict file are not resumed
    # under the lax one (nor without a file), but refused in one line, until --fresh.
    base = ["eval", str(data), "-o", str(out), "--judge", "heuristic", "--no-progress"]
    before = out.read_text()
    for other in (["--thresholds", str(lax)], []):
        assert main([*base, *other]) == 2
        err = capsys.readouterr().err
        assert "--thresholds" in err and "--fresh" in err and len(err.strip().splitlines()) == 1
        assert out.read_text() == before
    assert main([*base, "--thresholds", str(lax), "--fresh"]) == 0
    assert json.loads(out.read_text().splitlines()[0])["verdict"] == "grounded"


def test_a_judge_that_scores_ungrounded_answers_1_cannot_be_calibrated() -> None:
    with pytest.raises(InvalidInputError, match=r"no cut below 1\.0"):
        calibrate_cut([1.0] * 40 + [0.0] * 60, max_pass_rate=0.05, confidence=0.9)


def test_eval_report_marks_the_calibrated_cuts(tmp_path, capsys) -> None:
    pytest.importorskip("matplotlib", reason="the report needs the [report] extra")
    judge = HeuristicJudge()
    thresholds = tmp_path / "t.json"
    _table(judge, 0.61, 0.42, 0.5).save(thresholds)
    data = tmp_path / "d.jsonl"
    data.write_text(
        json.dumps(
            {
                "id": "a",
                "task": "QnA",
                "query": "When?",
                "label": "grounded",
                "context": ["The museum opened in 1901."],
                "answer": "The museum opened in 1901.",
            }
        )
        + "\n"
    )
    report = tmp_path / "r.html"
    assert (
        main(
            [
                "eval",
                str(data),
                "--judge",
                "heuristic",
                "--no-progress",
                "--thresholds",
                str(thresholds),
                "--report",
                str(report),
            ]
        )
        == 0
    )
    page = report.read_text(encoding="utf-8")
    assert "QnA: flag below 0.61" in page and "Summarization: flag below 0.42" in page
    assert "all: flag below 0.5" in page


# -- what a thresholds file may say ------------------------------------------------------------


def _valid_file(tmp_path) -> tuple[dict, object]:
    """A file as `ground calibrate` writes it (per task), as a dict to tamper with."""
    table = calibrate(
        _rows(20, 120, 80, task="QnA") + _rows(21, 90, 60, task="Summarization"),
        judge=HeuristicJudge().info,
    )
    path = tmp_path / "thresholds.json"
    table.save(path)
    return json.loads(path.read_text()), path


def _load_tampered(path, data: dict) -> CalibratedThresholds:
    path.write_text(json.dumps(data))
    return CalibratedThresholds.load(path)


def test_a_file_written_by_calibrate_loads_as_written(tmp_path) -> None:
    data, path = _valid_file(tmp_path)
    assert CalibratedThresholds.load(path).model_dump(mode="json") == data
    # a byte-order mark (some editors add one) changes nothing
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert CalibratedThresholds.load(path).model_dump(mode="json") == data


def test_a_file_that_names_no_judge_is_refused(tmp_path, capsys) -> None:
    data, path = _valid_file(tmp_path)
    with pytest.raises(ConfigurationError, match=r"judge: missing.*ground calibrate"):
        _load_tampered(path, {**data, "judge": None})
    no_key = {k: v for k, v in data.items() if k != "judge"}
    with pytest.raises(ConfigurationError, match="judge: missing"):
        _load_tampered(path, no_key)
    # the CLI says it in one line, whatever judge it runs
    code = main(["check", "-c", "Paris.", "-a", "Paris.", "--thresholds", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "judge: missing" in err and len(err.strip().splitlines()) == 1
    # and such a file is never written
    table = calibrate(_rows(22, 60, 60))
    with pytest.raises(ConfigurationError, match="judge"):
        table.save(tmp_path / "nameless.json")
    assert not (tmp_path / "nameless.json").exists()


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (lambda d: d["groups"][0].update(cut=0.0), "cut must be above 0"),
        (lambda d: d["default"].update(cut=-0.1), "greater than or equal to 0"),
        (
            lambda d: d["groups"].append(dict(d["groups"][0], cut=0.01)),
            "two groups for QnA",
        ),
        (lambda d: d["groups"][1].update(task="qna"), "two groups for QnA"),
        (lambda d: d["groups"][0].update(task="QnAx"), "unknown task 'QnAx'"),
        (lambda d: d["groups"][0].update(task=None), "names no task or domain"),
        (lambda d: d["default"].update(task="QnA"), "names no task or domain"),
        (
            lambda d: d["default"].update(blocked_interval=[2, -1]),
            r"blocked_interval \[2\.0, -1\.0\]",
        ),
        (lambda d: d["default"].update(blocked_interval=[0.9, 0.95]), "blocked share"),
        (lambda d: d["default"].update(blocked_rate=0.99), "blocked_rate"),
        (lambda d: d["default"].update(blocked_grounded=10_000), "exceeds n_grounded"),
        (lambda d: d["groups"][0].update(passed_not_grounded=500), "must be below rank"),
        (lambda d: d["groups"][0].update(rank=10_000), "exceeds n_not_grounded"),
        (lambda d: d["groups"][0].update(rank=100), "does not bound the pass rate"),
        (
            lambda d: d["groups"][0].update(n_not_grounded=5, rank=1, passed_not_grounded=0),
            "need 45",
        ),
        (
            lambda d: d["default"].update(
                n_grounded=1_000, blocked_rate=None, blocked_interval=None
            ),
            "add up to",
        ),
        (lambda d: d.update(max_pass_rate=0.001), "does not bound the pass rate|need"),
    ],
)
def test_contradictory_thresholds_files_are_refused(tmp_path, tamper, message) -> None:
    data, path = _valid_file(tmp_path)
    tamper(data)
    with pytest.raises(ConfigurationError, match=message) as info:
        _load_tampered(path, data)
    assert str(path) in str(info.value)


def test_deeply_nested_json_is_a_configuration_error_not_a_crash(tmp_path, capsys) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 50_000 + "]" * 50_000)
    with pytest.raises(ConfigurationError, match="nested too deeply"):
        CalibratedThresholds.load(path)
    path.write_text(
        '{"format": "ground-thresholds/1", "judge": ' + "[" * 50_000 + "]" * 50_000 + "}"
    )
    with pytest.raises(ConfigurationError, match="nested too deeply"):
        CalibratedThresholds.load(path)
    assert main(["check", "-c", "Paris.", "-a", "Paris.", "--thresholds", str(path)]) == 2
    assert "nested too deeply" in capsys.readouterr().err


class _SupportiveJudge(Judge):
    """Finds every sentence supported, with a middling score: the cut decides."""

    name = "supportive"
    version = "1"

    def __init__(self, score: float) -> None:
        self.score = score

    def judge(self, request: GroundednessRequest) -> Judgement:
        from ground_integrations.models import SentenceJudgement, Verdict

        sentence = SentenceJudgement(
            index=0,
            text=request.answer,
            start=0,
            end=len(request.answer),
            score=self.score,
            verdict=Verdict.GROUNDED,
            reason="Supported by the context (passage 0)",
        )
        return Judgement(score=self.score, sentences=[sentence])


def test_a_verdict_decided_by_the_calibrated_cut_says_so() -> None:
    judge = _SupportiveJudge(0.71)
    table = _table(judge, qna=0.8, summ=0.5, pooled=0.6)
    checker = GroundednessChecker(judge, thresholds=table)
    r = checker.check("Paris is in France.", "Paris is in France.", "Where?", task="QnA")
    assert r.verdict.value == "notGrounded"
    reason = "score 0.71 is below the calibrated cut 0.80 for QnA"
    assert r.sentences[0].reason == reason and r.ungrounded_details[0].reason == reason
    assert "Supported" not in r.model_dump_json()
    # where the cut lets the sentence pass, the judge's reason stands
    ok = checker.check("Paris is in France.", "Paris is in France.", task="Summarization")
    assert ok.verdict.value == "grounded"
    assert ok.sentences[0].reason == "Supported by the context (passage 0)"
    # a plain cut given to the checker says the same; so does a notSure band
    plain = GroundednessChecker(judge, thresholds=Thresholds(grounded=0.75, not_grounded=0.7))
    band = plain.check("Paris is in France.", "Paris is in France.")
    assert band.verdict.value == "notSure"
    assert (
        band.sentences[0].reason == "score 0.71 is below the checker's cut 0.75 (the notSure band)"
    )
    # a score a hair under the cut is printed with the digits that show it
    close = GroundednessChecker(_SupportiveJudge(0.7999), thresholds=table)
    r = close.check("Paris is in France.", "Paris is in France.", "Where?", task="QnA")
    assert r.sentences[0].reason == "score 0.7999 is below the calibrated cut 0.8000 for QnA"
