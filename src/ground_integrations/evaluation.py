"""Evaluation on labelled JSONL (the format ``ground eval`` reads), shared by the CLI and the
benchmarks.

A record: ``{"id", "dataset", "task", "query", "context": [...], "answer", "label", "spans"}``
with ``label`` ``grounded`` or ``notGrounded`` (in any case) and ``spans`` character ranges of
the answer (``[{"start": 0, "end": 5}]``, within the answer). A line that breaks these rules is
skipped with its number and the reason, never a crash halfway through a run.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .display import format_table  # the `ground eval` table, str() of a MetricsTable
from .errors import GroundednessError, InvalidInputError

if TYPE_CHECKING:  # pragma: no cover
    from .checker import GroundednessChecker
    from .models import GroundednessResult

__all__ = [
    "LABELS",
    "Metrics",
    "Skipped",
    "canonical_label",
    "compute_metrics",
    "evaluate_record",
    "format_table",
    "grouped_metrics",
    "input_key",
    "judge_identity",
    "load_records",
    "outcome_problem",
    "outcome_row",
    "percentile",
    "read_jsonl",
    "record_outcome",
    "tune_cut",
]


#: Characters of evidence kept per sentence in an outcome row (enough to read, small on disk).
_EVIDENCE_CHARS = 400


#: The labels an evaluation record may carry.
LABELS = frozenset({"grounded", "notGrounded"})


def canonical_label(value: Any) -> str | None:
    """``grounded`` or ``notGrounded`` for a label in any case ("NotGrounded", " grounded"),
    as tasks are matched; None for anything else."""
    if not isinstance(value, str):
        return None
    folded = value.strip().casefold()
    return next((label for label in sorted(LABELS) if label.casefold() == folded), None)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value: Any) -> str:
    """A value of a bad line, short enough for a one-line message."""
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 40 else text[:37] + "..."


def _gold_spans_problem(spans: Any, length: int) -> str | None:
    """Why a record's ``spans`` are not ``[{"start": int, "end": int}, ...]`` ranges of its
    answer (None when they are; a missing or null ``spans`` is no span)."""
    if spans is None:
        return None
    if not isinstance(spans, list):
        return f'spans must be a list of {{"start": int, "end": int}}, got {_shown(spans)}'
    for i, span in enumerate(spans):
        if not isinstance(span, dict) or not (
            _whole(span.get("start")) and _whole(span.get("end"))
        ):
            return f'spans[{i}] must be {{"start": int, "end": int}}, got {_shown(span)}'
        if not 0 <= span["start"] <= span["end"] <= length:
            return (
                f"spans[{i}] [{span['start']}, {span['end']}] is not a range of the answer "
                f"(0 <= start <= end <= {length}, its length)"
            )
    return None


@dataclass(frozen=True)
class Skipped:
    """A line of an evaluation file that could not be evaluated, and why."""

    line: int
    reason: str
    id: str | None = None

    def __str__(self) -> str:
        named = f" (id {self.id!r})" if self.id is not None else ""
        return f"line {self.line}{named}: {self.reason}"


def _open_for_reading(path: Path) -> None:
    if not path.exists():
        raise InvalidInputError(f"{path}: no such file", field="path")
    if path.is_dir():
        raise InvalidInputError(f"{path}: is a directory, expected a JSONL file", field="path")


def _problem(record: Any) -> str | None:
    """Why a parsed line is not an evaluation record (None when it is one)."""
    if not isinstance(record, dict):
        return "expected a JSON object"
    context = record.get("context")
    if isinstance(context, str):
        context = [context]
    if not isinstance(context, list) or not context:
        return "no context (a list of passages)"
    if not all(isinstance(c, str) for c in context):
        return "context must hold strings"
    if not isinstance(record.get("answer"), str):
        return "no answer (a string)"
    if "label" not in record:
        return "no label (grounded or notGrounded)"
    if canonical_label(record["label"]) is None:
        return f"unknown label {_shown(record['label'])} (expected grounded or notGrounded)"
    for key in ("dataset", "task", "subtask", "domain", "query"):
        if record.get(key) is not None and not isinstance(record[key], str):
            return f"{key} must be a string, got {_shown(record[key])}"
    if isinstance(record.get("id"), dict | list):
        return f"id must be a string or a number, got {_shown(record['id'])}"
    return _gold_spans_problem(record.get("spans"), len(record["answer"]))


def load_records(path: str | Path) -> tuple[list[dict[str, Any]], list[Skipped]]:
    """The evaluation records of a JSONL file, and the lines that are not records.

    A missing file or a directory raises :class:`InvalidInputError` (one line); a line that is
    not UTF-8, not JSON, or not a record (no context, no answer, no or an unknown label) is
    returned as :class:`Skipped` with its number, so one bad line does not stop a long run.
    """
    path = Path(path)
    _open_for_reading(path)
    records: list[dict[str, Any]] = []
    skipped: list[Skipped] = []
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            try:
                # utf-8-sig on the first line: a byte-order mark is not part of the record
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                skipped.append(Skipped(number, f"not UTF-8 (byte {exc.start})"))
                continue
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                skipped.append(Skipped(number, f"not valid JSON ({exc.msg})"))
                continue
            except RecursionError:
                skipped.append(Skipped(number, "JSON nested too deeply"))
                continue
            problem = _problem(record)
            if problem is not None:
                rid = record.get("id") if isinstance(record, dict) else None
                named = None if rid is None else rid if isinstance(rid, str) else _shown(rid)
                skipped.append(Skipped(number, problem, named))
                continue
            if isinstance(record["context"], str):
                record["context"] = [record["context"]]
            record["label"] = canonical_label(record["label"])
            record.setdefault("id", f"line-{number}")
            records.append(record)
    return records, skipped


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def input_key(record: dict[str, Any]) -> str:
    """A digest of what a record asks the judge (context, answer, query, task, domain): a
    resumed evaluation redoes a record whose content changed since its outcome was written."""
    return _digest(
        [
            record.get("context"),
            record.get("answer"),
            record.get("query"),
            record.get("task", "Summarization"),
            record.get("domain", "Generic"),
        ]
    )


def judge_identity(judge: Any, thresholds: Any = None) -> dict[str, Any]:
    """The judge's name, version and settings, and a digest of them (``key``): outcomes of two
    judges, or of one judge with other settings, are never mixed in one results file.

    ``thresholds``: cut points chosen for this run (``--thresholds``), a pydantic model; they
    decide verdicts, so outcomes under other cuts are not reused either. None (the judge's own
    cuts) leaves the key as it was."""
    config = judge.config() if callable(getattr(judge, "config", None)) else {}
    ident: dict[str, Any] = {"name": judge.name, "version": str(judge.version), "config": config}
    if thresholds is not None:
        ident["thresholds"] = thresholds.model_dump(mode="json")
    return {**ident, "key": _digest(ident)}


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """Records of a JSONL file; a line that is not a JSON object raises with its number."""
    _open_for_reading(Path(path))
    with open(path, encoding="utf-8-sig") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInputError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
            except RecursionError:
                raise InvalidInputError(f"{path}:{number}: JSON nested too deeply") from None
            if not isinstance(record, dict):
                raise InvalidInputError(f"{path}:{number}: expected a JSON object per line")
            yield record


def record_outcome(
    record: dict[str, Any], result: Any = None, error: Exception | None = None
) -> dict[str, Any]:
    """One line of the per-record output file."""
    out: dict[str, Any] = {
        "id": record.get("id"),
        "dataset": record.get("dataset") or "all",
        "task": record.get("task", "Summarization"),
        "subtask": record.get("subtask"),
        "domain": record.get("domain"),
        "label": record.get("label"),
        "gold_spans": record.get("spans", []),
    }
    if error is not None:
        out.update(verdict=None, score=None, error=f"{type(error).__name__}: {error}")
        return out
    out.update(
        verdict=result.verdict.value,
        score=result.score,
        spans=[
            {
                "start": d.offset.code_point,
                "end": d.offset.code_point + d.length.code_point,
                **({"reason": d.reason} if d.reason else {}),
                "kind": d.kind.value,
            }
            for d in result.ungrounded_details
        ],
        latency_ms=result.latency_ms,
        # What the report shows beside a mistake: each sentence's score, reason and best evidence.
        sentences=[
            {
                "start": s.start,
                "end": s.end,
                "score": round(s.score, 4),
                "verdict": s.verdict.value,
                "reason": s.reason,
                "evidence": [e.text[:_EVIDENCE_CHARS] for e in s.evidence[:1]],
            }
            for s in result.sentences
        ],
    )
    return out


_VERDICTS = frozenset({"grounded", "notGrounded", "notSure"})
_KINDS = frozenset({"contradicted", "unsupported"})


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_unit(value: Any) -> bool:
    """A number in [0, 1] (not a bool, not NaN)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 0.0 <= value <= 1.0


def _span_problem(span: Any, what: str) -> str | None:
    if not isinstance(span, dict):
        return f"{what} is not an object"
    start, end = span.get("start", -1), span.get("end", -1)
    if not (_is_int(start) and _is_int(end)) or not 0 <= start <= end:
        return f"{what} has no int start <= end"
    return None


def outcome_problem(row: Any) -> str | None:
    """Why a line read back from a results file is not an outcome row as
    :func:`record_outcome` writes it (None when it is one).

    A resumed ``ground eval`` trusts the outcomes it finds, and the report shows them: a
    verdict must be one of the three (or None for a failed check, with its ``error``), a
    score a number in [0, 1], spans and sentences objects with int offsets, texts strings.
    """
    if not isinstance(row, dict):
        return "not a JSON object"
    if not isinstance(row.get("id"), str | int) or isinstance(row.get("id"), bool):
        return "no id"
    verdict = row.get("verdict")
    if verdict is None:
        return None if isinstance(row.get("error"), str) else "no verdict and no error"
    if verdict not in _VERDICTS:
        return f"unknown verdict {str(verdict)[:40]!r}"
    if not _is_unit(row.get("score")):
        return "score is not a number in [0, 1]"
    if row.get("label") is not None and row.get("label") not in LABELS:
        return "unknown label"
    for key in ("dataset", "task", "subtask", "domain"):
        if row.get(key) is not None and not isinstance(row.get(key), str):
            return f"{key} is not a string"
    latency = row.get("latency_ms")
    if latency is not None and (
        not isinstance(latency, int | float) or isinstance(latency, bool) or not latency >= 0
    ):
        return "latency_ms is not a number >= 0"
    if not isinstance(row.get("gold_spans", []), list):
        return "gold_spans is not a list"
    spans = row.get("spans", [])
    if not isinstance(spans, list):
        return "spans is not a list"
    for span in spans:
        problem = _span_problem(span, "a span")
        if problem is None and span.get("kind", "unsupported") not in _KINDS:
            problem = "a span has an unknown kind"
        if problem is None and not isinstance(span.get("reason", ""), str):
            problem = "a span's reason is not a string"
        if problem:
            return problem
    sentences = row.get("sentences", [])
    if not isinstance(sentences, list):
        return "sentences is not a list"
    for s in sentences:
        problem = _span_problem(s, "a sentence")
        if problem:
            return problem
        if s.get("verdict") not in _VERDICTS:
            return f"a sentence has an unknown verdict {str(s.get('verdict'))[:40]!r}"
        if not _is_unit(s.get("score")):
            return "a sentence's score is not a number in [0, 1]"
        if not isinstance(s.get("reason", ""), str):
            return "a sentence's reason is not a string"
        evidence = s.get("evidence", [])
        if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
            return "a sentence's evidence is not a list of strings"
    return None


def evaluate_record(checker: GroundednessChecker, record: dict[str, Any]) -> GroundednessResult:
    """Check one evaluation record (``task`` defaults to Summarization, ``domain`` to Generic).

    Every engine of ``ground eval`` (local, Ray) and :func:`ground_integrations.batch.check_dataset`
    check a record through this function, so they agree record for record.
    """
    return checker.check(
        record["context"],
        record["answer"],
        record.get("query"),
        task=record.get("task", "Summarization"),
        domain=record.get("domain") or "Generic",
    )


def outcome_row(
    checker: GroundednessChecker,
    record: dict[str, Any],
    *,
    catch: type[Exception] | tuple[type[Exception], ...] = GroundednessError,
) -> dict[str, Any]:
    """The outcome row of one record: its result, or the error (of a ``catch`` type) it raised."""
    try:
        return record_outcome(record, evaluate_record(checker, record))
    except catch as exc:
        return record_outcome(record, error=exc)


@dataclass
class Metrics:
    n: int = 0
    errors: int = 0
    balanced_accuracy: float = math.nan
    f1_not_grounded: float = math.nan
    span_f1: float | None = None
    not_sure_rate: float = math.nan
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile of ``values`` (0 <= q <= 1), interpolated linearly between the two
    nearest ranks; None for no values. The latency columns of metrics and report use it."""
    if not values:
        return None
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


_percentile = percentile  # the name before it was public


def _merged(spans: Iterable[Any]) -> list[tuple[int, int]]:
    """The character ranges of ``spans`` sorted and merged, so that span F1 costs the number of
    spans, never their length (a span ending at 10,000,000 is two numbers, not a set of
    characters). What is not a ``{"start": int, "end": int}`` range is no range."""
    ranges = sorted(
        (s["start"], s["end"])
        for s in spans
        if isinstance(s, dict) and _whole(s.get("start")) and _whole(s.get("end"))
    )
    out: list[tuple[int, int]] = []
    for start, end in ranges:
        if end <= start:
            continue
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _size(ranges: list[tuple[int, int]]) -> int:
    return sum(end - start for start, end in ranges)


def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """Characters in both merged range lists (one pass over each)."""
    total = i = j = 0
    while i < len(a) and j < len(b):
        total += max(0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def compute_metrics(
    rows: Sequence[dict[str, Any]], *, not_sure_as: str = "notGrounded", with_spans: bool = False
) -> Metrics:
    """Balanced accuracy, F1 on notGrounded, span F1, notSure rate and latency of outcome rows."""
    m = Metrics(n=len(rows))
    ok = [r for r in rows if r.get("verdict") is not None]
    m.errors = len(rows) - len(ok)
    if not ok:
        return m

    def flagged(r: dict[str, Any]) -> bool:
        v = r["verdict"]
        return v == "notGrounded" or (v == "notSure" and not_sure_as == "notGrounded")

    pos = [r for r in ok if r["label"] == "notGrounded"]
    neg = [r for r in ok if r["label"] == "grounded"]
    tp = sum(flagged(r) for r in pos)
    fp = sum(flagged(r) for r in neg)
    fn = len(pos) - tp
    recalls = []
    if pos:
        recalls.append(tp / len(pos))
    if neg:
        recalls.append((len(neg) - fp) / len(neg))
    m.balanced_accuracy = sum(recalls) / len(recalls)
    m.f1_not_grounded = 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) else math.nan
    m.not_sure_rate = sum(r["verdict"] == "notSure" for r in ok) / len(ok)
    latencies = [r["latency_ms"] for r in ok if r.get("latency_ms") is not None]
    m.latency_p50_ms = percentile(latencies, 0.5)
    m.latency_p95_ms = percentile(latencies, 0.95)
    if with_spans:
        tp_c = fp_c = fn_c = 0
        for r in ok:
            gold = _merged(r.get("gold_spans") or [])
            pred = _merged(r.get("spans") or []) if flagged(r) else []
            both = _overlap(gold, pred)
            tp_c += both
            fp_c += _size(pred) - both
            fn_c += _size(gold) - both
        m.span_f1 = 2 * tp_c / (2 * tp_c + fp_c + fn_c) if (2 * tp_c + fp_c + fn_c) else None
    return m


def grouped_metrics(
    rows: Sequence[dict[str, Any]], *, not_sure_as: str = "notGrounded"
) -> dict[str, Metrics]:
    """Metrics per ``dataset:task`` (``dataset:task:subtask`` where records name a subtask: the
    label mix differs by subtask, so they are never pooled), then ``all``. Span F1 where the
    dataset annotates spans."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        sub = f":{r['subtask']}" if r.get("subtask") else ""
        groups[f"{r['dataset']}:{r['task']}{sub}"].append(r)
    span_datasets = {r["dataset"] for r in rows if r.get("gold_spans")}
    out = {
        key: compute_metrics(
            group, not_sure_as=not_sure_as, with_spans=key.split(":")[0] in span_datasets
        )
        for key, group in sorted(groups.items())
    }
    span_rows = [r for r in rows if r["dataset"] in span_datasets]
    overall = compute_metrics(rows, not_sure_as=not_sure_as)
    if span_rows:
        overall.span_f1 = compute_metrics(
            span_rows, not_sure_as=not_sure_as, with_spans=True
        ).span_f1
    out["all"] = overall
    return out


def tune_cut(scores: Sequence[float], labels: Sequence[str]) -> float:
    """The cut on ``score`` (flag when ``score < cut``) that maximises balanced accuracy."""
    pairs = sorted(zip(scores, labels))
    n_pos = sum(label == "notGrounded" for label in labels)
    n_neg = len(labels) - n_pos
    if not n_pos or not n_neg:
        return 0.5
    best_cut, best = pairs[0][0], -1.0
    tp = fp = 0
    # Flag everything strictly below candidate cut values, scanning upwards.
    for i, (score, label) in enumerate(pairs):
        if label == "notGrounded":
            tp += 1
        else:
            fp += 1
        nxt = pairs[i + 1][0] if i + 1 < len(pairs) else 1.0 + 1e-9
        if nxt == score:
            continue
        ba = 0.5 * (tp / n_pos + (n_neg - fp) / n_neg)
        if ba > best:
            best, best_cut = ba, nxt
    return best_cut
