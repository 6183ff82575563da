"""Invariants of Kafka's partition state that can be checked from logged values alone.

Each check returns violation *names* (stable strings the findings table and the expectation
suites key on), never raises, and skips any value the log line did not carry (None), because
absence is not illegality. Names:

``leader_not_in_isr``            I2: leader must be in the ISR unless it is a no-leader sentinel
``isr_not_subset_of_replicas``   I3: (legal for a moment during reassignment, KAFKA-9672)
``empty_isr``                    I4: only where that era's controller can write an empty ISR
``recovering_isr_not_singleton`` I15: a RECOVERING leader (KIP-704) must be the whole ISR
``leader_epoch_regression``      I8: leader epoch never decreases within a partition incarnation
``leader_epoch_reused``          I8: one leader epoch, two different leaders
``partition_epoch_regression``   I9: zkVersion / partitionEpoch never decreases
``controller_epoch_regression``  I5/I10: controller epoch never decreases

(I-numbers refer to §4 of the project's kafka-state-machines reference.) Epoch checks compare two
observations of the *same* partition incarnation: a deleted and re-created topic restarts at 0.
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Sequence

from kafka_forensics.core.rule_changes import has_rule
from kafka_forensics.core.versions import VersionLike, as_version

from .elections import default_unclean_leader_election

LEADER_NOT_IN_ISR = "leader_not_in_isr"
ISR_NOT_SUBSET_OF_REPLICAS = "isr_not_subset_of_replicas"
EMPTY_ISR = "empty_isr"
RECOVERING_ISR_NOT_SINGLETON = "recovering_isr_not_singleton"
LEADER_EPOCH_REGRESSION = "leader_epoch_regression"
LEADER_EPOCH_REUSED = "leader_epoch_reused"
PARTITION_EPOCH_REGRESSION = "partition_epoch_regression"
CONTROLLER_EPOCH_REGRESSION = "controller_epoch_regression"

NO_LEADER = -1  # LeaderAndIsr.NoLeader (K:api/LeaderAndIsr.scala@1.0.2:25, @3.9.0-rc3:26)
# LeaderAndIsr.LeaderDuringDelete: UpdateMetadata leader of a topic being deleted, from 0.8.1
# (KAFKA-330; K:api/LeaderAndIsrRequest.scala@0.8.1.1:36, K:controller/ControllerChannelManager.scala@0.8.1.1:244).
LEADER_DURING_DELETE = -2


class PartitionSnapshot(NamedTuple):
    """One logged view of a partition's state; any field the line did not show stays None. (A named
    tuple: the replay builds one per line it checks.)"""

    leader: Optional[int] = None
    isr: Optional[Sequence[int]] = None
    replicas: Optional[Sequence[int]] = None
    leader_epoch: Optional[int] = None
    partition_epoch: Optional[int] = None  # zkVersion (ZK) / partitionEpoch (3.3+, KRaft)
    controller_epoch: Optional[int] = None
    leader_recovery_state: Optional[str] = None  # "RECOVERED" / "RECOVERING" (3.2+)


def _is_no_leader(leader: int, version: VersionLike) -> bool:
    if leader == NO_LEADER:
        return True
    return leader == LEADER_DURING_DELETE and has_rule(version, "replica_deletion_states")


def empty_isr_allowed(
    version: VersionLike, *, unclean_allowed: Optional[bool] = None, elr_enabled: bool = False
) -> bool:
    """Can that version's controller legitimately leave a partition with an empty ISR?

    0.8.0 - 0.8.1.x: yes (the OfflineReplica shrink removes the last member,
    K:controller/KafkaController.scala@0.8.0:763-767). 0.8.2 - 1.0.x: only when unclean election is
    enabled for the topic (KAFKA-1028, @0.8.2.2:1010-1017; ``unclean_allowed`` None = the version's
    default). 1.1+: no, the last member is always kept (K:controller/ReplicaStateMachine.scala@1.1.1:290);
    KRaft likewise unless eligible leader replicas (KIP-966) are enabled
    (M:controller/PartitionChangeBuilder.java@3.9.0-rc3 build()), hence ``elr_enabled``.
    """
    v = as_version(version)
    if not has_rule(v, "unclean_leader_election_config"):
        return True
    if not has_rule(v, "election_algorithms"):
        return default_unclean_leader_election(v) if unclean_allowed is None else unclean_allowed
    return elr_enabled


def check_snapshot(
    snapshot: PartitionSnapshot,
    version: VersionLike,
    *,
    unclean_allowed: Optional[bool] = None,
    elr_enabled: bool = False,
) -> list[str]:
    """Violations visible in a single observation of a partition."""
    violations: list[str] = []
    isr = None if snapshot.isr is None else tuple(snapshot.isr)
    leader = snapshot.leader
    if leader is not None and isr is not None:
        if not _is_no_leader(leader, version) and leader not in isr:
            violations.append(LEADER_NOT_IN_ISR)
    if isr is not None and snapshot.replicas is not None:
        if not set(isr) <= set(snapshot.replicas):
            violations.append(ISR_NOT_SUBSET_OF_REPLICAS)
    if isr is not None and not isr:
        if not empty_isr_allowed(version, unclean_allowed=unclean_allowed, elr_enabled=elr_enabled):
            violations.append(EMPTY_ISR)
    if snapshot.leader_recovery_state == "RECOVERING" and leader is not None and isr is not None:
        # K:controller/KafkaController.scala@3.9.0-rc3:2412-2418 (AlterPartition must keep ISR=[leader]).
        if isr != (leader,):
            violations.append(RECOVERING_ISR_NOT_SINGLETON)
    return violations


def _known(value: Optional[int]) -> bool:
    # Negative epochs are sentinels, never real epochs: LeaderAndIsr.NoEpoch (-1) and
    # EpochDuringDelete (-2, StopReplica/LeaderAndIsr of deleted topics from 2.6, KIP-570,
    # K:api/LeaderAndIsr.scala@3.9.0-rc3:29).
    return value is not None and value >= 0


def check_progression(previous: PartitionSnapshot, current: PartitionSnapshot) -> list[str]:
    """Violations between two time-ordered observations of the same partition incarnation.

    Leader epoch: every controller decision writes exactly leaderEpoch+1, leader-driven ISR
    changes keep it (K:api/LeaderAndIsr.scala@2.4.1 newLeader/newLeaderAndIsr; I7/I8).
    zkVersion: conditional setData, +1 per write (I9). Controller epoch: conditional increment of
    /controller_epoch (I5), and a partition state written by epoch E is never rewritten by E' < E
    without the newer controller aborting (I10).
    """
    violations: list[str] = []
    if _known(previous.leader_epoch) and _known(current.leader_epoch):
        if current.leader_epoch < previous.leader_epoch:  # type: ignore[operator]
            violations.append(LEADER_EPOCH_REGRESSION)
        elif (
            current.leader_epoch == previous.leader_epoch
            and previous.leader is not None
            and current.leader is not None
            and LEADER_DURING_DELETE not in (previous.leader, current.leader)
            and previous.leader != current.leader
        ):
            # (-2 is UpdateMetadata's stand-in leader for a topic being deleted, with the initial
            # epochs: LeaderAndIsr.duringDelete, K:api/LeaderAndIsr.scala@1.1.1:26-29. Not a second leader.)
            violations.append(LEADER_EPOCH_REUSED)
    if _known(previous.partition_epoch) and _known(current.partition_epoch):
        if current.partition_epoch < previous.partition_epoch:  # type: ignore[operator]
            violations.append(PARTITION_EPOCH_REGRESSION)
    if _known(previous.controller_epoch) and _known(current.controller_epoch) and _newer_write(previous, current):
        if current.controller_epoch < previous.controller_epoch:  # type: ignore[operator]
            violations.append(CONTROLLER_EPOCH_REGRESSION)
    return violations


def _newer_write(previous: PartitionSnapshot, current: PartitionSnapshot) -> bool:
    """Is ``current`` a later *controller decision* than ``previous``, the only kind of write I10 judges?

    The controller epoch in a state is not the epoch of whoever wrote the znode last:
    - the controller's cache pairs a version it did not write with its own epoch (2.3+
      ``removeReplicasFromIsr`` caches ``LeaderIsrAndControllerEpoch(leaderAndIsr, controllerContext.epoch)``
      for partitions whose ISR lacks the replica, K:controller/ReplicaStateMachine.scala@2.4.1:350-355,
      @3.9.0-rc3:365-369), and a later request carries the znode's own epoch for the same version;
    - a leader writes its ISR changes (zkVersion+1, same leader epoch) with the controller epoch of the
      LeaderAndIsr that made it leader (K:cluster/Partition.scala@2.4.1:499 and 1168), older than the
      current controller's when the new controller's request was ignored as not newer.
    Every controller decision writes leaderEpoch+1 (I8): only a higher leader epoch is a write an older
    controller should never have made."""
    if _known(previous.leader_epoch) and _known(current.leader_epoch):
        return current.leader_epoch > previous.leader_epoch  # type: ignore[operator]
    return False


def check_sequence(
    snapshots: Sequence[PartitionSnapshot],
    version: VersionLike,
    *,
    unclean_allowed: Optional[bool] = None,
    elr_enabled: bool = False,
) -> list[list[str]]:
    """``check_snapshot`` of each item plus ``check_progression`` against the one before it."""
    results = []
    for i, snap in enumerate(snapshots):
        found = check_snapshot(snap, version, unclean_allowed=unclean_allowed, elr_enabled=elr_enabled)
        if i:
            found += check_progression(snapshots[i - 1], snap)
        results.append(found)
    return results
