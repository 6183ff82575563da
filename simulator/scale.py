"""Scale mode: a big cluster through creations, broker failures and controller failovers, streamed.

For benchmarks only (outputs are never committed): millions of lines, written as they are rendered
(``writer.LogOutput`` keeps nothing but file buffers), with no evidence capture and no notes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from kafka_forensics.core.errors import UsageError

from .engine import Simulation


@dataclass
class ScaleResult:
    out_dir: Path
    files: int
    records: int
    lines: int
    bytes: int
    seconds: float

    @property
    def lines_per_second(self) -> float:
        return self.lines / self.seconds if self.seconds else 0.0


def run_scale(
    out_dir: Path,
    *,
    kafka_version: str = "2.4",
    brokers: int = 30,
    topics: int = 200,
    partitions: int = 100_000,
    failovers: int = 5,
    rf: int = 3,
    seed: int = 0,
    trace: bool = False,
    gzip: bool = False,
) -> ScaleResult:
    """Create ``topics`` topics holding ``partitions`` partitions (RF ``rf``) on ``brokers`` brokers,
    then ``failovers`` rounds of: a broker crash and restart, and a controller resignation."""
    if brokers < max(rf, 2) or topics < 1 or partitions < topics or failovers < 0:
        raise UsageError("scale mode needs brokers >= max(rf, 2), 1 <= topics <= partitions, failovers >= 0")
    started = time.perf_counter()
    ids = list(range(1, brokers + 1))
    sim = Simulation(out_dir, kafka_version, seed=seed, trace=trace, gzip=gzip, brokers=ids, watch=())
    ops, rng = sim.ops, sim.rng
    sim.boot(controller=1)
    per_topic, extra = divmod(partitions, topics)
    first = 0
    for t in range(topics):
        count = per_topic + (1 if t < extra else 0)
        assignment = []
        for i in range(count):
            start = (first + i) % brokers
            assignment.append([ids[(start + k) % brokers] for k in range(rf)])
        first += count
        ops.create_topic(f"topic-{t:04d}", assignment)
        sim.clock.sleep(rng.randint(100, 2000))
    for _round in range(failovers):
        c = sim.cluster.controller
        victim = rng.choice([b for b in ids if b != c.id])
        ops.broker_crash(victim)
        sim.clock.sleep(6000)
        ops.broker_change(c, deleted=[victim])
        sim.clock.sleep(rng.randint(30_000, 120_000))
        ops.broker_start(victim)
        ops.broker_change(c, added=[victim])
        sim.clock.sleep(rng.randint(2000, 8000))
        ops.catch_up(victim)
        sim.clock.sleep(rng.randint(60_000, 600_000))
        ops.resign(c.id, session_expired=False)
        nxt = ids[(ids.index(c.id) + 1) % brokers]
        ops.elect(nxt)
        sim.clock.sleep(rng.randint(60_000, 600_000))
    res = sim.finish("scale", f"{brokers} brokers, {topics} topics, {partitions} partitions, {failovers} failovers")
    seconds = time.perf_counter() - started
    size = sum((Path(out_dir) / f).stat().st_size for f in res.files)
    return ScaleResult(Path(out_dir), len(res.files), res.records, res.lines, size, seconds)
