"""Workers writing events themselves (jobs/events_writer.py): same table as Spark's writer, safe names."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from kafka_forensics.core.errors import UsageError
from kafka_forensics.core.tables import EVENT_COLUMNS, EVENTS_SCHEMA
from kafka_forensics.jobs.events_writer import WRITER_CONF, finish, local_events_dir, part_name, write_events
from kafka_forensics.jobs.parse_job import run_parse
from kafka_forensics.parsers.records import ParseOptions, parse_file
from tests.support.kafka_lines import FAILED_11, STACK_11, STATE_CHANGE_21, text


@pytest.fixture
def writer(spark):
    """Set the writer choice for one test and restore it afterwards."""

    def choose(value: str) -> None:
        spark.conf.set(WRITER_CONF, value)

    yield choose
    spark.conf.unset(WRITER_CONF)


def _comparable(frame):
    """Every column, with the map as JSON (Spark cannot compare maps in set operations)."""
    return frame.select(*[F.to_json(c).alias(c) if c == "attrs" else F.col(c) for c in EVENT_COLUMNS])


@pytest.mark.spark
def test_worker_written_events_equal_sparks_own_write(spark, writer, tmp_path, real_log_files):
    inputs = [str(p) for p in real_log_files]
    writer("spark")
    by_spark = run_parse(spark, inputs, str(tmp_path / "spark"), ParseOptions())
    writer("auto")
    by_workers = run_parse(spark, inputs, str(tmp_path / "arrow"), ParseOptions())
    written = sorted(p.name for p in (tmp_path / "arrow" / "events").iterdir())
    assert written and all(name.startswith("part-") and name.endswith(".parquet") for name in written)
    assert not (tmp_path / "arrow" / "_staging_events").exists()
    assert by_workers.to_json().replace("/arrow", "/OUT") == by_spark.to_json().replace("/spark", "/OUT")
    ours = _comparable(spark.read.parquet(str(tmp_path / "arrow" / "events")))
    theirs = _comparable(spark.read.parquet(str(tmp_path / "spark" / "events")))
    assert tuple(ours.columns) == EVENT_COLUMNS
    assert ours.count() == theirs.count() == by_spark.records
    assert ours.exceptAll(theirs).count() == 0 and theirs.exceptAll(ours).count() == 0
    # one events file per input file that had events, named by that file alone
    with_events = {r.source_file for r in ours.select("source_file").distinct().collect()}
    assert len(written) == len(with_events)


@pytest.mark.spark
def test_worker_written_table_keeps_nested_columns_and_order(spark, writer, tmp_path):
    log = tmp_path / "broker-2" / "state-change.log"
    log.parent.mkdir()
    log.write_bytes(text(STATE_CHANGE_21, FAILED_11, *STACK_11))
    writer("auto")
    run_parse(spark, [str(log)], str(tmp_path / "out"), ParseOptions())
    rows = spark.read.parquet(str(tmp_path / "out" / "events")).orderBy("line_no").collect()
    assert [r.line_no for r in rows] == [1, 2]
    assert rows[1].n_continuation == len(STACK_11) and rows[1].stack.splitlines() == list(STACK_11)
    assert str(spark.read.parquet(str(tmp_path / "out" / "events")).schema["ts"].dataType) == "TimestampType()"


@pytest.mark.spark
def test_writer_choice_follows_master_scheme_and_conf(spark, writer, tmp_path):
    writer("auto")
    assert local_events_dir(spark, str(tmp_path / "x")) == str(tmp_path / "x")
    assert local_events_dir(spark, f"file://{tmp_path}/x") == str(tmp_path / "x")
    assert local_events_dir(spark, "s3a://bucket/incident/_staging_events") is None
    assert local_events_dir(spark, "hdfs://namenode:8020/incident/_staging_events") is None
    writer("spark")
    assert local_events_dir(spark, str(tmp_path / "x")) is None
    writer("parquet")
    with pytest.raises(UsageError, match="auto, arrow or spark"):
        local_events_dir(spark, str(tmp_path / "x"))


def _batches(rows):
    columns = list(zip(*rows))
    return [
        pa.RecordBatch.from_arrays([pa.array(c, f.type) for c, f in zip(columns, EVENTS_SCHEMA)], schema=EVENTS_SCHEMA)
    ]


def test_a_retried_file_replaces_its_own_part_and_leftovers_are_cleaned(tmp_path):
    result = parse_file(text(STATE_CHANGE_21, FAILED_11, *STACK_11), "broker-2/state-change.log")
    uri = "file:/logs/broker-2/state-change.log"
    assert write_events(_batches(result.rows), str(tmp_path), uri) == 2
    assert write_events(_batches(result.rows[:1]), str(tmp_path), uri) == 1  # a retry with other output
    (tmp_path / f".{part_name(uri)}.dead.tmp").write_bytes(b"half a file from a killed task")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([part_name(uri), f".{part_name(uri)}.dead.tmp"])
    assert finish(str(tmp_path)) is True
    assert [p.name for p in tmp_path.iterdir()] == [part_name(uri)]
    assert pq.read_table(tmp_path / part_name(uri)).num_rows == 1
    assert part_name(uri) != part_name(uri + ".1") and part_name(uri) == part_name(str(uri))


def test_no_events_writes_nothing(tmp_path):
    assert write_events([], str(tmp_path / "events"), "file:/x") == 0
    assert not (tmp_path / "events").exists()
    assert finish(str(tmp_path / "events")) is False
