"""The differential check of the replay in the driver (``jobs/replay_driver.py``) against its oracle, the Spark
replay job: the driver replays a copy of a Spark run's ``events`` with the same options, and every output
must be the Spark run's.

- tables, read with pyarrow: the same column names and types (as Spark reads them back: every column
  nullable) and the same rows with the same values, in the order the job writes them - each of the job's
  part files is in its sortWithinPartitions order, and the driver's one file holds those rows in that
  order (controllers, brokers and impact_totals are one file in both: compared as written);
- with a Spark session, the schemas Spark infers when it reads both directories;
- ``findings.jsonl`` and ``story.json`` byte for byte, ``replay_summary.json`` byte for byte but for the
  output directory it names.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Optional

import pyarrow as pa
import pyarrow.parquet as pq

from kafka_forensics.core.tables import (
    BROKERS,
    CONTROLLERS,
    EVENTS,
    FINDINGS,
    IMPACT_TOTALS,
    REPLAY_TABLES,
)
from kafka_forensics.jobs.replay_driver import FINDINGS_JSONL, SUMMARY_JSON, TABLE_ORDER, replay_in_driver
from kafka_forensics.jobs.replay_options import ReplayOptions, ReplaySummary
from kafka_forensics.replay.findings import findings_order_key
from kafka_forensics.replay.story import STORY_JSON

AS_WRITTEN = (CONTROLLERS, BROKERS, IMPACT_TOTALS)  # one task writes each, in this order: compared as is


def part_files(table_dir: Path) -> list[Path]:
    return sorted(p for p in table_dir.iterdir() if p.name.startswith("part-") and p.suffix == ".parquet")


def _nullable(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_nullable(True) for f in schema.remove_metadata()])


def _sort_key(name: str):
    if name == FINDINGS:
        return findings_order_key
    columns = TABLE_ORDER[name]
    return lambda r: tuple(x for c in columns for x in (r[c] is not None, 0 if r[c] is None else r[c]))


def _rows_in_written_order(name: str, table_dir: Path) -> tuple[pa.Schema, list[dict]]:
    """The table's schema and rows; for a table written by several tasks, each file must already be in the
    job's order, and the rows of all of them are merged in it."""
    files = part_files(table_dir)
    assert files, f"{table_dir}: no part file"
    tables = [pq.read_table(f) for f in files]
    rows = [r for t in tables for r in t.to_pylist()]
    if name in AS_WRITTEN:
        assert len(files) == 1, f"{table_dir}: {len(files)} files"
    else:
        key = _sort_key(name)
        for f, t in zip(files, tables):
            own = t.to_pylist()
            assert own == sorted(own, key=key), f"{f}: not in the job's order"
        rows = sorted(rows, key=key)
    return tables[0].schema, rows


def run_driver(spark_out: Path, driver_out: Path, options: ReplayOptions) -> ReplaySummary:
    """The driver's replay of ``spark_out``'s events, written under ``driver_out``."""
    driver_out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(spark_out / EVENTS, driver_out / EVENTS)
    return replay_in_driver(str(driver_out), options)


def assert_same_outputs(spark_out: Path, driver_out: Path, spark=None) -> None:
    """Every output of the Spark replay under ``spark_out`` equals the driver's under ``driver_out``."""
    for name in REPLAY_TABLES:
        job_schema, job_rows = _rows_in_written_order(name, spark_out / name)
        [driver_file] = part_files(driver_out / name)
        driver = pq.read_table(driver_file)
        assert _nullable(driver.schema) == _nullable(job_schema), name
        assert driver.to_pylist() == job_rows, name
        if spark is not None:
            assert spark.read.parquet(str(driver_out / name)).schema == spark.read.parquet(str(spark_out / name)).schema
    for name in (FINDINGS_JSONL, STORY_JSON):
        assert (driver_out / name).read_bytes() == (spark_out / name).read_bytes(), name
    job_summary = (spark_out / SUMMARY_JSON).read_text("utf-8")
    driver_summary = (driver_out / SUMMARY_JSON).read_text("utf-8")
    assert driver_summary == job_summary.replace(f'"out_dir": "{spark_out}"', f'"out_dir": "{driver_out}"')


def assert_driver_equals_job(spark_out: Path, tmp: Path, options: ReplayOptions, spark=None) -> Optional[ReplaySummary]:
    """Replay ``spark_out``'s events in the driver under ``tmp`` and hold every output equal to the job's."""
    driver_out = tmp / f"driver-{spark_out.name}"
    summary = run_driver(spark_out, driver_out, options)
    assert_same_outputs(spark_out, driver_out, spark)
    return summary
