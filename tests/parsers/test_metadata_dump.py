"""kafka-dump-log --cluster-metadata-decoder output → metadata events (parsers/metadata_dump.py).

The fixtures in tests/data/metadata_dump/ are written in the exact shape DumpLogSegments prints:
file/batch/record lines from K:tools/DumpLogSegments.scala@3.9.0-rc3 ``dumpLog`` (:261-351) and
``printBatchLevel`` (:353-366), the payload from ``ClusterMetadataLogMessageParser`` (:564-585:
``{"type": MetadataRecordType name, "version", "data": <Record>JsonConverter.write}``), field names
and omission of default tagged fields from generator/.../JsonConverterGenerator.java@3.9.0-rc3
``generateWrite`` and metadata/src/main/resources/common/metadata/*.json@3.9.0-rc3. The
``--skip-record-metadata`` variant is derived from the same file with the same rules (record line
``" payload: {...}"``, control records as empty lines).
"""

from __future__ import annotations

import gzip

import pytest

from kafka_forensics.parsers.metadata_dump import looks_like_metadata_dump
from kafka_forensics.parsers.records import parse_file
from tests.support.paths import DATA

DUMPS = DATA / "metadata_dump"


def _parse(name: str, data: bytes | None = None):
    return parse_file(data if data is not None else (DUMPS / name).read_bytes(), f"broker-1/{name}")


def _reconciles(result) -> None:
    s = result.summary
    assert s["lines_read"] == s["records"] + s["continuation_lines"] + s["quarantined"]
    assert s["records"] == len(result.rows)
    assert s["quarantined"] == len(result.quarantine)


@pytest.mark.parametrize("name", ["segment.log.dump", "segment-skip-metadata.log.dump"])
def test_segment_dump_both_shapes_give_the_same_records(name):
    result = _parse(name)
    _reconciles(result)
    events = result.events
    assert [e["event_type"] for e in events] == [
        "metadata_control",
        "metadata_feature_level",
        "metadata_register_broker",
        "metadata_broker_registration_change",
        "metadata_unfence_broker",
        "metadata_topic",
        "metadata_partition",
        "metadata_partition_change",
        "metadata_partition_change",
        "metadata_fence_broker",
        "metadata_partition_change",
        "metadata_partition_change",
    ]
    assert all(e["log_kind"] == "metadata" for e in events)
    assert [e["attrs"]["offset"] for e in events] == [str(i) for i in range(12)]
    created = events[6]
    assert (
        created["topic"],
        created["partition"],
        created["leader"],
        created["isr"],
        created["replicas"],
        created["leader_epoch"],
        created["partition_epoch"],
    ) == ("events", 0, 1, [1, 2], [1, 2], 0, 0)
    assert created["attrs"]["topic_id"] == "qV5pm1PUQIqcUJ5fJ3xkUw"
    assert created["attrs"]["leader_recovery_state"] == "0"  # tagged default omitted = RECOVERED
    shrink = events[7]
    # tagged fields at their default are not printed: no "leader" key = NO_LEADER_CHANGE (-2)
    assert shrink["isr"] == [1] and shrink["leader"] is None and shrink["replicas"] is None
    assert shrink["topic"] == "events"  # resolved through the TopicRecord earlier in the file
    assert "leader_recovery_state" not in shrink["attrs"]
    unclean = events[10]
    assert unclean["leader"] == 2 and unclean["isr"] == [2] and unclean["attrs"]["leader_recovery_state"] == "1"
    assert unclean["controller_epoch"] == 2  # partitionLeaderEpoch of the batch (the Raft epoch)
    assert events[9]["target_broker"] == 1 and events[3]["attrs"]["fencing_change"] == "unfence"
    assert events[2]["attrs"]["fenced"] == "true"
    assert events[1]["attrs"]["metadata_version"] == "21"
    assert created["ts_raw"] == "2024-03-04 10:00:10,000"
    assert result.summary["continuation_lines"] == 2 + 9  # Dumping + Log starting offset + 9 batch lines
    assert result.quarantine[0]["line_no"] == 24 and "could not decode" in result.quarantine[0]["reason"]


def test_control_records_are_typed_with_and_without_metadata():
    with_meta = _parse("segment.log.dump").events[0]
    assert with_meta["attrs"]["control_type"] == "LEADER_CHANGE"
    skipped = _parse("segment-skip-metadata.log.dump").events[0]
    assert skipped["event_type"] == "metadata_control" and skipped["message"] == ""


def test_snapshot_dump_has_its_own_header_and_offsets():
    result = _parse("snapshot.checkpoint.dump")
    _reconciles(result)
    events = result.events
    assert result.quarantine == []
    part = next(e for e in events if e["event_type"] == "metadata_partition")
    assert part["attrs"]["snapshot_end_offset"] == "10" and "offset" not in part["attrs"]
    assert (part["leader"], part["leader_epoch"], part["partition_epoch"], part["controller_epoch"]) == (-1, 1, 2, 2)
    header = events[0]
    assert header["attrs"]["control_type"] == "SNAPSHOT_HEADER"
    assert '"lastContainedLogTimestamp":1709546430000' in header["attrs"]["control_json"]
    assert events[-2]["event_type"] == "metadata_other" and events[-2]["attrs"]["record_type"] == "NO_OP_RECORD"


def test_detection_by_content_plain_and_gzip():
    text = (DUMPS / "segment.log.dump").read_bytes()
    assert looks_like_metadata_dump(text)
    assert looks_like_metadata_dump(gzip.compress(text))
    assert not looks_like_metadata_dump(b"[2024-03-04 10:00:00,000] INFO Dumping things (kafka.Foo)\n")
    gz = _parse("segment.log.dump.gz", gzip.compress(text))
    assert gz.summary["compressed"] and gz.summary["records"] == 12


def test_damaged_lines_are_quarantined_and_counted():
    text = (DUMPS / "segment.log.dump").read_text().splitlines()
    text[5] = text[5][:-20]  # truncated JSON
    text.insert(8, "garbage in the middle")
    result = _parse("damaged.dump", ("\n".join(text) + "\n").encode())
    _reconciles(result)
    reasons = sorted(q["reason"] for q in result.quarantine)
    assert any("not JSON" in r for r in reasons)
    assert any("not a line of a kafka-dump-log" in r for r in reasons)
    assert result.summary["records"] == 11


def test_topic_unknown_in_file_keeps_topic_id_for_the_replay():
    text = (DUMPS / "segment.log.dump").read_text().splitlines()
    without_topic = [ln for ln in text if "TOPIC_RECORD" not in ln]
    result = _parse("no-topic.dump", ("\n".join(without_topic) + "\n").encode())
    change = next(e for e in result.events if e["event_type"] == "metadata_partition_change")
    assert change["topic"] is None and change["attrs"]["topic_id"] == "qV5pm1PUQIqcUJ5fJ3xkUw"
