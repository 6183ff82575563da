"""Which era wrote a file: the broker's own ``Kafka version: X`` line is read by the one version reader.

The line is AppInfoParser's INFO line, printed once per broker start:
clients/src/main/java/org/apache/kafka/common/utils/AppInfoParser.java@3.5.0:119-121
(``Kafka version: {}``, ``Kafka commitId: {}``, ``Kafka startTimeMs: {}``). A Confluent Platform
broker prints its own release there (``7.5.0-ccs``: Confluent Platform 7.5 = Apache Kafka 3.5).
The controller lines are KafkaController.scala@3.5.0:88 (logIdent ``[Controller id=N] ``),
252, 262, 264, 266 and 283: shapes every release from 1.1 to 3.9 prints, so without the version
line the file is only known to be 1.1 or later.
"""

from __future__ import annotations

import datetime as dt

import pytest

from kafka_forensics.core.eras import range_for_line
from kafka_forensics.parsers.records import parse_file
from kafka_forensics.replay.local import replay_all
from tests.support.kafka_lines import line, text

APP_INFO = "org.apache.kafka.common.utils.AppInfoParser"
CONTROLLER = "kafka.controller.KafkaController"


def broker_stdout(version: str | None) -> bytes:
    """One cp-kafka container's log (every logger to stdout, Kafka's default layout)."""
    start = []
    if version is not None:
        start = [
            line(f"Kafka version: {version}", "INFO", APP_INFO, "2023-10-02 09:14:07,211"),
            line("Kafka commitId: 0f6e8e8b1c6a1f5f", "INFO", APP_INFO, "2023-10-02 09:14:07,211"),
            line("Kafka startTimeMs: 1696238047207", "INFO", APP_INFO, "2023-10-02 09:14:07,211"),
        ]
    controller = [
        line(f"[Controller id=1] {message}", "INFO", CONTROLLER, f"2023-10-02 09:14:07,{ms}")
        for ms, message in (
            ("480", "Registering handlers"),
            ("483", "Deleting log dir event notifications"),
            ("485", "Deleting isr change notifications"),
            ("486", "Initializing controller context"),
            ("561", "Ready to serve as the new controller with epoch 1"),
        )
    ]
    return text(*start, *controller)


@pytest.mark.parametrize(
    "version,dialect",
    [
        (None, "zk-1.1"),  # the shapes alone: 1.1 or later, judged from the oldest
        ("2.4.1", "zk-2.4"),  # an Apache release
        ("7.5.0-ccs", "zk-3.x"),  # Confluent Platform 7.5 ships Apache Kafka 3.5
        ("7.5.0-ce", "zk-3.x"),  # Confluent Server, same release
        ("5.4.1-ccs", "zk-2.4"),  # CP 5.4 = AK 2.4
        ("2.0.1-cp1", "zk-1.1"),  # CP 5.0's build prints the Apache number with a -cpN suffix
    ],
)
def test_the_version_line_maps_through_the_one_reader(version, dialect):
    assert parse_file(broker_stdout(version), "kafka-1/stdout.log").summary["dialect"] == dialect


def test_a_confluent_broker_is_judged_as_its_apache_release():
    events = []
    for e in parse_file(broker_stdout("7.5.0-ccs"), "kafka-1/stdout.log").events:
        e["ts"] = dt.datetime.fromtimestamp(e["ts"] / 1e6, dt.timezone.utc)
        e["attrs"] = dict(e["attrs"] or {})
        events.append(e)
    ctx = replay_all(events).contexts[""]
    assert ctx.version_of(1) == "7.5.0-ccs"
    assert range_for_line("zk-3.x", ctx.version_of(1), None).label == "3.5"


def test_a_2_8_kraft_broker_file_is_kraft():
    """A 2.8 KRaft broker's state-change.log holds only ``[Broker id=N]`` lines of KRaft-only classes
    (RaftReplicaManager.scala@2.8.2:218-226, RaftMetadataCache.scala@2.8.2:360-362) and no QuorumController line;
    those templates alone say KRaft (issue 14 item 11: it was read as the 0.8 dialect and judged as 0.8 - 0.11)."""
    mp = "MetadataPartition(orders,0,1,4,[1, 2, 3],[1, 2],9,[],[],[])"
    lines = [
        line("[Broker id=1] Metadata batch 1873: 2 local partition(s) changed, 1 local partition(s) removed.", "INFO"),
        line(f"[Broker id=1] Metadata batch 1873: locally changed: {mp}"),
        line(f"[Broker id=1] Metadata batch 1873: locally removed: {mp}"),
    ]
    events = parse_file(text(*lines), "state-change.log").events
    assert {e["dialect"] for e in events} == {"kraft"}
