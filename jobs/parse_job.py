"""The Spark parse job: log files → ``events/``, ``quarantine/`` and ``files/`` Parquet tables.

Each file is read whole by Spark's binaryFile source (any Hadoop filesystem; gzip is detected by
its magic bytes, not its name) and parsed in a Python worker by ``parsers.records.parse_file``,
with the parser built once per worker. Rows come back as Arrow batches (``mapInArrow``), are
persisted once, and split into the three tables. Only per-file and per-type counts reach the driver.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from kafka_forensics.parsers.errors import InputError, JobError
from kafka_forensics.parsers.records import ParseOptions, parse_file
from kafka_forensics.parsers.schema import EVENT_COLUMNS, EVENTS_SCHEMA, FILE_SCHEMA, QUARANTINE_COLUMNS, QUARANTINE_SCHEMA

from .discovery import InputFile, discover
from .fs import write_text

ROW_KIND = "row_kind"
BATCH_ROWS = 8192


def _unified_schema() -> pa.Schema:
    """row_kind, then the event columns in order, then the quarantine and file extras."""
    fields = [pa.field(ROW_KIND, pa.string())]
    seen = {ROW_KIND}
    for schema in (EVENTS_SCHEMA, QUARANTINE_SCHEMA, FILE_SCHEMA):
        for f in schema:
            if f.name not in seen:
                seen.add(f.name)
                fields.append(f.with_nullable(True))
    return pa.schema(fields)


UNIFIED_SCHEMA = _unified_schema()
_EXTRA_FIELDS = [f for f in UNIFIED_SCHEMA if f.name != ROW_KIND and f.name not in EVENTS_SCHEMA.names]


def _event_batches(rows: list[list]):
    """Event rows (lists in EVENT_COLUMNS order) → Arrow batches, one zip per batch."""
    for start in range(0, len(rows), BATCH_ROWS):
        chunk = rows[start : start + BATCH_ROWS]
        n = len(chunk)
        columns = list(zip(*chunk))
        arrays = [pa.array(["event"] * n, pa.string())]
        arrays += [pa.array(col, f.type) for col, f in zip(columns, EVENTS_SCHEMA)]
        arrays += [pa.nulls(n, f.type) for f in _EXTRA_FIELDS]
        yield pa.RecordBatch.from_arrays(arrays, schema=UNIFIED_SCHEMA)


def _dict_batches(rows: list[dict], kind: str):
    for start in range(0, len(rows), BATCH_ROWS):
        chunk = rows[start : start + BATCH_ROWS]
        for row in chunk:
            row[ROW_KIND] = kind
        yield pa.RecordBatch.from_pylist(chunk, schema=UNIFIED_SCHEMA)


def parse_arrow_batches(batches, options: ParseOptions, displays: dict[str, str]):
    """mapInArrow body: (path, content) rows → unified rows (events, quarantine, one file row)."""
    for batch in batches:
        paths = batch.column("path").to_pylist()
        contents = batch.column("content")
        for i, uri in enumerate(paths):
            data = contents[i].as_py() or b""
            result = parse_file(data, displays.get(uri, uri), options)
            yield from _event_batches(result.rows)
            yield from _dict_batches(result.quarantine, "quarantine")
            yield from _dict_batches([result.summary], "file")


@dataclass
class ParseSummary:
    """What the CLI prints and ``parse_summary.json`` records (small: grows with files, not lines)."""

    out_dir: str
    files: list[dict] = field(default_factory=list)
    lines_read: int = 0
    records: int = 0
    continuation_lines: int = 0
    quarantined: int = 0
    out_of_order: int = 0
    by_event_type: dict[str, int] = field(default_factory=dict)
    by_dialect: dict[str, int] = field(default_factory=dict)
    quarantine_reasons: dict[str, int] = field(default_factory=dict)
    read_errors: list[str] = field(default_factory=list)

    @property
    def reconciled(self) -> bool:
        return self.lines_read == self.records + self.continuation_lines + self.quarantined

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "reconciled": self.reconciled}, indent=2, sort_keys=True)


def parse_to_frames(spark: SparkSession, files: list[InputFile], options: ParseOptions) -> DataFrame:
    """The persisted unified frame (callers select the three tables from it)."""
    displays = {f.uri: f.display for f in files}
    raw = spark.read.format("binaryFile").load([f.uri for f in files]).select("path", "content")
    schema = from_arrow_schema(UNIFIED_SCHEMA)
    parsed = raw.mapInArrow(lambda it: parse_arrow_batches(it, options, displays), schema)
    return parsed.persist(StorageLevel.MEMORY_AND_DISK)


def events_of(unified: DataFrame) -> DataFrame:
    return unified.filter(F.col(ROW_KIND) == "event").select(*EVENT_COLUMNS)


def quarantine_of(unified: DataFrame) -> DataFrame:
    return unified.filter(F.col(ROW_KIND) == "quarantine").select(*QUARANTINE_COLUMNS)


def files_of(unified: DataFrame) -> DataFrame:
    return unified.filter(F.col(ROW_KIND) == "file").select(*FILE_SCHEMA.names)


def run_parse(spark: SparkSession, inputs: list[str], out_dir: str, options: ParseOptions) -> ParseSummary:
    files = discover(spark, inputs)
    unified = parse_to_frames(spark, files, options)
    try:
        # Rows leave each task in file and line order (one file is parsed start to end in one
        # task), so no sort is needed for deterministic output.
        events = events_of(unified)
        quarantine = quarantine_of(unified)
        events.write.mode("overwrite").parquet(f"{out_dir}/events")
        quarantine.write.mode("overwrite").parquet(f"{out_dir}/quarantine")
        files_of(unified).coalesce(1).write.mode("overwrite").parquet(f"{out_dir}/files")
        summary = summarize(unified, out_dir)
    except Exception as err:
        raise JobError(f"parse job failed: {_short(err)}") from err
    finally:
        unified.unpersist()
    write_text(spark, f"{out_dir}/parse_summary.json", summary.to_json())
    if summary.records == 0:
        raise InputError(
            f"no recognisable Kafka log lines in {len(files)} file(s) "
            f"({summary.quarantined} line(s) quarantined; see {out_dir}/quarantine)"
        )
    return summary


def summarize(unified: DataFrame, out_dir: str) -> ParseSummary:
    summary = ParseSummary(out_dir=out_dir)
    for row in files_of(unified).orderBy("source_file").collect():  # one row per file
        entry = row.asDict()
        summary.files.append(entry)
        summary.lines_read += entry["lines_read"]
        if entry["read_error"]:
            summary.read_errors.append(f"{entry['source_file']}: {entry['read_error']}")
    events = events_of(unified)
    counted = events.agg(F.count(F.lit(1)).alias("n"), F.sum("n_continuation").alias("c"),
                         F.sum(F.col("ts_out_of_order").cast("int")).alias("o")).first()
    summary.records = int(counted["n"] or 0)
    summary.continuation_lines = int(counted["c"] or 0)
    summary.out_of_order = int(counted["o"] or 0)
    quarantine = quarantine_of(unified)
    summary.quarantined = quarantine.count()
    summary.by_event_type = {r[0]: r[1] for r in events.groupBy("event_type").count().orderBy("event_type").collect()}
    summary.by_dialect = {r[0]: r[1] for r in events.groupBy("dialect").count().orderBy("dialect").collect()}
    summary.quarantine_reasons = {
        r[0]: r[1] for r in quarantine.groupBy("reason").count().orderBy(F.desc("count"), "reason").limit(20).collect()
    }
    return summary


def _short(err: Exception) -> str:
    text = str(err).strip().splitlines()
    return text[0][:500] if text else type(err).__name__
