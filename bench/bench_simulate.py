"""How fast the simulator's scale mode writes logs (lines/s), for bench/RESULTS.md.

    python bench/bench_simulate.py                                  # the issue's size: 30 brokers,
                                                                    # 200 topics, 100k partitions, 5 failovers
    python bench/bench_simulate.py --partitions 20000 --brokers 10 --failovers 2 --kafka-version 2.8

The output directory is a temporary one, deleted afterwards unless ``--keep DIR`` is given (the
full-size run writes several GB: generated logs are never committed).
"""

from __future__ import annotations

import argparse
import platform
import shutil
import sys
import tempfile
from pathlib import Path

from kafka_forensics.simulator.scale import run_scale


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kafka-version", default="2.4")
    ap.add_argument("--brokers", type=int, default=30)
    ap.add_argument("--topics", type=int, default=200)
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--failovers", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--keep", metavar="DIR", help="write here and keep the files")
    args = ap.parse_args(argv)
    out = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kf-sim-bench-"))
    try:
        res = run_scale(
            out,
            kafka_version=args.kafka_version,
            brokers=args.brokers,
            topics=args.topics,
            partitions=args.partitions,
            failovers=args.failovers,
            seed=args.seed,
            trace=args.trace,
            gzip=args.gzip,
        )
    finally:
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)
    print(f"python {platform.python_version()} on {platform.machine()}")
    print(
        f"kafka {args.kafka_version}{' --trace' if args.trace else ''}{' --gzip' if args.gzip else ''}: "
        f"{args.brokers} brokers, {args.topics} topics, {args.partitions:,} partitions, {args.failovers} failovers"
    )
    print(
        f"{res.lines:,} lines ({res.records:,} records), {res.bytes / 1e9:,.2f} GB in {res.files} files, "
        f"{res.seconds:,.1f} s"
    )
    print(f"{res.lines_per_second:,.0f} lines/s, {res.bytes / 1e6 / res.seconds:,.1f} MB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
