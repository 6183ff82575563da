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
from typing import NamedTuple, Optional

# UpdateMetadata's stand-in leader for a topic being deleted (-2) and "no leader" (-1): one definition.
from kafka_forensics.statemachines.invariants import LEADER_DURING_DELETE

from .events import attr

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


# event type -> source, one lookup per line (the sets above are disjoint)
_SOURCES = {
    event_type: source
    for source, types in (
        (DECISION, DECISION_TYPES),
        (CONTROLLER_VIEW, CONTROLLER_VIEW_TYPES),
        (BROKER_VIEW, BROKER_VIEW_TYPES),
        (LEADER_ISR_CHANGE, LEADER_ISR_TYPES),
        (FAILURE, FAILURE_TYPES),
    )
    for event_type in types
}
assert len(_SOURCES) == sum(
    map(len, (DECISION_TYPES, CONTROLLER_VIEW_TYPES, BROKER_VIEW_TYPES, LEADER_ISR_TYPES, FAILURE_TYPES))
)


def source_of(event_type: str) -> Optional[str]:
    """Which source a line of ``event_type`` is (None: a line that shows no partition state)."""
    return _SOURCES.get(event_type)


class PartitionStatus(NamedTuple):
    """The replayed partition: state-machine state plus the leader/ISR znode contents.

    A named tuple, not a dataclass: the replay builds one per line that moves the state, and a tuple
    is built (and compared) at C speed."""

    state: Optional[str] = None
    leader: Optional[int] = None
    isr: Optional[tuple[int, ...]] = None
    replicas: Optional[tuple[int, ...]] = None
    leader_epoch: Optional[int] = None
    partition_epoch: Optional[int] = None

    def with_(self, **changes) -> "PartitionStatus":
        return self._replace(**changes)


class Observation(NamedTuple):
    """The leader/ISR fields one line shows (None = the line does not say). A named tuple: one per line."""

    leader: Optional[int] = None
    isr: Optional[tuple[int, ...]] = None
    replicas: Optional[tuple[int, ...]] = None
    leader_epoch: Optional[int] = None
    partition_epoch: Optional[int] = None
    state_controller_epoch: Optional[int] = None
    recovering: bool = False

    @property
    def has_state(self) -> bool:
        return (
            self.leader is not None
            or self.isr is not None
            or self.leader_epoch is not None
            or self.partition_epoch is not None
        )


def observation_of(event: dict) -> Observation:
    """Fields of ``event``; ``Leader t-p starts at …`` is written by the leader itself.

    The UpdateMetadata state of a topic being deleted is ``LeaderAndIsr.duringDelete(isr)``: leader -2 with
    the *initial* leader epoch and zkVersion 0, and the current controller's epoch (K:api/LeaderAndIsr.scala
    @1.1.1:26-29, @3.9.0-rc3:48; K:controller/ControllerChannelManager.scala@0.10.2.2:320-322, @2.2.2:374-376,
    @2.4.1:422-424, @3.9.0-rc3:476-478). It is a stand-in, not the znode: its epochs say nothing."""
    get = event.get
    leader = get("leader")
    if leader is None and event["event_type"] == "leader_starts":
        leader = get("broker")
    isr, replicas = get("isr"), get("replicas")
    recovering = get("attrs") is not None and attr(event, "leader_recovery_state") == "RECOVERING"
    # the event's own tuples (``events``: already untracked, and shared by every state and row made of them)
    if isr is not None and type(isr) is not tuple:
        isr = tuple(map(int, isr))
    if replicas is not None and type(replicas) is not tuple:
        replicas = tuple(map(int, replicas))
    if leader == LEADER_DURING_DELETE:  # the stand-in's epochs say nothing
        return Observation(leader, isr, replicas, recovering=recovering)
    return Observation(
        leader,
        isr,
        replicas,
        get("leader_epoch"),
        get("partition_epoch"),
        get("state_controller_epoch"),
        recovering,
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


def apply_observation(cur: PartitionStatus, obs: Observation, state: Optional[str] = None) -> PartitionStatus:
    """``cur`` with every field the line shows (and ``state``, if given); the deletion stand-in leader -2 is
    not a leader."""
    leader, isr, replicas, leader_epoch, partition_epoch = obs[:5]
    return PartitionStatus(
        cur.state if state is None else state,
        leader if leader is not None and leader != LEADER_DURING_DELETE else cur.leader,
        isr if isr is not None else cur.isr,
        replicas if replicas else cur.replicas,
        leader_epoch if leader_epoch is not None and leader_epoch >= 0 else cur.leader_epoch,
        partition_epoch if partition_epoch is not None and partition_epoch >= 0 else cur.partition_epoch,
    )


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
    for text in (attr(event, "partitions") or "").split(","):
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
