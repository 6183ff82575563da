"""Leader elections per era: Kafka's own unit-test oracles, then the pre-1.1 selector differences."""

from __future__ import annotations

import pytest

from kafka_forensics.core.errors import NoZooKeeperControllerError
from kafka_forensics.statemachines.elections import (
    controlled_shutdown_election,
    default_unclean_leader_election,
    is_unclean_leader_change,
    new_partition_election,
    offline_election,
    preferred_election,
    preferred_election_skipped,
    reassign_election,
)

# Releases that ship T:controller/PartitionLeaderElectionAlgorithmsTest.scala (same 13 tests
# from 1.1.0 to 3.9.0-rc3; only the JUnit imports differ).
ALGORITHM_VERSIONS = ["1.1.0", "1.1.1", "2.0.1", "2.2.2", "2.3.1", "2.8.2", "3.4.1", "3.9.0"]


# --- PartitionLeaderElectionAlgorithmsTest ---------------------------------------------------


@pytest.mark.parametrize("version", ALGORITHM_VERSIONS)
class TestPartitionLeaderElectionAlgorithmsTest:
    """Mirrors T:controller/PartitionLeaderElectionAlgorithmsTest.scala@1.1.1 and @3.9.0-rc3."""

    def test_offline_partition_leader_election(self, version):
        r = offline_election(version, [2, 4], [2, 4], {4}, unclean_allowed=False)
        assert (r.leader, r.isr, r.unclean) == (4, (4,), False)

    def test_offline_last_isr_offline_unclean_disabled(self, version):
        r = offline_election(version, [2, 4], [2], {4}, unclean_allowed=False)
        assert r.leader is None and r.isr is None and not r.unclean

    def test_offline_last_isr_offline_unclean_enabled(self, version):
        r = offline_election(version, [2, 4], [2], {4}, unclean_allowed=True)
        assert (r.leader, r.isr, r.unclean) == (4, (4,), True)

    def test_reassign_partition_leader_election(self, version):
        assert reassign_election(version, [2, 4], [2, 4], {4}).leader == 4

    def test_reassign_with_no_live_isr(self, version):
        assert reassign_election(version, [2, 4], [2], set()).leader is None

    def test_reassign_with_empty_isr(self, version):
        assert reassign_election(version, [2, 4], [], {2}).leader is None

    def test_preferred_replica_partition_leader_election(self, version):
        assert preferred_election(version, [2, 4], [2, 4], {2, 4}).leader == 2

    def test_preferred_replica_in_isr_not_live(self, version):
        assert preferred_election(version, [2, 4], [2], set()).leader is None

    def test_preferred_replica_not_in_isr_live(self, version):
        assert preferred_election(version, [2, 4], [4], {2, 4}).leader is None

    def test_preferred_replica_not_in_isr_not_live(self, version):
        assert preferred_election(version, [2, 4], [], set()).leader is None

    def test_controlled_shutdown_partition_leader_election(self, version):
        r = controlled_shutdown_election(version, [2, 4], [2, 4], {2, 4}, {2})
        assert (r.leader, r.isr) == (4, (4,))

    def test_controlled_shutdown_last_isr_shutting_down(self, version):
        assert controlled_shutdown_election(version, [2, 4], [2], {2, 4}, {2}).leader is None

    def test_controlled_shutdown_all_isr_simultaneously_shutdown(self, version):
        assert controlled_shutdown_election(version, [2, 4], [2, 4], {2, 4}, {2, 4}).leader is None


# --- elections inside PartitionStateMachineTest (brokerId = 5) --------------------------------


@pytest.mark.parametrize("version", ["0.8.0", "0.8.2.2", "1.0.2", "1.1.1", "2.8.2", "3.9.0"])
def test_new_partition_to_online_partition_transition(version):
    """testNewPartitionToOnlinePartitionTransition: LeaderAndIsr(5, [5]) epoch 0, isNew to [5]."""
    r = new_partition_election(version, [5], {5})
    assert (r.leader, r.isr, r.recipients) == (5, (5,), (5,))
    assert r.creates_partition_state and not r.bumps_leader_epoch


def test_new_partition_without_live_replica_stays_new():
    assert new_partition_election("3.9.0", [1, 2], {3}).leader is None
    assert new_partition_election("2.8", [1, 2, 3], {3, 2}).isr == (2, 3)


@pytest.mark.parametrize("version", ["1.1.1", "2.3.0", "3.9.0"])
def test_online_partition_to_online_transition(version):
    """testOnlinePartitionToOnlineTransition: preferred strategy re-elects the current leader 5
    with leaderAndIsr.newLeader(5) (epoch+1), LeaderAndIsr to [5]."""
    r = preferred_election(version, [5], [5], {5}, current_leader=5)
    assert (r.leader, r.isr, r.recipients) == (5, (5,), (5,))
    assert r.bumps_leader_epoch


def test_online_partition_to_online_transition_for_controlled_shutdown_1_1_to_2_0():
    """testOnlinePartitionToOnlineTransitionForControlledShutdown@1.1.1: leader 5 shutting down,
    ISR [5,6] -> leader 6, ISR [6]; LeaderAndIsr only to Seq(6) (the KAFKA-7482 regression)."""
    for version in ["1.1.0", "1.1.1", "2.0.1"]:
        r = controlled_shutdown_election(version, [5, 6], [5, 6], {5, 6}, {5})
        assert (r.leader, r.isr, r.recipients) == (6, (6,), (6,))


def test_online_partition_to_online_transition_for_controlled_shutdown_2_1_on():
    """Same test @2.3.0/@3.9.0-rc3: "The leaderAndIsr request should be sent to both brokers,
    including the shutting down one" (KAFKA-7482, first release 2.1.0)."""
    for version in ["2.1.0", "2.3.0", "2.8.2", "3.9.0"]:
        r = controlled_shutdown_election(version, [5, 6], [5, 6], {5, 6}, {5})
        assert (r.leader, r.isr, r.recipients) == (6, (6,), (5, 6))


@pytest.mark.parametrize("version", ["1.1.1", "2.3.0", "3.9.0"])
def test_offline_partition_to_online_partition_transition(version):
    """testOfflinePartitionToOnlinePartitionTransition: leader -1, ISR [5], live {5} -> leader 5."""
    r = offline_election(version, [5], [5], {5})
    assert (r.leader, r.isr, r.unclean, r.recipients) == (5, (5,), False, (5,))


@pytest.mark.parametrize(
    "version, recovery_supported, recovering",
    [
        ("2.4.1", None, False),
        ("2.8.2", None, False),
        ("3.9.0", True, True),
        ("3.9.0", False, False),
        ("3.2.0", None, True),
        ("3.1.2", True, False),
    ],
)
def test_offline_partition_to_unclean_online_partition_transition(version, recovery_supported, recovering):
    """testOfflinePartitionToUncleanOnlinePartitionTransition (2.4+, parameterized over
    isLeaderRecoverySupported in 3.9): leader 6 dead, ISR [6], replicas [6,5], live {5},
    allowUnclean -> leader 5, ISR [5]; RECOVERING iff IBP >= 3.2-IV0 (Election.scala@3.2.0:45-47)."""
    r = offline_election(version, [6, 5], [6], {5}, unclean_allowed=True, leader_recovery_supported=recovery_supported)
    assert (r.leader, r.isr, r.unclean) == (5, (5,), True)
    assert r.leader_recovering is recovering


# --- pre-1.1 selectors ----------------------------------------------------------------------


@pytest.mark.parametrize("version, leader", [("0.8.0", 3), ("0.8.1.1", 3), ("0.8.2.0", 2), ("1.0.2", 2), ("2.8.2", 2)])
def test_offline_leader_isr_order_until_kafka_1503(version, leader):
    """0.8.0/0.8.1 take the first live ISR member in ISR order (PartitionLeaderSelector.scala@0.8.0:70-74);
    KAFKA-1503 (0.8.2.0) takes the first live assigned replica in the ISR (@0.8.2.2:85-90)."""
    r = offline_election(version, [1, 2, 3], [3, 2], {2, 3})
    assert r.leader == leader and r.isr == (3, 2) and not r.unclean


@pytest.mark.parametrize(
    "version, unclean_allowed, leader",
    [
        ("0.8.0", False, 2),  # no config yet: unclean election is unconditional
        ("0.8.1.1", None, 2),
        ("0.8.2.2", None, 2),  # default true
        ("0.8.2.2", False, None),
        ("0.10.2.2", None, 2),  # default true
        ("0.11.0.0", None, None),  # KIP-106: default false
        ("0.11.0.0", True, 2),
        ("1.0.2", None, None),
        ("2.8.2", None, None),
        ("3.9.0", True, 2),
    ],
)
def test_unclean_election_by_version(version, unclean_allowed, leader):
    r = offline_election(version, [1, 2], [1], {2}, unclean_allowed=unclean_allowed)
    assert r.leader == leader
    if leader is not None:
        assert r.unclean and r.isr == (leader,)


def test_default_unclean_by_version():
    assert default_unclean_leader_election("0.8.0")
    assert default_unclean_leader_election("0.10.2.2")
    assert not default_unclean_leader_election("0.11.0.0")
    assert not default_unclean_leader_election("3.9.0")


def test_no_live_replica_at_all_fails_in_every_era():
    for version in ["0.8.0", "0.8.2.2", "1.1.1", "3.9.0"]:
        assert offline_election(version, [1, 2], [1], set(), unclean_allowed=True).leader is None


def test_live_isr_member_outside_the_assignment():
    """0.8.1 elects it (ISR order, no assignment check); 0.8.2-1.0 `liveReplicasInIsr.head` of an
    empty list throws (election fails); 1.1+ finds no assigned ISR member and, because an ISR member
    is live, never considers unclean election (collectUncleanLeaderElectionState)."""
    assert offline_election("0.8.1.1", [1, 2], [3], {2, 3}).leader == 3
    assert offline_election("0.8.2.2", [1, 2], [3], {2, 3}, unclean_allowed=True).leader is None
    assert offline_election("1.1.1", [1, 2], [3], {2, 3}, unclean_allowed=True).leader is None
    assert offline_election("3.9.0", [1, 2], [3], {2, 3}, unclean_allowed=True).leader is None


def test_shutting_down_brokers_never_win_offline_elections():
    """liveBrokerIds excludes shuttingDownBrokerIds in every version."""
    for version in ["0.8.0", "0.8.2.2", "1.1.1", "3.9.0"]:
        r = offline_election(version, [1, 2], [1, 2], {1, 2}, shutting_down={1})
        assert r.leader == 2 and r.isr == (2,)


def test_reassign_0_8_0_ignores_isr():
    """PartitionLeaderSelector.scala@0.8.0:87-113 checks liveness only; 0.8.1+ also the ISR."""
    assert reassign_election("0.8.0", [4, 5], [1], {4, 5}).leader == 4
    assert reassign_election("0.8.1", [4, 5], [1], {4, 5}).leader is None
    r = reassign_election("2.8.2", [4, 5], [1, 5], {4, 5})
    assert (r.leader, r.isr, r.recipients) == (5, (1, 5), (4, 5))


def test_preferred_before_1_1_is_not_needed_when_preferred_leads():
    """LeaderElectionNotNeededException (@0.8.2.2:139-164): no write, no epoch bump."""
    for version in ["0.8.0", "0.8.2.2", "1.0.2"]:
        r = preferred_election(version, [1, 2], [1, 2], {1, 2}, current_leader=1)
        assert r.not_needed and r.leader == 1 and not r.bumps_leader_epoch
        r = preferred_election(version, [1, 2], [1, 2], {1, 2}, current_leader=2)
        assert r.leader == 1 and r.bumps_leader_epoch and r.recipients == (1, 2)
    with pytest.raises(ValueError):
        preferred_election("1.0.2", [1, 2], [1, 2], {1, 2})


def test_preferred_already_leader_filtered_by_controller_from_2_2():
    """1.1 - 2.1 re-elect (epoch+1); 2.2+ skip before electing (KafkaController.scala@2.2.0:1589)."""
    assert not preferred_election_skipped("2.1.1", [1, 2], 1)
    assert preferred_election_skipped("2.2.0", [1, 2], 1)
    assert not preferred_election_skipped("2.2.0", [1, 2], 2)
    assert preferred_election_skipped("3.9.0", [1, 2], 1)
    r = preferred_election("2.1.1", [1, 2], [1, 2], {1, 2}, current_leader=1)
    assert r.leader == 1 and r.bumps_leader_epoch


def test_controlled_shutdown_0_8_0_drops_current_leader():
    """ControlledShutdownLeaderSelector@0.8.0:151-181: candidates = ISR - current leader - SD."""
    r = controlled_shutdown_election("0.8.0", [1, 2, 3], [1, 2, 3], {1, 2, 3}, set(), current_leader=1)
    assert (r.leader, r.isr) == (2, (2, 3))
    r = controlled_shutdown_election("0.8.1.1", [1, 2, 3], [1, 2, 3], {1, 2, 3}, set())
    assert (r.leader, r.isr) == (1, (1, 2, 3))
    with pytest.raises(ValueError):
        controlled_shutdown_election("0.8.0", [1, 2], [1, 2], {1, 2}, {1})


def test_controlled_shutdown_assignment_order_from_0_10_0():
    """KAFKA-3670: 0.8.1-0.9.x take the head of ISR - SD; 0.10.0+ the first assigned replica in it."""
    for version, leader in [("0.8.1.1", 2), ("0.9.0.1", 2), ("0.10.0.0", 3), ("1.0.2", 3), ("1.1.1", 3), ("3.9.0", 3)]:
        r = controlled_shutdown_election(version, [3, 2, 1], [1, 2, 3], {1, 2, 3}, {1}, current_leader=1)
        assert (r.leader, r.isr) == (leader, (2, 3)), version


def test_controlled_shutdown_liveness_check_from_0_10_0():
    """0.8.1-0.9.x elect the head of ISR - SD even if that broker is dead."""
    assert controlled_shutdown_election("0.9.0.1", [1, 2], [1, 2], {1}, {1}).leader == 2
    assert controlled_shutdown_election("0.10.0.0", [1, 2], [1, 2], {1}, {1}).leader is None
    assert controlled_shutdown_election("3.9.0", [1, 2], [1, 2], {1}, {1}).leader is None


def test_is_unclean_leader_change():
    assert is_unclean_leader_change([1, 2], 3)
    assert not is_unclean_leader_change([1, 2], 2)
    assert not is_unclean_leader_change([1, 2], -1)


def test_kraft_only_version_has_no_zk_elections():
    with pytest.raises(NoZooKeeperControllerError):
        offline_election("4.0.0", [1], [1], {1})
