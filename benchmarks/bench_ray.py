"""Records per second of ``ground eval --engine ray`` with 1 and 2 actors, against the local
engine, on the same records of ``dev.jsonl`` with the default judge (the bundled model).

The local figure is the local engine's loop (``evaluation.outcome_row`` one record at a time,
model loaded beforehand). The Ray figures are wall time of ``batch._dataset.eval_outcomes`` (what
``--engine ray`` runs) from the call to the last shard, actor start and one model load per actor
included, on a local Ray instance started once with ``num_cpus=3``; a run on a few records
gives that fixed start-up cost apart, and "after start-up" is the rate once it is paid
(records over wall time minus start-up). Also printed: the driver's memory for one checker (what
each actor holds), and the input bytes per record (what a worker reads per record).
The machine may be busy with other work: figures are for comparison within one run. The note
at the end of ``benchmarks/results/ray.txt`` (what N workers would do) is written from them.

    python benchmarks/bench_ray.py ../shared/data/dev.jsonl | tee benchmarks/results/ray.txt
"""

from __future__ import annotations

import functools
import json
import os
import platform
import sys
import time
from pathlib import Path

import psutil
import ray

from ground_integrations import GroundednessChecker
from ground_integrations.batch import JudgeSpec
from ground_integrations.batch._dataset import eval_outcomes
from ground_integrations.evaluation import load_records, outcome_row
from ground_integrations.judges import default_judge
from ground_integrations.judges.cross_encoder import CrossEncoderJudge, bundled_model

EVERY = 2  # every 2nd record of dev.jsonl: ~750 records, all datasets and tasks
SHARD = 25


def main(path: str) -> None:
    records, _ = load_records(path)
    records = records[::EVERY]
    size = sum(len(json.dumps(r, ensure_ascii=False).encode()) for r in records) / len(records)
    proc = psutil.Process()
    before = proc.memory_info().rss
    started = time.perf_counter()
    checker = GroundednessChecker(default_judge(), cache_size=0)
    load_s = time.perf_counter() - started
    outcome_row(checker, records[0])
    model_mb = (proc.memory_info().rss - before) / 2**20
    print(
        f"bench_ray: python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"{platform.machine()}, ray {ray.__version__}; judge {checker.judge.name} "
        f"{checker.judge.version}; {len(records)} records (one in {EVERY} of {Path(path).name}), "
        f"{size / 1024:.1f} KiB of input per record; shards of {SHARD}"
    )
    print(f"one checker: {load_s:.2f} s to load, +{model_mb:.0f} MiB resident (per actor)")
    print()

    started = time.perf_counter()
    local = [outcome_row(checker, r) for r in records]
    local_s = time.perf_counter() - started
    print(f"{'engine':26s} {'records':>7s} {'wall s':>7s} {'rec/s':>7s} {'after start-up':>15s}")
    print(f"{'local':26s} {len(local):7d} {local_s:7.2f} {len(local) / local_s:7.1f}")

    # the same judge with one onnxruntime thread: what one core per actor looks like
    one_thread = functools.partial(CrossEncoderJudge, bundled_model(), threads=1)
    single = GroundednessChecker(one_thread(), cache_size=0)
    started = time.perf_counter()
    local_1 = [outcome_row(single, r) for r in records]
    local_1_s = time.perf_counter() - started
    print(
        f"{'local, 1 thread':26s} {len(local_1):7d} {local_1_s:7.2f} {len(local_1) / local_1_s:7.1f}"
    )

    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    ray.data.DataContext.get_current().enable_progress_bars = False
    # what --engine ray runs: each actor reserves one CPU and runs the model on one thread
    runs = [(1, "", JudgeSpec()), (2, "", JudgeSpec())]
    for workers, threads, spec in runs:
        few = records[: 2 * workers]
        started = time.perf_counter()
        n_few = sum(len(s) for s in eval_outcomes(few, spec, workers=workers, shard_size=1))
        fixed_s = time.perf_counter() - started
        started = time.perf_counter()
        rows = [
            row
            for shard in eval_outcomes(records, spec, workers=workers, shard_size=SHARD)
            for row in shard
        ]
        wall = time.perf_counter() - started
        name = f"ray, {workers} actor{'s' if workers > 1 else ''}{threads}"
        print(
            f"{name:26s} {len(rows):7d} {wall:7.2f} {len(rows) / wall:7.1f}"
            f" {len(rows) / max(wall - fixed_s, 1e-9):15.1f}"
            f"   (start-up: {fixed_s:.1f} s, measured on {n_few} records)"
        )
        by_id = {r["id"]: r for r in rows}
        same = sum(
            {k: v for k, v in by_id[r["id"]].items() if k != "latency_ms"}
            == {k: v for k, v in r.items() if k != "latency_ms"}
            for r in local
        )
        print(f"{'':26s} same outcome as local: {same}/{len(local)} records")

    ray.shutdown()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/dev.jsonl")
