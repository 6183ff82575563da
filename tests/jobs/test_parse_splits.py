"""Large files parsed in byte-range splits (jobs/local_splits.py) give the tables whole files give.

Three files that splits can get wrong: all real logs one after another in one file (stack traces,
messages over several lines and unreadable lines at split edges; time jumping back at every file
boundary, so later splits must learn of earlier splits' latest timestamp), a busy generated log
whose path names no broker while its lines name one (the owner must reach the rows of every split),
and the real logs as docker compose prints them (a split starts at a record only after a prefix).
Each is parsed with the default split size (one split per file here), with a split size that cuts
it in dozens of splits, and read whole by Spark's binaryFile reader.
"""

from __future__ import annotations

import sys

import pytest
from pyspark.sql import functions as F

from kafka_forensics.core.tables import EVENT_COLUMNS
from kafka_forensics.jobs.events_writer import WRITER_CONF
from kafka_forensics.jobs.local_splits import SPLIT_CONF
from kafka_forensics.jobs.parse_job import READER_CONF, run_parse
from kafka_forensics.parsers.records import ParseOptions
from tests.support.paths import REPO

sys.path.insert(0, str(REPO / "bench"))
from generate import generate_lines


def _table(spark, path: str):
    frame = spark.read.parquet(path)
    return frame.select(*[F.to_json(c).alias(c) if c == "attrs" else F.col(c) for c in frame.columns])


def _same(spark, a: str, b: str) -> None:
    for table in ("events", "quarantine", "files"):
        ours, theirs = _table(spark, f"{a}/{table}"), _table(spark, f"{b}/{table}")
        assert ours.count() == theirs.count(), table
        assert ours.exceptAll(theirs).count() == 0 and theirs.exceptAll(ours).count() == 0, table


@pytest.mark.spark
def test_splits_give_the_tables_of_whole_files(spark, tmp_path, real_log_files):
    logs = tmp_path / "logs"
    (logs / "all").mkdir(parents=True)
    (logs / "all" / "controller.log").write_bytes(b"".join(p.read_bytes() for p in real_log_files))
    (logs / "one").mkdir()
    lines = []
    for n, line in enumerate(generate_lines(10_000)):
        lines.append(line)
        if n % 250 == 0 and line.startswith("[2"):  # now and then a line that names no broker
            lines.append(
                line[: line.index("]") + 1]
                + " INFO Awaiting socket connections on 0.0.0.0:9092. (kafka.network.Acceptor)"
            )
    (logs / "one" / "state-change.log").write_bytes(("\n".join(lines) + "\n").encode())
    (logs / "compose").mkdir()  # as docker compose logs prints them: records only after a service prefix
    compose = b"".join(b"kafka-1  | " + line for p in real_log_files for line in p.read_bytes().splitlines(True))
    (logs / "compose" / "server.log").write_bytes(compose)
    inputs = [str(logs)]
    whole = run_parse(spark, inputs, str(tmp_path / "whole"), ParseOptions())
    spark.conf.set(SPLIT_CONF, str(32 << 10))
    try:
        split = run_parse(spark, inputs, str(tmp_path / "split"), ParseOptions())
        events = list((tmp_path / "split" / "events").glob("part-*.parquet"))
        assert len(events) > 40  # the files were really cut in splits
        spark.conf.set(READER_CONF, "spark")
        spark.conf.set(WRITER_CONF, "spark")
        by_spark = run_parse(spark, inputs, str(tmp_path / "spark"), ParseOptions())
    finally:
        for conf in (SPLIT_CONF, READER_CONF, WRITER_CONF):
            spark.conf.unset(conf)
    assert split.reconciled and whole.reconciled
    assert split.out_of_order == whole.out_of_order > 0
    for summary in (split, by_spark):
        assert summary.to_json().replace("/split", "/X").replace("/spark", "/X") == whole.to_json().replace(
            "/whole", "/X"
        )
    _same(spark, str(tmp_path / "split"), str(tmp_path / "whole"))
    _same(spark, str(tmp_path / "spark"), str(tmp_path / "whole"))
    compose_parts = (
        spark.read.parquet(str(tmp_path / "split" / "events"))
        .filter(F.col("source_file").endswith("compose/server.log"))
        .select(F.input_file_name())
        .distinct()
    )
    assert compose_parts.count() > 4  # the prefixed file was cut in splits too (before: one, the whole file)
    owned = spark.read.parquet(str(tmp_path / "split" / "events")).filter(
        F.col("source_file").endswith("one/state-change.log")
    )
    assert owned.filter(F.col("broker").isNull()).count() == 0
    assert owned.filter(F.col("broker_source") == "file").count() > 0
    assert tuple(spark.read.parquet(str(tmp_path / "split" / "events")).columns) == EVENT_COLUMNS
