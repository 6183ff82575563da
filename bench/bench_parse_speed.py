"""Parse speed, every figure against an anchor measured in the same run (issue 15).

    python bench/bench_parse_speed.py [--lines 1200000] [--parser-lines 200000] [--parser-rounds 5] [--master local[2]]

``--crossover``: the same comparison per file size (200 to 30,000 lines), behind
``parsers.columnar.ROW_BY_ROW_BELOW``.

1. **Parsers, same lines** (CPU seconds of the parse alone, each in a fresh process): the columnar parse
   (``parsers.columnar``, Arrow table out), today's fast path (``parse_file`` plus the job's conversion
   of its rows to Arrow batches) and plain Lark (``parse_file(use_lark=True)``, on a tenth of the lines:
   it is slow, timed once), on the generated busy 2.4 TRACE log, on the real corpus
   (../shared/real-logs) repeated, and on the same real lines as ``docker compose logs`` prints them
   (``compose``: a service prefix on every line). The columnar parse and the fast path alternate for
   ``--parser-rounds`` rounds and the least CPU of each counts: other work on a shared machine only
   ever adds time, and one noisy run moved the ratio by 15 % (2026-11-26). A fresh process each:
   a parse timed after the other one in the same process pays for the heap it left (``parsers``).
2. **The parse job against Spark copying the same lines**: ``spark.read.text(files)
   .write.parquet`` of the same files, then ``run_parse`` (the columnar parse, the workers reading
   the files and writing the events themselves), alternating, best of each; start-up excluded
   (one session for all runs, and one small parse first so the Python workers exist). Prints
   lines/s, the job's share of the copy's lines/s, and CPU per line of the JVM and the Python
   workers (from /proc: on a loaded machine wall time says little).

Targets (issue 15): job >= 120k lines/s = 11 % of the copy (150k = 14 % beyond); columnar >= 3x
``parse_file``.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_parsers import _real_lines
from bench_spark_parse import _cpu_seconds
from generate import generate_lines, write_cluster

from kafka_forensics.jobs.parse_job import _event_batches, run_parse
from kafka_forensics.jobs.spark_session import build_session
from kafka_forensics.parsers.columnar import parse_file_columnar
from kafka_forensics.parsers.records import ParseOptions, parse_file


def _cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def _corpus(corpus: str, count: int) -> tuple[list[str], ParseOptions]:
    if corpus == "generated":
        return generate_lines(count), ParseOptions(kafka_version="2.4")
    return _real_lines(count, compose=corpus == "compose"), ParseOptions()


def time_parser(corpus: str, side: str, count: int) -> float:
    """CPU seconds of one parser (``columnar``, ``fast`` or ``lark``) on ``count`` lines of a corpus, in this
    process, in a steady state: one untimed run on the same lines first builds grammars, plans and caches and
    touches the memory a run needs (a first run's fresh pages alone cost the columnar parse up to 40 %)."""
    lines, options = _corpus(corpus, count)
    data = ("\n".join(lines) + "\n").encode()
    name = "state-change.log"
    lark = ParseOptions(**{**options.__dict__, "use_lark": True})
    runs = {
        "columnar": lambda d: parse_file_columnar(d, name, options, row_by_row_below=0),
        "fast": lambda d: _rows_to_arrow(d, name, options),
        "lark": lambda d: parse_file(d, name, lark),
    }
    runs[side](data)
    return _cpu(lambda: runs[side](data))


def parsers(count: int, rounds: int) -> None:
    """Each timing in a fresh interpreter (``--time-parser``): in one process, a parse measured after the
    other parser ran there costs about 10 % more (the heap it left; 6.36 -> 6.99 us/line for the columnar
    parse after the fast path, 2026-11-26), and the production parse runs in a worker of its own."""

    def timed(corpus: str, side: str, n: int) -> float:
        out = subprocess.run(
            [sys.executable, __file__, "--time-parser", corpus, side, str(n)],
            check=True,
            capture_output=True,
            text=True,
        )
        return float(out.stdout.split()[-1])

    for corpus in ("generated", "real", "compose"):
        best = {"columnar": float("inf"), "fast": float("inf")}
        for r in range(rounds):  # alternating, the least of each
            for side in sorted(best, reverse=r % 2 == 1):
                best[side] = min(best[side], timed(corpus, side, count))
        columnar, fast = best["columnar"], best["fast"]
        lark = timed(corpus, "lark", count // 10) * 10  # plain Lark is slow: a tenth of the lines, once
        print(
            f"parsers [{corpus}, {count:,} lines]: CPU per line, least of {rounds} fresh processes each: "
            f"columnar {columnar / count * 1e6:.1f} us, fast path + Arrow {fast / count * 1e6:.1f} us, "
            f"plain Lark {lark / count * 1e6:.1f} us (on {count // 10:,} lines, once)\n"
            f"    columnar vs fast path: {fast / columnar:.2f}x   columnar vs plain Lark: {lark / columnar:.1f}x   "
            f"fast path vs plain Lark: {lark / fast:.1f}x",
            flush=True,
        )


def _repeat(times: int, fn, *args, **kwargs) -> None:
    for _ in range(times):
        fn(*args, **kwargs)


def _rows_to_arrow(data: bytes, name: str, options: ParseOptions) -> None:
    list(_event_batches(parse_file(data, name, options).rows, None))


def crossover(sizes: tuple[int, ...] = (200, 1_000, 3_000, 10_000, 30_000)) -> None:
    """Per file size: the columnar parse (forced column-wise) against ``parse_file`` + Arrow, the
    measurement behind ``parsers.columnar.ROW_BY_ROW_BELOW``."""
    for corpus in ("generated", "real"):
        for n in sizes:
            lines, options = _corpus(corpus, n)
            data = ("\n".join(lines) + "\n").encode()
            name = "state-change.log"
            parse_file_columnar(data, name, options, row_by_row_below=0)  # plans and caches outside the timing
            rounds = max(1, 20_000 // n)
            columnar = _cpu(
                functools.partial(_repeat, rounds, parse_file_columnar, data, name, options, row_by_row_below=0)
            )
            rows = _cpu(functools.partial(_repeat, rounds, _rows_to_arrow, data, name, options))
            print(
                f"crossover [{corpus}, {n:,} lines]: columnar {columnar / rounds * 1e3:.1f} ms, "
                f"row by row {rows / rounds * 1e3:.1f} ms per file: {rows / columnar:.2f}x"
            )


def _timed(label: str, lines: int, run) -> tuple[float, float | None]:
    before = _cpu_seconds()
    start = time.perf_counter()
    run()
    took = time.perf_counter() - start
    after = _cpu_seconds()
    rate = lines / took
    text = f"  {label:32s} {took:6.1f} s  {rate:>11,.0f} lines/s"
    cpu = None
    if before and after:
        jvm, python = (a - b for a, b in zip(after, before))
        cpu = (jvm + python) / lines * 1e6
        text += f"   CPU/line: JVM {jvm / lines * 1e6:5.1f} us, Python workers {python / lines * 1e6:5.1f} us"
    print(text, flush=True)
    return rate, cpu


def job(count: int, master: str, rounds: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="kf-bench-speed-"))
    try:
        lines = write_cluster(root / "logs", count)
        files = sorted(str(p) for p in (root / "logs").rglob("*") if p.is_file())
        size = sum(Path(f).stat().st_size for f in files)
        print(
            f"job input: {lines:,} lines, {size / 1e6:.0f} MB in {len(files)} files; master {master}; cores {os.cpu_count()}"
        )
        spark = build_session(master)
        warm = root / "warm" / "broker-1"
        warm.mkdir(parents=True)
        (warm / "state-change.log").write_text("\n".join(generate_lines(5000)) + "\n")
        run_parse(spark, [str(warm)], str(root / "warm-out"), ParseOptions())  # workers and plans up
        spark.read.text(str(warm)).write.mode("overwrite").parquet(str(root / "warm-copy"))
        copies, parses = [], []
        for _ in range(rounds):
            copy = _timed(
                "Spark copy (read.text -> parquet)",
                lines,
                lambda: spark.read.text(files).write.mode("overwrite").parquet(str(root / "copy")),
            )
            shutil.rmtree(root / "out", ignore_errors=True)
            summary = None

            def parse() -> None:
                nonlocal summary
                summary = run_parse(spark, [str(root / "logs")], str(root / "out"), ParseOptions())

            done = _timed("parse job (columnar)", lines, parse)
            assert summary is not None and summary.reconciled and summary.lines_read == lines
            copies.append(copy)
            parses.append(done)
        best_copy = max(c[0] for c in copies)
        best_parse = max(p[0] for p in parses)
        print(
            f"parse job: {best_parse:,.0f} lines/s = {best_parse / best_copy:.1%} of Spark's copy "
            f"({best_copy:,.0f} lines/s), best of {rounds} each; target 120,000 lines/s = 11 %, goal 150,000 = 14 %"
        )
        cpus = [p[1] for p in parses if p[1]]
        if cpus:
            print(
                f"parse job CPU per line (best run): {min(cpus):.1f} us -> 2 cores at that cost: {2e6 / min(cpus):,.0f} lines/s"
            )
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_200_000, help="lines of the job benchmark")
    ap.add_argument("--parser-lines", type=int, default=200_000, help="lines of the in-process parser comparison")
    ap.add_argument(
        "--parser-rounds", type=int, default=5, help="alternating parser timings (the least of each counts)"
    )
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--rounds", type=int, default=2, help="alternating copy/parse runs (the best of each counts)")
    ap.add_argument("--skip-job", action="store_true")
    ap.add_argument("--crossover", action="store_true", help="also: columnar vs row by row per file size")
    ap.add_argument("--time-parser", nargs=3, metavar=("CORPUS", "SIDE", "LINES"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.time_parser:  # one timing, in a process of its own (``parsers``)
        corpus, side, count = args.time_parser
        print(time_parser(corpus, side, int(count)))
        return
    print(
        f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}"
    )
    parsers(args.parser_lines, args.parser_rounds)
    if args.crossover:
        crossover()
    if not args.skip_job:
        job(args.lines, args.master, args.rounds)


if __name__ == "__main__":
    main()
