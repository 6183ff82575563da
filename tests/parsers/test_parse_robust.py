"""Bad and unusual input that must never cost a record (issue 14, items 8, 10, 12, 13, 14).

Every line below is one Kafka prints (source cited as ``path@tag:line``), then damaged the way
tooling, disks or clocks damage it. No Spark: ``parse_file`` is the per-file unit of the job, and
``_event_batches`` is the job's own conversion of its rows to Arrow (where an out-of-range value
would fail a Spark task).
"""

from __future__ import annotations

import pytest

from kafka_forensics.jobs.parse_job import _event_batches
from kafka_forensics.parsers.records import ParseOptions, parse_file
from tests.support.kafka_lines import FAILED_11, STACK_11, STATE_CHANGE_21, line, text

# --- item 8: any line with the layout's header is a record -----------------------------------------
# The controller's NetworkClient logs under LogContext's prefix
#   "[Controller id=${config.brokerId}, targetBrokerId=${brokerNode.idString}] "
#   (core/src/main/scala/kafka/controller/ControllerChannelManager.scala@3.9.0-rc3:123, same @1.0.0:112)
NETWORK_DISCONNECT = line(
    # clients/src/main/java/org/apache/kafka/clients/NetworkClient.java@3.9.0-rc3:871
    "[Controller id=1, targetBrokerId=3] Disconnecting from node 3 due to request timeout.",
    level="INFO",
    logger="org.apache.kafka.clients.NetworkClient",
    ts="2024-10-02 09:12:44,102",
)
NETWORK_CONNECT_ERROR = line(
    # NetworkClient.java@3.9.0-rc3:1082 log.warn("Error connecting to node {}", node, e); Node.toString @3.9.0-rc3:135
    "[Controller id=1, targetBrokerId=3] Error connecting to node kafka3:9092 (id: 3 rack: null)",
    level="WARN",
    logger="org.apache.kafka.clients.NetworkClient",
    ts="2024-10-02 09:12:44,231",
)
UNKNOWN_HOST_STACK = [
    "java.net.UnknownHostException: kafka3: Name or service not known",
    "\tat java.base/java.net.Inet6AddressImpl.lookupAllHostAddr(Native Method)",
    "\tat java.base/java.net.InetAddress.getAllByName(InetAddress.java:1302)",
    "\tat org.apache.kafka.clients.ClientUtils.resolve(ClientUtils.java:125)",
    "\tat org.apache.kafka.clients.NetworkClient.initiateConnect(NetworkClient.java:1075)",
]


def test_a_logcontext_prefix_no_ident_rule_knows_is_a_record_with_its_identity():
    result = parse_file(text(NETWORK_DISCONNECT), "broker-1/controller.log")
    assert result.quarantine == []
    (event,) = result.events
    assert (event["event_type"], event["level"], event["logger"]) == (
        "other",
        "INFO",
        "org.apache.kafka.clients.NetworkClient",
    )
    assert event["ts_raw"] == "2024-10-02 09:12:44,102"
    # the identity inside LogContext's prefix: written by controller 1 about broker 3
    assert (event["controller_id"], event["target_broker"], event["broker"], event["broker_source"]) == (
        1,
        3,
        1,
        "line",
    )
    assert event["attrs"]["ident"] == "[Controller id=1, targetBrokerId=3]"


def test_the_stack_trace_after_such_a_record_is_its_continuation():
    result = parse_file(text(NETWORK_CONNECT_ERROR, *UNKNOWN_HOST_STACK, STATE_CHANGE_21), "controller.log")
    assert result.quarantine == []
    warn, change = result.events
    assert warn["n_continuation"] == len(UNKNOWN_HOST_STACK)
    assert warn["stack"].startswith("java.net.UnknownHostException: kafka3")
    assert change["event_type"] == "partition_state_change"


@pytest.mark.parametrize(
    "message",
    [
        # a known opener followed by an identity shape no ident rule knows
        "[Controller id=1, targetBrokerId=3] Node 3 disconnected.",  # NetworkClient.java@3.9.0-rc3:1021
        "[Broker id=2, fetcherId=0] Node 3 disconnected.",
        "[Controller 1, x] Node 3 disconnected.",
        "[QuorumController id=1 epoch=3] Node 3 disconnected.",
        # an opener with nothing after it
        "[Controller id=",
        "[Broker id=2]",
    ],
)
def test_no_identity_shape_makes_a_header_valid_line_a_non_record(message):
    raw = line(message, level="INFO", logger="org.apache.kafka.clients.NetworkClient")
    for use_lark in (False, True):
        result = parse_file(text(raw), "controller.log", ParseOptions(use_lark=use_lark))
        assert result.quarantine == [], (use_lark, result.quarantine)
        (event,) = result.events
        assert event["logger"] == "org.apache.kafka.clients.NetworkClient"
        assert event["message"].startswith(message.split(" ")[0])


# --- item 10: a joined multi-line message keeps no tooling prefix ---------------------------------
# KafkaZkClient: info(s"Stat of the created znode at $path is: $stat")
#   (core/src/main/scala/kafka/zk/KafkaZkClient.scala@3.9.0-rc3:2145); ZooKeeper's Stat.toString ends in "\n".
STAT_FIRST = (
    "[2024-03-04 10:00:00,412] INFO Stat of the created znode at /brokers/ids/1 is: 4294967321,4294967321,"
    "1709546400410,1709546400410,1,0,0,72057602627862528,190,0,4294967321"
)
STAT_SECOND = " (kafka.zk.KafkaZkClient)"
COMPOSE = "kafka-1  | "  # docker compose v2: "<service>-<n>  | "


def test_a_joined_message_keeps_no_compose_prefix():
    result = parse_file(text(COMPOSE + STAT_FIRST, COMPOSE + STAT_SECOND), "compose.log")
    assert result.quarantine == []
    (stat,) = result.events
    assert stat["line_prefix"] == COMPOSE
    assert stat["message"] == STAT_FIRST.split("] INFO ", 1)[1] + "\n"
    assert (stat["logger"], stat["n_continuation"], stat["broker"]) == ("kafka.zk.KafkaZkClient", 1, 1)


def test_stack_trace_lines_with_the_records_compose_prefix_are_its_continuation():
    lines = [COMPOSE + x for x in (FAILED_11, *STACK_11, STATE_CHANGE_21)]
    result = parse_file(text(*lines), "compose.log")
    assert result.quarantine == []
    failed, change = result.events
    assert failed["n_continuation"] == len(STACK_11)
    assert failed["stack"] == "\n".join(STACK_11)  # prefix stripped from every continuation line
    assert change["line_no"] == len(lines)


def test_a_continuation_line_of_another_container_is_not_attached():
    other = "zookeeper-1  | "
    result = parse_file(text(COMPOSE + FAILED_11, other + STACK_11[1]), "compose.log")
    (failed,) = result.events
    assert failed["n_continuation"] == 0
    assert [q["line_no"] for q in result.quarantine] == [2]


# --- item 12: one bad line never fails the job ---------------------------------------------------
@pytest.mark.parametrize(
    "stamp, reason",
    [
        ("2021-02-30 25:61:61,999", "not a calendar date and time"),
        ("2021-02-30 10:15:23,456", "not a calendar date and time"),
        ("2016-12-31 23:59:60,000", "not a calendar date and time"),  # leap second: Java's clock never prints it
        ("0001-01-01 00:00:00,000", "before 1970-01-01"),
        ("1582-10-10 12:00:00,000", "before 1970-01-01"),
        ("9999-12-31 23:59:59,999", "after 2262-04-11"),
    ],
)
def test_an_impossible_or_extreme_timestamp_keeps_its_record_with_ts_null(stamp, reason):
    bad = STATE_CHANGE_21.replace("2021-03-04 10:15:23,456", stamp)
    result = parse_file(text(STATE_CHANGE_21, bad, STATE_CHANGE_21), "state-change.log")
    assert result.quarantine == []
    good, kept, after = result.events
    assert kept["ts"] is None and kept["ts_raw"] == stamp
    assert kept["attrs"]["ts_invalid"] == reason
    assert kept["event_type"] == "partition_state_change" and kept["to_state"] == "OnlinePartition"
    assert not kept["ts_out_of_order"] and not after["ts_out_of_order"]
    assert good["ts"] == after["ts"] == 1614852923456000
    assert result.summary["ts_invalid"] == 1
    list(_event_batches(result.rows, None))  # the rows convert to the events table


def test_an_extreme_timestamp_in_a_far_timezone_is_invalid_not_an_overflow():
    bad = STATE_CHANGE_21.replace("2021-03-04 10:15:23,456", "9999-12-31 23:59:59,999")
    result = parse_file(text(bad), "state-change.log", ParseOptions(timezone="Pacific/Kiritimati"))
    (event,) = result.events
    assert event["ts"] is None and result.summary["ts_invalid"] == 1


def test_a_number_too_large_for_its_column_is_dropped_and_flagged_not_fatal():
    # "[Controller id=N epoch=E]" ids and epochs are Int32 in Kafka; a damaged digit run is not one.
    bad = STATE_CHANGE_21.replace("epoch=5", "epoch=99999999999").replace("leader=2", "leader=-99999999999")
    result = parse_file(text(bad), "state-change.log")
    (event,) = result.events
    assert event["controller_epoch"] is None and event["leader"] is None
    assert event["attrs"]["out_of_range"] == "controller_epoch=99999999999,leader=-99999999999"
    assert event["partition_epoch"] == 14
    list(_event_batches(result.rows, None))


# --- item 13: invisible bytes that tooling adds --------------------------------------------------
BOM = b"\xef\xbb\xbf"


def test_a_utf8_bom_is_stripped_and_recorded():
    data = BOM + text(STATE_CHANGE_21, STATE_CHANGE_21)
    result = parse_file(data, "state-change.log")
    assert result.quarantine == []
    first, second = result.events
    assert first["event_type"] == "partition_state_change" and first["line_no"] == 1
    assert first["attrs"]["bom"] == "true" and "bom" not in (second["attrs"] or {})
    assert result.summary["bom_lines"] == 1


def test_ansi_colour_escapes_are_stripped_and_recorded():
    # docker compose colours its prefix ("\x1b[36mkafka-1  | \x1b[0m"), kubectl/docker logs with a
    # colouring appender colour the level: every physical line, stack frames included.
    colour = "\x1b[36m" + COMPOSE + "\x1b[0m"
    lines = [colour + FAILED_11.replace("ERROR", "\x1b[1;31mERROR\x1b[0m")]
    lines += [colour + "\x1b[31m" + frame + "\x1b[0m\x1b[K" for frame in STACK_11]
    result = parse_file(text(*lines), "compose.log")
    assert result.quarantine == []
    (failed,) = result.events
    assert failed["level"] == "ERROR" and failed["event_type"] == "partition_state_change_failed"
    assert failed["line_prefix"] == COMPOSE
    assert failed["stack"] == "\n".join(STACK_11)
    assert failed["attrs"]["ansi_escapes"] == str(4 + 5 * len(STACK_11))  # 2 + 2 on the record, 5 per frame
    assert result.summary["ansi_lines"] == 1 + len(STACK_11)


# --- item 14: a stray control character does not make a record binary ----------------------------
# broker_leader_and_isr_error: "Skipped the become-follower state change ... since the replica for the
# partition is offline due to disk error $e" (core/src/main/scala/kafka/server/ReplicaManager.scala@2.4.1:1476)
DISK_ERROR = line(
    "[Broker id=2] Skipped the become-follower state change with correlation id 7 from controller 1 epoch 5 "
    "for partition orders-7 (last update controller epoch 5) with leader 3 since the replica for the partition "
    "is offline due to disk error org.apache.kafka.common.errors.KafkaStorageException: Error while "
    "reading\x0bcheckpoint file /var/lib/kafka/data/replication-offset-checkpoint",
    level="ERROR",
)


@pytest.mark.parametrize("stray", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x00"])
def test_a_record_with_one_control_character_is_kept_and_flagged(stray):
    raw = DISK_ERROR.replace("\x0b", stray)
    result = parse_file(text(STATE_CHANGE_21, raw), "state-change.log")
    assert result.quarantine == []
    _, event = result.events
    assert (event["event_type"], event["topic"], event["partition"], event["leader"]) == (
        "broker_leader_and_isr_error",
        "orders",
        7,
        3,
    )
    assert stray in event["message"]  # kept as written
    assert event["attrs"]["control_chars"] == "1"
    assert result.summary["control_lines"] == 1


def test_an_untyped_record_with_a_control_character_keeps_its_header():
    raw = NETWORK_DISCONNECT.replace("request timeout", "request\x1etimeout")
    (event,) = parse_file(text(raw), "controller.log").events
    assert (event["event_type"], event["ts_raw"], event["controller_id"]) == ("other", "2024-10-02 09:12:44,102", 1)


def test_a_line_that_is_mostly_not_text_is_still_binary():
    garbage = "\x00\x00\x00\x00\x01\x02\x03[\x00\x00\x00\x07\x08\x0e\x0f"
    result = parse_file(text(STATE_CHANGE_21, garbage, STATE_CHANGE_21), "state-change.log")
    assert [(q["line_no"], q["reason"].split(" (")[0]) for q in result.quarantine] == [(2, "binary content")]
    assert result.summary["records"] == 2


def test_every_record_cites_its_byte_exact_line():
    """file:line is the line number of the bytes split at b"\\n" only: no other byte ends a line
    (\\r, \\v, \\f, \\x1c-\\x1e, NEL \\x85 and U+2028 all do in str.splitlines)."""
    records = [STATE_CHANGE_21, DISK_ERROR, NETWORK_DISCONNECT]
    strays = ["\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\u0085", "\u2028", "\u2029"]
    lines = []
    for i, stray in enumerate(strays):
        base = records[i % len(records)]
        cut = base.index(" (")  # inside the message, before the logger
        lines.append(base[:cut] + stray + base[cut:])
        lines.append(STACK_11[i % len(STACK_11)])
    data = BOM + "\r\n".join(lines).encode("utf-8") + b"\n"
    physical = data.split(b"\n")
    for use_lark in (False, True):
        result = parse_file(data, "mixed.log", ParseOptions(use_lark=use_lark))
        events = result.events
        assert len(events) == len(strays), result.quarantine
        for event in events:
            source = physical[event["line_no"] - 1].decode("utf-8").removeprefix("\ufeff").removesuffix("\r")
            assert source.startswith("[" + event["ts_raw"] + "]")
            assert event["message"] in source
        s = result.summary
        assert s["lines_read"] == len(physical) - 1 == s["records"] + s["continuation_lines"] + s["quarantined"]


# --- item 11: the six state-change templates the issue names ---------------------------------------
# Already typed on main when this work began (this test passed before any change here); it pins
# them in every dialect, on both paths, since a file's dialect decides which templates come first.
_MP = "MetadataPartition(orders,7,3,7,[3, 1, 2],[3, 1],9,[],[],[])"  # case class toString, MetadataPartitions.scala@2.8.0:64
_UMR = (
    "UpdateMetadataRequestData(controllerId=1, controllerEpoch=5, brokerEpoch=-1, ungroupedPartitionStates=[], "
    "topicStates=[], liveBrokers=[])"
)  # AbstractRequest.toString = data().toString(), AbstractRequest.java@2.8.0:114
SIX_TEMPLATES = [
    # core/src/main/scala/kafka/controller/KafkaController.scala@3.9.0-rc3:1446 (same text @1.0.0:1544)
    (
        line("[Controller id=1] Mark replicas orders-7,orders-8 on broker 3 as offline", level="INFO"),
        "offline_replicas_marked",
        {"target_broker": 3},
    ),
    # core/src/main/scala/kafka/migration/MigrationPropagatorBatch.scala@3.9.0-rc3:61 (@3.4.0:61)
    (
        line("[Controller id=3000] Found orders-7,orders-8 on broker 3 as offline", level="ERROR"),
        "offline_replicas_marked",
        {"target_broker": 3, "controller_id": 3000},
    ),
    # core/src/main/scala/kafka/server/metadata/RaftMetadataCache.scala@2.8.0:360 ("$request.controllerId")
    (
        line(
            f"[Broker id=1] Cached leader info {_MP} in response to UpdateMetadata request sent by controller "
            f"{_UMR}.controllerId epoch {_UMR}.controllerEpoch with correlation id 42"
        ),
        "broker_metadata_cached",
        {"topic": "orders", "partition": 7, "leader": 3, "isr": [3, 1]},
    ),
    # core/src/main/scala/kafka/server/RaftReplicaManager.scala@2.8.0:218
    (
        line(
            "[Broker id=1] Metadata batch 1234: 2 local partition(s) changed, 1 local partition(s) removed.",
            level="INFO",
        ),
        "kraft_partitions_transitioning",
        {"broker": 1},
    ),
    # RaftReplicaManager.scala@2.8.0:223 and :226
    (line(f"[Broker id=1] Metadata batch 1234: locally changed: {_MP}"), "kraft_partition_change", {"leader": 3}),
    # a local removal (the broker deletes its replica), not a leader/ISR change: its own event type (issue 14 item 11)
    (
        line(f"[Broker id=1] Metadata batch 1234: locally removed: {_MP}"),
        "kraft_partition_removed",
        {"topic": "orders"},
    ),
]


@pytest.mark.parametrize("kafka_version", ["1.0", "2.4", "2.8", "3.5", "3.9-kraft", None])
@pytest.mark.parametrize("raw, event_type, fields", SIX_TEMPLATES, ids=lambda v: v[:40] if isinstance(v, str) else None)
def test_the_six_state_change_templates_are_typed_in_every_dialect(raw, event_type, fields, kafka_version):
    for use_lark in (False, True):
        (event,) = parse_file(
            text(raw), "state-change.log", ParseOptions(kafka_version=kafka_version, use_lark=use_lark)
        ).events
        assert event["event_type"] == event_type, (kafka_version, use_lark)
        assert {k: event[k] for k in fields} == fields
