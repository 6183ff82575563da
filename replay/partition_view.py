"""What a log line says about a partition's leader/ISR/epochs, and how trustworthy that is.

Lines are sorted into sources because they deserve different trust: a controller *decision*
(``Changed partition … to OnlinePartition with state …``, or its write of a leader's ISR request)
establishes state; a *controller view*
(LeaderAndIsr / UpdateMetadata being sent) repeats the controller's current state; a *broker view*
(``Received LeaderAndIsr request …``, ``Leader t-p starts at …``) is a delayed echo that may be
stale; a *leader ISR change* (``Shrinking ISR from …``) is the leader's own write (no leader-epoch
bump, K:cluster/Partition.scala@2.4.1 maybeShrinkIsr).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Optional

# UpdateMetadata's stand-in leader for a topic being deleted (-2) and "no leader" (-1): one definition.
from kafka_forensics.statemachines.invariants import LEADER_DURING_DELETE

DECISION = "decision"
CONTROLLER_VIEW = "controller_view"
BROKER_VIEW = "broker_view"
LEADER_ISR_CHANGE = "leader_isr_change"
FAILURE = "failure"

DECISION_TYPES = frozenset(
    {
        "partition_state_change",
        "partition_isr_removed",
        "leader_elected",
        "leader_selected",
        "unclean_leader_election",
        "kraft_partition_change",
        # 2.7+: the controller writes the ISR a leader asked for (AlterIsr/AlterPartition) and logs it in
        # controller.log at DEBUG (K:controller/KafkaController.scala@2.8.2:2344, @3.9.0-rc3:2462)
        "controller_isr_updated",
    }
)
CONTROLLER_VIEW_TYPES = frozenset({"send_leader_and_isr", "send_update_metadata", "leader_cache_updated"})
BROKER_VIEW_TYPES = frozenset(
    {
        "broker_leader_and_isr_received",
        "broker_metadata_cached",
        "broker_leader_unavailable",
        "leader_starts",
        "follower_starts",
    }
)
LEADER_ISR_TYPES = frozenset({"isr_shrink", "isr_expand", "isr_updated"})
FAILURE_TYPES = frozenset({"partition_state_change_failed", "no_replica_alive", "replica_state_change_failed"})


def source_of(event_type: str) -> Optional[str]:
    if event_type in DECISION_TYPES:
        return DECISION
    if event_type in CONTROLLER_VIEW_TYPES:
        return CONTROLLER_VIEW
    if event_type in BROKER_VIEW_TYPES:
        return BROKER_VIEW
    if event_type in LEADER_ISR_TYPES:
        return LEADER_ISR_CHANGE
    if event_type in FAILURE_TYPES:
        return FAILURE
    return None


@dataclass(frozen=True)
class PartitionStatus:
    """The replayed partition: state-machine state plus the leader/ISR znode contents."""

    state: Optional[str] = None
    leader: Optional[int] = None
    isr: Optional[tuple[int, ...]] = None
    replicas: Optional[tuple[int, ...]] = None
    leader_epoch: Optional[int] = None
    partition_epoch: Optional[int] = None

    def key(self) -> tuple:
        return (self.state, self.leader, self.isr, self.replicas, self.leader_epoch, self.partition_epoch)

    def with_(self, **changes) -> "PartitionStatus":
        return replace(self, **changes)


def _ints(values) -> Optional[tuple[int, ...]]:
    return None if values is None else tuple(int(v) for v in values)


@dataclass(frozen=True)
class Observation:
    """The leader/ISR fields one line shows (None = the line does not say)."""

    leader: Optional[int] = None
    isr: Optional[tuple[int, ...]] = None
    replicas: Optional[tuple[int, ...]] = None
    leader_epoch: Optional[int] = None
    partition_epoch: Optional[int] = None
    state_controller_epoch: Optional[int] = None
    recovering: bool = False

    @property
    def has_state(self) -> bool:
        return any(v is not None for v in (self.leader, self.isr, self.leader_epoch, self.partition_epoch))


def observation_of(event: dict) -> Observation:
    """Fields of ``event``; ``Leader t-p starts at …`` is written by the leader itself.

    The UpdateMetadata state of a topic being deleted is ``LeaderAndIsr.duringDelete(isr)``: leader -2 with
    the *initial* leader epoch and zkVersion 0, and the current controller's epoch (K:api/LeaderAndIsr.scala
    @1.1.1:26-29, @3.9.0-rc3:48; K:controller/ControllerChannelManager.scala@0.10.2.2:320-322, @2.2.2:374-376,
    @2.4.1:422-424, @3.9.0-rc3:476-478). It is a stand-in, not the znode: its epochs say nothing."""
    leader = event.get("leader")
    if event["event_type"] == "leader_starts" and leader is None:
        leader = event.get("broker")
    attrs = event.get("attrs") or {}
    stand_in = leader == LEADER_DURING_DELETE
    return Observation(
        leader=leader,
        isr=_ints(event.get("isr")),
        replicas=_ints(event.get("replicas")),
        leader_epoch=None if stand_in else event.get("leader_epoch"),
        partition_epoch=None if stand_in else event.get("partition_epoch"),
        state_controller_epoch=None if stand_in else event.get("state_controller_epoch"),
        recovering=attrs.get("leader_recovery_state") == "RECOVERING",
    )


def is_stale(obs: Observation, cur: PartitionStatus) -> bool:
    """A view older than what is already known (a delayed echo): it must not move the timeline back."""
    if obs.leader_epoch is not None and cur.leader_epoch is not None and obs.leader_epoch >= 0:
        if obs.leader_epoch < cur.leader_epoch:
            return True
        if obs.leader_epoch > cur.leader_epoch:
            return False
    if obs.partition_epoch is not None and cur.partition_epoch is not None and obs.partition_epoch >= 0:
        return obs.partition_epoch < cur.partition_epoch
    return False


def apply_observation(cur: PartitionStatus, obs: Observation) -> PartitionStatus:
    """``cur`` with every field the line shows; the deletion stand-in leader -2 is not a leader."""
    changes: dict[str, Any] = {}
    if obs.leader is not None and obs.leader != LEADER_DURING_DELETE:
        changes["leader"] = obs.leader
    if obs.isr is not None:
        changes["isr"] = obs.isr
    if obs.replicas is not None and obs.replicas:
        changes["replicas"] = obs.replicas
    if obs.leader_epoch is not None and obs.leader_epoch >= 0:
        changes["leader_epoch"] = obs.leader_epoch
    if obs.partition_epoch is not None and obs.partition_epoch >= 0:
        changes["partition_epoch"] = obs.partition_epoch
    return cur.with_(**changes) if changes else cur


# ``Mark replicas t-0,t-1 on broker B as offline`` (KafkaController.scala@1.0.0:1544 .. @3.9.0-rc3:1446, after a
# LeaderAndIsr response with KAFKA_STORAGE_ERROR; then onReplicasBecomeOffline) and the ZooKeeper-migration
# ``Found t-0,t-1 on broker B as offline`` (MigrationPropagatorBatch.scala@3.4.0:61 .. @3.9.0-rc3:61) name their
# partitions only in text: the line is a fact about replica B of each one.
OFFLINE_REPLICAS_MARKED = "offline_replicas_marked"
# TopicPartition.toString is "topic-partition"; a topic name is [a-zA-Z0-9._-]+, so the number after the last "-"
# is the partition (clients/src/main/java/org/apache/kafka/common/TopicPartition.java@3.9.0-rc3:66).
PARTITION_TEXT = r"^(.+)-(\d+)$"
_PARTITION_TEXT = re.compile(PARTITION_TEXT)


def per_partition_events(event: dict) -> list[dict]:
    """The line once per partition it names, with ``topic``, ``partition`` and ``replica`` (= the broker)."""
    out = []
    for text in ((event.get("attrs") or {}).get("partitions") or "").split(","):
        found = _PARTITION_TEXT.match(text.strip())
        if found:
            out.append(
                {
                    **event,
                    "topic": found.group(1),
                    "partition": int(found.group(2)),
                    "replica": event.get("target_broker"),
                }
            )
    return out
