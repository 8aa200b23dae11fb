"""The ``ground`` command: its options, the entry point that turns every error into one line
and an exit code, and the ``check`` and ``serve`` commands (``eval`` and ``calibrate`` are
:mod:`ground_integrations._cli.evaluate`'s).

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
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._cli.common import (
    EXIT_INTERRUPTED,
    EXIT_JUDGE,
    EXIT_NOT_GROUNDED,
    EXIT_NOT_SURE,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
    judge_settings,
    make_checker,
)
from ._cli.evaluate import calibrate_command, eval_command
from .checker import AZURE_LIMITS, DEFAULT_LIMITS
from .errors import GroundednessError, InvalidInputError, JudgeError
from .models import GroundednessResult, Verdict

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_JUDGE",
    "EXIT_NOT_GROUNDED",
    "EXIT_NOT_SURE",
    "EXIT_OK",
    "EXIT_PARTIAL",
    "EXIT_USAGE",
    "main",
]


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
    from .server.settings import load_settings

    settings = load_settings(
        config_file=args.config,
        api_keys_file=args.api_keys_file,
        host=args.host,
        port=args.port,
        workers=args.workers,
        judge=args.judge,
        judge_config=args.judge_config,
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
    checker = make_checker(args, limits=AZURE_LIMITS if args.azure_limits else DEFAULT_LIMITS)
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


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    commands = {
        "check": _check,
        "eval": eval_command,
        "calibrate": calibrate_command,
        "serve": _serve,
    }
    try:
        args.judge_config = judge_settings(args.judge_config)  # read once, for every command
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
