"""The Spark parse job end to end: tables, reconciliation, gz, and clear errors."""

from __future__ import annotations

import gzip
import json

import pytest
from pyspark.sql import functions as F

from kafka_forensics.core.errors import InputError
from kafka_forensics.core.tables import EVENT_COLUMNS, QUARANTINE_COLUMNS
from kafka_forensics.jobs.parse_job import MAX_LENGTH_CONF, READER_CONF, run_parse
from kafka_forensics.parsers.records import ParseOptions
from tests.support.kafka_lines import FAILED_11, STACK_11, STATE_CHANGE_21, text
from tests.support.paths import SAMPLES

pytestmark = pytest.mark.spark


def test_real_logs_reconcile_exactly(spark, tmp_path, real_log_files):
    summary = run_parse(spark, [str(p) for p in real_log_files], str(tmp_path / "out"), ParseOptions())
    assert summary.reconciled
    expected_lines = sum(len(p.read_bytes().split(b"\n")) - p.read_bytes().endswith(b"\n") for p in real_log_files)
    assert summary.lines_read == expected_lines
    events = spark.read.parquet(str(tmp_path / "out" / "events"))
    assert tuple(events.columns) == EVENT_COLUMNS
    assert events.count() == summary.records
    assert events.agg(F.sum("n_continuation")).first()[0] == summary.continuation_lines
    # every state-change-logger record of the corpus is a typed event or a named "other"
    assert events.filter("logger = 'state.change.logger' AND event_type <> 'other'").count() > 150
    assert json.loads((tmp_path / "out" / "parse_summary.json").read_text())["reconciled"] is True


def test_a_metadata_dumps_headers_reconcile_as_the_readers_continuation_lines(spark, tmp_path):
    """A recorded 3.9 KRaft incident (``kafka-dump-log.sh --cluster-metadata-decoder`` output beside the
    brokers' logs): the dump's file and batch headers belong to no record, so the events carry them in
    no ``n_continuation``; the summary still accounts for them, as the files table and the report do."""
    incident = SAMPLES / "real-3.9-kraft-unclean-election"
    summary = run_parse(spark, [str(incident)], str(tmp_path / "out"), ParseOptions())
    dump = next(f for f in summary.files if f["source_file"].endswith(".log.dump.gz"))
    assert dump["continuation_lines"] > 100 and dump["quarantined"] == 0
    assert dump["lines_read"] == dump["records"] + dump["continuation_lines"]
    assert summary.continuation_lines == sum(f["continuation_lines"] for f in summary.files)
    assert summary.reconciled


def test_rotated_gz_and_directories_with_several_brokers(spark, tmp_path):
    logs = tmp_path / "incident"
    (logs / "broker-1").mkdir(parents=True)
    (logs / "broker-2").mkdir()
    (logs / "broker-1" / "state-change.log.2021-03-04-10.gz").write_bytes(gzip.compress(text(STATE_CHANGE_21)))
    (logs / "broker-2" / "state-change.log").write_bytes(text(FAILED_11, *STACK_11, "garbage line"))
    (logs / "broker-2" / "notes.txt").write_text("not a log")
    summary = run_parse(spark, [str(logs)], str(tmp_path / "out"), ParseOptions())
    assert summary.reconciled and summary.records == 2 and summary.quarantined == 1
    assert [f["source_file"].split("incident/")[1] for f in summary.files] == [
        "broker-1/state-change.log.2021-03-04-10.gz",
        "broker-2/state-change.log",
    ]
    quarantine = spark.read.parquet(str(tmp_path / "out" / "quarantine"))
    assert tuple(quarantine.columns) == QUARANTINE_COLUMNS
    row = quarantine.first()
    assert (row.line_no, row.raw, row.broker) == (1 + 1 + len(STACK_11), "garbage line", 2)
    failed = (
        spark.read.parquet(str(tmp_path / "out" / "events"))
        .filter("event_type = 'partition_state_change_failed'")
        .first()
    )
    assert failed.n_continuation == len(STACK_11) and failed.source_file.endswith("broker-2/state-change.log")


def test_missing_input_is_a_clear_input_error(spark, tmp_path):
    with pytest.raises(InputError, match=r"input not found: .*nope"):
        run_parse(spark, [str(tmp_path / "nope")], str(tmp_path / "out"), ParseOptions())


def test_no_log_lines_at_all_is_an_input_error(spark, tmp_path):
    junk = tmp_path / "server.log"
    junk.write_text("this is\nnot kafka\n")
    with pytest.raises(InputError, match="no recognisable Kafka log lines"):
        run_parse(spark, [str(junk)], str(tmp_path / "out"), ParseOptions())


def test_file_uri_glob_and_custom_broker_pattern(spark, tmp_path):
    logs = tmp_path / "hosts" / "kfk-prod-07" / "logs"
    logs.mkdir(parents=True)
    (logs / "server.log").write_bytes(
        text("[2021-03-04 10:15:23,456] INFO Shrinking ISR for partition [t,0] from 7,8 to 7 (kafka.cluster.Partition)")
    )
    options = ParseOptions(broker_from_path=r"kfk-prod-(\d+)")
    summary = run_parse(spark, [f"file://{tmp_path}/hosts/*/logs/server.log"], str(tmp_path / "out"), options)
    assert summary.records == 1
    row = spark.read.parquet(str(tmp_path / "out" / "events")).first()
    assert (row.broker, row.broker_source) == (7, "path")
    assert row.source_file.endswith("kfk-prod-07/logs/server.log")


def test_a_file_over_the_readers_limit_is_a_clear_input_error_when_spark_reads_it(spark, tmp_path):
    log = tmp_path / "broker-1" / "state-change.log"
    log.parent.mkdir()
    log.write_bytes(text(*[STATE_CHANGE_21] * 40))
    spark.conf.set(MAX_LENGTH_CONF, "1000")  # the same check as 2 GiB, without writing 2 GiB
    spark.conf.set(READER_CONF, "spark")  # Spark's binaryFile reader, as on a cluster
    try:
        with pytest.raises(InputError, match=r"state-change.log is [\d,]+ bytes; .* at most 1,000 bytes .*split -C"):
            run_parse(spark, [str(log)], str(tmp_path / "out"), ParseOptions())
        spark.conf.unset(READER_CONF)  # the workers read local files themselves: no such limit
        assert run_parse(spark, [str(log)], str(tmp_path / "out"), ParseOptions()).records == 40
    finally:
        spark.conf.unset(MAX_LENGTH_CONF)
        spark.conf.unset(READER_CONF)
    assert run_parse(spark, [str(log)], str(tmp_path / "out"), ParseOptions()).records == 40
