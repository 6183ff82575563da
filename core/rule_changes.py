"""When the ZooKeeper controller's rules changed: one entry per change this project models.

Every boundary between rule eras (``core.eras``) comes from here, with the Kafka source that
proves it, so no other module repeats a version number: it asks ``has_rule(version, key)``.

Citations are ``path@tag[:line]`` in apache/kafka, with the prefixes
``K:`` = ``core/src/main/scala/kafka/`` and ``T:`` = ``core/src/test/scala/unit/kafka/``.
"First release" of a change = lowest non-rc tag containing its commit (``git tag --contains``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .versions import ZOOKEEPER_REMOVED, KafkaVersion, VersionLike, as_version


def _v(text: str) -> KafkaVersion:
    return KafkaVersion.parse(text)


@dataclass(frozen=True)
class RuleChange:
    """One change of controller behaviour that this package models, and where it comes from."""

    key: str
    since: KafkaVersion
    summary: str
    jira: str
    evidence: str


# Ordered by release. Only changes that alter a rule implemented in statemachines/ are listed.
RULE_CHANGES: tuple[RuleChange, ...] = (
    RuleChange(
        "replica_deletion_states",
        _v("0.8.1"),
        "7-state replica machine: ReplicaDeletionStarted/Successful/Ineligible added, "
        "NonExistentReplica code 4 -> 7, NonExistentReplica only from ReplicaDeletionSuccessful, "
        "OfflineReplica also from Offline/Ineligible, OnlineReplica also from Ineligible",
        "KAFKA-330 (167acb832d7)",
        "K:controller/ReplicaStateMachine.scala@0.8.0:115-167,286-289 vs @0.8.1.1:154-227,356-362",
    ),
    RuleChange(
        "offline_partition_from_offline",
        _v("0.8.1"),
        "OfflinePartition -> OfflinePartition becomes valid",
        "KAFKA-330 (167acb832d7)",
        "K:controller/PartitionStateMachine.scala@0.8.0:165 vs @0.8.1.1:197",
    ),
    RuleChange(
        "failover_dead_replicas_ineligible",
        _v("0.8.1"),
        "at controller failover replicas on dead brokers are put in ReplicaDeletionIneligible (0.8.0: OfflineReplica)",
        "KAFKA-330 (167acb832d7)",
        "K:controller/ReplicaStateMachine.scala@0.8.0:223-234 vs @0.8.1.1:298-314",
    ),
    RuleChange(
        "reassign_leader_from_isr",
        _v("0.8.1"),
        "reassignment election requires the new leader to be in the ISR (0.8.0: any live RAR member)",
        "KAFKA-1202/KAFKA-1020 (855340a2e65)",
        "K:controller/PartitionLeaderSelector.scala@0.8.0:87-113 vs @0.8.1.1:90-117",
    ),
    RuleChange(
        "controlled_shutdown_isr_minus_shutting_down",
        _v("0.8.1"),
        "controlled-shutdown election = head of ISR minus shutting-down brokers "
        "(0.8.0 also removed the current leader from the candidates and the new ISR)",
        "KAFKA-1202/KAFKA-1020 (855340a2e65)",
        "K:controller/PartitionLeaderSelector.scala@0.8.0:151-181 vs @0.8.1.1:156-185",
    ),
    RuleChange(
        "unclean_leader_election_config",
        _v("0.8.2"),
        "unclean.leader.election.enable (default true); with it disabled the offline election fails "
        "instead of electing a non-ISR replica and the controller keeps the last ISR member",
        "KAFKA-1028 (616086b9092)",
        "K:controller/PartitionLeaderSelector.scala@0.8.2.2:49-98; K:controller/KafkaController.scala@0.8.2.2:988-1044",
    ),
    RuleChange(
        "offline_leader_assignment_order",
        _v("0.8.2"),
        "offline election picks the first live ISR member in assignment order (before: ISR order)",
        "KAFKA-1503 (2a4718c1a7e)",
        "K:controller/PartitionLeaderSelector.scala@0.8.2.2:85-90",
    ),
    RuleChange(
        "controlled_shutdown_assignment_order",
        _v("0.10.0"),
        "controlled-shutdown election picks the first live-or-shutting-down assigned replica that is "
        "in ISR minus shutting-down brokers (before: head of that ISR, no liveness check)",
        "KAFKA-3670 (a1afbab3eda)",
        "K:controller/PartitionLeaderSelector.scala@0.9.0.1:188 vs @0.10.0.0:188",
    ),
    RuleChange(
        "unclean_default_false",
        _v("0.11.0"),
        "unclean.leader.election.enable defaults to false",
        "KAFKA-4623 / KIP-106 (46da01a4a7d)",
        "K:server/KafkaConfig.scala@0.10.2.2:132 vs @0.11.0.0:134",
    ),
    RuleChange(
        "election_algorithms",
        _v("1.1"),
        "PartitionLeaderElectionAlgorithms: preferred election has no 'already leader' short-cut "
        "(re-elects with leaderEpoch+1); unclean only when no ISR member is live; "
        "the controller never shrinks an ISR of size 1; controlled-shutdown LeaderAndIsr goes to "
        "live replicas only (not to the shutting-down broker)",
        "KAFKA-5642 (b71ee043f89)",
        "K:controller/PartitionStateMachine.scala@1.1.1:344-413,437-462; "
        "K:controller/ReplicaStateMachine.scala@1.1.1:290",
    ),
    RuleChange(
        "controlled_shutdown_recipients_include_shutting_down",
        _v("2.1"),
        "controlled-shutdown LeaderAndIsr is again sent to the shutting-down broker",
        "KAFKA-7482 (c7131fc7a3e)",
        "K:controller/PartitionStateMachine.scala@2.0.1 vs @2.1.0:440-449; "
        "T:controller/PartitionStateMachineTest.scala@2.3.0:195-198",
    ),
    RuleChange(
        "preferred_election_skips_preferred_leader",
        _v("2.2"),
        "the controller no longer runs a preferred election for partitions already led by their preferred replica",
        "KAFKA-5692 (269b65279c7)",
        "K:controller/KafkaController.scala@2.2.0:1589-1594",
    ),
    RuleChange(
        "offline_replica_to_deletion_ineligible",
        _v("2.3"),
        "ReplicaDeletionIneligible becomes valid from OfflineReplica",
        "KAFKA-8237 (17c80166461)",
        "K:controller/ReplicaStateMachine.scala@2.2.2:438-440 vs @2.3.0:431-433",
    ),
    RuleChange(
        "failover_offline_replica_transition",
        _v("2.3"),
        "at controller failover replicas on dead brokers are transitioned to OfflineReplica "
        "(ISR shrink, leader -1) instead of staying ReplicaDeletionIneligible",
        "KAFKA-3143 (423610f3d08)",
        "K:controller/ReplicaStateMachine.scala@2.3.0:35-44",
    ),
    RuleChange(
        "leader_recovery_on_unclean",
        _v("3.2"),
        "an unclean election marks the partition leaderRecoveryState=RECOVERING "
        "(inter.broker.protocol.version >= 3.2-IV0, the default)",
        "KAFKA-13587 / KIP-704 (52621613fd3)",
        "K:controller/Election.scala@3.2.0:45-47; K:controller/PartitionStateMachine.scala@3.9.0-rc3:136",
    ),
    RuleChange(
        "kraft_only",
        ZOOKEEPER_REMOVED,
        "ZooKeeper mode removed: no partition/replica state machines (KRaft only)",
        "KIP-500 / KIP-833",
        "https://kafka.apache.org/40/getting-started/upgrade "
        "('Apache Kafka 4.0 only supports KRaft mode - ZooKeeper mode has been removed')",
    ),
)
_CHANGES_BY_KEY = {c.key: c for c in RULE_CHANGES}


def rule_change(key: str) -> RuleChange:
    """The ``RuleChange`` registered under ``key`` (KeyError for a typo: a bug, not user input)."""
    return _CHANGES_BY_KEY[key]


def has_rule(version: VersionLike, key: str) -> bool:
    """True iff ``version`` includes the rule change ``key``."""
    return as_version(version) >= _CHANGES_BY_KEY[key].since
