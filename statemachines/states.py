"""The partition and replica states of Kafka's ZooKeeper controller, named exactly as Kafka logs them.

Logs print state names (``Changed state of replica 2 for partition t-0 from OnlineReplica to
OfflineReplica``), never codes, so the enum values are the names; the numeric codes Kafka
declares (``val state: Byte``) are kept per era because the replica codes changed in 0.8.1.
Enum order = Kafka's declaration order (the order of the ``case object``s), which is also the
order in which everything in this package is rendered.
"""

from __future__ import annotations

from enum import Enum
from typing import Union

from kafka_forensics.core.eras import require_zookeeper_controller
from kafka_forensics.core.rule_changes import has_rule
from kafka_forensics.core.versions import VersionLike


class Entity(str, Enum):
    """What a state machine governs."""

    PARTITION = "partition"
    REPLICA = "replica"

    def __str__(self) -> str:
        return self.value


class PartitionState(str, Enum):
    """``sealed trait PartitionState`` (K:controller/PartitionStateMachine.scala@0.8.0:418-422,
    @3.9.0-rc3:564-587); the same four states and codes in every version 0.8.0 - 3.9."""

    NewPartition = "NewPartition"
    OnlinePartition = "OnlinePartition"
    OfflinePartition = "OfflinePartition"
    NonExistentPartition = "NonExistentPartition"

    def __str__(self) -> str:
        return self.value


class ReplicaState(str, Enum):
    """``sealed trait ReplicaState`` (K:controller/ReplicaStateMachine.scala@0.8.1.1:355-362,
    @3.9.0-rc3:453-491). 0.8.0 has only New/Online/Offline/NonExistent (@0.8.0:285-289)."""

    NewReplica = "NewReplica"
    OnlineReplica = "OnlineReplica"
    OfflineReplica = "OfflineReplica"
    ReplicaDeletionStarted = "ReplicaDeletionStarted"
    ReplicaDeletionSuccessful = "ReplicaDeletionSuccessful"
    ReplicaDeletionIneligible = "ReplicaDeletionIneligible"
    NonExistentReplica = "NonExistentReplica"

    def __str__(self) -> str:
        return self.value


State = Union[PartitionState, ReplicaState]

# K:controller/PartitionStateMachine.scala@0.8.0:419-422, @0.8.2.2:547-550, @3.9.0-rc3:569-587.
PARTITION_STATE_CODES: dict[PartitionState, int] = {
    PartitionState.NewPartition: 0,
    PartitionState.OnlinePartition: 1,
    PartitionState.OfflinePartition: 2,
    PartitionState.NonExistentPartition: 3,
}

# K:controller/ReplicaStateMachine.scala@0.8.0:286-289.
_REPLICA_STATE_CODES_0_8_0: dict[ReplicaState, int] = {
    ReplicaState.NewReplica: 1,
    ReplicaState.OnlineReplica: 2,
    ReplicaState.OfflineReplica: 3,
    ReplicaState.NonExistentReplica: 4,
}

# K:controller/ReplicaStateMachine.scala@0.8.1.1:356-362, @2.8.2:458-491, @3.9.0-rc3:458-491.
_REPLICA_STATE_CODES: dict[ReplicaState, int] = {
    ReplicaState.NewReplica: 1,
    ReplicaState.OnlineReplica: 2,
    ReplicaState.OfflineReplica: 3,
    ReplicaState.ReplicaDeletionStarted: 4,
    ReplicaState.ReplicaDeletionSuccessful: 5,
    ReplicaState.ReplicaDeletionIneligible: 6,
    ReplicaState.NonExistentReplica: 7,
}


class UnknownStateError(ValueError):
    """A name that is not one of Kafka's states for that entity (a caller bug or a parser bug)."""


def as_entity(entity: Union[str, Entity]) -> Entity:
    try:
        return Entity(entity)
    except ValueError:
        raise UnknownStateError(f"{entity!r} is not 'partition' or 'replica'") from None


def parse_state(entity: Union[str, Entity], name: Union[str, State]) -> State:
    """The enum member for a state name as Kafka logs it (``"OnlineReplica"``)."""
    enum_type = PartitionState if as_entity(entity) is Entity.PARTITION else ReplicaState
    if isinstance(name, enum_type):
        return name
    try:
        return enum_type(name)
    except ValueError:
        raise UnknownStateError(f"{name!r} is not a Kafka {as_entity(entity).value} state") from None


def state_codes(entity: Union[str, Entity], version: VersionLike) -> dict:
    """``{state: code}`` for the states that exist in ``version``, in declaration order."""
    require_zookeeper_controller(version)
    if as_entity(entity) is Entity.PARTITION:
        return dict(PARTITION_STATE_CODES)
    if has_rule(version, "replica_deletion_states"):
        return dict(_REPLICA_STATE_CODES)
    return dict(_REPLICA_STATE_CODES_0_8_0)


def states_for(entity: Union[str, Entity], version: VersionLike) -> tuple:
    """The states of ``entity`` that exist in ``version``, in Kafka's declaration order."""
    return tuple(state_codes(entity, version))


def state_code(entity: Union[str, Entity], state: Union[str, State], version: VersionLike) -> int:
    """Kafka's numeric code of ``state`` in ``version`` (KeyError-free: UnknownStateError)."""
    member = parse_state(entity, state)
    codes = state_codes(entity, version)
    if member not in codes:
        raise UnknownStateError(f"{member} does not exist in Kafka {version}")
    return codes[member]
