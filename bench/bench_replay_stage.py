"""The driver engine's replay stage, wall µs per event, this build against an anchor build, in one run.

    python bench/bench_replay_stage.py --old-python /path/to/anchor-venv/bin/python \
        --new-python /path/to/new-venv/bin/python --events OUT_DIR [--rounds 3]

``bench_replay.py`` times ``replay_all``, the per-event Python of the state machines, in one process: CPU per
event, whatever the cores. This one times what a user waits for: ``replay_in_driver`` on an events table as
``parse`` wrote it (``OUT_DIR/events``), streaming split, buckets and, on several cores, its pool of processes
(``jobs/replay_partitions.py``), from a fresh interpreter to its last table written. Each side is a build installed
in its own virtual environment (``pip install <checkout>``; an editable install would follow the working tree),
run as ``PYTHON -c``, so the two builds never share an import. Both read the same events table (linked, never
written) and write to their own directory. Rounds alternate the order; the timing phase holds
``flock /tmp/bench.lock`` so that two benchmarks on the machine never overlap. Printed: each side's median and
least wall seconds and µs/event, and old/new.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOCK = "/tmp/bench.lock"
REPLAY = (
    "import sys; from kafka_forensics.jobs.replay_driver import replay_in_driver; "
    "from kafka_forensics.jobs.replay_options import ReplayOptions; replay_in_driver(sys.argv[1], ReplayOptions())"
)


def _rows(events: Path) -> int:
    import pyarrow.dataset as ds

    return ds.dataset(events, format="parquet").count_rows()


def _run(python: str, out: Path) -> float:
    """Seconds of one replay of ``out/events`` by ``python``'s build, its outputs cleared first."""
    for entry in out.iterdir():
        if entry.name != "events":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    began = time.perf_counter()
    subprocess.run([python, "-c", REPLAY, str(out)], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - began


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old-python", required=True, help="the anchor build's interpreter")
    ap.add_argument("--new-python", required=True, help="this build's interpreter")
    ap.add_argument("--events", type=Path, required=True, help="a directory holding an events table (parse's --out)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    events = args.events / "events"
    if not events.is_dir():
        ap.error(f"{events}: no events table (run kafka-forensics parse ... --out {args.events} first)")
    rows = _rows(events)
    sides = {"old": args.old_python, "new": args.new_python}
    times: dict[str, list[float]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory(prefix="bench-replay-stage-") as tmp:
        outs = {side: Path(tmp) / side for side in sides}
        for out in outs.values():
            out.mkdir()
            (out / "events").symlink_to(events.resolve())
        with open(LOCK, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            print(f"{rows:,} events rows in {events}; {os.cpu_count()} cores")
            print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            for r in range(args.rounds):
                for side in ("old", "new") if r % 2 == 0 else ("new", "old"):
                    times[side].append(_run(sides[side], outs[side]))
                    print(f"  round {r + 1} {side}: {times[side][-1]:.2f} s", flush=True)
            print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    old, new = (statistics.median(times[side]) for side in ("old", "new"))
    print(f"\n{'side':<6}{'median s':>10}{'µs/event':>10}{'least s':>10}{'µs/event':>10}")
    for side, seconds in (("old", old), ("new", new)):
        least = min(times[side])  # a shared host only ever adds time: the least is the steadier figure there
        print(f"{side:<6}{seconds:>10.2f}{seconds / rows * 1e6:>10.2f}{least:>10.2f}{least / rows * 1e6:>10.2f}")
    print(f"old/new {old / new:.2f}x (medians of {args.rounds} rounds, wall, from interpreter start to the last table)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
