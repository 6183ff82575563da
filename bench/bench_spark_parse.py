"""The Spark parse job's throughput on >= 1M generated lines (local Spark, all cores).

    python bench/bench_spark_parse.py [--lines 1200000] [--master local[2]]

Writes rotated state-change logs for 3 brokers into a temporary directory (deleted afterwards),
runs the same job as ``kafka-forensics parse`` and prints lines/s with the reconciliation, and
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

from generate import write_cluster  # noqa: E402

from kafka_forensics.jobs.parse_job import run_parse  # noqa: E402
from kafka_forensics.jobs.spark_session import build_session  # noqa: E402
from kafka_forensics.parsers.records import ParseOptions  # noqa: E402


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
        before = _cpu_seconds()
        start = time.perf_counter()
        summary = run_parse(spark, [str(root / "logs")], str(root / "out"), ParseOptions())
        took = time.perf_counter() - start
        after = _cpu_seconds()
        print(f"spark parse ({args.master}): {summary.lines_read:,} lines in {took:.1f}s = {summary.lines_read / took:,.0f} lines/s; "
              f"reconciled={summary.reconciled} records={summary.records:,} continuation={summary.continuation_lines:,} quarantined={summary.quarantined:,}")
        if before and after:
            jvm, python = (a - b for a, b in zip(after, before))
            per_line = 1e6 / summary.lines_read
            print(f"CPU: JVM {jvm:.1f}s ({jvm * per_line:.1f} us/line), Python workers {python:.1f}s "
                  f"({python * per_line:.1f} us/line); 2 cores at that cost: "
                  f"{2 * summary.lines_read / (jvm + python):,.0f} lines/s")
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
