"""Time the check job (GX suites) on an existing replay output directory.

    python bench/bench_check.py DIR [--master local[*] | --driver] [--config check.toml] [--runs 1]

DIR is what ``kafka-forensics replay`` (or ``check``) wrote. Prints the row count of every table,
the seconds to load and count them (which fills the cache), the seconds per suite, and the total
of ``run_check`` (Data Docs and verdict included). The first run includes GX's import and JIT
warm-up; give ``--runs 2`` to see a warm run too. Writes DIR/validation, data_docs, verdict.json.
``--driver`` runs the check without Spark (``run_check(None, ...)``, a local DIR) and prints, per run, the
process's peak RSS during it (``VmHWM`` of ``/proc/self/status``, reset before each run; Linux only).
"""

from __future__ import annotations

import argparse
import platform
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--master", default=None)
    parser.add_argument("--config", default=None)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--driver", action="store_true", help="the check without Spark, with its peak RSS")
    args = parser.parse_args()

    from kafka_forensics.jobs.check_job import load_check_config, run_check
    from kafka_forensics.jobs.spark_session import build_session

    spark = None
    if not args.driver:
        started = time.perf_counter()
        spark = build_session(args.master)
        print(
            f"spark session: {time.perf_counter() - started:.1f}s  (Spark {spark.version}, "
            f"{spark.sparkContext.master}, Python {platform.python_version()})"
        )
    config = load_check_config(args.config)
    for run in range(1, args.runs + 1):
        timings: dict[str, float] = {}
        if args.driver:
            _reset_peak_rss()
        started = time.perf_counter()
        verdict = run_check(spark, args.out_dir, config, {"bench": True}, timings=timings)
        total = time.perf_counter() - started
        peak = f", peak RSS {_peak_rss_mb()} MB" if args.driver else ""
        print(
            f"run {run}: verdict {'passed' if verdict.passed else 'FAILED'} (exit {verdict.exit_code}), "
            f"{total:.1f}s total{peak}"
        )
        for table, rows in verdict.counts.items():
            print(f"  {table:<20} {rows:>12,} rows")
        for suite, seconds in timings.items():
            entry = verdict.suites[suite]
            print(
                f"  suite {suite:<14} {seconds:8.1f}s  {entry['evaluated']} expectations, "
                f"{entry['unsuccessful']} unsuccessful"
            )
        rest = total - sum(timings.values())
        print(f"  load+count tables, Data Docs, verdict: {rest:.1f}s")
    if spark is not None:
        spark.stop()


def _reset_peak_rss() -> None:
    """Start ``VmHWM`` again from the current RSS (writing 5 to ``clear_refs``, Linux 4.0+)."""
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")


def _peak_rss_mb() -> int:
    with open("/proc/self/status") as handle:
        return next(int(line.split()[1]) // 1024 for line in handle if line.startswith("VmHWM"))


if __name__ == "__main__":
    main()
