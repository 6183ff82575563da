"""Would the JVM run the grammar-generated regexes fast enough? Spark SQL ``regexp_extract``, one run.

    python bench/bench_jvm_regex_probe.py [--lines 1200000] [--master local[2]]

The other candidate for issue 2's 150k lines/s (after ``bench_re2_probe.py`` ruled out pyarrow's
RE2). It takes the fast path's own header regex for the 2.4 dialect, translated to Java syntax
(named groups ``(?<name>``; Java has the atomic groups and possessive quantifiers as they are),
and runs it on the generated lines in three ways, each written to Spark's ``noop`` sink:
``spark.read.text`` alone, then plus the four header fields by ``regexp_extract`` (one match per
field), then plus the template buckets' regexes by ``rlike``. It prints the CPU per line, JVM
and Python, from /proc. No line numbers, continuation lines or field conversion are included,
so these are lower bounds for a JVM-side parser.
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
from pyspark.sql import functions as F

from kafka_forensics.jobs.spark_session import build_session
from kafka_forensics.parsers.records import line_parser


def to_java(pattern: str) -> str:
    return "(?s)" + pattern.replace("(?P<", "(?<")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_200_000)
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kf-bench-jvm-"))
    try:
        lines = write_cluster(root, args.lines)
        fast = line_parser("zk-2.4", None, False).primary
        header = to_java(fast.headers[0].pattern)
        groups = fast.headers[0].groupindex  # the same group numbers in Java
        fields = ("ts", "level", "body", "logger")
        spark = build_session(args.master)
        text = spark.read.option("recursiveFileLookup", "true").text(str(root))
        text.write.format("noop").mode("overwrite").save()  # warm-up: JIT, file listing
        body = F.regexp_extract("value", header, groups["body"])
        variants = {
            "read text only": text,
            "+ header, 4 x regexp_extract": text.select(
                *[F.regexp_extract("value", header, groups[f]).alias(f) for f in fields]
            ),
            f"+ header body, rlike over {len(fast.buckets)} template buckets": text.select(
                *[body.rlike(to_java(b.regex.pattern)).alias(f"b{i}") for i, b in enumerate(fast.buckets.values())]
            ),
        }
        matched = text.filter(F.col("value").rlike(header)).count()
        print(f"{lines:,} lines, {matched:,} with a header (Java); master {args.master}")
        for name, frame in variants.items():
            before = _cpu_seconds()
            start = time.perf_counter()
            frame.write.format("noop").mode("overwrite").save()
            took = time.perf_counter() - start
            after = _cpu_seconds()
            jvm, python = (a - b for a, b in zip(after, before))
            print(
                f"{name:<55} {took:6.1f} s wall; CPU per line: JVM {jvm * 1e6 / lines:5.2f} us, "
                f"Python {python * 1e6 / lines:4.2f} us"
            )
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
