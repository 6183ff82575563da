"""``--format table|text|json|csv`` of every table-printing command (cli/output.py): piped output is
``text`` and never wraps, ``json`` parses, ``csv`` has the documented columns."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from kafka_forensics.cli.listings import (
    DESCRIBE_COLUMNS,
    FINDING_COLUMNS,
    INTERVAL_COLUMNS,
    STORY_COLUMNS,
    describe_listing,
    findings_listing,
    story_listing,
)
from kafka_forensics.cli.main import main
from kafka_forensics.cli.output import render_csv, render_json, render_text
from kafka_forensics.replay.cluster import ClusterContext
from tests.support.cli import without_a_jvm
from tests.support.paths import REPO

AT = dt.datetime(2024, 3, 4, 10, 6, tzinfo=dt.timezone.utc)
LONG_TOPIC = "payments.settlement.eu-west-1.v2.compacted-changelog-" + "x" * 60
LONG_REF = "/var/log/kafka/cluster-eu-west-1/broker-2/" + "deep/" * 12 + "state-change.log.2024-03-04-10:123456"
UNCLEAN = REPO / "sample_logs" / "real-2.4-zk-unclean-election"
FAILOVER = REPO / "sample_logs" / "kafka-2.4-controller-failover"
DESCRIBE_LINE = re.compile(
    r"^Topic: \S+\tPartition: \d+\tLeader: (none|\d+)\tReplicas: [\d,]*\tIsr: [\d,]*\tLeaderEpoch: \S+\t"
    r"ControllerEpoch: \S+\tState: \S+\tSince: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\tEvidence: \S+:\d+$"
)


def _describe_rows() -> list[dict]:
    return [
        {
            "cluster": "",
            "topic": LONG_TOPIC,
            "partition": p,
            "leader": leader,
            "replicas": [1, 2, 3],
            "isr": [2, 3] if leader >= 0 else [2],
            "leader_epoch": 4,
            "controller_epoch": 2,
            "state": "OnlinePartition" if leader >= 0 else "OfflinePartition",
            "ts_start": AT - dt.timedelta(seconds=5),
            "cause": f"{LONG_REF}:{40 + p}",
        }
        for p, leader in ((0, 2), (1, -1))
    ]


def test_describe_text_is_kafka_topics_shape_one_line_per_partition():
    listing = describe_listing(AT, _describe_rows(), [], {"": ClusterContext()})
    lines = render_text([listing]).splitlines()
    rows = [line for line in lines if line.startswith("Topic: ")]
    assert len(rows) == 2 and lines[0] == "as the logs say at 2024-03-04 10:06:00,000 UTC"
    assert rows[0].startswith(f"Topic: {LONG_TOPIC}\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 2,3\t")
    assert "\tLeader: none\t" in rows[1]  # kafka-topics prints "none" for leader -1
    assert rows[0].endswith(f"Evidence: {LONG_REF}:40")
    assert all(DESCRIBE_LINE.match(r) for r in rows), rows


def test_describe_json_and_csv_keep_the_documented_columns():
    listing = describe_listing(AT, _describe_rows(), [], {"": ClusterContext()})
    doc = json.loads(render_json("describe", [listing]))
    assert doc["command"] == "describe" and list(doc["partitions"][0]) == list(DESCRIBE_COLUMNS)
    assert doc["partitions"][1]["leader"] == -1 and doc["partitions"][0]["since"] == "2024-03-04T10:05:55.000Z"
    table = list(csv.DictReader(io.StringIO(render_csv([listing]))))
    assert list(table[0]) == list(DESCRIBE_COLUMNS) and table[0]["topic"] == LONG_TOPIC
    assert table[0]["replicas"] == "1,2,3" and table[0]["evidence"] == f"{LONG_REF}:40"


def test_untrusted_text_cannot_break_a_text_line():
    finding = {
        "severity": "error",
        "rule": "illegal_transition",
        "topic": "t",
        "partition": 0,
        "controller_epoch": 1,
        "ts": AT,
        "ts_end": AT,
        "summary": "a line with\nan embedded newline\tand a tab",
        "evidence": [f"{LONG_REF}:1"],
        "evidence_count": 1,
    }
    text = render_text([findings_listing([finding])])
    assert len(text.splitlines()) == 1 and "embedded newline and a tab" in text


def _no_wrapped_lines(text: str, starts: tuple[str, ...]) -> None:
    """Every line is a note or a whole row: none is the continuation of a wrapped one."""
    for line in text.splitlines():
        assert line.startswith(starts), line


def test_rules_piped_is_text_and_every_format_parses():
    runner = CliRunner()
    text = runner.invoke(main, ["rules", "--kafka-version", "2.4.1"])
    assert text.exit_code == 0 and text.stdout.startswith("Kafka 2.4.1: ZooKeeper controller state machines")
    as_json = json.loads(runner.invoke(main, ["rules", "--kafka-version", "2.4.1", "--format", "json"]).stdout)
    assert as_json["partition"]["OnlinePartition"] == ["NewPartition", "OnlinePartition", "OfflinePartition"]
    rows = list(
        csv.DictReader(
            io.StringIO(runner.invoke(main, ["rules", "--kafka-version", "2.4.1", "--format", "csv"]).stdout)
        )
    )
    assert {
        "entity": "partition",
        "target": "OnlinePartition",
        "previous": "NewPartition;OnlinePartition;OfflinePartition",
    } in rows
    assert runner.invoke(main, ["rules", "--kafka-version", "2.4.1", "--format", "xml"]).exit_code == 2


@pytest.fixture(scope="module")
def unclean_story(spark):
    """``story`` of the recorded unclean election on Spark, piped (the suite's session: Spark runs it)."""
    return CliRunner().invoke(main, ["story", str(UNCLEAN)])


@pytest.mark.spark
def test_describe_timeline_story_and_replay_piped(spark, unclean_story, tmp_path):
    runner = CliRunner()  # not a terminal: the default is text
    described = runner.invoke(main, ["describe", str(UNCLEAN), "--at", "2026-11-25 19:18:05,000"])
    assert described.exit_code == 0, described.output
    rows = [line for line in described.stdout.splitlines() if line.startswith("Topic: ")]
    assert len(rows) == 4 and all(DESCRIBE_LINE.match(r) for r in rows), described.stdout
    assert any(r.startswith("Topic: fragile\tPartition: 0\tLeader: 3\tReplicas: 2,3\tIsr: 3,2\t") for r in rows)
    _no_wrapped_lines(described.stdout, ("Topic: ", "as the logs say", "note: ", "controller "))

    timeline = runner.invoke(
        main, ["timeline", str(UNCLEAN), "--topic", "fragile", "--partition", "0", "--format", "json"]
    )
    doc = json.loads(timeline.stdout)
    assert list(doc["partition_intervals"][0]) == list(INTERVAL_COLUMNS)
    assert any(f["rule"] == "unclean_election" for f in doc["findings"])
    assert all(list(f) == list(FINDING_COLUMNS) for f in doc["findings"])

    story = unclean_story  # piped: text, one sentence per line
    assert story.exit_code == 0, story.output
    _no_wrapped_lines(story.stdout, ("2026-11-25 ",))
    # the Spark job tells the story its in-process twin (replay/story.tell_local) tells, line for line
    from tests.replay.test_story import _told

    local = render_text([story_listing([_told(UNCLEAN.name)[1]])])
    assert story.stdout.replace(f"{UNCLEAN}/", "").rstrip("\n") == local
    assert "UNCLEAN election(s)" in local and "fragile-0 -> 3" in local
    doc = json.loads(render_json("story", [story_listing([_told(UNCLEAN.name)[1]])]))
    assert list(doc["story"][0]) == list(STORY_COLUMNS) and doc["story"][0]["ts"].endswith("Z")

    replayed = runner.invoke(
        main,
        ["replay", str(FAILOVER), "--out", str(tmp_path / "out"), "--format", "json", "--show", "3"]
        + ["--cluster-from-path", r"sample_logs/([^/]+)/"],
    )
    assert replayed.exit_code == 0, replayed.output
    doc = json.loads(replayed.stdout)  # the summary went to stderr
    assert doc["command"] == "replay" and len(doc["findings"]) == 3 and "partition(s)" in replayed.stderr
    # every documented column, the cluster filled in from the path (it was once listed but left empty)
    assert all(list(f) == list(FINDING_COLUMNS) and f["cluster"] == FAILOVER.name for f in doc["findings"])
    story_json = json.loads((tmp_path / "out" / "story.json").read_text())
    assert story_json["format"] == "kafka-forensics-story/1" and story_json["clusters"][0]["sentences"]


@pytest.mark.spark
def test_a_users_story_of_small_inputs_runs_without_spark_and_tells_sparks_story(unclean_story):
    """``story INPUTS`` in a fresh process (where no JVM can start) parses and replays in the driver
    (jobs/engine.py) and prints Spark's story, line for line."""
    assert unclean_story.exit_code == 0, unclean_story.output
    done = without_a_jvm(["story", str(UNCLEAN)])
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == unclean_story.stdout and "UNCLEAN election(s)" in done.stdout


@pytest.mark.spark
def test_a_subprocess_pipe_gets_one_kafka_topics_line_per_partition():
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    exe = [sys.executable, "-c", "from kafka_forensics.cli.main import main; main()"]
    piped = subprocess.run(
        [*exe, "describe", str(FAILOVER), "--at", "2024-03-04 10:06:00"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert piped.returncode == 0, piped.stderr[-2000:]
    rows = [line for line in piped.stdout.splitlines() if line.startswith("Topic: ")]
    assert rows and all(DESCRIBE_LINE.match(r) for r in rows), piped.stdout
    assert all(len(r) > 80 for r in rows)  # longer than a terminal, yet one line each
