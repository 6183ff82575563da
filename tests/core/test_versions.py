"""Version parsing and the era table of kafka_forensics.core.versions."""

from __future__ import annotations

import pytest

from kafka_forensics.core.eras import ERAS, era_of, require_zookeeper_controller
from kafka_forensics.core.errors import NoZooKeeperControllerError, UnknownKafkaVersionError, UsageError
from kafka_forensics.core.rule_changes import RULE_CHANGES, has_rule
from kafka_forensics.core.versions import KafkaVersion


@pytest.mark.parametrize(
    "text, key, line",
    [
        ("0.8.2.2", (0, 8, 2, 2), "0.8.2"),
        ("0.8.0", (0, 8, 0, 0), "0.8.0"),
        ("0.10.2.2", (0, 10, 2, 2), "0.10.2"),
        ("2.8", (2, 8, 0, 0), "2.8"),
        ("3.9.0", (3, 9, 0, 0), "3.9"),
        ("4.0.0", (4, 0, 0, 0), "4.0"),
        ("2.4.1", (2, 4, 1, 0), "2.4"),
        (" 3.4.1 ", (3, 4, 1, 0), "3.4"),
    ],
)
def test_parse_known_versions(text, key, line):
    v = KafkaVersion.parse(text)
    assert v.key == key
    assert v.line == line
    assert str(v) == text.strip()


def test_versions_compare_across_numbering_schemes():
    order = [
        "0.8.0",
        "0.8.1.1",
        "0.8.2.2",
        "0.9.0.1",
        "0.10.0.0",
        "0.10.2.2",
        "0.11.0.3",
        "1.0",
        "1.0.2",
        "1.1.0",
        "2.0.1",
        "2.8",
        "2.8.1",
        "3.0.0",
        "3.9.0",
        "4.0.0",
    ]
    parsed = [KafkaVersion.parse(t) for t in order]
    assert parsed == sorted(parsed)
    assert len({p.key for p in parsed}) == len(parsed)
    assert KafkaVersion.parse("2.8") == KafkaVersion.parse("2.8.0")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "banana",
        "2",
        "0.8",
        "0.10",
        "1.2.0",
        "2.9",
        "0.12.0",
        "5.0",
        "9.9.9",
        "2.8.x",
        "-1.0",
        "2.8.1.1",
        "0.8.2.2.1",
        "v2.8",
        "2.8-rc1",
        "2..8",
        "３.9",
    ],
)
def test_nonsense_versions_raise_unknown_kafka_version(text):
    with pytest.raises(UnknownKafkaVersionError) as info:
        KafkaVersion.parse(text)
    assert isinstance(info.value, UsageError)
    assert info.value.exit_code == 2
    message = str(info.value)
    assert message and "\n" not in message


def test_eras_are_contiguous_and_ordered():
    firsts = [e.first for e in ERAS]
    assert firsts == sorted(firsts)
    assert firsts[0] == KafkaVersion.parse("0.8.0")
    # Every rule change opens an era and every era after the first is opened by a change.
    assert {c.since for c in RULE_CHANGES} == set(firsts[1:])
    for era in ERAS[1:]:
        assert era.changes
        for change in era.changes:
            assert "@" in change.evidence or change.evidence.startswith("https://")


@pytest.mark.parametrize(
    "before, after",
    [
        ("0.8.0", "0.8.1"),  # KAFKA-330: deletion states, Offline->Offline partition
        ("0.8.1.1", "0.8.2.0"),  # KAFKA-1028 / KAFKA-1503
        ("0.9.0.1", "0.10.0.0"),  # KAFKA-3670
        ("0.10.2.2", "0.11.0.0"),  # KIP-106 unclean default false
        ("1.0.2", "1.1.0"),  # KAFKA-5642
        ("2.0.1", "2.1.0"),  # KAFKA-7482
        ("2.1.1", "2.2.0"),  # KAFKA-5692
        ("2.2.2", "2.3.0"),  # KAFKA-8237 / KAFKA-3143
        ("3.1.2", "3.2.0"),  # KIP-704
        ("3.9.0", "4.0.0"),  # ZooKeeper removed
    ],
)
def test_era_boundaries(before, after):
    assert era_of(before) != era_of(after)
    assert era_of(after).first == KafkaVersion.parse(after)


@pytest.mark.parametrize(
    "same",
    [
        ("0.8.2.0", "0.9.0.1"),
        ("0.10.0.0", "0.10.2.2"),
        ("0.11.0.0", "1.0.2"),
        ("1.1.0", "2.0.1"),
        ("2.3.0", "2.8.2"),
        ("2.3.0", "3.1.2"),
        ("3.2.0", "3.9.0"),
    ],
)
def test_no_era_split_inside_a_rule_range(same):
    a, b = same
    assert era_of(a) == era_of(b)


def test_era_labels():
    assert [e.label for e in ERAS] == [
        "0.8.0.x",
        "0.8.1.x",
        "0.8.2 - 0.9.0.x",
        "0.10.0 - 0.10.2.x",
        "0.11.0 - 1.0.x",
        "1.1 - 2.0.x",
        "2.1.x",
        "2.2.x",
        "2.3 - 3.1.x",
        "3.2 - 3.9.x",
        "4.0 and later",
    ]


def test_has_rule_uses_first_release():
    assert not has_rule("2.2.2", "offline_replica_to_deletion_ineligible")
    assert has_rule("2.3.0", "offline_replica_to_deletion_ineligible")


def test_kraft_only_versions_have_no_state_machines():
    assert require_zookeeper_controller("3.9.0") == KafkaVersion.parse("3.9.0")
    with pytest.raises(NoZooKeeperControllerError) as info:
        require_zookeeper_controller("4.0.0")
    assert info.value.exit_code == 2
