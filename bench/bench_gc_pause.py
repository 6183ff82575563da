"""parse_file with Python's cyclic collector running vs paused (parsers/gc_pause.py), same lines.

    python bench/bench_gc_pause.py [--lines 300000] [--rounds 2]

Writes one generated 2.4 TRACE state-change log of ``--lines`` lines (a busy hour of one broker;
deleted afterwards) and parses it alternately with the collector on (the unpaused body,
``records._parse_file``) and paused (``records.parse_file``), in CPU seconds of this process.
The collector's cost grows with the rows alive at once, i.e. with the size of one file.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import write_cluster

from kafka_forensics.parsers import records


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kf-bench-gc-"))
    try:
        write_cluster(root, args.lines, brokers=1, files_per_broker=1)
        path = next(p for p in root.rglob("*") if p.is_file())
        data = path.read_bytes()
        records.parse_file(data[:200_000], str(path))  # build the grammars outside the timing
        best = {}
        for _ in range(args.rounds):
            for mode, parse in (("collector on", records._parse_file), ("collector paused", records.parse_file)):
                gc.collect()
                start = time.process_time()
                result = parse(data, str(path), records.ParseOptions())
                took = time.process_time() - start
                lines = result.summary["lines_read"]
                print(f"{mode:<17} {lines:,} lines: {took:.2f} s CPU = {took * 1e6 / lines:.1f} us/line")
                best[mode] = min(best.get(mode, took), took)
                del result
        print(
            f"paused vs on: {best['collector on'] / best['collector paused']:.2f}x less CPU (best of {args.rounds} each)"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
