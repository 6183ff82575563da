"""Invariants checkable from logged values, and the controller ISR shrink they depend on."""

from __future__ import annotations

import pytest

from kafka_forensics.statemachines.invariants import (
    CONTROLLER_EPOCH_REGRESSION,
    EMPTY_ISR,
    ISR_NOT_SUBSET_OF_REPLICAS,
    LEADER_EPOCH_REGRESSION,
    LEADER_EPOCH_REUSED,
    LEADER_NOT_IN_ISR,
    PARTITION_EPOCH_REGRESSION,
    RECOVERING_ISR_NOT_SINGLETON,
    PartitionSnapshot,
    check_progression,
    check_sequence,
    check_snapshot,
    empty_isr_allowed,
)
from kafka_forensics.statemachines.isr_shrink import remove_replica_from_isr

S = PartitionSnapshot


def test_names_are_stable():
    assert [
        LEADER_NOT_IN_ISR,
        ISR_NOT_SUBSET_OF_REPLICAS,
        EMPTY_ISR,
        LEADER_EPOCH_REGRESSION,
        PARTITION_EPOCH_REGRESSION,
        CONTROLLER_EPOCH_REGRESSION,
    ] == [
        "leader_not_in_isr",
        "isr_not_subset_of_replicas",
        "empty_isr",
        "leader_epoch_regression",
        "partition_epoch_regression",
        "controller_epoch_regression",
    ]


# --- controller ISR shrink on OfflineReplica --------------------------------------------------


@pytest.mark.parametrize("version", ["1.1.1", "2.8.2", "3.9.0"])
def test_online_replica_to_offline_replica_transition(version):
    """testOnlineReplicaToOfflineReplicaTransition (ReplicaStateMachineTest): replica 5 leads,
    ISR [5,6] -> newLeaderAndIsr(NoLeader, [6]), written with epoch+1."""
    r = remove_replica_from_isr(version, 5, [5, 6], 5)
    assert (r.leader, r.isr, r.written) == (-1, (6,), True)


@pytest.mark.parametrize("version", ["1.1.0", "2.2.2", "3.9.0"])
def test_entire_isr_offline_keeps_last_member(version):
    """ControllerIntegrationTest.testLeaderAndIsrWhenEntireIsrOfflineAndUncleanLeaderElection{Disabled,
    Enabled}@3.9.0-rc3:579-617: leader NoLeader, epoch+1, ISR == [dead] regardless of unclean."""
    for unclean in (False, True):
        r = remove_replica_from_isr(version, 7, [7], 7, unclean_allowed=unclean)
        assert (r.leader, r.isr, r.written) == (-1, (7,), True)


def test_isr_shrink_to_empty_before_1_1():
    # 0.8.0 - 0.8.1.x: unconditional (KafkaController.scala@0.8.0:763-767).
    for version in ["0.8.0", "0.8.1.1"]:
        assert remove_replica_from_isr(version, 7, [7], 7, unclean_allowed=False).isr == ()
    # 0.8.2 - 1.0.x: kept iff unclean election is disabled (KAFKA-1028).
    assert remove_replica_from_isr("0.8.2.2", 7, [7], 7).isr == ()  # default true
    assert remove_replica_from_isr("0.8.2.2", 7, [7], 7, unclean_allowed=False).isr == (7,)
    assert remove_replica_from_isr("1.0.2", 7, [7], 7).isr == (7,)  # default false since 0.11
    assert remove_replica_from_isr("1.0.2", 7, [7], 7, unclean_allowed=True).isr == ()


def test_isr_shrink_no_write_when_replica_not_in_isr():
    r = remove_replica_from_isr("3.9.0", 1, [1, 2], 3)
    assert (r.leader, r.isr, r.written) == (1, (1, 2), False)
    r = remove_replica_from_isr("3.9.0", 1, [1, 2], 2)
    assert (r.leader, r.isr, r.written) == (1, (1,), True)


# --- single observations ---------------------------------------------------------------------


def test_consistent_snapshot_has_no_violation():
    assert check_snapshot(S(leader=1, isr=[1, 2], replicas=[1, 2, 3], leader_epoch=4), "2.8") == []


def test_leader_not_in_isr():
    assert check_snapshot(S(leader=3, isr=[1, 2]), "2.8") == [LEADER_NOT_IN_ISR]
    assert check_snapshot(S(leader=-1, isr=[1]), "2.8") == []
    assert check_snapshot(S(leader=-2, isr=[1]), "2.8") == []  # LeaderDuringDelete (0.8.1+)
    assert check_snapshot(S(leader=-2, isr=[1]), "0.8.0") == [LEADER_NOT_IN_ISR]


def test_isr_not_subset_of_replicas():
    assert check_snapshot(S(leader=1, isr=[1, 4], replicas=[1, 2, 3]), "3.9.0") == [ISR_NOT_SUBSET_OF_REPLICAS]


@pytest.mark.parametrize(
    "version, unclean, elr, flagged",
    [
        ("0.8.0", None, False, False),
        ("0.8.1.1", False, False, False),
        ("0.8.2.2", None, False, False),  # unclean default true: the controller may empty the ISR
        ("0.8.2.2", False, False, True),
        ("0.11.0.0", None, False, True),  # unclean default false
        ("1.0.2", True, False, False),
        ("1.1.0", True, False, True),  # the isr.size == 1 rule, whatever the config
        ("3.9.0", None, False, True),
        ("3.9.0", None, True, False),  # KRaft with eligible leader replicas (KIP-966)
    ],
)
def test_empty_isr_by_era(version, unclean, elr, flagged):
    found = check_snapshot(S(leader=-1, isr=[]), version, unclean_allowed=unclean, elr_enabled=elr)
    assert (EMPTY_ISR in found) is flagged
    assert empty_isr_allowed(version, unclean_allowed=unclean, elr_enabled=elr) is (not flagged)


def test_leader_with_empty_isr_is_two_violations_from_1_1():
    assert check_snapshot(S(leader=1, isr=[]), "2.8") == [LEADER_NOT_IN_ISR, EMPTY_ISR]


def test_recovering_leader_must_be_alone_in_isr():
    assert check_snapshot(S(leader=5, isr=[5], leader_recovery_state="RECOVERING"), "3.9.0") == []
    assert check_snapshot(S(leader=5, isr=[5, 6], leader_recovery_state="RECOVERING"), "3.9.0") == [
        RECOVERING_ISR_NOT_SINGLETON
    ]


def test_missing_values_are_not_violations():
    assert check_snapshot(S(), "2.8") == []
    assert check_snapshot(S(leader=3), "2.8") == []
    assert check_progression(S(leader_epoch=4), S()) == []


# --- pairs of observations -------------------------------------------------------------------


def test_epochs_moving_forward_are_fine():
    prev = S(leader=1, leader_epoch=4, partition_epoch=10, controller_epoch=3)
    assert check_progression(prev, S(leader=2, leader_epoch=5, partition_epoch=11, controller_epoch=3)) == []
    # Leader-driven ISR change: same leader and epoch, zkVersion +1.
    assert check_progression(prev, S(leader=1, leader_epoch=4, partition_epoch=11, controller_epoch=3)) == []


def test_each_regression_is_named():
    prev = S(leader=1, leader_epoch=4, partition_epoch=10, controller_epoch=3)
    assert check_progression(prev, S(leader=1, leader_epoch=3)) == [LEADER_EPOCH_REGRESSION]
    assert check_progression(prev, S(partition_epoch=9)) == [PARTITION_EPOCH_REGRESSION]
    # I10 judges controller decisions (leader epoch + 1): a state without a newer leader epoch may be a cached
    # copy or a leader's own ISR write, which carry older controller epochs (K:controller/ReplicaStateMachine.scala
    # @2.4.1:350-355, K:cluster/Partition.scala@2.4.1:499,1168)
    assert check_progression(prev, S(controller_epoch=2)) == []
    assert check_progression(prev, S(leader_epoch=4, partition_epoch=11, controller_epoch=2)) == []
    assert check_progression(prev, S(leader_epoch=5, controller_epoch=2)) == [CONTROLLER_EPOCH_REGRESSION]
    assert check_progression(prev, S(leader=1, leader_epoch=2, partition_epoch=1, controller_epoch=1)) == [
        LEADER_EPOCH_REGRESSION,
        PARTITION_EPOCH_REGRESSION,
    ]


def test_two_leaders_with_one_epoch():
    assert check_progression(S(leader=1, leader_epoch=4), S(leader=2, leader_epoch=4)) == [LEADER_EPOCH_REUSED]
    # UpdateMetadata of a topic being deleted carries leader -2 (LeaderAndIsr.duringDelete, K:api/LeaderAndIsr.scala@1.1.1:26-29).
    assert check_progression(S(leader=1, leader_epoch=4), S(leader=-2, leader_epoch=4)) == []


def test_negative_epochs_are_sentinels():
    """NoEpoch -1 and EpochDuringDelete -2 (KIP-570, 2.6+) are not regressions."""
    assert check_progression(S(leader_epoch=7), S(leader_epoch=-2)) == []
    assert check_progression(S(leader_epoch=-1), S(leader_epoch=0)) == []


def test_check_sequence():
    snaps = [
        S(leader=1, isr=[1, 2], leader_epoch=1),
        S(leader=2, isr=[2], leader_epoch=2),
        S(leader=3, isr=[2], leader_epoch=1),
    ]
    assert check_sequence(snaps, "2.8") == [[], [], [LEADER_NOT_IN_ISR, LEADER_EPOCH_REGRESSION]]
