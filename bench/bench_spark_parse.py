"""The Spark parse job's throughput on >= 1M generated lines (local Spark, all cores).

    python bench/bench_spark_parse.py [--lines 1200000] [--master local[2]]

Writes rotated state-change logs for 3 brokers into a temporary directory (deleted afterwards),
runs the same job as ``kafka-forensics parse`` and prints lines/s with the reconciliation.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import write_cluster  # noqa: E402

from kafka_forensics.jobs.parse_job import run_parse  # noqa: E402
from kafka_forensics.jobs.spark_session import build_session  # noqa: E402
from kafka_forensics.parsers.records import ParseOptions  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_200_000)
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kf-bench-"))
    try:
        start = time.perf_counter()
        written = write_cluster(root / "logs", args.lines)
        size = sum(p.stat().st_size for p in (root / "logs").rglob("*"))
        print(f"generated {written:,} lines ({size / 1e6:.0f} MB) in {time.perf_counter() - start:.1f}s; cores: {os.cpu_count()}")
        spark = build_session(args.master)
        spark.range(1).count()  # JVM warm-up outside the timing
        start = time.perf_counter()
        summary = run_parse(spark, [str(root / "logs")], str(root / "out"), ParseOptions())
        took = time.perf_counter() - start
        print(f"spark parse ({args.master}): {summary.lines_read:,} lines in {took:.1f}s = {summary.lines_read / took:,.0f} lines/s; "
              f"reconciled={summary.reconciled} records={summary.records:,} continuation={summary.continuation_lines:,} quarantined={summary.quarantined:,}")
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
