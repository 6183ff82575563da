"""Mirror of Kafka's own PartitionStateMachineTest, per version of that suite.

Each case is one ``@Test`` of ``core/src/test/scala/unit/kafka/controller/PartitionStateMachineTest.scala``
(first in 1.1.0, KAFKA-5642), reduced to what our rules decide: whether Kafka accepts the
transition (the state becomes the target, or the election/ZooKeeper write is attempted and may
fail for reasons outside the state machine) or rejects it as invalid (``assertEquals(fromState, …)``
right after ``handleStateChanges``). Cases are run for every release whose suite contains the test.
"""

from __future__ import annotations

import itertools

import pytest

from kafka_forensics.statemachines import Entity, PartitionState, is_valid_transition, rules_for
from kafka_forensics.statemachines.states import UnknownStateError

P = PartitionState

# Releases whose source tree has PartitionStateMachineTest (1.1.0 .. 3.9.0-rc3 in the mirror).
SUITE_VERSIONS = ["1.1.0", "1.1.1", "2.0.1", "2.1.1", "2.2.2", "2.3.0", "2.4.1", "2.8.2", "3.4.1", "3.9.0"]

# (Kafka test name, from, to, accepted?, first release whose suite has it, last release or None)
# accepted=True also for the "...ExceptionFrom..."/"...ErrorCodeFrom..." tests: the transition is
# valid, only the mocked ZooKeeper call fails (state stays ``from``).
CASES = [
    ("testNonexistentPartitionToNewPartitionTransition", P.NonExistentPartition, P.NewPartition, True, "1.1.0", None),
    (
        "testInvalidNonexistentPartitionToOnlinePartitionTransition",
        P.NonExistentPartition,
        P.OnlinePartition,
        False,
        "1.1.0",
        None,
    ),
    (
        "testInvalidNonexistentPartitionToOfflinePartitionTransition",
        P.NonExistentPartition,
        P.OfflinePartition,
        False,
        "1.1.0",
        None,
    ),
    ("testNewPartitionToOnlinePartitionTransition", P.NewPartition, P.OnlinePartition, True, "1.1.0", None),
    (
        "testNewPartitionToOnlinePartitionTransitionZkUtilsExceptionFromCreateStates",
        P.NewPartition,
        P.OnlinePartition,
        True,
        "1.1.0",
        "2.3.1",
    ),
    (
        "testNewPartitionToOnlinePartitionTransitionZooKeeperClientExceptionFromCreateStates",
        P.NewPartition,
        P.OnlinePartition,
        True,
        "2.4.0",
        None,
    ),
    (
        "testNewPartitionToOnlinePartitionTransitionErrorCodeFromCreateStates",
        P.NewPartition,
        P.OnlinePartition,
        True,
        "1.1.0",
        None,
    ),
    ("testNewPartitionToOfflinePartitionTransition", P.NewPartition, P.OfflinePartition, True, "1.1.0", None),
    (
        "testInvalidNewPartitionToNonexistentPartitionTransition",
        P.NewPartition,
        P.NonExistentPartition,
        False,
        "1.1.0",
        None,
    ),
    ("testOnlinePartitionToOnlineTransition", P.OnlinePartition, P.OnlinePartition, True, "1.1.0", None),
    (
        "testOnlinePartitionToOnlineTransitionForControlledShutdown",
        P.OnlinePartition,
        P.OnlinePartition,
        True,
        "1.1.0",
        None,
    ),
    ("testOnlinePartitionToOfflineTransition", P.OnlinePartition, P.OfflinePartition, True, "1.1.0", None),
    (
        "testInvalidOnlinePartitionToNonexistentPartitionTransition",
        P.OnlinePartition,
        P.NonExistentPartition,
        False,
        "1.1.0",
        None,
    ),
    ("testInvalidOnlinePartitionToNewPartitionTransition", P.OnlinePartition, P.NewPartition, False, "1.1.0", None),
    ("testOfflinePartitionToOnlinePartitionTransition", P.OfflinePartition, P.OnlinePartition, True, "1.1.0", None),
    (
        "testOfflinePartitionToUncleanOnlinePartitionTransition",
        P.OfflinePartition,
        P.OnlinePartition,
        True,
        "2.4.0",
        None,
    ),
    (
        "testOfflinePartitionToOnlinePartitionTransitionZkUtilsExceptionFromStateLookup",
        P.OfflinePartition,
        P.OnlinePartition,
        True,
        "1.1.0",
        "2.3.1",
    ),
    (
        "testOfflinePartitionToOnlinePartitionTransitionZooKeeperClientExceptionFromStateLookup",
        P.OfflinePartition,
        P.OnlinePartition,
        True,
        "2.4.0",
        None,
    ),
    (
        "testOfflinePartitionToOnlinePartitionTransitionErrorCodeFromStateLookup",
        P.OfflinePartition,
        P.OnlinePartition,
        True,
        "1.1.0",
        None,
    ),
    (
        "testOfflinePartitionToNonexistentPartitionTransition",
        P.OfflinePartition,
        P.NonExistentPartition,
        True,
        "1.1.0",
        None,
    ),
    ("testInvalidOfflinePartitionToNewPartitionTransition", P.OfflinePartition, P.NewPartition, False, "1.1.0", None),
]

# The metric tests drive whole sequences; every step must be accepted.
SEQUENCE_CASES = [
    (
        "testUpdatingOfflinePartitionsCount",
        [P.NonExistentPartition, P.NewPartition, P.OfflinePartition, P.OnlinePartition],
    ),
    (
        "testNoOfflinePartitionsChangeForTopicsBeingDeleted",
        [P.NonExistentPartition, P.NewPartition, P.OfflinePartition],
    ),
    (
        "testUpdatingOfflinePartitionsCountDuringTopicDeletion",
        [P.NonExistentPartition, P.NewPartition, P.OfflinePartition, P.NonExistentPartition],
    ),
]


def _runs(first: str, last: str | None):
    from kafka_forensics.core.versions import KafkaVersion

    lo = KafkaVersion.parse(first)
    hi = KafkaVersion.parse(last) if last else None
    return [v for v in SUITE_VERSIONS if KafkaVersion.parse(v) >= lo and (hi is None or KafkaVersion.parse(v) <= hi)]


PARAMS = [
    pytest.param(version, src, dst, ok, id=f"{name}@{version}")
    for name, src, dst, ok, first, last in CASES
    for version in _runs(first, last)
]


@pytest.mark.parametrize("version, src, dst, accepted", PARAMS)
def test_partition_state_machine_test_cases(version, src, dst, accepted):
    """Mirrors T:controller/PartitionStateMachineTest.scala at the release named in the id."""
    assert is_valid_transition(Entity.PARTITION, src, dst, version) is accepted
    assert is_valid_transition("partition", src.value, dst.value, version) is accepted


@pytest.mark.parametrize("name, steps", SEQUENCE_CASES, ids=[c[0] for c in SEQUENCE_CASES])
@pytest.mark.parametrize("version", ["2.1.1", "2.8.2", "3.9.0"])
def test_partition_state_machine_test_sequences(name, steps, version):
    """Mirrors the offline-partition-count tests (first in 2.1.x) of PartitionStateMachineTest."""
    for src, dst in itertools.pairwise(steps):
        assert is_valid_transition("partition", src, dst, version), (name, src, dst)


@pytest.mark.parametrize("version", ["0.8.1", "1.0.2", "2.2.2", "3.9.0"])
def test_offline_to_offline_valid_from_0_8_1(version):
    """Coverage gap of Kafka's suite, valid per code: @0.8.1.1:197, @3.9.0-rc3:579-581."""
    assert is_valid_transition("partition", "OfflinePartition", "OfflinePartition", version)


def test_offline_to_offline_invalid_only_in_0_8_0():
    """K:controller/PartitionStateMachine.scala@0.8.0:165: List(NewPartition, OnlinePartition)."""
    assert not is_valid_transition("partition", "OfflinePartition", "OfflinePartition", "0.8.0")
    assert is_valid_transition("partition", "OfflinePartition", "OfflinePartition", "0.8.1")


@pytest.mark.parametrize("version", ["0.8.0", "0.8.2.2", "1.1.1", "3.9.0"])
@pytest.mark.parametrize("state", list(P))
def test_new_partition_never_from_itself_and_only_from_nonexistent(version, state):
    assert is_valid_transition("partition", state, "NewPartition", version) is (state is P.NonExistentPartition)


def test_full_partition_table_every_era():
    expected_0_8_1 = {
        P.NewPartition: (P.NonExistentPartition,),
        P.OnlinePartition: (P.NewPartition, P.OnlinePartition, P.OfflinePartition),
        P.OfflinePartition: (P.NewPartition, P.OnlinePartition, P.OfflinePartition),
        P.NonExistentPartition: (P.OfflinePartition,),
    }
    for version in ["0.8.1", "0.8.2.2", "0.10.2.2", "1.0.2", "1.1.1", "2.2.2", "2.3.0", "3.2.0", "3.9.0"]:
        assert dict(rules_for(version).partition) == expected_0_8_1, version
    assert dict(rules_for("0.8.0").partition) == {
        **expected_0_8_1,
        P.OfflinePartition: (P.NewPartition, P.OnlinePartition),
    }


def test_unknown_state_name_is_an_error_not_a_verdict():
    with pytest.raises(UnknownStateError):
        is_valid_transition("partition", "OnlinePartiton", "OfflinePartition", "2.8")
    with pytest.raises(UnknownStateError):
        is_valid_transition("partition", "OnlineReplica", "OfflinePartition", "2.8")
