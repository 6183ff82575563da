"""``lab load``: a large real TRACE-level log under load, for the benchmarks (bench/out/, never committed).

A 3-broker cluster with state.change.logger at TRACE, many partitions (RF 3) and a producer, then
rounds of faults - kill -9 (the controller every third round), controlled shutdown - each followed
by the broker's restart and, from 2.4, a preferred election of every partition: every round moves
hundreds of leaders, so the logs hold hundreds of elections and thousands of replica transitions.
The brokers' whole state-change/controller/server logs are kept, uncut.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Optional

from .cluster import Cluster
from .curate import log_files
from .jars import resolve_jars
from .releases import resolve
from .run import Run, fully_in_sync, without
from .tools import Tools

TOPICS = 6


def record_load(kafka: str, mode: Optional[str], out: Path, partitions: int = 300, rounds: int = 6) -> str:
    target = resolve(kafka, mode)
    jars = resolve_jars(target)
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix=f"kf-lab-load-{target.name}-"))
    cluster = Cluster(target, jars, work, trace=True)
    out = Path(out)
    try:
        cluster.start()
        tools = Tools(cluster)
        run = Run(cluster, tools, work / "record")
        per_topic = max(1, partitions // TOPICS)
        for i in range(TOPICS):
            run.act("kafka-topics --create", None, f"load-{i}: {per_topic} partitions, RF 3")
            tools.create_topic(f"load-{i}", partitions=per_topic, replication=3)
        run.background.append(tools.producer("load-0", 10_000_000, 200, work / "producer.out"))
        run.settle("before", fully_in_sync(), "all partitions in sync", timeout=600)
        for r in range(rounds):
            victim = cluster.wait_controller() if r % 3 == 0 else sorted(cluster.nodes)[r % len(cluster.nodes)]
            if r % 2 == 0:
                run.act("kill -9", victim)
                cluster.kill(victim)
            else:
                run.act("SIGTERM", victim)
                cluster.controlled_shutdown(victim, timeout=300)
            run.settle(f"round-{r}-down", without(victim), f"no leadership left on {victim}", timeout=600)
            run.act("start", victim)
            cluster.start_node(victim, timeout=300)
            run.settle(f"round-{r}-up", fully_in_sync(), "all partitions in sync", timeout=600)
            if target.release.has_leader_election_tool:
                run.act("kafka-leader-election --all-topic-partitions", None, "PREFERRED")
                tools.elect_all_preferred()
        for child in run.background:
            child.kill()
        cluster.kill_all()
        if out.exists():
            shutil.rmtree(out)
        total = 0
        lines = 0
        for node_id, node in sorted(cluster.nodes.items()):
            dest = out / f"broker-{node_id}"
            dest.mkdir(parents=True, exist_ok=True)
            for path in log_files(node.logs):
                shutil.copy2(path, dest / path.name)
                total += path.stat().st_size
                with open(path, "rb") as fh:
                    lines += sum(1 for _ in fh)
        return (
            f"{lines:,} lines, {total / 1e6:.1f} MB of TRACE logs ({partitions} partitions, {rounds} rounds) "
            f"from Kafka {target.version} ({target.mode}) in {time.monotonic() - started:.0f} s -> {out}"
        )
    finally:
        cluster.kill_all()
        shutil.rmtree(work, ignore_errors=True)
