"""Would column-wise regexes (pyarrow's RE2 kernels) beat the per-line fast path? Same lines, one run.

    python bench/bench_re2_probe.py [--lines 300000]

The question behind issue 2's 150k lines/s target: per-line CPython costs ≈ 18 µs per line, so
the next step would be matching whole columns in C++. This takes the fast path's own
grammar-generated header regex for the 2.4 dialect, translated to RE2 syntax (atomic groups and
possessive quantifiers dropped: same matches on these patterns, RE2 has neither). It times
``pyarrow.compute.extract_regex`` on a column of generated lines against ``re.match`` per line.
It also times matching every template bucket over every message column-wise. CPU seconds.
"""

from __future__ import annotations

import argparse
import datetime
import random
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import _lines

from kafka_forensics.parsers.records import line_parser


def to_re2(pattern: str) -> str:
    return pattern.replace("(?>", "(?:").replace("++", "+").replace("*+", "*").replace("?+", "?").replace(r"\Z", "$")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=300_000)
    args = ap.parse_args()
    lines = list(_lines(random.Random(3), 1, 1, 12, args.lines, datetime.datetime(2024, 3, 4, 10)))
    column = pa.array(lines, pa.string())
    fast = line_parser("zk-2.4", None, False)
    header = fast.primary.headers[0]

    start = time.process_time()
    extracted = pc.extract_regex(column, to_re2(header.pattern))
    re2_header = (time.process_time() - start) * 1e6 / len(lines)
    start = time.process_time()
    python_matches = sum(header.match(line) is not None for line in lines)
    python_header = (time.process_time() - start) * 1e6 / len(lines)
    assert len(lines) - extracted.null_count == python_matches, "RE2 and re disagree on which lines have a header"
    print(f"{len(lines):,} lines, {python_matches:,} with a header")
    print(
        f"header: RE2 column-wise {re2_header:.2f} us/line, Python re per line {python_header:.2f} us/line "
        f"-> RE2 is {python_header / re2_header:.2f}x the speed"
    )

    bodies = extracted.field("body")
    compiled, spent = 0, 0.0
    for bucket in fast.primary.buckets.values():
        try:
            start = time.process_time()
            pc.match_substring_regex(bodies, to_re2(bucket.regex.pattern))
            spent += time.process_time() - start
            compiled += 1
        except pa.ArrowInvalid:
            pass  # a pattern RE2 cannot express
    print(
        f"templates: {compiled} of {len(fast.primary.buckets)} buckets compile in RE2; matching them all "
        f"column-wise costs {spent * 1e6 / len(lines):.2f} us/line (before any field is extracted)"
    )


if __name__ == "__main__":
    main()
