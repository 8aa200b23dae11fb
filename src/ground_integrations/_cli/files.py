"""The files ``ground eval`` and ``ground calibrate`` read and write.

An output that is one of the command's inputs (symlinks followed, hard links too) is refused,
as is one that cannot be written, before any work. While ``ground eval`` writes an outcomes
file it holds ``OUTPUT.lock``. Outcomes already written are read back for resuming: only lines
in the shape ground writes count, a line cut short by an interruption is dropped (the file is
rewritten atomically), and outcomes of another judge are refused rather than mixed.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError

__all__ = [
    "check_writable",
    "holding",
    "judge_of",
    "load_done",
    "refuse_other_judge",
    "refuse_to_overwrite",
    "row_line",
    "same_file",
    "unique_records",
]


def row_line(row: dict[str, Any]) -> str:
    # ASCII JSON: an id or text with a lone surrogate is escaped ("\\ud800"), never unwritable.
    return json.dumps(row, ensure_ascii=True) + "\n"


def load_done(output: Path) -> dict[str, dict[str, Any]]:
    """Outcomes already written. A line cut short by an interruption is dropped: the kept lines
    go to a temporary file that then replaces the results atomically, so a kill at any moment
    leaves either the old file or the new one, never an empty or half-written one."""
    done: dict[str, dict[str, Any]] = {}
    if not output.exists():
        return done
    from ..evaluation import outcome_problem

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
                fh.writelines(row_line(r) for r in done.values())
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, output)
        finally:
            tmp.unlink(missing_ok=True)
    return done


def unique_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
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


def refuse_other_judge(
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


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: resolved with symlinks followed, or (both existing)
    the same inode, which also catches hard links."""
    try:
        if a.resolve() == b.resolve():
            return True
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except (OSError, RuntimeError):  # a symlink loop
        return False


def refuse_to_overwrite(outputs: dict[str, Path | None], inputs: dict[str, Path | None]) -> None:
    """Refuse an output path that is one of the inputs, or another output: ground never
    destroys what it reads (``--report a.jsonl`` would replace the records with HTML)."""
    named = [(name, path) for name, path in outputs.items() if path is not None]
    sources = [(name, path) for name, path in inputs.items() if path is not None]
    for i, (name, path) in enumerate(named):
        for other, source in sources + named[:i]:
            if same_file(path, source):
                raise InvalidInputError(
                    f"{name} {path} is the same file as {other} {source}; writing it would "
                    "destroy it: choose another path",
                    field=name.lstrip("-"),
                )


def check_writable(path: Path, option: str) -> None:
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
def holding(output: Path) -> Iterator[None]:
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


def judge_of(row: dict[str, Any]) -> str | None:
    """``name version`` of the judge an outcome row names (``ground eval`` stamps it)."""
    stamp = row.get("judge")
    if isinstance(stamp, dict):
        return f"{stamp.get('name')} {stamp.get('version')}"
    return stamp if isinstance(stamp, str) else None
