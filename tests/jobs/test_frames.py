"""The engine seam (jobs/frames.py) on DuckDB through SQLFrame, in this process without a JVM: which engine a
session is, the stored tables read with their schema, the small files, the two Spark-only calls; and
``severity_rank`` on both engines. The report's equality with Spark is tested where a fixture already wrote
an output (tests/support/engines.py)."""

from __future__ import annotations

from datetime import datetime

import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as spark_functions

from kafka_forensics.core.errors import InputError
from kafka_forensics.core.tables import EVENTS, FILES, FINDINGS, SCHEMAS
from kafka_forensics.jobs import frames
from kafka_forensics.jobs.parse_driver import parse_in_driver
from kafka_forensics.jobs.replay_job import collect_arrow, severity_rank
from kafka_forensics.jobs.stored_tables import stored_schema
from kafka_forensics.parsers.records import ParseOptions
from kafka_forensics.replay.findings import SEVERITIES
from kafka_forensics.reports.model import Count
from tests.support.engines import differences
from tests.support.paths import SAMPLES

INCIDENT = SAMPLES / "kafka-2.4-controller-failover"


@pytest.fixture(scope="module")
def duck():
    return frames.duckdb_session()


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    """The sample incident's tables as the driver parse writes them for a short run (no JVM)."""
    out = tmp_path_factory.mktemp("frames") / "out"
    parse_in_driver([str(INCIDENT)], str(out), ParseOptions())
    return out


def test_a_session_or_frame_names_its_engine(duck):
    frame = duck.createDataFrame([(1,)], "n int")
    assert frames.on_duckdb(duck) and frames.on_duckdb(frame)
    assert frames.functions_of(frame).__name__ == "sqlframe.duckdb.functions"
    assert frames.window_of(duck).__module__.startswith("sqlframe.")
    assert not frames.on_duckdb(object())  # anything else is Spark's (no SQLFrame import on that path)
    assert frames.functions_of(object()) is spark_functions


def test_every_stored_schema_has_its_sqlframe_twin():
    for name in SCHEMAS:
        spark_type = stored_schema(name)
        twin = frames.sqlframe_schema(spark_type)
        assert twin.simpleString().replace(", ", ",") == spark_type.simpleString(), name
        assert [f.nullable for f in twin.fields] == [f.nullable for f in spark_type.fields], name


@pytest.mark.parametrize("name", [EVENTS, FILES])
def test_a_stored_table_reads_back_as_written(duck, parsed, name):
    """Every column with its stored name and type, maps, arrays and UTC-aware timestamps included."""
    frame = frames.read_table(duck, str(parsed), name)
    assert frame.columns == stored_schema(name).fieldNames()
    key = ["source_file", "line_no"] if name == EVENTS else ["source_file"]
    got = collect_arrow(frame.orderBy(*key))
    written = sorted(pq.read_table(parsed / name).to_pylist(), key=lambda r: tuple(r[k] for k in key))
    assert len(got) == len(written) > 0
    assert differences(written, got) == []
    stamps = [r["ts"] for r in got if name == EVENTS and r["ts"] is not None]
    assert all(isinstance(t, datetime) and t.utcoffset().total_seconds() == 0 for t in stamps)


def test_a_table_without_parts_is_empty_and_a_missing_one_an_input_error(duck, tmp_path):
    (tmp_path / FINDINGS).mkdir()
    empty = frames.read_table(duck, str(tmp_path), FINDINGS)
    assert empty.columns == stored_schema(FINDINGS).fieldNames() and empty.count() == 0
    with pytest.raises(InputError, match="no such table"):
        frames.read_table(duck, str(tmp_path), EVENTS)


def test_small_files_and_paths_are_local(duck, tmp_path):
    verdict = tmp_path / "verdict.json"
    verdict.write_text('{"passed": true, "note": "é"}', "utf-8")
    for path in (str(verdict), f"file://{verdict}"):
        assert frames.path_exists(duck, path)
        assert frames.read_text(duck, path) == '{"passed": true, "note": "é"}'
    assert not frames.path_exists(duck, str(tmp_path / "story.json"))
    frames.write_text(duck, f"file://{tmp_path}/report.html", "<p>é</p>")
    assert (tmp_path / "report.html").read_text("utf-8") == "<p>é</p>"
    for remote in (frames.path_exists, frames.read_text):
        with pytest.raises(InputError, match="local paths only"):
            remote(duck, "hdfs://namenode/out/verdict.json")
    with pytest.raises(InputError, match="local paths only"):
        frames.write_text(duck, "s3a://bucket/report.html", "")


def test_the_join_hint_and_the_cache_release_do_nothing_on_duckdb(duck):
    frame = duck.createDataFrame([(1,)], "n int")
    assert frames.broadcast(frame) is frame
    cached = frame.cache()
    frames.unpersist(cached)
    assert collect_arrow(cached) == [{"n": 1}]


def _ranks(session) -> list[tuple]:
    F = frames.functions_of(session)
    rows = [(s,) for s in ("info", "not-a-severity", None, "critical", "warning", "error")]
    frame = session.createDataFrame(rows, "severity string")
    ordered = frame.select("severity", severity_rank(F).alias("rank"))
    return [
        (r["severity"], r["rank"])
        for r in collect_arrow(ordered.orderBy(severity_rank(F).asc(), F.col("severity").asc_nulls_first()))
    ]


EXPECTED_RANKS = [*((s, i) for i, s in enumerate(SEVERITIES, start=1)), (None, 99), ("not-a-severity", 99)]


def test_severity_rank_puts_unknown_and_null_severities_last_on_duckdb(duck):
    assert _ranks(duck) == EXPECTED_RANKS


@pytest.mark.spark
def test_severity_rank_puts_unknown_and_null_severities_last_on_spark(spark):
    assert _ranks(spark) == EXPECTED_RANKS


def test_the_differ_names_every_difference():
    assert differences([Count("a", 1)], [Count("a", 1)]) == []
    assert differences([Count("a", 1)], [Count("a", 2)]) == ["[0].count: 1 (Spark) vs 2 (DuckDB)"]
    assert differences({"x": 1, "y": 2}, {"y": 2, "x": 1}) == [": key order ['x', 'y'] (Spark) vs ['y', 'x'] (DuckDB)"]
    assert differences((1,), [1]) == [": tuple vs list"]
    assert differences(1, 1.0) == [": 1 (int, Spark) vs 1.0 (float, DuckDB)"]
    aware, naive = datetime.fromisoformat("2020-01-01T00:00:00+00:00"), datetime(2020, 1, 1)
    assert differences(aware, naive)[0].endswith("one has no time zone")
