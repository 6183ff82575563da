"""The replay job end to end on the shared real-log corpus, through the CLI, on the shared Spark session.

One ``replay`` run over every file (each source repository is its own cluster), then: the job's
findings equal the in-process replay's (same ids), the output is deterministic and complete, and
the anomalies the corpus is known for are found with the right evidence.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from kafka_forensics.cli.main import main
from kafka_forensics.jobs.replay_options import ReplayOptions
from kafka_forensics.replay.events import compact_events
from kafka_forensics.replay.local import replay_all
from tests.support.driver_replay import assert_driver_equals_job
from tests.support.engines import assert_report_engines_agree
from tests.support.paths import DATA, REAL_LOGS

CLUSTER_RX = r"real-logs/\d+-([^-]+)-"
WIDE = {"COLUMNS": "250"}  # rich wraps table cells at 80 columns when not on a terminal
pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def corpus_run(spark, tmp_path_factory, real_log_files):
    out = tmp_path_factory.mktemp("replay") / "out"
    result = CliRunner().invoke(
        main, ["replay", f"{REAL_LOGS}/*.log", "--out", str(out), "--cluster-from-path", CLUSTER_RX, "--show", "3"]
    )
    assert result.exit_code == 0, result.output
    findings = [json.loads(line) for line in (out / "findings.jsonl").read_text("utf-8").splitlines()]
    return out, result.output, findings


def _file(ref: str) -> str:
    return Path(ref.rsplit(":", 1)[0]).name[:2]


def _from(findings, number: str, rule: str) -> list[dict]:
    return [f for f in findings if f["rule"] == rule and any(_file(r) == number for r in f["evidence"])]


def test_replay_writes_every_table(corpus_run):
    out, output, findings = corpus_run
    for table in ("events", "partition_timeline", "replica_timeline", "controllers", "brokers", "findings"):
        assert pq.read_table(out / table).num_rows > 0, table
    summary = json.loads((out / "replay_summary.json").read_text())
    assert summary["findings"] == len(findings) > 0
    assert "finding(s)" in output and "reconciled" in output
    timeline = pq.read_table(out / "partition_timeline").to_pylist()
    for row in timeline:
        assert re.match(r".+:\d+$", row["cause"]) and row["seq"] >= 0
        assert row["ts_end"] is None or row["ts_end"] >= row["ts_start"]


def test_findings_jsonl_is_ordered_unique_and_cited(corpus_run):
    out, _, findings = corpus_run
    ids = [f["finding_id"] for f in findings]
    assert len(ids) == len(set(ids))
    keys = [(f["cluster"], f["ts"] is None, f["ts"] or "") for f in findings]
    assert keys == sorted(keys)
    for f in findings:
        assert {
            "finding_id",
            "rule",
            "severity",
            "topic",
            "partition",
            "replica",
            "controller_epoch",
            "ts",
            "summary",
            "evidence",
        } <= set(f)
        assert f["evidence"] and all(re.match(r".+\.log:\d+$", r) for r in f["evidence"])
    parquet_ids = sorted(r["finding_id"] for r in pq.read_table(out / "findings").to_pylist())
    assert parquet_ids == sorted(ids)


def test_job_equals_in_process_replay(corpus_run):
    out, _, findings = corpus_run
    events = compact_events(pq.read_table(out / "events").to_pylist())  # as the job's workers read them
    rx = re.compile(CLUSTER_RX)

    def cluster_of(e):
        m = rx.search(e["source_file"])
        return m.group(1) if m else ""

    local = replay_all(events, cluster_of=cluster_of)
    assert sorted(f.finding_id for f in local.findings) == sorted(f["finding_id"] for f in findings)
    spark_rows = pq.read_table(out / "partition_timeline").to_pylist()
    key = lambda r: (r["cluster"], r["topic"], r["partition"], r["seq"])  # noqa: E731
    isr = lambda r: None if r["isr"] is None else list(r["isr"])  # noqa: E731 (Parquet: lists; the replay: tuples)
    assert [(key(r), r["cause"], r["leader"], isr(r)) for r in sorted(spark_rows, key=key)] == [
        (key(r), r["cause"], r["leader"], isr(r)) for r in sorted(local.partition_intervals, key=key)
    ]


def test_the_replay_in_the_driver_equals_the_job_on_the_corpus(corpus_run, tmp_path):
    """Every output, one cluster per source repository (``--cluster-from-path``)."""
    summary = assert_driver_equals_job(corpus_run[0], tmp_path, ReplayOptions(cluster_from_path=CLUSTER_RX))
    assert summary is not None and len(summary.clusters) > 10


def test_known_anomalies_of_the_corpus(corpus_run):
    _, _, findings = corpus_run
    # file 10: controller 2 still electing with epoch 39 after epoch 40 was elected (zombie)
    [zombie] = _from(findings, "10", "concurrent_controllers")
    assert zombie["controller_epoch"] == 39 and "40" in zombie["summary"]
    # file 11: broker 2 ignores controller 1's epoch 45 after seeing 46
    [stale] = _from(findings, "11", "stale_epoch_rejected")
    assert stale["controller_epoch"] == 45 and stale["broker"] == 2 and stale["evidence_count"] == 10
    # Kafka's own failed state changes, as illegal transitions citing the ERROR line
    failure_lines = {"02": 2, "05": 2, "16": 2, "28": 1, "52": 2}
    for number, line_no in failure_lines.items():
        found = _from(findings, number, "illegal_transition")
        assert any(f["kind"] == "failed" and any(r.endswith(f":{line_no}") for r in f["evidence"]) for f in found), (
            number
        )
    # file 37 is an INFO-level 2.8 log: gaps, and nothing else
    info = [f for f in findings if any(_file(r) == "37" for r in f["evidence"])]
    assert info and {f["rule"] for f in info} == {"state_gap"} and {f["severity"] for f in info} == {"info"}
    # no real Kafka ever logged a transition its own state machine forbids
    assert [f for f in findings if f["kind"] == "logged_pair_invalid"] == []


def test_controllers_and_brokers_tables(corpus_run):
    out, _, findings = corpus_run
    controllers = pq.read_table(out / "controllers").to_pylist()
    epochs = {(c["cluster"], c["controller_epoch"]) for c in controllers}
    assert {("akshaynayak", 2), ("akshaynayak", 3), ("darrendao", 4), ("atcp", 56)} <= epochs
    # danisharora's controller epoch went from 46 back to 28 (ZooKeeper data replaced)
    assert any(f["rule"] == "controller_epoch_regression" and f["cluster"] == "danisharora" for f in findings)
    brokers = pq.read_table(out / "brokers").to_pylist()
    assert any(b["cluster"] == "canhui" and b["broker"] == 3 and b["state"] == "dead" for b in brokers)


def test_timeline_command(spark):
    result = CliRunner().invoke(
        main,
        [
            "timeline",
            str(REAL_LOGS / "05-akshaynayak-0.8.2.2-state-change-noreplicaonline.log"),
            "--topic",
            "twitterstream",
            "--partition",
            "0",
            "--format",
            "text",  # one line per row, never wrapped (a table's cells may be cut to the width)
        ],
        env=WIDE,
    )
    assert result.exit_code == 0, result.output
    states = {
        cell.split(": ", 1)[1]
        for ln in result.output.splitlines()
        for cell in ln.split("\t")
        if cell.startswith("state: ")
    }
    assert {"OfflinePartition", "OnlinePartition"} <= states, result.output
    assert "illegal_transition" in result.output


def test_describe_command(spark):
    path = str(REAL_LOGS / "05-akshaynayak-0.8.2.2-state-change-noreplicaonline.log")
    result = CliRunner().invoke(main, ["describe", path, "--at", "2016-01-05 13:29:03,000"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "twitterstream" in result.output and "Leader" in result.output
    early = CliRunner().invoke(main, ["describe", path, "--at", "2016-01-05 12:00:00"], env=WIDE)
    assert early.exit_code == 0 and "cannot know" in early.output
    bad = CliRunner().invoke(main, ["describe", path, "--at", "yesterday"])
    assert bad.exit_code == 2 and "--at" in bad.output


def test_job_equals_in_process_replay_on_the_issue14_cases(spark, tmp_path):
    """Episodes, their spans and the lines that name partitions only in text (``Mark replicas ... as offline``)
    come out of the Spark job byte for byte as out of the in-process replay (each case is its own cluster)."""
    cases = DATA / "issue14"
    out = tmp_path / "out"
    rx = r"issue14/([^/]+)/"
    result = CliRunner().invoke(main, ["replay", str(cases), "--out", str(out), "--cluster-from-path", rx])
    assert result.exit_code == 0, result.output
    lines = sorted((out / "findings.jsonl").read_text("utf-8").splitlines())
    events = compact_events(pq.read_table(out / "events").to_pylist())  # as the job's workers read them
    local = replay_all(events, cluster_of=lambda e: re.search(rx, e["source_file"]).group(1))
    assert sorted(f.to_row()["json"] for f in local.findings) == lines
    assert_driver_equals_job(out, tmp_path, ReplayOptions(cluster_from_path=rx))
    rows = [json.loads(line) for line in lines]
    assert {"ts_end", "controller_epoch_end"} <= set(rows[0])
    assert any(r["rule"] == "leader_isr_mismatch_after_failover" and r["evidence_count"] > 3 for r in rows)


def test_the_report_of_the_real_log_corpus_on_duckdb_equals_sparks(spark, corpus_run, tmp_path):
    """Real broker logs of several source repositories (each its own cluster): the report, its model, the summary
    and the findings listing are the same on DuckDB through SQLFrame (jobs/frames.py) as on Spark."""
    out = corpus_run[0]
    assert_report_engines_agree(spark, out, tmp_path)
