"""--topic/--partitions/--start-time/--end-time: validation, and what a filtered replay keeps."""

from __future__ import annotations

import datetime as dt

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from kafka_forensics.cli.main import main
from kafka_forensics.core.errors import UsageError
from kafka_forensics.jobs.filters import event_filter_from, place_condition, time_condition
from kafka_forensics.jobs.replay_options import ReplayOptions
from kafka_forensics.replay.filters import EventFilter, keeps_place, keeps_time
from tests.support.driver_replay import assert_driver_equals_job
from tests.support.paths import REPO

INCIDENT = REPO / "sample_logs" / "kafka-2.4-controller-failover"
UTC = dt.timezone.utc


def _utc(value):
    """Parquet written by Spark holds UTC instants without a zone."""
    return value if value is None or value.tzinfo else value.replace(tzinfo=UTC)


def test_kafka_time_form_in_the_logs_time_zone():
    flt = event_filter_from(None, None, "2024-03-04 10:05:00,250", "2024-03-04 12:00:00,000", "Europe/Paris")
    assert flt.start == dt.datetime(2024, 3, 4, 9, 5, 0, 250000, tzinfo=UTC)
    assert flt.end == dt.datetime(2024, 3, 4, 11, 0, tzinfo=UTC)
    assert event_filter_from(None, None, "2024-03-04 10:05", None).start == dt.datetime(2024, 3, 4, 10, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    "args, message",
    [
        ((None, "0,1", None, None), "--partitions needs --topic"),
        (("t", "1,2,1", None, None), "repeated entries: 1"),
        (("t", "a,b", None, None), "ids like 0,1,2"),
        (("bad topic!", None, None, None), "not a legal Kafka topic name"),
        ((None, None, "04/03/2024", None), "--start-time"),
        ((None, None, "2024-02-30 10:00:00,000", None), "not a valid date"),
        ((None, None, "2024-03-04 11:00:00,000", "2024-03-04 10:00:00,000"), "after --end-time"),
    ],
)
def test_bad_values_are_usage_errors(args, message):
    with pytest.raises(UsageError, match=message):
        event_filter_from(*args)


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    """One unfiltered and two filtered replays of the bundled 2.4 incident."""
    base = tmp_path_factory.mktemp("filters")
    out = {}
    for name, extra in (
        ("all", []),
        ("topic", ["--topic", "orders", "--partitions", "0,2"]),
        ("window", ["--start-time", "2024-03-04 10:04:00,000", "--end-time", "2024-03-04 10:05:30,000"]),
    ):
        result = CliRunner().invoke(main, ["replay", str(INCIDENT), "--out", str(base / name), "--show", "0", *extra])
        assert result.exit_code == 0, result.output
        out[name] = base / name
    return out


@pytest.mark.spark
def test_topic_filter_replays_only_those_partitions_with_the_full_cluster_story(runs):
    timeline = pq.read_table(runs["topic"] / "partition_timeline").to_pylist()
    assert {(r["topic"], r["partition"]) for r in timeline} == {("orders", 0), ("orders", 2)}
    unfiltered = pq.read_table(runs["all"] / "partition_timeline").to_pylist()
    assert [r for r in unfiltered if r["topic"] == "orders" and r["partition"] in (0, 2)] == timeline
    # the controllers (elections are lines about no partition) are exactly those of the full replay
    assert (
        pq.read_table(runs["topic"] / "controllers").to_pylist()
        == pq.read_table(runs["all"] / "controllers").to_pylist()
    )
    # the events table stays complete: filters narrow the replay, not what was parsed
    assert pq.read_table(runs["topic"] / "events").num_rows == pq.read_table(runs["all"] / "events").num_rows


@pytest.mark.spark
def test_time_window_keeps_the_controller_known_at_start(runs):
    start = dt.datetime(2024, 3, 4, 10, 4, tzinfo=UTC)
    end = dt.datetime(2024, 3, 4, 10, 5, 30, tzinfo=UTC)
    timeline = pq.read_table(runs["window"] / "partition_timeline").to_pylist()
    assert timeline and all(start <= _utc(r["ts_start"]) <= end for r in timeline)
    full = pq.read_table(runs["all"] / "partition_timeline").to_pylist()
    assert len(timeline) < len(full)
    controllers = pq.read_table(runs["window"] / "controllers").to_pylist()
    # the epoch-7 controller was elected at 10:00, before the window: still known, from the kept cluster lines
    assert any(_utc(c["ts_start"]) < start for c in controllers)
    assert all(f["ts"] is None or _utc(f["ts"]) <= end for f in pq.read_table(runs["window"] / "findings").to_pylist())


WINDOW = ("2024-03-04 10:04:00,000", "2024-03-04 10:05:30,000")
FILTERS = {
    "all": None,
    "topic": event_filter_from("orders", "0,2", None, None),
    "window": event_filter_from(None, None, *WINDOW),
}


@pytest.mark.spark
def test_the_replay_in_the_driver_equals_the_job_with_each_filter(runs, tmp_path):
    for name, flt in FILTERS.items():
        assert_driver_equals_job(runs[name], tmp_path, ReplayOptions(event_filter=flt))


@pytest.mark.spark
def test_the_filters_columns_keep_what_their_predicates_keep(spark, runs):
    """One definition, two forms: the Spark Columns and the predicates on one event keep the same lines of
    the sample, for each filter shape and each of the two variants (the replay's and merge's)."""
    path = str(runs["all"] / "events")
    events = pq.read_table(path).to_pylist()
    ts = [e["ts"] for e in events if e["ts"] is not None]
    middle = sorted(ts)[len(ts) // 2]
    shapes = [
        event_filter_from("orders", None, None, None),
        event_filter_from("orders", "1", None, None),
        event_filter_from(None, None, *WINDOW),
        EventFilter(start=middle),
        EventFilter(end=middle),
    ]
    table = spark.read.parquet(path)
    for flt in shapes:
        for keep in (True, False):
            column = place_condition(flt, keep) if flt.has_place else time_condition(flt, keep)
            by_spark = {(r["source_file"], r["line_no"]) for r in table.filter(column).collect()}
            by_python = {
                (e["source_file"], e["line_no"])
                for e in events
                if (keeps_place(flt, e, keep) if flt.has_place else keeps_time(flt, e, keep))
            }
            assert by_python == by_spark, (flt, keep)
            assert 0 < len(by_python) < len(events), (flt, keep)


@pytest.mark.spark
def test_start_time_keeps_kraft_metadata_history(tmp_path):
    """Metadata records before --start-time are the state at start-time: dropping them would turn
    every later partition epoch into a gap. The window keeps the sample's injected gap and adds none."""
    sample = REPO / "sample_logs" / "sim-3.9-kraft-metadata"
    result = CliRunner().invoke(
        main,
        [
            "replay",
            str(sample),
            "--out",
            str(tmp_path / "out"),
            "--show",
            "0",
            "--start-time",
            "2024-03-04 10:03:00,000",
        ],
    )
    assert result.exit_code == 0, result.output
    gaps = [
        (r["topic"], r["partition"], r["broker"])
        for r in pq.read_table(tmp_path / "out" / "findings").to_pylist()
        if r["rule"] == "partition_epoch_gap"
    ]
    # one finding per broker that applied the missing epoch
    assert sorted(gaps) == [("payments", 1, 1), ("payments", 1, 3)]
    # the replay in the driver keeps the same history before the window
    options = ReplayOptions(event_filter=event_filter_from(None, None, "2024-03-04 10:03:00,000", None))
    assert_driver_equals_job(tmp_path / "out", tmp_path, options)
