"""End-to-end cost per stage (parse, replay, check, report, merge) on simulated inputs of growing size.

    python bench/bench_end_to_end.py                          # 1 M, 4 M and 16 M lines (the issue's sizes)
    python bench/bench_end_to_end.py --sizes 100000 --master local[2]     # a quick check
    python bench/bench_end_to_end.py --engine driver          # `analyze` as a user runs it (no Spark up to ~27 M)

For each size, the scenario generator's scale mode (``kafka-forensics simulate --scale``) writes a
cluster's logs; the number of partitions is calibrated first so the logs hold about that many
lines (generation time is not part of any stage). Then one Spark session runs the stages as
``analyze`` and ``merge`` do, timing each one and recording the peak resident memory of the Python
driver and of the driver JVM during that stage (VmHWM from /proc, reset before each stage through
/proc/PID/clear_refs). Prints one table per size and the cost per line per size: it should stay
flat as the input grows. Generated logs go to a temporary directory, deleted afterwards.

``--engine driver`` times ``kafka-forensics analyze`` itself, in a process of its own, on the engine it chooses
(the driver engine up to ``jobs.engine``'s bound): its wall time from start to exit, each stage's seconds as it
prints them (the report is built beside the check, so the stages do not add up to the total), and the peak of
its whole process tree's resident memory (its pools and the report's process included), sampled ten times a
second. Merge is not part of ``analyze``.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

from kafka_forensics.simulator.scale import ScaleResult, run_scale

STAGES = ("parse", "replay", "check", "report", "merge")
CALIBRATION_PARTITIONS = 400


def _status_kb(pid: int | str, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _reset_peak(pid: int | str) -> None:
    """Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass


def generate(out: Path, lines: int, args) -> tuple[ScaleResult, int]:
    """Scale-mode logs of about ``lines`` lines: calibrate lines per partition, then generate."""
    probe = Path(tempfile.mkdtemp(prefix="kf-e2e-probe-", dir=args.workdir))
    try:
        small = run_scale(
            probe,
            kafka_version=args.kafka_version,
            brokers=args.brokers,
            topics=min(args.topics, 20),
            partitions=CALIBRATION_PARTITIONS,
            failovers=args.failovers,
            seed=args.seed,
        )
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    per_partition = small.lines / CALIBRATION_PARTITIONS
    partitions = max(args.brokers, round(lines / per_partition))
    topics = max(1, min(args.topics, partitions // 10))
    return run_scale(
        out,
        kafka_version=args.kafka_version,
        brokers=args.brokers,
        topics=topics,
        partitions=partitions,
        failovers=args.failovers,
        seed=args.seed,
    ), partitions


def inputs(sizes: list[int], args) -> Iterator[tuple[ScaleResult, Path]]:
    """(the generated logs' summary, their directory) for each size, deleted after its turn unless ``--keep``."""
    for size in sizes:
        root = Path(tempfile.mkdtemp(prefix=f"kf-e2e-{size}-", dir=args.workdir))
        try:
            generated, partitions = generate(root / "logs", size, args)
            print(
                f"\n== {generated.lines:,} lines ({generated.records:,} records, {generated.bytes / 1e6:,.0f} MB, "
                f"{generated.files} files, {partitions:,} partitions); generated in {generated.seconds:,.1f} s "
                f"(not counted)"
            )
            yield generated, root
        finally:
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)
            else:
                print(f"kept {root}")


def run_stages(spark, logs: Path, out: Path, stages: tuple[str, ...]) -> dict[str, dict]:
    from kafka_forensics.jobs.check_job import load_check_config, run_check
    from kafka_forensics.jobs.filters import EventFilter
    from kafka_forensics.jobs.merge_job import MergeOptions, iter_merged, merge_frame, write_merged
    from kafka_forensics.jobs.parse_job import run_parse
    from kafka_forensics.jobs.replay_job import ReplayOptions, replay_events
    from kafka_forensics.jobs.report_job import build_report
    from kafka_forensics.parsers.records import ParseOptions

    jvm_pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    parse_options = ParseOptions()
    actions = {
        "parse": lambda: run_parse(spark, [str(logs)], str(out), parse_options),
        "replay": lambda: replay_events(spark, spark.read.parquet(f"{out}/events"), str(out), ReplayOptions()),
        "check": lambda: run_check(spark, str(out), load_check_config(None)),
        "report": lambda: build_report(spark, str(out), f"{out}/report.html"),
        "merge": lambda: _merge_to_null(
            spark, logs, parse_options, MergeOptions(event_filter=EventFilter()), merge_frame, iter_merged, write_merged
        ),
    }
    results: dict[str, dict] = {}
    for stage in stages:
        _reset_peak("self")
        _reset_peak(jvm_pid)
        started = time.perf_counter()
        value = actions[stage]()
        seconds = time.perf_counter() - started
        results[stage] = {
            "seconds": seconds,
            "py_peak_mb": _status_kb("self", "VmHWM") / 1024,
            "jvm_peak_mb": _status_kb(jvm_pid, "VmHWM") / 1024,
            "value": value,
        }
    return results


ANALYZE = "import sys; from kafka_forensics.cli.main import main; sys.exit(main())"
STAGE_LINE = re.compile(r"✓ (parse|replay|check|report)\s+([\d.]+) s")


def _tree_rss(root: int) -> int:
    """Bytes resident in ``root`` and every process under it."""
    children: dict[int, list[int]] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as handle:
                children.setdefault(int(handle.read().rsplit(")", 1)[1].split()[1]), []).append(int(pid))
        except OSError:
            pass
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/statm") as handle:
                total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            pass
        todo += children.get(pid, [])
    return total


def run_analyze(logs: Path, out: Path) -> dict[str, dict]:
    """``kafka-forensics analyze LOGS --out OUT`` in a process of its own: per stage its printed seconds, and a
    ``total`` row with the command's wall seconds and its process tree's peak resident memory."""
    started = time.perf_counter()
    command = subprocess.Popen(
        [sys.executable, "-c", ANALYZE, "analyze", str(logs), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    peak = 0
    while command.poll() is None:
        peak = max(peak, _tree_rss(command.pid))
        time.sleep(0.1)
    seconds = time.perf_counter() - started
    printed = command.stdout.read() if command.stdout else ""
    if command.returncode not in (0, 1):  # 1: the verdict failed, which a benchmark's input may do
        raise SystemExit(f"analyze exited {command.returncode}:\n{printed[-2000:]}")
    results = {m.group(1): {"seconds": float(m.group(2))} for m in STAGE_LINE.finditer(printed)}
    results["total"] = {"seconds": seconds, "tree_peak_mb": peak / 2**20}
    return results


def _merge_to_null(spark, logs, parse_options, options, merge_frame, iter_merged, write_merged):
    with open(os.devnull, "w") as sink:
        return write_merged(iter_merged(merge_frame(spark, [str(logs)], parse_options, options)), sink)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000000,4000000,16000000", help="target line counts, comma-separated")
    ap.add_argument("--stages", default=",".join(STAGES), help=f"subset of {','.join(STAGES)}")
    ap.add_argument("--kafka-version", default="2.4")
    ap.add_argument("--brokers", type=int, default=30)
    ap.add_argument("--topics", type=int, default=200)
    ap.add_argument("--failovers", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--conf", action="append", default=[], metavar="K=V")
    ap.add_argument("--workdir", default=None, help="where to generate (default: the system temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the generated logs and outputs")
    ap.add_argument("--engine", choices=("spark", "driver"), default="spark", help="driver: time `analyze` itself")
    args = ap.parse_args(argv)
    if args.engine == "driver":
        return main_analyze(args, [int(s) for s in args.sizes.split(",") if s])
    sizes = [int(s) for s in args.sizes.split(",") if s]
    stages = tuple(s for s in args.stages.split(",") if s)
    unknown = set(stages) - set(STAGES)
    if unknown:
        ap.error(f"unknown stage(s): {', '.join(sorted(unknown))}")

    from kafka_forensics.cli.options import parse_conf
    from kafka_forensics.jobs.spark_session import build_session

    spark = build_session(args.master, parse_conf(tuple(args.conf)))
    print(
        f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cpu(s), "
        f"master {spark.sparkContext.master}, Kafka {args.kafka_version} text, {args.brokers} brokers, "
        f"{args.failovers} failovers"
    )
    summary = []
    for generated, root in inputs(sizes, args):
        results = run_stages(spark, root / "logs", root / "out", stages)
        print(f"{'stage':<8}{'seconds':>10}{'lines/s':>12}{'µs/line':>10}{'py peak MB':>12}{'JVM peak MB':>13}")
        total = 0.0
        for stage, r in results.items():
            total += r["seconds"]
            print(
                f"{stage:<8}{r['seconds']:>10.1f}{generated.lines / r['seconds']:>12,.0f}"
                f"{r['seconds'] / generated.lines * 1e6:>10.1f}{r['py_peak_mb']:>12,.0f}{r['jvm_peak_mb']:>13,.0f}"
            )
        print(f"{'total':<8}{total:>10.1f}{generated.lines / total:>12,.0f}{total / generated.lines * 1e6:>10.1f}")
        if "report" in results:
            print(f"report size {results['report']['value'].size_bytes / 1e6:,.1f} MB")
        summary.append((generated.lines, total, {s: r["seconds"] for s, r in results.items()}))
    print("\ncost per line (µs) by size - flat means linear scaling")
    print(f"{'lines':>12}" + "".join(f"{s:>9}" for s in stages) + f"{'total':>9}")
    for lines, total, per_stage in summary:
        print(
            f"{lines:>12,}"
            + "".join(f"{per_stage[s] / lines * 1e6:>9.1f}" for s in stages)
            + f"{total / lines * 1e6:>9.1f}"
        )
    spark.stop()
    return 0


def main_analyze(args, sizes: list[int]) -> int:
    """``--engine driver``: ``analyze`` on each size, its stages and its cost per line by size."""
    print(
        f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cpu(s), `analyze` as a user runs it"
    )
    stages = ("parse", "replay", "check", "report")
    summary = []
    for generated, root in inputs(sizes, args):
        results = run_analyze(root / "logs", root / "out")
        for stage in (*stages, "total"):
            r = results.get(stage, {"seconds": float("nan")})
            print(f"{stage:<8}{r['seconds']:>10.1f} s{r['seconds'] / generated.lines * 1e6:>10.1f} µs/line")
        print(f"peak of the process tree {results['total']['tree_peak_mb']:,.0f} MiB (the report beside the check)")
        seconds = {s: results.get(s, {"seconds": float("nan")})["seconds"] for s in (*stages, "total")}
        summary.append((generated.lines, seconds))
    print("\ncost per line (µs) by size - flat means linear scaling (the report runs beside the check)")
    print(f"{'lines':>12}" + "".join(f"{s:>9}" for s in (*stages, "total")))
    for lines, per_stage in summary:
        print(f"{lines:>12,}" + "".join(f"{per_stage[s] / lines * 1e6:>9.1f}" for s in (*stages, "total")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
