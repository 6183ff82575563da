"""``kafka-forensics rules`` and the renderings behind it."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kafka_forensics.cli.rules import rules
from kafka_forensics.statemachines.render import eras_as_text, rules_as_dict, rules_as_text

PARTITION_STATES = ["NewPartition", "OnlinePartition", "OfflinePartition", "NonExistentPartition"]
REPLICA_STATES = [
    "NewReplica",
    "OnlineReplica",
    "OfflineReplica",
    "ReplicaDeletionStarted",
    "ReplicaDeletionSuccessful",
    "ReplicaDeletionIneligible",
    "NonExistentReplica",
]


def _invoke(*args):
    return CliRunner().invoke(rules, list(args))


def test_json_shape_and_declaration_order():
    result = _invoke("--kafka-version", "2.3.0", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert list(data) == ["kafka_version", "partition", "replica"]
    assert data["kafka_version"] == "2.3.0"
    assert list(data["partition"]) == PARTITION_STATES
    assert list(data["replica"]) == REPLICA_STATES
    assert data["partition"]["OfflinePartition"] == ["NewPartition", "OnlinePartition", "OfflinePartition"]
    assert data["replica"]["ReplicaDeletionIneligible"] == ["OfflineReplica", "ReplicaDeletionStarted"]
    assert data == rules_as_dict("2.3.0")


def test_json_0_8_0_has_four_replica_states():
    data = json.loads(_invoke("--kafka-version", "0.8.0", "--json").output)
    assert list(data["replica"]) == ["NewReplica", "OnlineReplica", "OfflineReplica", "NonExistentReplica"]
    assert data["replica"]["NonExistentReplica"] == ["OfflineReplica"]
    assert data["partition"]["OfflinePartition"] == ["NewPartition", "OnlinePartition"]


def test_json_before_kafka_8237():
    data = json.loads(_invoke("--kafka-version", "2.2.2", "--json").output)
    assert data["replica"]["ReplicaDeletionIneligible"] == ["ReplicaDeletionStarted"]


def test_json_is_deterministic():
    assert _invoke("--kafka-version", "3.9.0", "--json").output == _invoke("--kafka-version", "3.9.0", "--json").output


def test_text_output():
    result = _invoke("--kafka-version", "2.8")
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.startswith("Kafka 2.8: ZooKeeper controller state machines (rules of 2.3 - 3.1.x)")
    assert "Partition states (target state <- valid previous states)" in out
    assert "Replica states (target state <- valid previous states)" in out
    assert "6  ReplicaDeletionIneligible  <- OfflineReplica, ReplicaDeletionStarted" in out
    assert "2  OfflinePartition      <- NewPartition, OnlinePartition, OfflinePartition" in out
    assert "failover, replica online / offline    = OnlineReplica / ReplicaDeletionIneligible" in out
    assert out == rules_as_text("2.8")


def test_text_names_the_era_change_with_citation():
    out = _invoke("--kafka-version", "2.3.0").output
    assert "KAFKA-8237" in out and "ReplicaStateMachine.scala@2.3.0" in out


@pytest.mark.parametrize("version", ["9.9", "banana", "0.8", "1.2.0", ""])
def test_unknown_version_exits_2_with_one_sentence(version):
    result = _invoke("--kafka-version", version)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("kafka-forensics: error: ")
    assert "Traceback" not in result.output


def test_kraft_only_version_exits_2():
    result = _invoke("--kafka-version", "4.0.0", "--json")
    assert result.exit_code == 2
    assert "KRaft" in result.output


def test_missing_version_is_a_usage_error():
    assert _invoke().exit_code == 2


def test_help_has_an_example():
    result = _invoke("--help")
    assert result.exit_code == 0
    assert "kafka-forensics rules --kafka-version 2.8.2" in result.output
    assert "--json" in result.output


def test_eras_text_lists_every_era():
    text = eras_as_text()
    assert text.splitlines()[0].startswith("0.8.0.x: baseline")
    assert "2.3 - 3.1.x: ReplicaDeletionIneligible becomes valid from OfflineReplica" in text
    assert text.splitlines()[-1].startswith("4.0 and later:")
