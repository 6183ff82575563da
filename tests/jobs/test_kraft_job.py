"""KRaft metadata dumps through the Spark job and the CLI (replay, describe --at) on the simulated
sample sample_logs/sim-3.9-kraft-metadata (metadata dump + 3.9 KRaft logs, faults in truth.json)."""

from __future__ import annotations

import json
import shutil

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from kafka_forensics.cli.main import main
from kafka_forensics.simulator.truth import unmatched
from tests.support.paths import DATA, SAMPLES

SAMPLE = SAMPLES / "sim-3.9-kraft-metadata"
DUMP = "metadata/__cluster_metadata-0/00000000000000000100.log.dump"
WIDE = {"COLUMNS": "250"}
pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def kraft_run(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("kraft") / "out"
    result = CliRunner().invoke(main, ["replay", str(SAMPLE), "--out", str(out)], env=WIDE)
    assert result.exit_code == 0, result.output
    return out


def test_job_finds_the_simulated_truth(kraft_run):
    truth = json.loads((SAMPLE / "truth.json").read_text())
    rows = [json.loads(line) for line in (kraft_run / "findings.jsonl").read_text().splitlines()]
    assert unmatched(truth["findings"], rows) == []
    assert {r["rule"] for r in rows} == {
        "metadata_view_mismatch",
        "partition_epoch_gap",
        "leader_on_fenced_broker",
        "metadata_offset_gap",
        "offline_with_live_replicas",
    }
    # payments-0: the batch fencing broker 2, its only ISR member, leaves it leaderless (dump offsets 114-115)
    # while replicas 1 and 3 stay unfenced, until the planted election of fenced broker 2 (offset 118)
    (offline,) = [r for r in rows if r["rule"] == "offline_with_live_replicas"]
    assert (offline["topic"], offline["partition"], offline["severity"]) == ("payments", 0, "warning")
    assert offline["evidence"][0].endswith(f"{DUMP}:28") and offline["evidence"][-1].endswith(f"{DUMP}:32")
    gap = next(r for r in rows if r["rule"] == "metadata_offset_gap")
    assert [ref.split("/")[-1] for ref in gap["evidence"]] == [
        "00000000000000000100.log.dump:23",
        "00000000000000000100.log.dump:25",
    ]
    summary = json.loads((kraft_run / "parse_summary.json").read_text())
    dump = [f for f in summary["files"] if f["source_file"].endswith(DUMP)]  # discovered by name in the directory
    assert len(summary["files"]) == len(truth["files"]) and len(dump) == 1
    assert dump[0]["dialect"] == "kraft-metadata" and dump[0]["quarantined"] == 0
    assert dump[0]["lines_read"] == dump[0]["records"] + dump[0]["continuation_lines"]


def test_timeline_comes_from_the_metadata_records(kraft_run):
    timeline = pq.read_table(kraft_run / "partition_timeline").to_pylist()
    p0 = sorted((r for r in timeline if r["topic"] == "payments" and r["partition"] == 0), key=lambda r: r["seq"])
    assert [(r["state"], r["leader"], r["isr"], r["leader_epoch"], r["partition_epoch"]) for r in p0] == [
        ("OnlinePartition", 2, [2, 1, 3], 0, 0),
        ("OnlinePartition", 2, [2], 0, 1),
        ("OfflinePartition", -1, [2], 1, 2),
        ("OnlinePartition", 2, [2], 2, 3),
    ]
    assert all(r["source"] == "metadata" and r["cause"].split(":")[0].endswith(DUMP) for r in p0)
    brokers = pq.read_table(kraft_run / "brokers").to_pylist()
    assert any(b["broker"] == 2 and b["state"] == "fenced" and DUMP in b["evidence"] for b in brokers)


def test_controllers_merge_the_leader_change_record_with_the_controller_logs(kraft_run):
    """One row for Raft epoch 1: leader 3 from controller.log, the LEADER_CHANGE control record
    (batch partitionLeaderEpoch 1, dump line 6) added to its evidence, not a row of its own."""
    rows = pq.read_table(kraft_run / "controllers").to_pylist()
    assert [(r["controller_id"], r["controller_epoch"], r["elected"]) for r in rows] == [(3, 1, True)]
    assert any(ref.endswith(DUMP + ":6") for ref in rows[0]["evidence"])
    assert any(ref.endswith("broker-3/controller.log:1") for ref in rows[0]["evidence"])


def test_describe_at_an_instant_on_kraft_input(spark, tmp_path):
    result = CliRunner().invoke(
        main, ["describe", str(SAMPLE), "--at", "2024-03-04 10:03:10", "--format", "text"], env=WIDE
    )
    assert result.exit_code == 0, result.output
    # text: one line per partition, kafka-topics' shape (Topic, Partition, Leader, Replicas, Isr, LeaderEpoch, ...)
    rows = {}
    for ln in result.output.splitlines():
        if ln.startswith("Topic: payments\t"):
            cells = dict(cell.split(": ", 1) for cell in ln.split("\t"))
            rows[cells["Partition"]] = cells
    assert (rows["0"]["Leader"], rows["0"]["Replicas"], rows["0"]["Isr"]) == ("none", "2,1,3", "2")
    assert rows["0"]["State"] == "OfflinePartition"
    assert (rows["1"]["Leader"], rows["1"]["Replicas"], rows["1"]["Isr"], rows["1"]["LeaderEpoch"]) == (
        "3",
        "2,3,1",
        "3",
        "1",
    )
    assert (rows["2"]["Leader"], rows["2"]["Replicas"], rows["2"]["Isr"]) == ("3", "3,1,2", "3,1")
    assert "controller 3, epoch 1" in result.output  # from the KRaft controller.log lines


def test_dump_without_topic_record_is_named_by_the_join(spark, tmp_path):
    """A dump of a later segment (no TopicRecord) next to a snapshot dump that has it."""
    data = DATA / "metadata_dump"
    (tmp_path / "in").mkdir()
    lines = (data / "segment.log.dump").read_text().splitlines()
    (tmp_path / "in" / "later.log.dump").write_text("\n".join(ln for ln in lines if "TOPIC_RECORD" not in ln) + "\n")
    shutil.copy(data / "snapshot.checkpoint.dump", tmp_path / "in" / "00000000000000000010-0000000002.checkpoint.dump")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["replay", str(tmp_path / "in"), "--out", str(out)], env=WIDE)
    assert result.exit_code == 0, result.output
    timeline = pq.read_table(out / "partition_timeline").to_pylist()
    assert {(r["topic"], r["partition"]) for r in timeline} == {("events", 0)}
    assert len(timeline) == 5
