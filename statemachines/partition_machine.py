"""Valid previous states of Kafka's partition state machine, per era.

Kafka refuses a transition whose current state is not in the target's valid previous states
(``assertValidPreviousStates`` up to 0.10.x, ``validPreviousStates`` on each state object from
0.11.0.0, ``checkValidPartitionStateChange`` in 2.x/3.x) and leaves the state unchanged, so this
table is exactly what separates a legal logged transition from an impossible one.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from kafka_forensics.core.eras import require_zookeeper_controller
from kafka_forensics.core.rule_changes import has_rule
from kafka_forensics.core.versions import VersionLike

from .states import PartitionState as P

ValidPrevious = Mapping[P, tuple[P, ...]]

# K:controller/PartitionStateMachine.scala@0.8.0:139,147,165,173
# (assertValidPreviousStates(..., List(...), target)).
_PARTITION_0_8_0: ValidPrevious = MappingProxyType(
    {
        P.NewPartition: (P.NonExistentPartition,),
        P.OnlinePartition: (P.NewPartition, P.OnlinePartition, P.OfflinePartition),
        P.OfflinePartition: (P.NewPartition, P.OnlinePartition),
        P.NonExistentPartition: (P.OfflinePartition,),
    }
)

# OfflinePartition gains OfflinePartition (KAFKA-330, first release 0.8.1):
# K:controller/PartitionStateMachine.scala@0.8.1.1:170,179,197,205; @0.10.2.2:186,194,212,220;
# as validPreviousStates from 0.11.0.0 (KAFKA-5258): @0.11.0.0:352-369, @1.1.1:475-492,
# @2.8.2:560-577, @3.9.0-rc3:569-586. (Kafka's class comment still says "OfflinePartition: valid
# previous states are NewPartition/OnlinePartition" in every version; the code is what runs.)
_PARTITION_0_8_1: ValidPrevious = MappingProxyType(
    {
        P.NewPartition: (P.NonExistentPartition,),
        P.OnlinePartition: (P.NewPartition, P.OnlinePartition, P.OfflinePartition),
        P.OfflinePartition: (P.NewPartition, P.OnlinePartition, P.OfflinePartition),
        P.NonExistentPartition: (P.OfflinePartition,),
    }
)


def partition_valid_previous_states(version: VersionLike) -> ValidPrevious:
    """``{target: valid previous states}`` for partitions in ``version`` (declaration order)."""
    require_zookeeper_controller(version)
    if has_rule(version, "offline_partition_from_offline"):
        return _PARTITION_0_8_1
    return _PARTITION_0_8_0
