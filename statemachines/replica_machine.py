"""Valid previous states of Kafka's replica state machine, per era.

Three versions of the table exist: the 4-state machine of 0.8.0, the 7-state machine that topic
deletion (KAFKA-330) brought in 0.8.1, and the 2.3.0 change (KAFKA-8237) that lets a replica go
from ``OfflineReplica`` straight to ``ReplicaDeletionIneligible``. Before 2.3 that very move is
attempted by ``TopicDeletionManager`` for dead replicas and rejected with an ERROR, which a
replayer must therefore expect rather than flag.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from kafka_forensics.core.eras import require_zookeeper_controller
from kafka_forensics.core.rule_changes import has_rule
from kafka_forensics.core.versions import VersionLike

from .states import ReplicaState as R

ValidPrevious = Mapping[R, tuple[R, ...]]

# K:controller/ReplicaStateMachine.scala@0.8.0:115,132,142,167.
_REPLICA_0_8_0: ValidPrevious = MappingProxyType(
    {
        R.NewReplica: (R.NonExistentReplica,),
        R.OnlineReplica: (R.NewReplica, R.OnlineReplica, R.OfflineReplica),
        R.OfflineReplica: (R.NewReplica, R.OnlineReplica),
        R.NonExistentReplica: (R.OfflineReplica,),
    }
)

# KAFKA-330 (first release 0.8.1): K:controller/ReplicaStateMachine.scala@0.8.1.1:154,172,180,185,
# 190,198-199,224-225; @0.8.2.2:172-243; as validPreviousStates (KAFKA-5258, 0.11.0.0):
# @0.11.0.0:307-339, @1.1.1:401-433, @2.2.2:413-445.
_REPLICA_0_8_1: ValidPrevious = MappingProxyType(
    {
        R.NewReplica: (R.NonExistentReplica,),
        R.OnlineReplica: (R.NewReplica, R.OnlineReplica, R.OfflineReplica, R.ReplicaDeletionIneligible),
        R.OfflineReplica: (R.NewReplica, R.OnlineReplica, R.OfflineReplica, R.ReplicaDeletionIneligible),
        R.ReplicaDeletionStarted: (R.OfflineReplica,),
        R.ReplicaDeletionSuccessful: (R.ReplicaDeletionStarted,),
        R.ReplicaDeletionIneligible: (R.ReplicaDeletionStarted,),
        R.NonExistentReplica: (R.ReplicaDeletionSuccessful,),
    }
)

# KAFKA-8237 (commit 17c80166461, first release 2.3.0): ReplicaDeletionIneligible gains
# OfflineReplica. K:controller/ReplicaStateMachine.scala@2.3.0:431-433, @2.8.2:483-486,
# @3.9.0-rc3:483-486.
_REPLICA_2_3_0: ValidPrevious = MappingProxyType(
    {
        **_REPLICA_0_8_1,
        R.ReplicaDeletionIneligible: (R.OfflineReplica, R.ReplicaDeletionStarted),
    }
)


def replica_valid_previous_states(version: VersionLike) -> ValidPrevious:
    """``{target: valid previous states}`` for replicas in ``version`` (declaration order)."""
    require_zookeeper_controller(version)
    if has_rule(version, "offline_replica_to_deletion_ineligible"):
        return _REPLICA_2_3_0
    if has_rule(version, "replica_deletion_states"):
        return _REPLICA_0_8_1
    return _REPLICA_0_8_0
