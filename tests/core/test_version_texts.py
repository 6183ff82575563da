"""The one reader of version text (``core.versions.read_kafka_version``) and the eras it leads to.

Every command reads ``--kafka-version`` through it (tests/cli/test_version_option.py), and so does
the parser's detection of a broker's ``Kafka version: X`` line (tests/parsers/test_detect.py).
"""

from __future__ import annotations

import pytest

from kafka_forensics.core.eras import (
    DIALECTS,
    dialect_for_version,
    era_of,
    range_for_line,
    zookeeper_version,
)
from kafka_forensics.core.errors import NoZooKeeperControllerError, UnknownKafkaVersionError, UsageError
from kafka_forensics.core.versions import (
    CONFLUENT_PLATFORM,
    HEAD,
    KNOWN_RELEASE_LINES,
    KafkaVersion,
    read_kafka_version,
)
from kafka_forensics.simulator.profile import PROFILES, profile_for
from kafka_forensics.statemachines.machine import rules_for


@pytest.mark.parametrize(
    "text,line,kraft",
    [
        ("0.8.0", "0.8.0", False),
        ("0.8.2.2", "0.8.2", False),
        ("0.10.2", "0.10.2", False),
        ("1.0", "1.0", False),
        ("2.8", "2.8", False),
        ("2.8-kraft", "2.8", True),
        ("3.9", "3.9", False),
        ("3.9.0", "3.9", False),
        ("3.9-kraft", "3.9", True),
        ("3.9.0-KRaft", "3.9", True),
        ("4.0", "4.0", True),
        ("4.1.1", "4.1", True),
        ("2.4.1-cp1", "2.4", False),  # Confluent Platform 5.x builds print the Apache number
        ("7.5.0", "3.5", False),
        ("7.5.0-ccs", "3.5", False),
        ("7.5.3-ce", "3.5", False),
        ("5.4.1-ccs", "2.4", False),
        ("6.2.0", "2.8", False),
        ("7.9.0-ccs-kraft", "3.9", True),
        ("8.0.0", "4.0", True),
        ("4.1.0-ccs", "1.1", False),
        ("HEAD", "HEAD", True),
        (" 2.4 ", "2.4", False),
    ],
)
def test_accepted_texts(text, line, kraft):
    release = read_kafka_version(text)
    assert (release.version.line, release.kraft) == (line, kraft)


def test_kraft_alone_is_some_kraft_release():
    release = read_kafka_version("kraft")
    assert release.version is None and release.kraft


@pytest.mark.parametrize(
    "text,sentence",
    [
        (
            "2.9",
            "Kafka 2.9 is not a known release (Apache Kafka release lines 0.8.0 to 4.3, Confluent Platform 2.0 to 8.3)",
        ),
        ("3.10", "Kafka 3.10 is not a known release"),
        ("9.9", "Kafka 9.9 is not a known release"),
        ("1.0.0-ccs", "Kafka 1.0.0-ccs is not a known release"),  # CP 1.0 shipped no Apache line the docs name
        ("2", "'2' does not name one Kafka release line (give at least major.minor, e.g. 2.8)"),
        ("0.8", "'0.8' does not name one Kafka release line (0.x releases need three numbers, e.g. 0.8.2)"),
        ("2.4.1.1.1", "has too many numbers"),
        ("v2.4", "'v2.4' is not a Kafka version"),
        ("2.0-kraft", "Kafka 2.0-kraft has no KRaft mode (KRaft starts in 2.8)"),
        ("2.9.1-vendor", "2.9.1 is not an Apache Kafka release"),
        ("", "is not a Kafka version"),
        ("nonsense", "'nonsense' is not a Kafka version"),
    ],
)
def test_refused_texts_say_why(text, sentence):
    with pytest.raises(UnknownKafkaVersionError) as err:
        read_kafka_version(text)
    assert sentence in str(err.value) and err.value.exit_code == 2


def test_the_confluent_table_maps_onto_known_apache_lines():
    assert all(KafkaVersion.parse(apache).line == apache for apache in CONFLUENT_PLATFORM.values())
    assert CONFLUENT_PLATFORM["7.5"] == "3.5"  # the documented example


def test_head_sorts_after_every_release():
    assert all(KafkaVersion.parse(line) < HEAD for line in KNOWN_RELEASE_LINES)


RELEASES = [
    *KNOWN_RELEASE_LINES,
    *(
        f"{line}-kraft"
        for line in KNOWN_RELEASE_LINES
        if KafkaVersion.parse("2.8") <= KafkaVersion.parse(line) < KafkaVersion.parse("4.0")
    ),
]


@pytest.mark.parametrize("text", RELEASES)
def test_parse_replay_rules_and_simulate_agree_on_the_era(text):
    """For every release line 0.8.0 -> 4.3 (and -kraft from 2.8 to 3.9): the dialect ``parse`` reads it
    with, the range ``replay`` judges it by, the rules ``rules`` prints and the profile ``simulate``
    writes all describe the same release in the same mode."""
    release = read_kafka_version(text)
    version = release.version
    dialect = dialect_for_version(text)  # parse (ParseOptions.kafka_version)
    judged = range_for_line("zk-1.1", "2.2.0", text)  # replay: --kafka-version wins over dialect and broker line
    assert dialect.kraft == judged.kraft == release.kraft
    if release.kraft:
        assert judged.checkpoints() == ()
        with pytest.raises(NoZooKeeperControllerError):  # rules
            zookeeper_version(release)
    else:
        assert dialect.holds(version) and dialect.judged.first <= version <= dialect.judged.last
        assert (judged.first, judged.last) == (version, version)
        rules = rules_for(zookeeper_version(release))  # rules
        assert rules.kafka_version == version and rules.era == era_of(version)
    supported = {(p.line, p.kraft): p for p in PROFILES.values()}
    profile = supported.get((version.line, release.kraft))
    if profile is None:
        with pytest.raises(UsageError, match="does not write"):  # simulate: a release it does not write
            profile_for(text)
    else:
        assert profile_for(text) is profile and profile.dialect == dialect.name and profile.kraft == release.kraft


def test_every_dialect_is_reached_by_some_release():
    assert {dialect_for_version(text).name for text in RELEASES} == {d.name for d in DIALECTS}
