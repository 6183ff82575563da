"""One object with every table of Kafka's controller state machines for one version.

``rules_for(version)`` bundles the partition and replica valid-previous-state tables and the
out-of-band assignments of that version's ZooKeeper controller. The question every replayed
``Changed … from X to Y`` line raises is answered from these tables in ``legality``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Union

from kafka_forensics.core.eras import Era, era_of, require_zookeeper_controller
from kafka_forensics.core.versions import KafkaVersion, VersionLike

from .out_of_band import OutOfBandAssignments, out_of_band_assignments
from .partition_machine import partition_valid_previous_states
from .replica_machine import replica_valid_previous_states
from .states import Entity, PartitionState, ReplicaState, State, as_entity, parse_state


@dataclass(frozen=True)
class StateMachineRules:
    """The controller state machines of one Kafka version.

    ``partition`` / ``replica`` map each target state to its valid previous states; keys and
    values are in Kafka's declaration order, and only states that exist in that version appear
    (0.8.0 has four replica states).
    """

    kafka_version: KafkaVersion
    era: Era
    partition: Mapping[PartitionState, tuple[PartitionState, ...]] = field(hash=False)
    replica: Mapping[ReplicaState, tuple[ReplicaState, ...]] = field(hash=False)
    out_of_band: OutOfBandAssignments = field(hash=False)

    def table(self, entity: Union[str, Entity]) -> Mapping:
        return self.partition if as_entity(entity) is Entity.PARTITION else self.replica

    def states(self, entity: Union[str, Entity]) -> tuple:
        """The states of ``entity`` in this version, in declaration order."""
        return tuple(self.table(entity))

    def valid_previous_states(self, entity: Union[str, Entity], to_state: Union[str, State]) -> tuple:
        """Valid previous states of ``to_state``; empty if that state does not exist in this version."""
        return self.table(entity).get(parse_state(entity, to_state), ())


def _rules_for(version: KafkaVersion) -> StateMachineRules:
    # Not cached: "2.8" and "2.8.0" compare equal, but each caller gets its own version text back.
    return StateMachineRules(
        kafka_version=version,
        era=era_of(version),
        partition=partition_valid_previous_states(version),
        replica=replica_valid_previous_states(version),
        out_of_band=out_of_band_assignments(version),
    )


def rules_for(version: VersionLike) -> StateMachineRules:
    """The state machines of ``version``.

    Raises ``UnknownKafkaVersionError`` for a version Kafka never shipped and
    ``NoZooKeeperControllerError`` for 4.0+, which has no ZooKeeper controller.
    """
    return _rules_for(require_zookeeper_controller(version))
