"""``ground eval`` and ``ground calibrate``: a judge over a labelled JSONL file.

``eval`` writes one outcome per record as it goes (locally, or per finished shard on Ray Data
actors), resumes where an earlier run stopped, prints the metrics per dataset, task and subtask,
and can write the HTML report. ``calibrate`` chooses the cut from labelled records (scored here,
exactly as ``eval`` scores them) or from the outcomes ``eval`` wrote.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Generator
from typing import Any

from ..checker import GroundednessChecker
from ..errors import GroundednessError, InvalidInputError
from ..models import GroundednessRequest
from .common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
    NAMED_FAILURES,
    make_checker,
    make_judge,
)
from .files import (
    check_writable,
    holding,
    judge_of,
    load_done,
    refuse_other_judge,
    refuse_to_overwrite,
    row_line,
    unique_records,
)

__all__ = ["calibrate_command", "eval_command"]


def eval_command(args: argparse.Namespace) -> int:
    output = args.output or args.path.with_suffix(".results.jsonl")
    refuse_to_overwrite(
        {"--output": output, "--report": args.report},
        {"the input": args.path, "--thresholds": args.thresholds},
    )
    check_writable(output, "--output")
    if args.report is not None:
        check_writable(args.report, "--report")
    with holding(output):
        return _evaluate(args)


def _evaluate(args: argparse.Namespace) -> int:
    from ..evaluation import (
        format_table,
        grouped_metrics,
        input_key,
        judge_identity,
        load_records,
        outcome_row,
        record_outcome,
        tune_cut,
    )

    if args.engine == "ray":
        from ..batch._dataset import require_ray

        require_ray()  # MissingDependencyError now, not after reading the file
    records, skipped = load_records(args.path)
    if not records:
        shown = "; ".join(str(s) for s in skipped[:3])
        raise InvalidInputError(
            f"{args.path}: no record to evaluate" + (f" ({shown})" if shown else ""), field="path"
        )
    if args.limit is not None:
        records = records[: args.limit]
    records = unique_records(records)
    output = args.output or args.path.with_suffix(".results.jsonl")
    if output.is_dir():
        raise InvalidInputError(f"{output}: is a directory, expected a file", field="output")
    checker = make_checker(args, cache_size=0)
    if args.report is not None:
        _report_ready()  # fail before the long run, not after it
    ident = judge_identity(
        checker.judge, checker.thresholds if args.thresholds is not None else None
    )
    if args.fresh and output.exists():
        output.unlink()
    done = load_done(output)
    refuse_other_judge(done, ident, output)
    keys = {str(r["id"]): input_key(r) for r in records}
    # an outcome is reused only for the same content (an edited answer is checked again)
    todo = [r for r in records if done.get(str(r["id"]), {}).get("input") != keys[str(r["id"])]]
    stamp = {"name": ident["name"], "version": ident["version"], "key": ident["key"]}
    interrupted = False
    shards: Generator[list[dict[str, Any]], None, None]
    if args.engine == "ray":
        shards = _ray_outcomes(args, checker, todo)
    else:
        shards = ([outcome_row(checker, record)] for record in todo)
    try:
        from tqdm import tqdm

        bar = tqdm(
            total=len(records),
            initial=len(records) - len(todo),
            unit="rec",
            disable=args.no_progress,
            file=sys.stderr,
        )
        with open(output, "a", encoding="utf-8") as fh:
            # one write per record (local) or per finished shard (ray)
            for shard in shards:
                for row in shard:
                    row.update(input=keys[str(row["id"])], judge=stamp)
                fh.write("".join(row_line(row) for row in shard))
                fh.flush()
                for row in shard:
                    done[str(row["id"])] = row
                bar.update(len(shard))
        bar.close()
    except KeyboardInterrupt:
        interrupted = True
        print(
            f"\ninterrupted: {len(done)} outcomes kept in {output}; run again to resume",
            file=sys.stderr,
        )
    except OSError as exc:  # a full disk, a quota: what was written stays, and resumes
        print(
            f"\nground: cannot write {exc.filename or output}: {exc.strerror or exc}; "
            f"{len(done)} outcomes kept in {output}; make room and run again to resume",
            file=sys.stderr,
        )
        return EXIT_USAGE
    finally:
        shards.close()  # the Ray engine stops the Ray instance it started
    wanted = {str(r["id"]) for r in records}
    rows = [row for key, row in done.items() if key in wanted]
    print(
        format_table(
            grouped_metrics(rows, not_sure_as=args.not_sure_as),
            title=f"{checker.judge.name} {checker.judge.version} on {args.path} "
            f"({len(rows)}/{len(records)} records; notSure counted as {args.not_sure_as})",
        )
    )
    print(f"outcomes: {output}")
    failed = [str(s) for s in skipped] + [
        f"id {row['id']!r}: {row['error']}" for row in rows if row.get("error")
    ]
    if failed:
        print(f"{len(failed)} record(s) not evaluated:")
        for line in failed[:NAMED_FAILURES]:
            print(f"  {line}")
        if len(failed) > NAMED_FAILURES:
            print(f"  ... and {len(failed) - NAMED_FAILURES} more")
    if args.report is not None and rows:
        _write_report(args, checker, rows, records)
    if args.baseline:
        from ..judges.lexical import LexicalBaselineJudge

        base = GroundednessChecker(LexicalBaselineJudge(), cache_size=0)
        scored: list[tuple[dict[str, Any], GroundednessRequest]] = []
        base_rows = []
        for r in records:
            try:
                scored.append((r, base.build_request(r["context"], r["answer"])))
            except GroundednessError as exc:
                base_rows.append(record_outcome(r, error=exc))
        raw = [base.judge.run(req).score or 0.0 for _, req in scored]
        cut = tune_cut(raw, [r["label"] for r, _ in scored])
        tuned = GroundednessChecker(LexicalBaselineJudge(cut), cache_size=0)
        base_rows += [record_outcome(r, tuned.check(req.context, req.answer)) for r, req in scored]
        print()
        print(
            format_table(
                grouped_metrics(base_rows),
                title=f"lexical baseline, cut {cut:.3f} tuned on this file",
            )
        )
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_PARTIAL if failed else EXIT_OK


def _ray_outcomes(
    args: argparse.Namespace, checker: GroundednessChecker, todo: list[dict[str, Any]]
) -> Generator[list[dict[str, Any]], None, None]:
    """``--engine ray``: outcome rows per finished shard, from actors built like ``checker``."""
    from ..batch import JudgeSpec
    from ..batch._dataset import eval_outcomes

    options: dict[str, Any] = {}
    if args.thresholds is not None:
        options["thresholds"] = checker.thresholds
    spec = JudgeSpec(args.judge, args.judge_config or {}, options)
    return eval_outcomes(
        todo,
        spec,
        workers=args.workers,
        address=args.address,
        shard_size=args.shard_size,
    )


def _report_ready() -> None:
    """Raise MissingDependencyError now if the report extra is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        from ..errors import MissingDependencyError

        raise MissingDependencyError("matplotlib", "report") from exc


def _write_report(
    args: argparse.Namespace,
    checker: GroundednessChecker,
    rows: list[dict[str, Any]],
    records: list[dict[str, Any]],
) -> None:
    from ..calibration import CalibratedThresholds
    from ..judges.base import Thresholds
    from ..report import ReportInput, write_report

    cut: Thresholds | dict[str, Thresholds]
    if isinstance(checker.thresholds, CalibratedThresholds):
        cut = {g.name: g.thresholds for g in checker.thresholds.groups}
        cut["all"] = checker.thresholds.default.thresholds
    else:
        cut = checker.thresholds
    path = write_report(
        ReportInput(
            rows=rows,
            records={str(r["id"]): r for r in records},
            title=f"{checker.judge.name} {checker.judge.version} on {args.path.name}",
            cut=cut,
            not_sure_as=args.not_sure_as,
        ),
        args.report,
    )
    print(f"report: {path}")


def calibrate_command(args: argparse.Namespace) -> int:
    from ..calibration import calibrate, require_examples
    from ..evaluation import load_records, outcome_row, read_jsonl

    refuse_to_overwrite({"--output": args.output}, {"the input": args.path})
    check_writable(args.output, "--output")
    raw = list(read_jsonl(args.path))
    rows: list[dict[str, Any]]
    if raw and all("score" in r and "answer" not in r for r in raw):
        judge = make_judge(args)
        mine = f"{judge.info.name} {judge.info.version}"
        rows = unique_records(raw)  # outcomes of `ground eval`: already scored
        used = {j for j in map(judge_of, rows) if j is not None}
        if used and used != {mine}:
            raise InvalidInputError(
                f"{args.path} holds outcomes of {', '.join(sorted(used))}, not of "
                f"{mine}; pass the same --judge the outcomes were made with",
                field="judge",
            )
    else:
        from tqdm import tqdm

        records, skipped = load_records(args.path)
        for s in skipped[:NAMED_FAILURES]:
            print(f"ground: skipped {s}", file=sys.stderr)
        records = unique_records(records)
        # count the labels before loading the judge and scoring anything
        require_examples(
            records,
            max_pass_rate=args.max_pass_rate,
            confidence=args.confidence,
            per_group=not args.pooled,
        )
        judge = make_judge(args)
        checker = GroundednessChecker(judge, cache_size=0)
        # the same per-record check as `ground eval` (local and Ray), so the cut is chosen on
        # exactly the scores an evaluation reports
        try:
            rows = [
                outcome_row(checker, record)
                for record in tqdm(records, unit="rec", disable=args.no_progress, file=sys.stderr)
            ]
        except KeyboardInterrupt:
            print(
                f"\ninterrupted before the cut was chosen: nothing written to {args.output}",
                file=sys.stderr,
            )
            return EXIT_INTERRUPTED
    thresholds = calibrate(
        rows,
        max_pass_rate=args.max_pass_rate,
        confidence=args.confidence,
        judge=judge.info,
        per_group=not args.pooled,
    )
    thresholds.save(args.output)
    print(thresholds.summary())
    print(f"thresholds: {args.output}")
    return EXIT_OK
