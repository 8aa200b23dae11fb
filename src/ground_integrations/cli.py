"""The ``ground`` command.

``ground check``: check one answer. Context comes from ``--context`` (repeatable),
``--context-file`` (repeatable; one passage per file) or stdin (``--context -``).
``--format`` picks text, json (our result), azure (detectGroundedness response) or upstage
(the verdict string).

``ground eval FILE.jsonl``: evaluate on labelled JSONL. Per-record outcomes go to ``--output``
(default ``FILE.results.jsonl``) as they are produced; running again resumes where it stopped.
An outcome is reused only for the same record content and the same judge (name, version and
settings); a results file of another judge is refused rather than mixed.

``--engine ray`` checks the records on Ray Data actors (extra ``[ray]``; ``--workers N`` actors,
``--address`` a cluster to join, else a local Ray instance), one checker per actor, through the
same per-record function as the local engine; each finished shard (at most ``--shard-size``
records) is appended to the same outcomes file at once, so the metrics, the report and resuming
are those of the local engine.

``--report report.html`` also writes a self-contained HTML report (extra ``[report]``), from
every outcome of the file, resumed ones included.

Files are checked before any work: an output (``--output``, ``--report``, ``calibrate -o``)
that is one of the command's inputs, symlinks followed, is refused, as is one that cannot be
written (a directory, a missing folder). While ``ground eval`` writes an outcomes file it holds
``OUTPUT.lock``; a second run on the same file stops at once instead of duplicating records.

``ground calibrate FILE.jsonl -o thresholds.json``: choose the cut so that at most
``--max-pass-rate`` of ungrounded answers pass, with ``--confidence``; FILE is labelled JSONL
(the judge scores it) or the outcomes ``ground eval`` wrote. ``--thresholds thresholds.json``
on ``check`` and ``eval`` uses the file.

Exit codes:
  0  success (for ``check``: whatever the verdict, unless ``--exit-code``)
  1  with ``check --exit-code``: the answer is notGrounded
  2  bad usage or invalid input (empty answer, empty context, unreadable file, an output that
     is an input, an outcomes file another run is writing, a full disk, ...)
  3  with ``check --exit-code``: the answer is notSure
  4  the judge failed
  5  ``eval``: some records were not evaluated (lines that are not records, judge errors);
     the summary counts and names them
  130 interrupted (``eval`` keeps what it wrote and resumes next time; ``calibrate`` writes
      nothing)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import Any

from .checker import AZURE_LIMITS, DEFAULT_LIMITS, GroundednessChecker
from .errors import GroundednessError, InvalidInputError, JudgeError
from .models import GroundednessRequest, GroundednessResult, Verdict

EXIT_OK, EXIT_NOT_GROUNDED, EXIT_USAGE, EXIT_NOT_SURE, EXIT_JUDGE, EXIT_PARTIAL = 0, 1, 2, 3, 4, 5
EXIT_INTERRUPTED = 130
#: How many failed records the eval summary names (then it counts the rest).
_NAMED_FAILURES = 10


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ground", description="Check that RAG answers are grounded in their context."
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"ground {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser("check", help="check one answer against its context")
    check.add_argument(
        "--context",
        "-c",
        action="append",
        default=[],
        metavar="TEXT",
        help="a context passage (repeatable); '-' reads one passage from stdin",
    )
    check.add_argument(
        "--context-file",
        "-f",
        action="append",
        default=[],
        metavar="PATH",
        help="a file holding one passage (repeatable)",
    )
    check.add_argument("--answer", "-a", required=True, help="the answer to check ('-' for stdin)")
    check.add_argument("--query", "-q", help="the user's question (required for --task QnA)")
    check.add_argument("--task", default="Summarization", help="QnA or Summarization")
    check.add_argument("--domain", default="Generic", help="Generic or Medical")
    check.add_argument("--reasoning", action="store_true", help="include reasons in --format azure")
    check.add_argument("--format", choices=["text", "json", "azure", "upstage"], default="text")
    check.add_argument(
        "--azure-limits",
        action="store_true",
        help="enforce Azure's limits (55,000 chars of context, 7,500 of answer/query) instead "
        "of the defaults (200,000 of context, 20,000 of answer, 10,000 of query)",
    )
    check.add_argument(
        "--exit-code", action="store_true", help="exit 1 on notGrounded and 3 on notSure"
    )
    _judge_options(check)
    _thresholds_option(check)

    ev = sub.add_parser(
        "eval",
        help="evaluate on labelled JSONL (id, dataset, task, query, context, answer, label, spans)",
    )
    ev.add_argument("path", type=Path)
    ev.add_argument(
        "--output", "-o", type=Path, help="per-record outcomes (default: PATH.results.jsonl)"
    )
    ev.add_argument(
        "--fresh", action="store_true", help="discard earlier outcomes instead of resuming"
    )
    ev.add_argument("--limit", type=_non_negative, help="evaluate at most this many records (>= 0)")
    ev.add_argument(
        "--not-sure-as",
        choices=["notGrounded", "grounded"],
        default="notGrounded",
        help="how a notSure verdict counts in accuracy (default notGrounded: the "
        "default policy does not release it unchecked)",
    )
    ev.add_argument(
        "--baseline",
        action="store_true",
        help="also report the lexical baseline, its cut tuned on this file",
    )
    ev.add_argument(
        "--report",
        type=Path,
        metavar="HTML",
        help="also write a self-contained HTML report here (needs the [report] extra)",
    )
    ev.add_argument("--no-progress", action="store_true")
    ev.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="local: one record at a time in this process; ray: shards on Ray Data actors "
        "(extra [ray]), one checker per actor",
    )
    ev.add_argument(
        "--address",
        default=None,
        help="with --engine ray: the Ray cluster to join (ray.init(address=...), e.g. auto or "
        "ray://head:10001); default: a local Ray instance",
    )
    ev.add_argument(
        "--workers",
        type=_positive,
        default=1,
        help="with --engine ray: actors, each with its own checker (default 1)",
    )
    ev.add_argument(
        "--shard-size",
        type=_positive,
        default=200,
        help="with --engine ray: at most this many records per shard; each finished shard is "
        "written at once (default 200)",
    )
    _judge_options(ev)
    _thresholds_option(ev)

    cal = sub.add_parser(
        "calibrate",
        help="choose the cut that lets at most a given share of ungrounded answers pass",
    )
    cal.add_argument(
        "path",
        type=Path,
        help="labelled JSONL (scored with the judge), or the outcomes file of `ground eval`",
    )
    cal.add_argument(
        "--max-pass-rate",
        type=_share,
        default=0.05,
        help="the largest share of notGrounded answers that may pass (default 0.05)",
    )
    cal.add_argument(
        "--confidence",
        type=_share,
        default=0.9,
        help="probability that the bound holds, over the draw of your examples (default 0.9)",
    )
    cal.add_argument(
        "--output", "-o", type=Path, required=True, help="where to write thresholds.json"
    )
    cal.add_argument(
        "--pooled",
        action="store_true",
        help="one cut for all records, not one per task (and domain)",
    )
    cal.add_argument("--no-progress", action="store_true")
    _judge_options(cal)
    _serve_options(sub)
    return parser


def _share(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
    if not 0.0 < number < 1.0:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {number}")
    return number


def _thresholds_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--thresholds",
        type=Path,
        metavar="JSON",
        help="cuts written by `ground calibrate` (default: the judge's own)",
    )


def _make_checker(args: argparse.Namespace, **options: Any) -> GroundednessChecker:
    thresholds = None
    if getattr(args, "thresholds", None) is not None:
        from .calibration import CalibratedThresholds

        thresholds = CalibratedThresholds.load(args.thresholds)
    return GroundednessChecker(_make_judge(args), thresholds=thresholds, **options)


def _serve_options(sub: Any) -> None:
    serve = sub.add_parser(
        "serve",
        help="run the HTTP service (extra [server]): Upstage- and Azure-compatible routes",
        description="Keys come from GROUND_API_KEYS (comma-separated) or --api-keys-file; "
        "every option can also be set as GROUND_<NAME> or in --config FILE.json.",
    )
    serve.add_argument("--host", default=None, help="default 127.0.0.1")
    serve.add_argument("--port", type=int, default=None, help="default 8080")
    serve.add_argument("--workers", type=int, default=None, help="processes (default 1)")
    serve.add_argument("--judge", default=None, help="a judge name; default: the embedded judge")
    serve.add_argument("--judge-config", default=None, metavar="JSON", help="judge settings")
    serve.add_argument("--api-keys-file", default=None, metavar="PATH", help="one key a line")
    serve.add_argument(
        "--thresholds",
        default=None,
        metavar="JSON",
        help="cuts written by `ground calibrate` (default: the judge's own)",
    )
    serve.add_argument("--no-auth", action="store_true", default=None, help="run without keys")
    serve.add_argument(
        "--force-no-auth",
        action="store_true",
        default=None,
        help="allow --no-auth on a non-loopback host",
    )
    serve.add_argument("--config", default=None, metavar="PATH", help="settings as a JSON object")
    serve.add_argument("--max-body-bytes", type=int, default=None, help="default 1,000,000")
    serve.add_argument("--rate-limit", type=int, default=None, help="per key per minute (600)")
    serve.add_argument("--request-timeout", type=float, default=None, help="seconds (30)")
    serve.add_argument("--max-in-flight", type=int, default=None, help="checks at once (4)")
    serve.add_argument(
        "--header-timeout", type=float, default=None, help="seconds to send headers (10)"
    )
    serve.add_argument(
        "--body-timeout", type=float, default=None, help="seconds to send a body (30)"
    )
    serve.add_argument(
        "--graceful-timeout", type=float, default=None, help="seconds to drain on SIGTERM (30)"
    )
    serve.add_argument(
        "--auth-failure-limit",
        type=int,
        default=None,
        help="failed key checks per minute per address before 429 (30; 0: off)",
    )


def _serve(args: argparse.Namespace) -> int:
    from .server.settings import _json_object, load_settings

    settings = load_settings(
        config_file=args.config,
        api_keys_file=args.api_keys_file,
        host=args.host,
        port=args.port,
        workers=args.workers,
        judge=args.judge,
        judge_config=_json_object(args.judge_config, "--judge-config")
        if args.judge_config
        else None,
        thresholds=args.thresholds,
        no_auth=args.no_auth,
        force_no_auth=args.force_no_auth,
        max_body_bytes=args.max_body_bytes,
        rate_limit=args.rate_limit,
        request_timeout=args.request_timeout,
        max_in_flight=args.max_in_flight,
        header_timeout=args.header_timeout,
        body_timeout=args.body_timeout,
        graceful_timeout=args.graceful_timeout,
        auth_failure_limit=args.auth_failure_limit,
    )
    if settings.judge is not None:  # fail now, in one line, not in every worker
        from .server.run import check_judge

        check_judge(settings)
    if settings.thresholds is not None:
        from .calibration import CalibratedThresholds

        CalibratedThresholds.load(settings.thresholds)
    from .server import serve

    serve(settings)
    return EXIT_OK


def _non_negative(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {number}")
    return number


def _positive(value: str) -> int:
    number = _non_negative(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {number}")
    return number


def _judge_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--judge",
        default=None,
        help="judge name (cross-encoder, heuristic, upstage, azure, nli, ...); "
        "default: the bundled model, else the heuristic",
    )
    parser.add_argument(
        "--judge-config",
        default="{}",
        metavar="JSON",
        help='judge settings as a JSON object, e.g. \'{"model": "/models/nli"}\'',
    )


def _make_judge(args: argparse.Namespace) -> Any:
    from .judges import load_judge

    try:
        settings = json.loads(args.judge_config)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"--judge-config is not valid JSON: {exc.msg}", field="judge-config"
        ) from exc
    if not isinstance(settings, dict):
        raise InvalidInputError("--judge-config must be a JSON object", field="judge-config")
    if args.judge is None:
        from .judges import default_judge

        if settings:
            raise InvalidInputError("--judge-config needs --judge", field="judge-config")
        return default_judge()
    return load_judge(args.judge, **settings)


def _read_stdin_once(state: dict[str, str | None]) -> str:
    if state.get("stdin") is None:
        state["stdin"] = sys.stdin.read()
    return state["stdin"] or ""


def _gather_context(args: argparse.Namespace, state: dict[str, str | None]) -> list[str]:
    passages = [(_read_stdin_once(state) if c == "-" else c) for c in args.context]
    for path in args.context_file:
        try:
            passages.append(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise InvalidInputError(
                f"cannot read context file {path}: {exc.strerror}", field="context"
            ) from exc
    if not passages and args.answer != "-" and not sys.stdin.isatty():
        passages.append(_read_stdin_once(state))
    return passages


def _print_text(result: GroundednessResult) -> None:
    print(result.verdict.value)
    print(
        f"score {result.score:.3f}  confidence {result.confidence:.3f}  "
        f"ungrounded {result.ungrounded_percentage:.0%}  judge {result.judge.name} "
        f"{result.judge.version}  {result.latency_ms:.1f} ms"
    )
    for d in result.ungrounded_details:
        print(
            f'- "{d.text}" {d.kind.value} [codePoint {d.offset.code_point}+{d.length.code_point}, '
            f"utf8 {d.offset.utf8}+{d.length.utf8}, utf16 {d.offset.utf16}+{d.length.utf16}]"
        )
        if d.reason:
            print(f"  reason: {d.reason}")


def _check(args: argparse.Namespace) -> int:
    if args.answer == "-" and "-" in args.context:
        raise InvalidInputError(
            "--context - and --answer - cannot both read standard input; "
            "put the context in a file (--context-file PATH)",
            field="context",
        )
    state: dict[str, str | None] = {}
    answer = _read_stdin_once(state) if args.answer == "-" else args.answer
    context = _gather_context(args, state)
    checker = _make_checker(args, limits=AZURE_LIMITS if args.azure_limits else DEFAULT_LIMITS)
    result = checker.check(
        context, answer, args.query, task=args.task, domain=args.domain, reasoning=args.reasoning
    )
    if args.format == "json":
        print(result.model_dump_json(indent=2))
    elif args.format == "azure":
        print(json.dumps(result.to_azure(), indent=2, ensure_ascii=False))
    elif args.format == "upstage":
        print(result.to_upstage())
    else:
        _print_text(result)
    if args.exit_code:
        return {
            Verdict.GROUNDED: EXIT_OK,
            Verdict.NOT_GROUNDED: EXIT_NOT_GROUNDED,
            Verdict.NOT_SURE: EXIT_NOT_SURE,
        }[result.verdict]
    return EXIT_OK


def _row_line(row: dict[str, Any]) -> str:
    # ASCII JSON: an id or text with a lone surrogate is escaped ("\\ud800"), never unwritable.
    return json.dumps(row, ensure_ascii=True) + "\n"


def _load_done(output: Path) -> dict[str, dict[str, Any]]:
    """Outcomes already written. A line cut short by an interruption is dropped: the kept lines
    go to a temporary file that then replaces the results atomically, so a kill at any moment
    leaves either the old file or the new one, never an empty or half-written one."""
    done: dict[str, dict[str, Any]] = {}
    if not output.exists():
        return done
    from .evaluation import outcome_problem

    lines = output.read_text(encoding="utf-8", errors="replace").splitlines()
    broken = False
    invalid: list[str] = []
    for number, line in enumerate(lines, 1):
        try:
            row = json.loads(line)
            key = str(row["id"])
        except (json.JSONDecodeError, KeyError, TypeError, RecursionError):
            broken = True
            continue
        # an outcome is trusted only in the shape ground writes (the report shows it)
        problem = outcome_problem(row)
        if problem is not None:
            broken = True
            invalid.append(f"line {number}: {problem}")
            continue
        done[key] = row
    if invalid:
        print(
            f"ground: {output}: {len(invalid)} line(s) are not outcomes ground writes "
            f"({'; '.join(invalid[:3])}); their records are checked again",
            file=sys.stderr,
        )
    if broken:
        tmp = output.with_name(output.name + ".tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.writelines(_row_line(r) for r in done.values())
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, output)
        finally:
            tmp.unlink(missing_ok=True)
    return done


def _unique(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records with their ids made str and duplicates dropped (the first one is kept)."""
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    dropped: list[str] = []
    for i, r in enumerate(records):
        key = str(r.setdefault("id", f"line-{i + 1}"))
        if key in seen:
            dropped.append(key)
            continue
        seen.add(key)
        out.append(r)
    if dropped:
        shown = ", ".join(repr(k) for k in sorted(set(dropped))[:5])
        print(
            f"ground: skipped {len(dropped)} record(s) with a duplicate id ({shown}); "
            "only the first of each id is evaluated",
            file=sys.stderr,
        )
    return out


def _refuse_other_judge(
    done: dict[str, dict[str, Any]], ident: dict[str, Any], output: Path
) -> None:
    """Outcomes of another judge (or other settings) are never reused nor mixed with ours."""
    for row in done.values():
        theirs = row.get("judge")
        if not isinstance(theirs, dict) or theirs.get("key") != ident["key"]:
            who = (
                f"{theirs.get('name')} {theirs.get('version')}"
                if isinstance(theirs, dict)
                else "an earlier version of ground"
            )
            if isinstance(theirs, dict) and theirs.get("name") == ident["name"]:
                who += " with other settings or --thresholds"
            raise InvalidInputError(
                f"{output} holds outcomes of {who}, not of {ident['name']} {ident['version']}; "
                "pass --fresh to replace them or --output to write elsewhere",
                field="output",
            )


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: resolved with symlinks followed, or (both existing)
    the same inode, which also catches hard links."""
    try:
        if a.resolve() == b.resolve():
            return True
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except (OSError, RuntimeError):  # a symlink loop
        return False


def _refuse_to_overwrite(outputs: dict[str, Path | None], inputs: dict[str, Path | None]) -> None:
    """Refuse an output path that is one of the inputs, or another output: ground never
    destroys what it reads (``--report a.jsonl`` would replace the records with HTML)."""
    named = [(name, path) for name, path in outputs.items() if path is not None]
    sources = [(name, path) for name, path in inputs.items() if path is not None]
    for i, (name, path) in enumerate(named):
        for other, source in sources + named[:i]:
            if _same_file(path, source):
                raise InvalidInputError(
                    f"{name} {path} is the same file as {other} {source}; writing it would "
                    "destroy it: choose another path",
                    field=name.lstrip("-"),
                )


def _check_writable(path: Path, option: str) -> None:
    """Fail now, in one line, if ``path`` cannot be written: not after a long run. Opening for
    append changes nothing in an existing file; a file created by the test is removed."""
    if path.is_dir():
        raise InvalidInputError(f"{path}: is a directory, expected a file", field=option)
    existed = path.exists()
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise InvalidInputError(
            f"{option} {path}: cannot write there ({exc.strerror}); choose another path",
            field=option.lstrip("-"),
        ) from None
    if not existed:
        path.unlink(missing_ok=True)


@contextlib.contextmanager
def _holding(output: Path) -> Iterator[None]:
    """Hold ``OUTPUT.lock`` while this run writes ``output``: two runs appending to one
    outcomes file would each redo and write every record."""
    from filelock import FileLock, Timeout

    lock = FileLock(f"{output}.lock", timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise InvalidInputError(
            f"{output} is being written by another `ground eval` (it holds {output}.lock); "
            "wait for that run to finish, or pass --output to write elsewhere",
            field="output",
        ) from None
    try:
        yield
    finally:
        lock.release()


def _eval(args: argparse.Namespace) -> int:
    output = args.output or args.path.with_suffix(".results.jsonl")
    _refuse_to_overwrite(
        {"--output": output, "--report": args.report},
        {"the input": args.path, "--thresholds": args.thresholds},
    )
    _check_writable(output, "--output")
    if args.report is not None:
        _check_writable(args.report, "--report")
    with _holding(output):
        return _evaluate(args)


def _evaluate(args: argparse.Namespace) -> int:
    from .evaluation import (
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
        from .batch._dataset import _ray

        _ray()  # MissingDependencyError now, not after reading the file
    records, skipped = load_records(args.path)
    if not records:
        shown = "; ".join(str(s) for s in skipped[:3])
        raise InvalidInputError(
            f"{args.path}: no record to evaluate" + (f" ({shown})" if shown else ""), field="path"
        )
    if args.limit is not None:
        records = records[: args.limit]
    records = _unique(records)
    output = args.output or args.path.with_suffix(".results.jsonl")
    if output.is_dir():
        raise InvalidInputError(f"{output}: is a directory, expected a file", field="output")
    checker = _make_checker(args, cache_size=0)
    if args.report is not None:
        _report_ready()  # fail before the long run, not after it
    ident = judge_identity(
        checker.judge, checker.thresholds if args.thresholds is not None else None
    )
    if args.fresh and output.exists():
        output.unlink()
    done = _load_done(output)
    _refuse_other_judge(done, ident, output)
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
                fh.write("".join(_row_line(row) for row in shard))
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
        for line in failed[:_NAMED_FAILURES]:
            print(f"  {line}")
        if len(failed) > _NAMED_FAILURES:
            print(f"  ... and {len(failed) - _NAMED_FAILURES} more")
    if args.report is not None and rows:
        _write_report(args, checker, rows, records)
    if args.baseline:
        from .judges.lexical import LexicalBaselineJudge

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
    from .batch import JudgeSpec
    from .batch._dataset import eval_outcomes

    options: dict[str, Any] = {}
    if args.thresholds is not None:
        options["thresholds"] = checker.thresholds
    spec = JudgeSpec(args.judge, json.loads(args.judge_config), options)
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
        from .errors import MissingDependencyError

        raise MissingDependencyError("matplotlib", "report") from exc


def _write_report(
    args: argparse.Namespace,
    checker: GroundednessChecker,
    rows: list[dict[str, Any]],
    records: list[dict[str, Any]],
) -> None:
    from .calibration import CalibratedThresholds
    from .judges.base import Thresholds
    from .report import ReportInput, write_report

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


def _judge_of(row: dict[str, Any]) -> str | None:
    """``name version`` of the judge an outcome row names (``ground eval`` stamps it)."""
    stamp = row.get("judge")
    if isinstance(stamp, dict):
        return f"{stamp.get('name')} {stamp.get('version')}"
    return stamp if isinstance(stamp, str) else None


def _calibrate(args: argparse.Namespace) -> int:
    from .calibration import calibrate, require_examples
    from .evaluation import load_records, outcome_row, read_jsonl

    _refuse_to_overwrite({"--output": args.output}, {"the input": args.path})
    _check_writable(args.output, "--output")
    raw = list(read_jsonl(args.path))
    rows: list[dict[str, Any]]
    if raw and all("score" in r and "answer" not in r for r in raw):
        judge = _make_judge(args)
        mine = f"{judge.info.name} {judge.info.version}"
        rows = _unique(raw)  # outcomes of `ground eval`: already scored
        used = {j for j in map(_judge_of, rows) if j is not None}
        if used and used != {mine}:
            raise InvalidInputError(
                f"{args.path} holds outcomes of {', '.join(sorted(used))}, not of "
                f"{mine}; pass the same --judge the outcomes were made with",
                field="judge",
            )
    else:
        from tqdm import tqdm

        records, skipped = load_records(args.path)
        for s in skipped[:_NAMED_FAILURES]:
            print(f"ground: skipped {s}", file=sys.stderr)
        records = _unique(records)
        # count the labels before loading the judge and scoring anything
        require_examples(
            records,
            max_pass_rate=args.max_pass_rate,
            confidence=args.confidence,
            per_group=not args.pooled,
        )
        judge = _make_judge(args)
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


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    commands = {"check": _check, "eval": _eval, "calibrate": _calibrate, "serve": _serve}
    try:
        return commands[args.command](args)
    except InvalidInputError as exc:
        print(f"ground: invalid input: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except JudgeError as exc:
        print(f"ground: judge failed: {exc}", file=sys.stderr)
        return EXIT_JUDGE
    except GroundednessError as exc:
        print(f"ground: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\nground: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as exc:  # a file the checks above could not foresee: one line, no traceback
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"ground: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
