"""State assignments that are *not* transitions: what a replayer must set without any log line.

Kafka writes some states straight into its state map, bypassing the valid-previous-state check
and never logging a ``Changed … from X to Y`` line: the implicit initial state of an unknown
partition/replica, the states rebuilt from ZooKeeper when a controller takes over, and the
removal of a replica that reaches ``NonExistentReplica``. Right after the failover assignment the
controller runs a few forced transitions (which *are* logged); they are listed here too because
their source state is the out-of-band one.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_forensics.core.eras import require_zookeeper_controller
from kafka_forensics.core.rule_changes import has_rule
from kafka_forensics.core.versions import VersionLike

from .states import PartitionState as P
from .states import ReplicaState as R


@dataclass(frozen=True)
class FailoverPartitionStates:
    """``initializePartitionState``: the state put for each partition when a controller starts.

    K:controller/PartitionStateMachine.scala@0.8.0:190-206, @1.1.1:78-93, @3.9.0-rc3:85-100
    (identical logic in every version; "online" = live broker, and from 1.0 also not on an
    offline log dir, ``isReplicaOnline``).
    """

    leader_online: P = P.OnlinePartition
    leader_not_online: P = P.OfflinePartition  # includes leader -1 (NoLeader)
    no_leader_and_isr: P = P.NewPartition  # no /brokers/topics/t/partitions/p/state znode


@dataclass(frozen=True)
class FailoverReplicaStates:
    """``initializeReplicaState``: the state put for each assigned replica when a controller starts."""

    replica_online: R
    replica_offline: R


@dataclass(frozen=True)
class StartupReplicaTransitions:
    """Transitions ``ReplicaStateMachine.startup()`` runs right after ``initializeReplicaState``.

    These are real (logged, TRACE) transitions; ``None`` = no transition for that group, so the
    replica stays in its out-of-band failover state until some later event moves it.
    """

    replica_online: R | None
    replica_offline: R | None


@dataclass(frozen=True)
class OutOfBandAssignments:
    """Everything a replayer must assign without a logged transition, for one era."""

    # getOrElseUpdate(…, NonExistentPartition) K:controller/PartitionStateMachine.scala@0.8.2.2:186;
    # putPartitionStateIfNotExists @3.9.0-rc3:215.
    initial_partition_state: P
    # getOrElseUpdate(…, NonExistentReplica) K:controller/ReplicaStateMachine.scala@0.8.0:111,
    # @0.8.1.1:148; putReplicaStateIfNotExists @3.9.0-rc3:162.
    initial_replica_state: R
    failover_partitions: FailoverPartitionStates
    failover_replicas: FailoverReplicaStates
    startup_replica_transitions: StartupReplicaTransitions
    # PartitionStateMachine.startup() -> triggerOnlinePartitionStateChange(): every New/Offline
    # partition (not queued for deletion) -> OnlinePartition via the offline election.
    # K:controller/PartitionStateMachine.scala@0.8.2.2:64, @3.9.0-rc3:40-83.
    startup_partition_sources: tuple[P, ...]
    startup_partition_target: P
    # A replica reaching NonExistentReplica is *removed* from the state map (so a later lookup
    # yields the implicit initial state again): replicaState.remove in
    # K:controller/ReplicaStateMachine.scala@0.8.0:138 and @0.8.1.1:194; removeReplicaState
    # @3.9.0-rc3:283.
    replica_removed_from_map_on: R


def out_of_band_assignments(version: VersionLike) -> OutOfBandAssignments:
    """The out-of-band assignments of ``version``'s controller."""
    require_zookeeper_controller(version)
    if has_rule(version, "failover_dead_replicas_ineligible"):
        # "mark replicas on dead brokers as failed for topic deletion … to be on the safer side":
        # K:controller/ReplicaStateMachine.scala@0.8.1.1:298-314, @1.1.1:82-95, @3.9.0-rc3:58-73.
        failover_replicas = FailoverReplicaStates(R.OnlineReplica, R.ReplicaDeletionIneligible)
    else:
        # K:controller/ReplicaStateMachine.scala@0.8.0:223-234.
        failover_replicas = FailoverReplicaStates(R.OnlineReplica, R.OfflineReplica)
    if has_rule(version, "failover_offline_replica_transition"):
        # KAFKA-3143: startup() moves online replicas to Online and offline ones to Offline.
        # K:controller/ReplicaStateMachine.scala@2.3.0:35-44, @3.9.0-rc3:36-45;
        # T:controller/ReplicaStateMachineTest.scala@3.9.0-rc3 testStartupOfflinePartition.
        startup = StartupReplicaTransitions(R.OnlineReplica, R.OfflineReplica)
    else:
        # Only live replicas are moved (to OnlineReplica): @0.8.0 startup, @0.8.1.1:62-69,
        # @1.1.1:62-68. Dead ones keep their out-of-band state (KAFKA-3143 is the fix).
        startup = StartupReplicaTransitions(R.OnlineReplica, None)
    return OutOfBandAssignments(
        initial_partition_state=P.NonExistentPartition,
        initial_replica_state=R.NonExistentReplica,
        failover_partitions=FailoverPartitionStates(),
        failover_replicas=failover_replicas,
        startup_replica_transitions=startup,
        startup_partition_sources=(P.NewPartition, P.OfflinePartition),
        startup_partition_target=P.OnlinePartition,
        replica_removed_from_map_on=R.NonExistentReplica,
    )
