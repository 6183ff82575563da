"""Headers, identities, tooling prefixes, layouts, stack traces and broker ownership."""

from __future__ import annotations

import pytest

from kafka_forensics.core.errors import LayoutError
from kafka_forensics.parsers.records import ParseOptions, parse_file
from tests.support.kafka_lines import (
    BROKER_CHANGE_22,
    CONTROLLER_08,
    FAILED_11,
    LOG4J2_FRAME,
    STACK_11,
    STATE_CHANGE_21,
    line,
    text,
)


def test_header_fields_and_utc_timestamp():
    (event,) = parse_file(text(STATE_CHANGE_21), "state-change.log").events
    assert event["ts_raw"] == "2021-03-04 10:15:23,456"
    assert event["ts"] == 1614852923456000  # 2021-03-04T10:15:23.456Z in microseconds
    assert (event["level"], event["logger"], event["log_kind"]) == ("TRACE", "state.change.logger", "state-change")
    assert (event["controller_id"], event["controller_epoch"], event["broker"], event["broker_source"]) == (
        1,
        5,
        1,
        "line",
    )
    assert (
        event["topic"],
        event["partition"],
        event["leader"],
        event["leader_epoch"],
        event["isr"],
        event["partition_epoch"],
    ) == ("orders", 7, 2, 9, [2, 3], 14)


def test_timezone_option_converts_local_broker_time_to_utc():
    (event,) = parse_file(text(STATE_CHANGE_21), "state-change.log", ParseOptions(timezone="Europe/Berlin")).events
    assert event["ts"] == 1614852923456000 - 3600 * 1_000_000


def test_stack_trace_attaches_to_its_record_including_log4j2_frames():
    result = parse_file(text(FAILED_11, *STACK_11, LOG4J2_FRAME, STATE_CHANGE_21), "state-change.log")
    failed, after = result.events
    assert failed["event_type"] == "partition_state_change_failed"
    assert failed["n_continuation"] == len(STACK_11) + 1
    assert failed["stack"].splitlines()[0].startswith("kafka.common.StateChangeFailedException: Failed to elect leader")
    assert failed["stack"].endswith("~[kafka_2.13-4.0.0.jar:?]")
    assert after["n_continuation"] == 0 and after["stack"] is None


def test_docker_compose_prefix_is_stripped_recorded_and_names_the_broker():
    raw = "kafka_2   | " + STATE_CHANGE_21.replace("[Controller id=1 epoch=5] ", "")
    (event,) = parse_file(text(raw), "compose.log").events
    assert event["line_prefix"] == "kafka_2   | "
    assert event["event_type"] == "partition_state_change"
    assert (event["broker"], event["broker_source"]) == (2, "path")


def test_grep_prefix_is_stripped_and_recorded():
    raw = "kafka1/controller.log:" + CONTROLLER_08
    (event,) = parse_file(text(raw), "pasted.log").events
    assert event["line_prefix"] == "kafka1/controller.log:"
    assert event["controller_id"] == 0 and event["broker"] == 0
    assert event["log_kind"] == "controller"


def test_broker_from_path_when_the_line_has_no_identity():
    raw = line("Shrinking ISR for partition [t,0] from 1,2 to 1", level="INFO", logger="kafka.cluster.Partition")
    (event,) = parse_file(text(raw), "incident/broker-3/server.log.2021-03-04-10").events
    assert (event["broker"], event["broker_source"]) == (3, "path")
    # a Kafka distribution directory is not a broker id
    (event,) = parse_file(text(raw), "/opt/kafka_2.13-3.6.1/logs/server.log").events
    assert event["broker"] is None


def test_file_owner_fills_lines_without_identity():
    plain = line("preRegister called. Server=x, name=log4j:logger=state.change.logger", level="DEBUG")
    result = parse_file(text(STATE_CHANGE_21, plain), "state-change.log")
    assert [(e["broker"], e["broker_source"]) for e in result.events] == [(1, "line"), (1, "file")]


def test_several_brokers_in_one_file_keep_their_own_identity():
    b2 = line(
        "[Broker id=2] Handling LeaderAndIsr request correlationId 1 from controller 0 for 1 partitions", level="INFO"
    )
    b3 = line(
        "[Broker id=3] Handling LeaderAndIsr request correlationId 1 from controller 0 for 1 partitions", level="INFO"
    )
    result = parse_file(text(b2, b3), "state-change.log")
    assert [e["broker"] for e in result.events] == [2, 3]


def test_broker_change_lists():
    (event,) = parse_file(text(BROKER_CHANGE_22), "controller.log").events
    assert event["event_type"] in ("broker_change", "other")
    assert event["controller_id"] == 9


def test_custom_layout_is_followed_by_the_header_grammar():
    layout = "%d{ISO8601} [%t] %-5p %c - %m%n"
    raw = "2021-03-04 10:15:23,456 [controller-event-thread] INFO  state.change.logger - [Controller id=1 epoch=5] Changed partition orders-7 state from NewPartition to OnlinePartition"
    (event,) = parse_file(text(raw), "state-change.log", ParseOptions(layout=layout)).events
    assert (event["level"], event["logger"]) == ("INFO", "state.change.logger")
    assert (event["event_type"], event["from_state"], event["to_state"]) == (
        "partition_state_change",
        "NewPartition",
        "OnlinePartition",
    )


def test_layout_without_message_is_refused():
    with pytest.raises(LayoutError):
        parse_file(b"", "x.log", ParseOptions(layout="[%d] %p (%c)%n"))


def test_unknown_lines_from_kafka_loggers_are_kept_as_other():
    raw = line(
        "[Controller id=0] Deleting isr change notifications", level="INFO", logger="kafka.controller.KafkaController"
    )
    (event,) = parse_file(text(raw), "controller.log").events
    assert event["message"] == "[Controller id=0] Deleting isr change notifications"
    assert event["event_type"] in ("other",) or event["template"]


def test_a_message_that_spans_lines_is_one_record():
    # ZooKeeper's Stat.toString ends in a newline, so KafkaZkClient's line ends on the next one.
    first = "[2024-03-04 10:00:00,412] INFO Stat of the created znode at /brokers/ids/1 is: 4294967321,4294967321,1709546400410,1709546400410,1,0,0,72057602627862528,190,0,4294967321"
    second = " (kafka.zk.KafkaZkClient)"
    result = parse_file(text(first, second, STATE_CHANGE_21), "broker-1/server.log")
    stat, change = result.events
    assert stat["message"].startswith("Stat of the created znode") and stat["message"].endswith("\n")
    assert (stat["logger"], stat["n_continuation"], stat["line_no"]) == ("kafka.zk.KafkaZkClient", 1, 1)
    assert change["line_no"] == 3 and result.summary["quarantined"] == 0
    assert result.summary["lines_read"] == 3 == result.summary["records"] + result.summary["continuation_lines"]


def test_a_record_start_that_never_ends_is_quarantined_line_by_line():
    first = "[2024-03-04 10:00:00,412] INFO this line never gets its logger"
    result = parse_file(text(first, "plain words", STATE_CHANGE_21), "server.log")
    assert [q["line_no"] for q in result.quarantine] == [1, 2]
    assert result.summary["records"] == 1
