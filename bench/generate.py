"""Realistic Kafka log lines in bulk, for benchmarks only (generated, never committed).

A stand-in until the scenario simulator exists: a ZooKeeper-mode 2.x cluster's state-change and
controller logs with the mix of a busy incident (most lines per-partition TRACE state changes and
requests, some free-text controller lines, an occasional failed state change with a stack trace).
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

STACK = [
    "kafka.common.StateChangeFailedException: Failed to elect leader for partition {tp} under strategy OfflinePartitionLeaderElectionStrategy(false)",
    "\tat kafka.controller.ZkPartitionStateMachine.$anonfun$doElectLeaderForPartitions$7(PartitionStateMachine.scala:424)",
    "\tat scala.collection.mutable.HashMap$Node.foreach(HashMap.scala:642)",
    "\tat kafka.controller.KafkaController.process(KafkaController.scala:2059)",
    "\tat kafka.utils.ShutdownableThread.run(ShutdownableThread.scala:96)",
]


def _lines(rng: random.Random, broker: int, controller: int, epoch: int, count: int, start: datetime):
    topics = [f"orders-{i}" for i in range(5)] + ["__consumer_offsets", "payments.v2", "clicks_raw"]
    ts = start
    n = 0
    corr = 1
    while n < count:
        ts += timedelta(microseconds=rng.randint(200, 3000))
        stamp = ts.strftime("%Y-%m-%d %H:%M:%S,") + f"{ts.microsecond // 1000:03d}"
        topic = rng.choice(topics)
        part = rng.randint(0, 49)
        tp = f"{topic}-{part}"
        leader = rng.randint(1, 3)
        isr = ",".join(str(b) for b in sorted({leader, rng.randint(1, 3)}))
        le = rng.randint(0, 80)
        zk = le + rng.randint(0, 5)
        pick = rng.random()
        c = f"[Controller id={controller} epoch={epoch}] "
        if pick < 0.22:
            msg, lvl, lg = (
                f"{c}Changed partition {tp} from OnlinePartition to OnlinePartition with state LeaderAndIsr(leader={leader}, leaderEpoch={le}, isr=List({isr.replace(',', ', ')}), zkVersion={zk})",
                "TRACE",
                "state.change.logger",
            )
        elif pick < 0.40:
            msg, lvl, lg = (
                f"{c}Changed state of replica {rng.randint(1, 3)} for partition {tp} from OnlineReplica to OfflineReplica",
                "TRACE",
                "state.change.logger",
            )
        elif pick < 0.55:
            msg, lvl, lg = (
                f"{c}Sending become-follower LeaderAndIsr request LeaderAndIsrPartitionState(topicName='{topic}', partitionIndex={part}, controllerEpoch={epoch}, leader={leader}, leaderEpoch={le}, isr=[{isr.replace(',', ', ')}], zkVersion={zk}, replicas=[1, 2, 3], addingReplicas=[], removingReplicas=[], isNew=false) to broker {rng.randint(1, 3)} for partition {tp}",
                "TRACE",
                "state.change.logger",
            )
        elif pick < 0.65:
            msg, lvl, lg = (
                f"[Broker id={broker}] Received LeaderAndIsr request LeaderAndIsrPartitionState(topicName='{topic}', partitionIndex={part}, controllerEpoch={epoch}, leader={leader}, leaderEpoch={le}, isr=[{isr.replace(',', ', ')}], zkVersion={zk}, replicas=[1, 2, 3], addingReplicas=[], removingReplicas=[], isNew=false) correlation id {corr} from controller {controller} epoch {epoch}",
                "TRACE",
                "state.change.logger",
            )
        elif pick < 0.75:
            corr += 1
            msg, lvl, lg = (
                f"{c}Received response {{error_code=0,partition_errors=[{{topic_name={topic},partition_index={part},error_code=0,_tagged_fields={{}}}}],_tagged_fields={{}}}} for request LEADER_AND_ISR with correlation id {corr} sent to broker broker{broker}:9092 (id: {broker} rack: null)",
                "TRACE",
                "state.change.logger",
            )
        elif pick < 0.80:
            msg, lvl, lg = (
                f"[Broker id={broker}] Handling LeaderAndIsr request correlationId {corr} from controller {controller} epoch {epoch} starting the become-leader transition for partition {tp}",
                "TRACE",
                "state.change.logger",
            )
        elif pick < 0.995:
            msg, lvl, lg = rng.choice(
                [
                    (
                        f"[Controller id={controller}] Processing automatic preferred replica leader election",
                        "INFO",
                        "kafka.controller.KafkaController",
                    ),
                    (
                        f"[RequestSendThread controllerId={controller}] Controller {controller} connected to broker{broker}:9092 (id: {broker} rack: null) for sending state change requests",
                        "INFO",
                        "kafka.controller.RequestSendThread",
                    ),
                    (
                        f"[Controller id={controller}] Topics not in preferred replica for broker {broker} Map()",
                        "DEBUG",
                        "kafka.controller.KafkaController",
                    ),
                    (
                        f"[Partition {tp} broker={broker}] Shrinking ISR from {isr} to {leader}. Leader: (highWatermark: 12, endOffset: 15). Out of sync replicas: (brokerId: 3, endOffset: 10).",
                        "INFO",
                        "kafka.cluster.Partition",
                    ),
                ]
            )
        else:
            line = f"[{stamp}] ERROR {c}Controller {controller} epoch {epoch} failed to change state for partition {tp} from OfflinePartition to OnlinePartition (state.change.logger)"
            yield line
            for frame in STACK:
                yield frame.format(tp=tp)
            n += 1 + len(STACK)
            continue
        yield f"[{stamp}] {lvl} {msg} ({lg})"
        n += 1


def generate_lines(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return list(_lines(rng, 1, 1, 12, count, datetime(2024, 3, 4, 10, 0, 0)))


def write_cluster(root: Path, total_lines: int, brokers: int = 3, files_per_broker: int = 4, seed: int = 7) -> int:
    """Write rotated state-change logs for ``brokers`` brokers; returns the number of lines."""
    rng = random.Random(seed)
    per_file = total_lines // (brokers * files_per_broker)
    written = 0
    for b in range(1, brokers + 1):
        folder = root / f"broker-{b}"
        folder.mkdir(parents=True, exist_ok=True)
        for h in range(files_per_broker):
            name = "state-change.log" if h == files_per_broker - 1 else f"state-change.log.2024-03-04-{10 + h:02d}"
            lines = list(_lines(rng, b, 1, 12, per_file, datetime(2024, 3, 4, 10 + h, 0, 0)))
            (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
            written += len(lines)
    return written
