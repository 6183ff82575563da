"""The in-process replay's CPU cost per event, this checkout against an anchor checkout, in one run.

    python bench/bench_replay.py --vs /tmp/replay-base [--lines 100000] [--rounds 7]

(``git worktree add --detach /tmp/replay-base main`` makes an anchor.) The inputs are parsed once,
here, with this checkout's ``parse_file``: the generated 2.4 TRACE state-change logs
(``generate.write_cluster``, ``--lines`` lines) and the recorded real incidents ``sample_logs/real-*``
(each replayed on its own, as ``snapshot_outputs`` does; their times are summed). Two worker
processes then load the replay, one from each checkout, by the same import hook (so neither gets an
advantage from how it is imported) and receive the same pickled events. A round times every input
once in each worker, the order alternating between rounds; a timing is ``time.process_time`` (CPU,
not wall: the machine is shared) of what ``snapshot_outputs`` runs: the conversion of every parsed
row (``replay_events``, or ``replay_event`` per row in a checkout without it; the stand-in for
Spark's Arrow conversion), then ``replay_all``; each is also printed on its own. The timing phase
holds ``flock /tmp/bench.lock`` so that two benchmarks on the machine never overlap. Printed: the
median µs/event of each side per input and their ratio.
"""

from __future__ import annotations

import argparse
import fcntl
import importlib.util
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCK = "/tmp/bench.lock"
GENERATED = "generated-2.4-trace"
REAL = "real-incidents"


# ---- worker: one checkout's replay -------------------------------------------------------------
def _load_checkout(root: Path) -> None:
    """Map ``kafka_forensics.<layer>`` to ``root/<layer>`` (pyproject's package-dir), ahead of any install."""
    layers = {p.parent.name for p in root.glob("*/__init__.py")}

    class Finder:
        @staticmethod
        def find_spec(name, path=None, target=None):
            head, _, layer = name.partition(".")
            if head != "kafka_forensics" or "." in layer or layer not in layers:
                return None
            folder = root / layer
            return importlib.util.spec_from_file_location(
                name, folder / "__init__.py", submodule_search_locations=[str(folder)]
            )

    package = types.ModuleType("kafka_forensics")
    package.__path__ = []
    sys.modules["kafka_forensics"] = package
    sys.meta_path.insert(0, Finder())


def _time_replay(inputs: list[list[dict]]) -> tuple[float, float]:
    """CPU seconds of converting every row (``replay_events``, the Arrow conversion's stand-in) and of ``replay_all``."""
    from kafka_forensics.replay import local

    # replay_events where the checkout has it (issue 15), else what it did before: replay_event per row
    replay_events = getattr(local, "replay_events", None) or (lambda rows: [local.replay_event(e) for e in rows])
    convert = replay = 0.0
    for events in inputs:
        start = time.process_time()
        rows = replay_events(events)
        middle = time.process_time()
        local.replay_all(rows)
        convert, replay = convert + middle - start, replay + time.process_time() - middle
        del rows
    return convert, replay


def worker(root: Path, events_file: Path) -> None:
    _load_checkout(root)
    import kafka_forensics.replay.local as local

    assert Path(local.__file__).resolve().is_relative_to(root.resolve()), local.__file__
    with events_file.open("rb") as f:
        inputs: dict[str, list[list[dict]]] = pickle.load(f)
    for name in inputs:  # warm-up: imports, caches
        _time_replay(inputs[name])
    print(json.dumps({"ready": str(Path(local.__file__).parent)}), flush=True)
    for line in sys.stdin:
        name = line.strip()
        print(json.dumps({"seconds": _time_replay(inputs[name])}), flush=True)


# ---- driver ------------------------------------------------------------------------------------
def _parse_tree(root: Path) -> list[dict]:
    from kafka_forensics.parsers.records import ParseOptions, parse_file

    events: list[dict] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name != "README.md" and p.suffix != ".json"):
        events.extend(parse_file(path.read_bytes(), str(path.relative_to(root)), ParseOptions()).events)
    return events


def _inputs(lines: int, workdir: Path) -> dict[str, list[list[dict]]]:
    sys.path.insert(0, str(REPO / "bench"))
    from generate import write_cluster

    write_cluster(workdir / "generated", lines)
    real = sorted(p for p in (REPO / "sample_logs").glob("real-*") if p.is_dir())
    return {GENERATED: [_parse_tree(workdir / "generated")], REAL: [_parse_tree(p) for p in real]}


class Worker:
    def __init__(self, label: str, root: Path, events_file: Path):
        self.label = label
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", str(root), "--events", str(events_file)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.loaded = self._read()["ready"]

    def _read(self) -> dict:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"the {self.label} worker died (exit {self.proc.wait()})")
        return json.loads(line)

    def time(self, name: str) -> tuple[float, float]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(name + "\n")
        self.proc.stdin.flush()
        convert, replay = self._read()["seconds"]
        return convert, replay

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vs", type=Path, help="the anchor checkout (old)")
    ap.add_argument("--lines", type=int, default=100_000, help="lines of the generated log (default 100000)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--events", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.events)
        return 0
    if args.vs is None or not (args.vs / "replay" / "local.py").is_file():
        ap.error("--vs must name a checkout of kafka-forensics (with replay/local.py)")
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        inputs = _inputs(args.lines, Path(tmp))
        counts = {name: sum(len(events) for events in runs) for name, runs in inputs.items()}
        events_file = Path(tmp) / "events.pickle"
        with events_file.open("wb") as f:
            pickle.dump(inputs, f, protocol=pickle.HIGHEST_PROTOCOL)
        for name, runs in inputs.items():
            print(f"{name}: {counts[name]:,} events in {len(runs)} replay(s)")
        with open(LOCK, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            old, new = Worker("old", args.vs, events_file), Worker("new", REPO, events_file)
            print(f"old: {old.loaded}\nnew: {new.loaded}")
            times: dict[tuple[str, str], list[tuple[float, float]]] = {}
            for r in range(args.rounds):
                for name in inputs:
                    for w in (old, new) if r % 2 == 0 else (new, old):
                        times.setdefault((w.label, name), []).append(w.time(name))
            old.close()
            new.close()
            print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"\n{'input':<22}{'events':>9}{'':>4}{'old µs/ev':>12}{'new µs/ev':>12}{'old/new':>9}")
    for name in inputs:
        for part, pick in (
            ("total", lambda t: t[0] + t[1]),
            ("conversion", lambda t: t[0]),
            ("replay_all", lambda t: t[1]),
        ):
            o, n = (
                statistics.median(pick(t) for t in times[(side, name)]) / counts[name] * 1e6 for side in ("old", "new")
            )
            label = name if part == "total" else f"  {part}"
            print(f"{label:<22}{counts[name] if part == 'total' else '':>9}{'':>4}{o:>12.2f}{n:>12.2f}{o / n:>8.2f}x")
    print(f"(medians of {args.rounds} rounds, process_time; total = conversion of every row + replay_all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
