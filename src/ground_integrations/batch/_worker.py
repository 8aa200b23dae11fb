"""What runs inside a Ray actor: one checker, built once, applied to batches of rows.

Nothing here imports Ray; the classes are plain callables that Ray Data instantiates once per
actor (``map_batches`` with a class). pyarrow comes with ``ray[data]`` and is imported lazily.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..checker import GroundednessChecker
from ..errors import ConfigurationError
from ..evaluation import evaluate_record
from ..judges.base import Judge
from ..models import GroundednessResult

#: The columns :func:`check_dataset` adds, in order.
RESULT_COLUMNS = (
    "verdict",
    "score",
    "confidence",
    "ungrounded_spans",
    "judge_name",
    "judge_version",
    "error",
)


@dataclass(frozen=True)
class JudgeSpec:
    """How an actor builds its checker: picklable, so it travels to every worker.

    ``judge`` is a judge name (as ``ground --judge`` takes it, with ``config`` its settings),
    a zero-argument callable returning a :class:`Judge`, or None for the default judge.
    ``checker_options`` go to :class:`GroundednessChecker` (``thresholds``, ``limits``...).
    ``threads``: the bundled model's onnxruntime threads, for the default judge and a
    ``cross-encoder`` judge whose config does not say (an actor reserving one CPU should not
    start a thread per core of its node).
    """

    judge: str | Callable[[], Judge] | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    checker_options: Mapping[str, Any] = field(default_factory=dict)
    threads: int | None = None

    def build_judge(self) -> Judge:
        from ..judges import default_judge, load_judge

        if self.judge is None:
            if self.config:
                raise ConfigurationError("judge_config needs a judge name")
            return default_judge(threads=self.threads)
        if isinstance(self.judge, str):
            config = dict(self.config)
            if self.threads and self.judge.strip().lower() == "cross-encoder":
                config.setdefault("threads", self.threads)
            return load_judge(self.judge, **config)
        if self.config:
            raise ConfigurationError("judge_config is only for a judge given by name")
        if not callable(self.judge):
            raise ConfigurationError(
                "judge must be a judge name, a zero-argument callable returning a Judge, or "
                f"None, not {type(self.judge).__name__}"
            )
        made = self.judge()
        if not isinstance(made, Judge):
            raise ConfigurationError(
                f"the judge factory returned a {type(made).__name__}, not a ground_integrations "
                "Judge"
            )
        return made

    def build_checker(self) -> GroundednessChecker:
        options = {"cache_size": 0, **dict(self.checker_options)}
        return GroundednessChecker(self.build_judge(), **options)


def _arrow_schema() -> Any:
    import pyarrow as pa

    span = pa.struct(
        [
            ("text", pa.string()),
            ("start", pa.int64()),
            ("end", pa.int64()),
            ("reason", pa.string()),
            ("kind", pa.string()),
        ]
    )
    return pa.schema(
        [
            ("verdict", pa.string()),
            ("score", pa.float64()),
            ("confidence", pa.float64()),
            ("ungrounded_spans", pa.list_(span)),
            ("judge_name", pa.string()),
            ("judge_version", pa.string()),
            ("error", pa.string()),
        ]
    )


def _context(value: Any) -> Any:
    """A context cell as the checker takes it: a list of passages or one string."""
    if value is None or isinstance(value, str):
        return value
    if hasattr(value, "tolist"):  # a numpy array from a pandas batch
        value = value.tolist()
    return list(value) if isinstance(value, (list, tuple)) else value


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and value != value)


def result_row(
    result: GroundednessResult | None, error: BaseException | None, judge: Judge
) -> dict[str, Any]:
    """The result columns of one record (``error`` as ``"ErrorType: message"``)."""
    if result is None:
        return {
            "verdict": None,
            "score": None,
            "confidence": None,
            "ungrounded_spans": None,
            "judge_name": judge.info.name,
            "judge_version": judge.info.version,
            "error": f"{type(error).__name__}: {error}",
        }
    return {
        "verdict": result.verdict.value,
        "score": result.score,
        "confidence": result.confidence,
        "ungrounded_spans": [
            {
                "text": d.text,
                "start": d.offset.code_point,
                "end": d.offset.code_point + d.length.code_point,
                "reason": d.reason,
                "kind": d.kind.value,
            }
            for d in result.ungrounded_details
        ],
        "judge_name": result.judge.name,
        "judge_version": result.judge.version,
        "error": None,
    }


class CheckColumns:
    """``map_batches`` callable for :func:`check_dataset`: adds the result columns."""

    def __init__(
        self,
        spec: JudgeSpec,
        columns: Mapping[str, str],
        task: str,
        domain: str,
    ) -> None:
        self.checker = spec.build_checker()
        self.columns = dict(columns)
        self.task = task
        self.domain = domain

    def _record(self, row: Mapping[str, Any]) -> dict[str, Any]:
        c = self.columns
        record: dict[str, Any] = {
            "context": _context(row.get(c["context"])),
            "answer": row.get(c["answer"]),
            "query": row.get(c["query"]) if _present(row.get(c["query"])) else None,
        }
        for name, default in (("task", self.task), ("domain", self.domain)):
            value = row.get(c[name])
            record[name] = value if _present(value) else default
        return record

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        arrow = isinstance(batch, pa.Table)  # else a pandas DataFrame
        rows = []
        for row in batch.to_pylist() if arrow else batch.to_dict("records"):
            result: GroundednessResult | None = None
            error: BaseException | None = None
            try:
                result = evaluate_record(self.checker, self._record(row))
            except Exception as exc:  # a judge's bug is an error row too, never a failed job
                error = exc
            rows.append(result_row(result, error, self.checker.judge))
        added = pa.Table.from_pylist(rows, schema=_arrow_schema())
        if not arrow:
            out = batch.copy()
            for name in RESULT_COLUMNS:
                out[name] = added.column(name).to_pylist()
            return out
        for name in RESULT_COLUMNS:
            batch = batch.append_column(added.schema.field(name), added.column(name))
        return batch


class CheckOutcomes:
    """``map_batches`` callable for ``ground eval --engine ray``: each row holds one record as
    JSON (``record``) and gets back the outcome row the local engine writes (``outcome``), made
    by the same function (:func:`~ground_integrations.evaluation.outcome_row`)."""

    def __init__(self, spec: JudgeSpec) -> None:
        self.checker = spec.build_checker()

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        from ..evaluation import outcome_row

        out = []
        for line in batch.column("record").to_pylist():
            record = json.loads(line)
            row = outcome_row(self.checker, record, catch=Exception)
            out.append(json.dumps(row, ensure_ascii=True))
        return pa.table({"outcome": pa.array(out, pa.string())})
