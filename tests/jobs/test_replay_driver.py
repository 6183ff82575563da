"""The replay in the driver (``jobs/replay_driver.py``) against its oracle, the Spark replay job, on the recorded
real incidents (``sample_logs/real-*``: ZooKeeper and KRaft, 0.10 to 4.1), all in one run where each incident is
its own cluster (``--cluster-from-path``), with ``--min-isr TOPIC=N`` and a ``--describe`` snapshot.

The other options are compared where a Spark run of them already exists: the bundled sample unfiltered, with a
place filter and a time window, and a KRaft time window (``test_filters.py``); ``--min-isr N`` with a changed
``--describe`` (``test_impact_job.py``); the shared real-log corpus and the issue-14 cases, many clusters each
(``test_replay_job.py``); the simulated samples (``test_report_job.py``).
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kafka_forensics.core.tables import EVENTS, EVENTS_SCHEMA
from kafka_forensics.jobs import replay_driver
from kafka_forensics.jobs.replay_options import ReplayOptions
from kafka_forensics.parsers.describe_output import parse_describe
from kafka_forensics.replay import local
from kafka_forensics.replay.final_state import SnapshotAt
from kafka_forensics.replay.findings import unique_findings
from kafka_forensics.replay.impact import MinIsrOption
from tests.support.driver_replay import assert_driver_equals_job, assert_same_outputs, run_driver
from tests.support.paths import REPO
from tests.support.recorded import parsed_rows, require_recorded

CLUSTER_RX = r"sample_logs/(real-[^/]+)/"
SNAPSHOT_OF = "real-3.9-kraft-controller-kill"  # a KRaft incident: the snapshot has the quorum's status too


def write_events(out: Path, directories: list[Path]) -> Path:
    """``out/events`` of every log under ``directories``, parsed in-process (``recorded.parsed_rows``, cached for
    the run) and written as the parse job's workers write it: one file per directory, every column nullable."""
    stored = pa.schema([f.with_nullable(True) for f in EVENTS_SCHEMA])
    (out / EVENTS).mkdir(parents=True)
    for n, directory in enumerate(directories):
        rows, _ = parsed_rows(directory)
        table = pa.Table.from_pylist(list(rows), schema=EVENTS_SCHEMA).cast(stored)
        pq.write_table(table, out / EVENTS / f"part-{n:05d}.parquet")
    return out


@pytest.fixture(scope="module")
def recorded_events(tmp_path_factory) -> Path:
    """Every recorded incident in one ``events`` table."""
    return write_events(tmp_path_factory.mktemp("recorded") / "spark", require_recorded())


def _options() -> ReplayOptions:
    incident = REPO / "sample_logs" / SNAPSHOT_OF
    truth = json.loads((incident / "truth.json").read_text("utf-8"))
    snap = truth["describe"][-1]
    path = incident / snap["file"]
    at = dt.datetime.fromtimestamp(snap["at_ms"] / 1000, dt.timezone.utc)
    snapshot = SnapshotAt(parse_describe(path.read_text("utf-8"), str(path)), at, "--describe-at")
    return ReplayOptions(
        cluster_from_path=CLUSTER_RX,
        clock_skew_seconds=1.0,
        min_isr=MinIsrOption(None, {"events": 2}),
        snapshots=(snapshot,),
        describe_lag_seconds=3.0,
    )


@pytest.fixture(scope="module")
def recorded_run(spark, recorded_events) -> Path:
    """The Spark replay job over every recorded incident: the oracle."""
    from kafka_forensics.jobs.replay_job import replay_events
    from kafka_forensics.jobs.stored_tables import read_table

    replay_events(spark, read_table(spark, str(recorded_events), EVENTS), str(recorded_events), _options())
    return recorded_events


@pytest.mark.spark
def test_the_replay_in_the_driver_equals_the_job_on_every_recorded_incident(spark, recorded_run, tmp_path, monkeypatch):
    reused: list[tuple] = []

    def one_per_id(findings):  # two different findings with one id: the job would keep either
        findings = list(findings)
        by_id: dict[str, object] = {}
        for f in findings:
            if by_id.setdefault(f.finding_id, f) != f:
                reused.append((f.rule, f.kind, f.cluster, f.topic, f.partition, f.evidence[:2]))
        return unique_findings(findings)

    monkeypatch.setattr(local, "unique_findings", one_per_id)
    monkeypatch.setattr(replay_driver, "unique_findings", one_per_id)
    driver_out = tmp_path / "driver"
    summary = run_driver(recorded_run, driver_out, _options())
    assert reused == []
    assert_same_outputs(recorded_run, driver_out, spark)
    # the run covers what it claims: every incident, KRaft and ZooKeeper, the option's and the snapshot's findings
    assert set(summary.clusters) == {p.name for p in require_recorded()}
    impact = pq.read_table(driver_out / "impact").to_pylist()
    assert any(r["min_isr_source"] == "--min-isr" for r in impact)
    assert "final_state_mismatch" in summary.findings_by_rule


SAMPLE = REPO / "sample_logs" / "kafka-2.4-controller-failover"
# The options no other Spark run of the suite writes outputs with: the release to judge by, the tolerated clock
# skew, and the partition stage narrowed to one partition (timeline, describe).
NARROW = ReplayOptions(kafka_version="2.4.1", clock_skew_seconds=0.5, topic="orders", partition=2)


@pytest.mark.spark
def test_the_replay_in_the_driver_equals_the_job_with_a_version_a_skew_and_one_partition(spark, tmp_path):
    from kafka_forensics.jobs.replay_job import replay_events
    from kafka_forensics.jobs.stored_tables import read_table

    job_out = write_events(tmp_path / "spark", [SAMPLE])
    replay_events(spark, read_table(spark, str(job_out), EVENTS), str(job_out), NARROW)
    summary = assert_driver_equals_job(job_out, tmp_path, NARROW)
    assert summary is not None and summary.partitions == 1
    assert "stale_epoch_rejected" not in summary.findings_by_rule  # about no partition: not replayed for one


def test_the_replay_in_the_driver_runs_without_pyspark(tmp_path):
    """It runs before or while the JVM starts: importing pyspark is refused in this process."""
    out = write_events(tmp_path / "out", [SAMPLE])
    script = (
        "import sys; sys.modules['pyspark'] = None\n"
        "from kafka_forensics.jobs.replay_driver import replay_in_driver\n"
        "from kafka_forensics.jobs.replay_options import ReplayOptions\n"
        f"s = replay_in_driver({str(out)!r}, ReplayOptions())\n"
        "assert 'pyspark.sql' not in sys.modules\n"
        "print(s.partitions, s.findings)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4", "4"]  # as README.md shows the sample: partitions 4, findings 4
    assert (out / "story.json").is_file() and (out / "findings.jsonl").is_file()


def test_only_local_output_directories_are_supported(tmp_path):
    assert replay_driver.supports(ReplayOptions(), str(tmp_path)) and replay_driver.supports(ReplayOptions())
    assert replay_driver.supports(ReplayOptions(), f"file://{tmp_path}")
    assert not replay_driver.supports(ReplayOptions(), "hdfs://namenode/out")
    from kafka_forensics.core.errors import InputError, UsageError

    with pytest.raises(UsageError, match="local directories only"):
        replay_driver.replay_in_driver("s3a://bucket/out", ReplayOptions())
    with pytest.raises(InputError, match="no events table"):
        replay_driver.replay_in_driver(str(tmp_path), ReplayOptions())
