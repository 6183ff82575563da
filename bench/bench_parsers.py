"""Ours (fast path compiled from the grammar) vs plain Lark on the same lines, in one run.

    python bench/bench_parsers.py [--lines 20000]

Measures whole-file parsing (``parse_file``: classification, fields, rows, reconciliation) and
line classification alone, both paths on identical input, and prints the ratio. Times are CPU
seconds of this process, so a busy shared machine skews both paths alike.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import generate_lines

from kafka_forensics.parsers.lines import FastLineParser, LarkLineParser
from kafka_forensics.parsers.records import ParseOptions, parse_file


def _best(fn, repeat: int = 3) -> float:
    """Best CPU time of this process (``process_time``): both paths are timed the same way, and
    other work on a shared machine does not count against whichever path ran while it was busy."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


REAL_LOGS = Path(__file__).resolve().parents[2] / "shared" / "real-logs"


def _real_lines(count: int, compose: bool = False) -> list[str]:
    """The real-log corpus (../shared/real-logs), repeated up to ``count`` lines. ``compose``: as
    ``docker compose logs`` prints it, every physical line after its service's prefix ("kafka-2  | ",
    three services, one per file in turn)."""
    corpus = []
    for k, path in enumerate(sorted(REAL_LOGS.glob("*.log"))):
        lines = path.read_text(encoding="utf-8").replace("\r\n", "\n").splitlines()
        if compose:
            lines = [f"kafka-{k % 3 + 1}  | {line}" for line in lines]
        corpus.extend(lines)
    if not corpus:  # a checkout without ../shared beside it (e.g. a worktree under /tmp)
        raise SystemExit(f"the real-log corpus is missing: {REAL_LOGS} (the repository must sit beside shared/)")
    return (corpus * (count // len(corpus) + 1))[:count]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument(
        "--corpus",
        choices=("generated", "real"),
        default="generated",
        help="generated: a busy 2.4 TRACE state-change log; real: ../shared/real-logs repeated",
    )
    args = ap.parse_args()
    lines = generate_lines(args.lines) if args.corpus == "generated" else _real_lines(args.lines)
    data = ("\n".join(lines) + "\n").encode()
    print(
        f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}; "
        f"{args.corpus} corpus, {len(lines):,} lines, {len(data) / 1e6:.1f} MB"
    )
    # warm both (grammar build, regex compile) outside the timing
    version = "2.4" if args.corpus == "generated" else None  # real corpus: dialect detected
    parse_file(data[:2000], "state-change.log", ParseOptions(use_lark=True, kafka_version=version))
    parse_file(data[:2000], "state-change.log", ParseOptions(kafka_version=version))
    lark_t = _best(lambda: parse_file(data, "state-change.log", ParseOptions(use_lark=True, kafka_version=version)), 1)
    fast_t = _best(lambda: parse_file(data, "state-change.log", ParseOptions(kafka_version=version)), 1)  # cold caches
    print(
        f"parse_file  plain Lark {len(lines) / lark_t:>10,.0f} lines/s   fast path {len(lines) / fast_t:>10,.0f} lines/s   ratio {lark_t / fast_t:.1f}x"
    )
    dialect = "zk-2.4" if args.corpus == "generated" else "auto"
    lk, fp = LarkLineParser(dialect), FastLineParser(dialect)
    lark_c = _best(lambda: [lk.classify(x) for x in lines], 1)
    fast_c = _best(lambda: [fp.classify(x) for x in lines])
    print(
        f"classify    plain Lark {len(lines) / lark_c:>10,.0f} lines/s   fast path {len(lines) / fast_c:>10,.0f} lines/s   ratio {lark_c / fast_c:.1f}x"
    )


if __name__ == "__main__":
    main()
