"""Where the Spark parse job's CPU goes: Python parsing, Arrow, JVM transfer, Parquet writing.

    python bench/bench_spark_split.py [--lines 600000] [--master local[2]]

Runs variants of the parse job's one pass over the same generated logs and prints, for each, the
CPU seconds per line used by the JVM and by the Python workers (from /proc, Linux only), which a
busy shared machine distorts far less than wall time:

- ``python``: parse_file + Arrow batches in this process, no Spark;
- ``read``: the binaryFile read alone (``noop`` sink);
- ``stub+noop`` / ``stub+parquet``: the Python side replaced by pre-built Arrow batches of the
  same rows (one parsed file, memory-mapped, sent once per input file), so only Arrow → JVM and
  the write are left;
- ``parse+noop`` / ``parse+parquet``: the job's mapInArrow with a ``noop`` sink, and the job's
  write (Parquet partitioned by row kind).

Grammars are built and the JVM warmed on a few small files first; use >= 600k lines so that
per-task start-up does not dominate.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_spark_parse import _cpu_seconds
from generate import write_cluster
from pyspark.sql.pandas.types import from_arrow_schema

from kafka_forensics.jobs import parse_job
from kafka_forensics.jobs.discovery import discover
from kafka_forensics.jobs.spark_session import build_session
from kafka_forensics.parsers.records import ParseOptions, parse_file


def _write_stub(sample: Path, target: Path) -> None:
    import pyarrow as pa

    result = parse_file(sample.read_bytes(), str(sample), ParseOptions())
    with pa.OSFile(str(target), "wb") as sink, pa.ipc.new_file(sink, parse_job.UNIFIED_SCHEMA) as writer:
        for batch in parse_job._event_batches(result.rows):
            writer.write_batch(batch)


def _stub_batches(stub_file: str):
    def batches(inputs):
        import pyarrow as pa

        reader = pa.ipc.open_file(pa.memory_map(stub_file))
        stub = [reader.get_batch(i) for i in range(reader.num_record_batches)]
        for batch in inputs:
            for _ in range(batch.num_rows):  # one input row per file
                yield from stub

    return batches


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=600_000)
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kf-split-"))
    try:
        logs = root / "logs"
        write_cluster(logs, args.lines)
        files = sorted(p for p in logs.rglob("*") if p.is_file())
        lines = sum(p.read_bytes().count(b"\n") for p in files)
        print(f"{lines:,} lines in {len(files)} files; per line, CPU:")

        warm = root / "warm"  # grammar build and JIT outside the timings: a few small files
        warm.mkdir()
        for i, path in enumerate(files[:4]):
            (warm / f"broker-{i}").mkdir()
            (warm / f"broker-{i}" / "state-change.log").write_bytes(b"\n".join(path.read_bytes().split(b"\n")[:2000]))
        parse_file((warm / "broker-0" / "state-change.log").read_bytes(), "warm.log", ParseOptions())

        start, arrow = time.process_time(), 0.0
        for path in files:
            result = parse_file(path.read_bytes(), str(path), ParseOptions())
            mark = time.process_time()
            list(parse_job._event_batches(result.rows))
            arrow += time.process_time() - mark
        total = time.process_time() - start
        print(
            f"{'python':14s} parse_file {(total - arrow) / lines * 1e6:5.1f} us, Arrow batches {arrow / lines * 1e6:5.1f} us"
        )

        stub_file = root / "stub.arrow"
        _write_stub(files[0], stub_file)
        spark = build_session(args.master)
        spark.range(1).count()
        parse_job.parse_to_frames(spark, discover(spark, [str(warm)]), ParseOptions()).write.format("noop").mode(
            "overwrite"
        ).save()
        inputs = discover(spark, [str(logs)])

        def raw():
            return spark.read.format("binaryFile").load([f.uri for f in inputs]).select("path", "content")

        schema = from_arrow_schema(parse_job.UNIFIED_SCHEMA)
        variants = [
            ("read", raw, "noop"),
            ("stub+noop", lambda: raw().mapInArrow(_stub_batches(str(stub_file)), schema), "noop"),
            ("stub+parquet", lambda: raw().mapInArrow(_stub_batches(str(stub_file)), schema), "parquet"),
            ("parse+noop", lambda: parse_job.parse_to_frames(spark, inputs, ParseOptions()), "noop"),
            ("parse+parquet", lambda: parse_job.parse_to_frames(spark, inputs, ParseOptions()), "parquet"),
        ]
        for label, frame, sink in variants:
            out = root / "out"
            shutil.rmtree(out, ignore_errors=True)
            before, wall = _cpu_seconds(), time.perf_counter()
            writer = frame().write.mode("overwrite")
            if sink == "noop":
                writer.format("noop").save()
            else:
                writer.partitionBy(parse_job.ROW_KIND).parquet(str(out))
            wall, after = time.perf_counter() - wall, _cpu_seconds()
            if before and after:
                jvm, python = ((a - b) / lines * 1e6 for a, b in zip(after, before))
                print(f"{label:14s} JVM {jvm:5.1f} us, Python workers {python:5.1f} us   (wall {wall:.1f}s)")
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
