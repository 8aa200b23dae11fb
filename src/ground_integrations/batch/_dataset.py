"""check_dataset and the Ray engine of ``ground eval``: Ray Data plumbing around _worker."""

from __future__ import annotations

import dataclasses
import json
import logging
import math
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, InvalidInputError, MissingDependencyError
from ..models import Domain, Task
from ._worker import RESULT_COLUMNS, CheckColumns, CheckOutcomes, JudgeSpec

if TYPE_CHECKING:  # pragma: no cover
    from ..judges.base import Judge

#: The inputs check_dataset reads, and whether a dataset must have them.
_ROLES = {"context": True, "answer": True, "query": False, "task": False, "domain": False}


def require_ray() -> Any:
    """The ray module, or MissingDependencyError naming the extra (``ground eval --engine
    ray`` asks before it reads anything)."""
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise MissingDependencyError("ray", "ray") from exc
    return ray


def _quiet(ray: Any) -> None:
    """No Ray Data progress bars or notices: ``ground eval`` shows its own progress."""
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    if hasattr(ctx, "print_on_execution_start"):
        ctx.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.ERROR)


def _columns(mapping: Mapping[str, str] | None) -> dict[str, str]:
    columns = {role: role for role in _ROLES}
    for role, name in (mapping or {}).items():
        if role not in _ROLES:
            raise ConfigurationError(
                f"columns: unknown input {role!r}; the inputs are {', '.join(_ROLES)}"
            )
        if not isinstance(name, str):
            raise ConfigurationError(f"columns[{role!r}] must be a column name (a string)")
        columns[role] = name
    return columns


def _check_schema(names: Sequence[str], columns: Mapping[str, str]) -> None:
    have = ", ".join(names) or "none"
    for role, required in _ROLES.items():
        if required and columns[role] not in names:
            hint = "" if columns[role] != role else f"; name yours with columns={{'{role}': ...}}"
            raise InvalidInputError(
                f"the dataset has no column {columns[role]!r} (the {role}); its columns: "
                f"{have}{hint}",
                field=columns[role],
            )
    clash = [name for name in RESULT_COLUMNS if name in names]
    if clash:
        raise InvalidInputError(
            f"the dataset already has column(s) {', '.join(map(repr, clash))}, which the check "
            "adds; rename them first (Dataset.rename_columns)",
            field=clash[0],
        )


def check_dataset(
    ds: Any,
    *,
    judge: str | Callable[[], Judge] | None = None,
    judge_config: Mapping[str, Any] | None = None,
    task: Task | str = Task.SUMMARIZATION,
    domain: Domain | str = Domain.GENERIC,
    columns: Mapping[str, str] | None = None,
    checker_options: Mapping[str, Any] | None = None,
    concurrency: int = 1,
    batch_size: int = 64,
    num_cpus: float = 1.0,
    memory: float | None = None,
    ray_remote_args: Mapping[str, Any] | None = None,
) -> Any:
    """A Ray Dataset with the result columns of a groundedness check added to ``ds``.

    Args:
        ds: a ``ray.data.Dataset`` with a context column (a list of passages or one string),
            an answer column and, optionally, query, task and domain columns.
        judge: a judge name (``judge_config`` its settings, as ``ground --judge-config``), a
            zero-argument callable returning a Judge (it must pickle), or None for the
            default judge. The judge is built once on the driver first (a wrong name fails at
            once), then once per actor.
        task, domain: used where a row has no task / domain column or a null in it.
        columns: your column names by input, e.g. ``{"context": "passages", "answer": "reply"}``.
        checker_options: more :class:`GroundednessChecker` arguments (``thresholds``,
            ``limits``...); the result cache is off unless you set ``cache_size``.
        concurrency: actors, each with its own checker (``ActorPoolStrategy(size=...)``).
        batch_size: rows per call of an actor.
        num_cpus, memory: what each actor reserves (``memory`` in bytes: set it to the judge's
            model size and more on a cluster, so Ray does not pack too many on a node). The
            bundled model runs ``max(1, int(num_cpus))`` threads per actor.
        ray_remote_args: more actor options for ``map_batches`` (``runtime_env``, ``resources``).

    Returns:
        The lazy Dataset (nothing runs until you write or iterate it): every input column
        unchanged, then ``verdict``, ``score``, ``confidence``, ``ungrounded_spans``,
        ``judge_name``, ``judge_version``, ``error``. A record the judge cannot check
        gets ``error`` ("ErrorType: message") and nulls in the result columns; the job goes on.
        Rows come in the order Ray Data finishes them, unless its ``preserve_order`` is set.

    Raises:
        MissingDependencyError: ray is not installed (extra ``[ray]``).
        InvalidInputError: a required column is missing, or a result column already exists.
        ConfigurationError: an unknown judge, setting, task or domain.
    """
    ray = require_ray()
    try:
        task_value = Task(task).value
    except ValueError:
        raise InvalidInputError(
            f"unknown task {task!r} (expected QnA or Summarization)", field="task"
        ) from None
    try:
        domain_value = Domain(domain).value
    except ValueError:
        raise InvalidInputError(
            f"unknown domain {domain!r} (expected Generic or Medical)", field="domain"
        ) from None
    for name, value in (("concurrency", concurrency), ("batch_size", batch_size)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigurationError(f"{name} must be a whole number >= 1, got {value!r}")
    cols = _columns(columns)
    _check_schema(list(ds.schema().names), cols)
    spec = JudgeSpec(
        judge,
        dict(judge_config or {}),
        dict(checker_options or {}),
        threads=max(1, int(num_cpus)),
    )
    spec.build_checker().close()  # fail here, in one line, not in every actor
    extra: dict[str, Any] = dict(ray_remote_args or {})
    if memory is not None:
        extra["memory"] = memory
    return ds.map_batches(
        CheckColumns,
        fn_constructor_args=(spec, cols, task_value, domain_value),
        batch_size=batch_size,
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=concurrency),
        num_cpus=num_cpus,
        **extra,
    )


def eval_outcomes(
    records: Sequence[dict[str, Any]],
    spec: JudgeSpec,
    *,
    workers: int = 1,
    address: str | None = None,
    shard_size: int = 200,
) -> Generator[list[dict[str, Any]], None, None]:
    """Outcome rows of ``records`` (as ``record_outcome`` makes them), one list per finished
    shard of up to ``shard_size`` records, in the order the shards finish.

    Uses the running Ray instance if there is one, else starts one (``address`` to join a
    cluster; locally with ``workers`` CPUs) and stops it at the end.
    """
    if not records:
        return
    if spec.threads is None:  # each actor reserves one CPU: one model thread
        spec = dataclasses.replace(spec, threads=1)
    ray = require_ray()
    started = not ray.is_initialized()
    if started:
        options: dict[str, Any] = {
            "log_to_driver": False,
            "logging_level": logging.ERROR,
            "include_dashboard": False,
        }
        if address is None:
            options["num_cpus"] = workers + 1  # the actors, and one for Ray Data itself
        ray.init(address=address, **options)
    try:
        _quiet(ray)
        lines = [{"record": json.dumps(r, ensure_ascii=True)} for r in records]
        ds = ray.data.from_items(
            lines, override_num_blocks=max(1, math.ceil(len(lines) / shard_size))
        ).map_batches(
            CheckOutcomes,
            fn_constructor_args=(spec,),
            batch_size=None,  # one call per block: a shard in, a shard out
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=workers),
            num_cpus=1,
        )
        for batch in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
            yield [json.loads(line) for line in batch.column("outcome").to_pylist()]
    finally:
        if started:
            ray.shutdown()
