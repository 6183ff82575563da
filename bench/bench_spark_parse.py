"""The Spark parse job's throughput on >= 1M generated lines (local Spark, all cores).

    python bench/bench_spark_parse.py [--lines 1200000] [--master local[2]]

Writes rotated state-change logs for 3 brokers into a temporary directory (deleted afterwards),
runs the same job as ``kafka-forensics parse`` once per events writer (``--writers``: the
workers' own pyarrow writer and Spark's) and prints lines/s with the reconciliation, and
(on Linux) the CPU the job used per line, split between the JVM and the Python workers: on a
shared machine wall time says little, CPU per line says where a 2-core budget goes.
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

from generate import write_cluster

from kafka_forensics.jobs.events_writer import WRITER_CONF
from kafka_forensics.jobs.parse_job import run_parse
from kafka_forensics.jobs.spark_session import build_session
from kafka_forensics.parsers.records import ParseOptions


def _cpu_seconds() -> tuple[float, float] | None:
    """(JVM, Python workers) CPU seconds of this process's descendants, from /proc (Linux)."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    tick = os.sysconf("SC_CLK_TCK")
    table = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        # utime, stime, cutime, cstime: reaped worker children count towards their parent
        table[int(entry.name)] = (int(fields[1]), name, sum(int(x) for x in fields[11:15]) / tick)
    tree, grew = {os.getpid()}, True
    while grew:
        grew = False
        for pid, (parent, _, _) in table.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    tree.discard(os.getpid())
    jvm = sum(table[p][2] for p in tree if table[p][1] == "java")
    return jvm, sum(table[p][2] for p in tree if table[p][1] != "java")


def _run(spark, root: Path, master: str, writer: str) -> tuple[float, float | None]:
    """One parse of the same logs with one events writer: (lines/s, CPU µs per line or None)."""
    spark.conf.set(WRITER_CONF, writer)
    shutil.rmtree(root / "out", ignore_errors=True)
    before = _cpu_seconds()
    start = time.perf_counter()
    summary = run_parse(spark, [str(root / "logs")], str(root / "out"), ParseOptions())
    took = time.perf_counter() - start
    after = _cpu_seconds()
    rate = summary.lines_read / took
    print(
        f"[{writer} writer] spark parse ({master}): {summary.lines_read:,} lines in {took:.1f}s = {rate:,.0f} lines/s; "
        f"reconciled={summary.reconciled} records={summary.records:,} continuation={summary.continuation_lines:,} "
        f"quarantined={summary.quarantined:,}"
    )
    if not (before and after):
        return rate, None
    jvm, python = (a - b for a, b in zip(after, before))
    per_line = 1e6 / summary.lines_read
    print(
        f"[{writer} writer] CPU: JVM {jvm:.1f}s ({jvm * per_line:.1f} us/line), Python workers {python:.1f}s "
        f"({python * per_line:.1f} us/line); 2 cores at that cost: "
        f"{2 * summary.lines_read / (jvm + python):,.0f} lines/s"
    )
    return rate, (jvm + python) * per_line


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_200_000)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument(
        "--writers",
        default="spark,arrow,spark,arrow",
        help="events writers to run in this order on the same lines (alternate them: JIT warm-up "
        "favours later runs); the best run of each is compared",
    )
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kf-bench-"))
    try:
        start = time.perf_counter()
        written = write_cluster(root / "logs", args.lines)
        size = sum(p.stat().st_size for p in (root / "logs").rglob("*"))
        print(
            f"generated {written:,} lines ({size / 1e6:.0f} MB) in {time.perf_counter() - start:.1f}s; cores: {os.cpu_count()}"
        )
        spark = build_session(args.master)
        spark.range(1).count()  # JVM warm-up outside the timing
        best: dict[str, tuple[float, float | None]] = {}
        for writer in args.writers.split(","):
            rate, cpu = _run(spark, root, args.master, writer)
            if writer not in best or rate > best[writer][0]:
                best[writer] = (rate, cpu)
        if {"arrow", "spark"} <= best.keys():
            (arrow_rate, arrow_cpu), (spark_rate, spark_cpu) = best["arrow"], best["spark"]
            print(
                f"workers' own writer vs Spark's writer: {arrow_rate / spark_rate:.2f}x lines/s (best runs)"
                + (f", {spark_cpu / arrow_cpu:.2f}x less CPU per line" if arrow_cpu and spark_cpu else "")
            )
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
