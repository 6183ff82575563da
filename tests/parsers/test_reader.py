"""Bad input never crashes and is never dropped: every physical line is accounted for."""

from __future__ import annotations

import gzip

from kafka_forensics.parsers.records import parse_file
from tests.support.kafka_lines import FAILED_11, STACK_11, STATE_CHANGE_21, text


def _reconciled(result) -> bool:
    s = result.summary
    return s["lines_read"] == s["records"] + s["continuation_lines"] + s["quarantined"]


def test_gzip_is_detected_by_content_not_name():
    data = gzip.compress(text(STATE_CHANGE_21, FAILED_11, *STACK_11))
    result = parse_file(data, "broker-1/state-change.log.2021-03-04-10")
    assert result.summary["compressed"] is True
    assert [e["event_type"] for e in result.events] == ["partition_state_change", "partition_state_change_failed"]
    assert result.events[1]["n_continuation"] == len(STACK_11)
    assert _reconciled(result)


def test_truncated_gzip_keeps_readable_lines_and_quarantines_the_tail():
    payload = gzip.compress(text(*([STATE_CHANGE_21] * 2000)))
    result = parse_file(payload[: len(payload) // 2], "state-change.log.gz")
    assert 0 < result.summary["records"] < 2000
    assert result.summary["read_error"].startswith("gzip stream truncated")
    tail = result.quarantine[-1]
    assert tail["reason"].startswith("gzip stream truncated")
    assert _reconciled(result)


def test_corrupt_gzip_member_is_a_quarantine_row_not_a_crash():
    result = parse_file(b"\x1f\x8b\x08\x00garbage-not-deflate", "controller.log.gz")
    assert result.summary["records"] == 0
    assert result.summary["quarantined"] == 1
    assert _reconciled(result)


def test_invalid_utf8_binary_and_garbage_lines_are_quarantined_with_reasons():
    data = (
        STATE_CHANGE_21.encode()
        + b"\n"
        + b"[2021-03-04 10:15:24,000] INFO caf\xe9 latin-1 text (state.change.logger)\n"
        + b"\x00\x01\x02binary\xff\xfe\n"
        + b"hello, this is not a log line\n"
        + FAILED_11.encode()
        + b"\n"
    )
    result = parse_file(data, "state-change.log")
    reasons = {q["line_no"]: q["reason"] for q in result.quarantine}
    assert reasons[2].startswith("invalid UTF-8 at byte")
    assert 3 in reasons and 4 in reasons
    assert reasons[4].startswith("not a log record")
    assert result.quarantine[0]["raw"].startswith("[2021-03-04 10:15:24,000] INFO caf\\xe9")
    assert result.summary["records"] == 2
    assert _reconciled(result)


def test_huge_line_is_quarantined_with_its_size():
    huge = "[2021-03-04 10:15:23,456] INFO " + "x" * (2 << 20) + " (kafka.controller.KafkaController)"
    result = parse_file(text(STATE_CHANGE_21, huge, FAILED_11), "controller.log")
    assert result.summary["records"] == 2
    (q,) = result.quarantine
    assert q["line_no"] == 2 and "exceeds the 1048576-byte limit" in q["reason"]
    assert len(q["raw"]) == 64 << 10


def test_a_one_megabyte_record_under_the_limit_still_parses():
    big = (
        "[2021-03-04 10:15:23,456] DEBUG [Controller id=1] Preferred replicas by broker "
        + "Map(1 -> 2), " * 70000
        + " (kafka.controller.KafkaController)"
    )
    assert 900_000 < len(big) < (1 << 20)
    result = parse_file(text(big), "controller.log")
    assert result.summary["records"] == 1 and result.events[0]["controller_id"] == 1


def test_empty_file_has_no_lines_and_no_error():
    result = parse_file(b"", "server.log")
    assert result.summary["lines_read"] == 0 and result.events == [] and result.quarantine == []


def test_crlf_is_stripped_and_recorded():
    result = parse_file(text(STATE_CHANGE_21, FAILED_11, crlf=True), "state-change.log")
    assert [e["crlf"] for e in result.events] == [True, True]
    assert result.events[0]["to_state"] == "OnlinePartition"


def test_stack_trace_before_any_record_is_quarantined_as_orphan():
    result = parse_file(text(*STACK_11, STATE_CHANGE_21), "state-change.log.2021-03-04-11")
    assert result.summary["quarantined"] == len(STACK_11)
    assert all("no log record before it" in q["reason"] for q in result.quarantine)
    assert _reconciled(result)


def test_out_of_order_timestamps_are_kept_and_flagged():
    later = STATE_CHANGE_21.replace("10:15:23,456", "10:15:25,000")
    earlier = FAILED_11.replace("10:15:23,456", "10:15:24,999")
    result = parse_file(text(later, earlier), "state-change.log")
    assert [e["ts_out_of_order"] for e in result.events] == [False, True]
    assert result.summary["out_of_order"] == 1
