"""Mirror of Kafka's own ReplicaStateMachineTest, per version of that suite, plus the era changes.

Each case is one ``@Test`` of ``core/src/test/scala/unit/kafka/controller/ReplicaStateMachineTest.scala``
(first in 1.1.0). ``testInvalid…`` cases go through the suite's helper ``testInvalidTransition(from, to)``,
which asserts the state is still ``from``: our rules must reject them. The 1.1.0 - 2.2.x suite has
``testInvalidOfflineReplicaToReplicaDeletionIneligibleTransition``; 2.3.0 replaced it with
``testOfflineReplicaToReplicaDeletionIneligibleTransition`` (KAFKA-8237).
"""

from __future__ import annotations

import pytest

from kafka_forensics.core.versions import KafkaVersion
from kafka_forensics.statemachines import ReplicaState, is_valid_transition, rules_for
from kafka_forensics.statemachines.states import state_code, states_for

R = ReplicaState

SUITE_VERSIONS = ["1.1.0", "1.1.1", "2.0.1", "2.1.1", "2.2.2", "2.3.0", "2.4.1", "2.8.2", "3.4.1", "3.9.0"]

# (Kafka test name, from, to, accepted?, first release whose suite has it, last release or None)
CASES = [
    ("testNonexistentReplicaToNewReplicaTransition", R.NonExistentReplica, R.NewReplica, True, "1.1.0", None),
    (
        "testInvalidNonexistentReplicaToOnlineReplicaTransition",
        R.NonExistentReplica,
        R.OnlineReplica,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidNonexistentReplicaToOfflineReplicaTransition",
        R.NonExistentReplica,
        R.OfflineReplica,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidNonexistentReplicaToReplicaDeletionStartedTransition",
        R.NonExistentReplica,
        R.ReplicaDeletionStarted,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidNonexistentReplicaToReplicaDeletionIneligibleTransition",
        R.NonExistentReplica,
        R.ReplicaDeletionIneligible,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidNonexistentReplicaToReplicaDeletionSuccessfulTransition",
        R.NonExistentReplica,
        R.ReplicaDeletionSuccessful,
        False,
        "1.1.0",
        None,
    ),
    ("testInvalidNewReplicaToNonexistentReplicaTransition", R.NewReplica, R.NonExistentReplica, False, "1.1.0", None),
    ("testNewReplicaToOnlineReplicaTransition", R.NewReplica, R.OnlineReplica, True, "1.1.0", None),
    # Valid in every suite; at 1.1.x the mocked partition has no leadership info so the change
    # fails and the state stays NewReplica (fixed by KAFKA-6650 in 2.0.0) - not a rejection.
    ("testNewReplicaToOfflineReplicaTransition", R.NewReplica, R.OfflineReplica, True, "1.1.0", None),
    (
        "testInvalidNewReplicaToReplicaDeletionStartedTransition",
        R.NewReplica,
        R.ReplicaDeletionStarted,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidNewReplicaToReplicaDeletionIneligibleTransition",
        R.NewReplica,
        R.ReplicaDeletionIneligible,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidNewReplicaToReplicaDeletionSuccessfulTransition",
        R.NewReplica,
        R.ReplicaDeletionSuccessful,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidOnlineReplicaToNonexistentReplicaTransition",
        R.OnlineReplica,
        R.NonExistentReplica,
        False,
        "1.1.0",
        None,
    ),
    ("testInvalidOnlineReplicaToNewReplicaTransition", R.OnlineReplica, R.NewReplica, False, "1.1.0", None),
    ("testOnlineReplicaToOnlineReplicaTransition", R.OnlineReplica, R.OnlineReplica, True, "1.1.0", None),
    ("testOnlineReplicaToOfflineReplicaTransition", R.OnlineReplica, R.OfflineReplica, True, "1.1.0", None),
    (
        "testInvalidOnlineReplicaToReplicaDeletionStartedTransition",
        R.OnlineReplica,
        R.ReplicaDeletionStarted,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidOnlineReplicaToReplicaDeletionIneligibleTransition",
        R.OnlineReplica,
        R.ReplicaDeletionIneligible,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidOnlineReplicaToReplicaDeletionSuccessfulTransition",
        R.OnlineReplica,
        R.ReplicaDeletionSuccessful,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidOfflineReplicaToNonexistentReplicaTransition",
        R.OfflineReplica,
        R.NonExistentReplica,
        False,
        "1.1.0",
        None,
    ),
    ("testInvalidOfflineReplicaToNewReplicaTransition", R.OfflineReplica, R.NewReplica, False, "1.1.0", None),
    ("testOfflineReplicaToOnlineReplicaTransition", R.OfflineReplica, R.OnlineReplica, True, "1.1.0", None),
    (
        "testOfflineReplicaToReplicaDeletionStartedTransition",
        R.OfflineReplica,
        R.ReplicaDeletionStarted,
        True,
        "1.1.0",
        None,
    ),
    (
        "testInvalidOfflineReplicaToReplicaDeletionIneligibleTransition",
        R.OfflineReplica,
        R.ReplicaDeletionIneligible,
        False,
        "1.1.0",
        "2.2.2",
    ),
    (
        "testOfflineReplicaToReplicaDeletionIneligibleTransition",
        R.OfflineReplica,
        R.ReplicaDeletionIneligible,
        True,
        "2.3.0",
        None,
    ),
    (
        "testInvalidOfflineReplicaToReplicaDeletionSuccessfulTransition",
        R.OfflineReplica,
        R.ReplicaDeletionSuccessful,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidReplicaDeletionStartedToNonexistentReplicaTransition",
        R.ReplicaDeletionStarted,
        R.NonExistentReplica,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidReplicaDeletionStartedToNewReplicaTransition",
        R.ReplicaDeletionStarted,
        R.NewReplica,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidReplicaDeletionStartedToOnlineReplicaTransition",
        R.ReplicaDeletionStarted,
        R.OnlineReplica,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidReplicaDeletionStartedToOfflineReplicaTransition",
        R.ReplicaDeletionStarted,
        R.OfflineReplica,
        False,
        "1.1.0",
        None,
    ),
    (
        "testReplicaDeletionStartedToReplicaDeletionIneligibleTransition",
        R.ReplicaDeletionStarted,
        R.ReplicaDeletionIneligible,
        True,
        "1.1.0",
        None,
    ),
    (
        "testReplicaDeletionStartedToReplicaDeletionSuccessfulTransition",
        R.ReplicaDeletionStarted,
        R.ReplicaDeletionSuccessful,
        True,
        "1.1.0",
        None,
    ),
    (
        "testReplicaDeletionSuccessfulToNonexistentReplicaTransition",
        R.ReplicaDeletionSuccessful,
        R.NonExistentReplica,
        True,
        "1.1.0",
        None,
    ),
    (
        "testInvalidReplicaDeletionSuccessfulToNewReplicaTransition",
        R.ReplicaDeletionSuccessful,
        R.NewReplica,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidReplicaDeletionSuccessfulToOnlineReplicaTransition",
        R.ReplicaDeletionSuccessful,
        R.OnlineReplica,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidReplicaDeletionSuccessfulToOfflineReplicaTransition",
        R.ReplicaDeletionSuccessful,
        R.OfflineReplica,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidReplicaDeletionSuccessfulToReplicaDeletionStartedTransition",
        R.ReplicaDeletionSuccessful,
        R.ReplicaDeletionStarted,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidReplicaDeletionSuccessfulToReplicaDeletionIneligibleTransition",
        R.ReplicaDeletionSuccessful,
        R.ReplicaDeletionIneligible,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidReplicaDeletionIneligibleToNonexistentReplicaTransition",
        R.ReplicaDeletionIneligible,
        R.NonExistentReplica,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidReplicaDeletionIneligibleToNewReplicaTransition",
        R.ReplicaDeletionIneligible,
        R.NewReplica,
        False,
        "1.1.0",
        None,
    ),
    (
        "testReplicaDeletionIneligibleToOnlineReplicaTransition",
        R.ReplicaDeletionIneligible,
        R.OnlineReplica,
        True,
        "1.1.0",
        None,
    ),
    (
        "testInvalidReplicaDeletionIneligibleToReplicaDeletionStartedTransition",
        R.ReplicaDeletionIneligible,
        R.ReplicaDeletionStarted,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidReplicaDeletionIneligibleToReplicaDeletionSuccessfulTransition",
        R.ReplicaDeletionIneligible,
        R.ReplicaDeletionSuccessful,
        False,
        "1.1.0",
        None,
    ),
]


def _runs(first, last):
    lo = KafkaVersion.parse(first)
    hi = KafkaVersion.parse(last) if last else None
    return [v for v in SUITE_VERSIONS if KafkaVersion.parse(v) >= lo and (hi is None or KafkaVersion.parse(v) <= hi)]


PARAMS = [
    pytest.param(version, src, dst, ok, id=f"{name}@{version}")
    for name, src, dst, ok, first, last in CASES
    for version in _runs(first, last)
]


@pytest.mark.parametrize("version, src, dst, accepted", PARAMS)
def test_replica_state_machine_test_cases(version, src, dst, accepted):
    """Mirrors T:controller/ReplicaStateMachineTest.scala at the release named in the id."""
    assert is_valid_transition("replica", src, dst, version) is accepted


def test_suite_sizes_match_kafka():
    """42 @Test in the 1.1.0 - 2.2.x suite, 45 from 2.3.0 (3 of them are startup tests below)."""
    assert len([c for c in CASES if c[4] == "1.1.0"]) == 42
    assert len([c for c in CASES if c[5] is None]) == 42  # + 3 testStartup* = 45


@pytest.mark.parametrize("version", ["2.3.0", "2.8.2", "3.9.0"])
def test_startup_online_partition(version):
    """testStartupOnlinePartition: a replica on a live broker ends OnlineReplica after startup()."""
    oob = rules_for(version).out_of_band
    assert oob.failover_replicas.replica_online is R.OnlineReplica
    assert oob.startup_replica_transitions.replica_online is R.OnlineReplica
    assert is_valid_transition("replica", R.OnlineReplica, R.OnlineReplica, version)


@pytest.mark.parametrize("version", ["2.3.0", "2.8.2", "3.9.0"])
def test_startup_offline_partition(version):
    """testStartupOfflinePartition / testStartupWithReplicaWithoutLeader: a replica on a dead
    broker is put ReplicaDeletionIneligible, then startup() moves it to OfflineReplica (KAFKA-3143)."""
    oob = rules_for(version).out_of_band
    assert oob.failover_replicas.replica_offline is R.ReplicaDeletionIneligible
    assert oob.startup_replica_transitions.replica_offline is R.OfflineReplica
    assert is_valid_transition("replica", oob.failover_replicas.replica_offline, R.OfflineReplica, version)


@pytest.mark.parametrize("version", ["0.8.1.1", "1.1.1", "2.2.2"])
def test_before_kafka_3143_dead_replicas_stay_ineligible_after_failover(version):
    oob = rules_for(version).out_of_band
    assert oob.failover_replicas.replica_offline is R.ReplicaDeletionIneligible
    assert oob.startup_replica_transitions.replica_offline is None


def test_0_8_0_failover_puts_dead_replicas_offline():
    """K:controller/ReplicaStateMachine.scala@0.8.0:223-234."""
    oob = rules_for("0.8.0").out_of_band
    assert oob.failover_replicas.replica_offline is R.OfflineReplica
    assert oob.startup_replica_transitions.replica_offline is None


@pytest.mark.parametrize("version", ["0.8.0", "0.8.2.2", "2.2.2", "3.9.0"])
def test_failover_partition_assignments_and_implicit_initial_states(version):
    oob = rules_for(version).out_of_band
    assert oob.initial_partition_state.value == "NonExistentPartition"
    assert oob.initial_replica_state is R.NonExistentReplica
    assert oob.failover_partitions.leader_online.value == "OnlinePartition"
    assert oob.failover_partitions.leader_not_online.value == "OfflinePartition"
    assert oob.failover_partitions.no_leader_and_isr.value == "NewPartition"
    assert oob.replica_removed_from_map_on is R.NonExistentReplica
    for source in oob.startup_partition_sources:
        assert is_valid_transition("partition", source, oob.startup_partition_target, version)


# --- era boundaries -------------------------------------------------------------------------


def test_offline_to_deletion_ineligible_becomes_valid_in_2_3_0():
    """KAFKA-8237: ReplicaDeletionIneligible.validPreviousStates gains OfflineReplica
    (K:controller/ReplicaStateMachine.scala@2.2.2:440 vs @2.3.0:433)."""
    for version in ["0.8.1", "0.8.2.2", "1.1.1", "2.2.0", "2.2.2"]:
        assert not is_valid_transition("replica", "OfflineReplica", "ReplicaDeletionIneligible", version)
    for version in ["2.3.0", "2.3.1", "2.4.1", "3.9.0"]:
        assert is_valid_transition("replica", "OfflineReplica", "ReplicaDeletionIneligible", version)


@pytest.mark.parametrize("version", ["0.8.1", "0.8.2.2", "1.1.1", "2.2.2", "2.3.0", "3.9.0"])
def test_deletion_ineligible_to_offline_valid_since_0_8_1(version):
    """OfflineReplica.validPreviousStates contains ReplicaDeletionIneligible since KAFKA-330
    (@0.8.1.1:224-225, @3.9.0-rc3:470): the deletion retry path, not a 2.3.0 change."""
    assert is_valid_transition("replica", "ReplicaDeletionIneligible", "OfflineReplica", version)


def test_0_8_0_has_the_four_state_replica_machine():
    """K:controller/ReplicaStateMachine.scala@0.8.0:115-167,286-289."""
    assert [s.value for s in states_for("replica", "0.8.0")] == [
        "NewReplica",
        "OnlineReplica",
        "OfflineReplica",
        "NonExistentReplica",
    ]
    assert state_code("replica", "NonExistentReplica", "0.8.0") == 4
    assert state_code("replica", "NonExistentReplica", "0.8.1") == 7
    assert len(states_for("replica", "0.8.1")) == 7
    assert is_valid_transition("replica", "OfflineReplica", "NonExistentReplica", "0.8.0")
    assert not is_valid_transition("replica", "OfflineReplica", "NonExistentReplica", "0.8.1")
    assert not is_valid_transition("replica", "OfflineReplica", "OfflineReplica", "0.8.0")
    assert is_valid_transition("replica", "OfflineReplica", "OfflineReplica", "0.8.1")
    for state in ["ReplicaDeletionStarted", "ReplicaDeletionSuccessful", "ReplicaDeletionIneligible"]:
        assert not is_valid_transition("replica", "OfflineReplica", state, "0.8.0")
        assert not is_valid_transition("replica", state, "OnlineReplica", "0.8.0")


@pytest.mark.parametrize("version", ["0.8.0", "0.8.1", "2.2.2", "3.9.0"])
@pytest.mark.parametrize("state", ["NewReplica", "ReplicaDeletionStarted", "ReplicaDeletionIneligible"])
def test_self_transitions_kafka_does_not_test(version, state):
    """Coverage gaps of Kafka's suite, invalid per code in every version."""
    assert not is_valid_transition("replica", state, state, version)


def test_codes_are_kafkas():
    assert [state_code("replica", s, "2.8") for s in R] == [1, 2, 3, 4, 5, 6, 7]
    assert [
        state_code("partition", s, "0.8.0")
        for s in ["NewPartition", "OnlinePartition", "OfflinePartition", "NonExistentPartition"]
    ] == [0, 1, 2, 3]
