"""The driver engine's parse (``jobs/parse_driver.py``) against the Spark parse job, its oracle: the same
tables, schemas and summary on real and recorded logs and on bad input."""

from __future__ import annotations

import gzip
import json

import pytest

from kafka_forensics.core.errors import InputError
from kafka_forensics.core.tables import PARSE_TABLES
from kafka_forensics.jobs.discovery import discover
from kafka_forensics.jobs.parse_driver import parse_in_driver
from kafka_forensics.jobs.parse_job import run_parse
from kafka_forensics.parsers.records import ParseOptions
from tests.support.kafka_lines import BROKER_CHANGE_22, FAILED_11, STACK_11, STATE_CHANGE_21, text
from tests.support.outputs import table
from tests.support.paths import SAMPLES

pytestmark = pytest.mark.spark


def _summary(out) -> dict:
    summary = json.loads((out / "parse_summary.json").read_text(encoding="utf-8"))
    summary.pop("out_dir")
    return summary


def _assert_same_parse(spark, inputs: list[str], tmp_path, options: ParseOptions | None = None) -> dict:
    options = options or ParseOptions()
    by_spark, by_driver = tmp_path / "spark", tmp_path / "driver"
    run_parse(spark, inputs, str(by_spark), options)
    parse_in_driver(inputs, str(by_driver), options)
    for name in PARSE_TABLES:
        assert table(by_driver, name) == table(by_spark, name), name
    # the events' files themselves: one per input file, named by its URI, the same rows in the same order
    spark_parts = sorted(p.name for p in (by_spark / "events").glob("part-*.parquet"))
    assert sorted(p.name for p in (by_driver / "events").glob("part-*.parquet")) == spark_parts
    for part in spark_parts:
        assert (by_driver / "events" / part).read_bytes() == (by_spark / "events" / part).read_bytes(), part
    assert _summary(by_driver) == _summary(by_spark)
    return _summary(by_driver)


@pytest.mark.parametrize(
    "incident",
    [
        "kafka-2.4-controller-failover",  # the bundled sample: 3 brokers, 9 files
        "real-3.9-kraft-unclean-election",  # KRaft, with a gzipped metadata dump
        "real-0.10-zk-controller-kill",  # the oldest release the lab records
        "real-2.8-zk-unclean-election-trace",  # TRACE state-change logging
    ],
)
def test_recorded_incidents_parse_to_the_same_tables_as_the_spark_job(spark, tmp_path, incident):
    summary = _assert_same_parse(spark, [str(SAMPLES / incident)], tmp_path)
    assert summary["reconciled"] and summary["records"] > 0


def test_the_real_log_corpus_parses_to_the_same_tables(spark, tmp_path, real_log_files):
    summary = _assert_same_parse(spark, [str(p) for p in real_log_files], tmp_path)
    assert summary["reconciled"]


def test_bad_input_is_quarantined_and_flagged_alike(spark, tmp_path):
    """A BOM, invalid UTF-8, binary garbage, a truncated line, an impossible timestamp, a stack trace, an
    empty file and a corrupt .gz: the same quarantine rows, flags and counts from both engines."""
    logs = tmp_path / "in" / "broker-2"
    logs.mkdir(parents=True)
    bad_ts = BROKER_CHANGE_22.replace("2021-03-04 10:15:23,456", "2021-02-30 25:61:61,999")
    (logs / "controller.log").write_bytes(
        b"\xef\xbb\xbf" + text(BROKER_CHANGE_22, bad_ts) + b"\xff\xfe not utf-8 \x00\x01\n" + text(STATE_CHANGE_21)
    )
    (logs / "state-change.log").write_bytes(text(FAILED_11, *STACK_11, "garbage line") + b"[2021-03-04 10:15:2")
    (logs / "server.log").write_bytes(b"")
    (logs / "server.log.1.gz").write_bytes(gzip.compress(text(STATE_CHANGE_21))[:-9])
    summary = _assert_same_parse(spark, [str(tmp_path / "in")], tmp_path)
    assert summary["reconciled"] and summary["quarantined"] > 0 and summary["read_errors"]
    assert summary["ts_invalid"] == 1 and summary["bom_lines"] == 1


def test_no_log_line_at_all_is_the_same_input_error(tmp_path):
    junk = tmp_path / "server.log"
    junk.write_bytes(b"\x00\x01 not a log line\n")
    with pytest.raises(InputError, match="no recognisable Kafka log lines in 1 file"):
        parse_in_driver([str(junk)], str(tmp_path / "out"), ParseOptions())
    assert json.loads((tmp_path / "out" / "parse_summary.json").read_text())["quarantined"] == 1


def test_local_paths_are_listed_as_hadoops_listing_names_them(spark, tmp_path):
    """A plain local path is listed without the JVM; a glob still goes through Hadoop's FileSystem. Both
    must name a file alike (its URI names its events file, its display path is what findings cite), also
    through a symbolic link and with a space, a percent sign and a non-ASCII letter in the path."""
    odd = tmp_path / "a b%20c" / "ü"
    odd.mkdir(parents=True)
    (odd / "server.log").write_bytes(text(BROKER_CHANGE_22))
    (tmp_path / "link").symlink_to(tmp_path / "a b%20c")
    for plain, glob in (
        (str(tmp_path / "a b%20c"), str(tmp_path / "a b%20c*")),
        (str(tmp_path / "link"), str(tmp_path / "lin?")),
        (str(odd / "server.log"), str(odd / "server.lo[g]")),
    ):
        assert discover(None, [plain]) == discover(spark, [glob]) != []
