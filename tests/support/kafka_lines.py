"""Realistic log lines for tests, in Kafka's exact layout (kafka-log-formats.md §1)."""

from __future__ import annotations


def line(
    message: str, level: str = "TRACE", logger: str = "state.change.logger", ts: str = "2021-03-04 10:15:23,456"
) -> str:
    return f"[{ts}] {level} {message} ({logger})"


STATE_CHANGE_21 = line(
    "[Controller id=1 epoch=5] Changed partition orders-7 from OfflinePartition to OnlinePartition "
    "with state LeaderAndIsr(leader=2, leaderEpoch=9, isr=List(2, 3), zkVersion=14)"
)
FAILED_11 = line(
    "[Controller id=2 epoch=5] Controller 2 epoch 5 failed to change state for partition test-0 "
    "from OfflinePartition to OnlinePartition",
    level="ERROR",
)
STACK_11 = [
    "kafka.common.StateChangeFailedException: Failed to elect leader for partition test-0 under strategy OfflinePartitionLeaderElectionStrategy",
    "\tat kafka.controller.PartitionStateMachine.$anonfun$doElectLeaderForPartitions$3(PartitionStateMachine.scala:328)",
    "\tat scala.collection.mutable.ResizableArray.foreach(ResizableArray.scala:59)",
    "Caused by: java.lang.IllegalStateException: boom",
    "\t... 22 more",
]
LOG4J2_FRAME = (
    "\tat kafka.server.ReplicaManager.becomeLeaderOrFollower(ReplicaManager.scala:1723) ~[kafka_2.13-4.0.0.jar:?]"
)
CONTROLLER_08 = line(
    "[Controller 0]: Broker 0 starting become controller state transition",
    level="INFO",
    logger="kafka.controller.KafkaController",
)
BROKER_CHANGE_22 = line(
    "[Controller id=9] Newly added brokers: 6, deleted brokers: , bounced brokers: 2,4, all live brokers: 2,4,6,7,8,9",
    level="INFO",
    logger="kafka.controller.KafkaController",
)


def text(*lines: str, crlf: bool = False) -> bytes:
    end = "\r\n" if crlf else "\n"
    return (end.join(lines) + end).encode("utf-8")
