"""The Spark parse job: log files → ``events/``, ``quarantine/`` and ``files/`` Parquet tables.

Each file is read whole by Spark's binaryFile source (any Hadoop filesystem; gzip is detected by
its magic bytes, not its name) and parsed in a Python worker by ``parsers.records.parse_file``,
with the parser built once per worker. Rows come back as Arrow batches (``mapInArrow``) in the
events schema plus a ``row_kind`` column (quarantine and per-file rows are encoded in the same
columns), and are written **once**, partitioned by ``row_kind``, into a staging directory. The
event partition is then moved into place as ``events/``; the small quarantine and file partitions
are reshaped into their own tables. Parsing happens once, the big table is written once, and only
per-file and per-type counts reach the driver.

On one machine with a local DIR, the workers write the events themselves with pyarrow
(``events_writer.py``: Spark's row conversion and Parquet writer cost more than the parsing), and
only quarantine and per-file rows take the path above.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass, field

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from kafka_forensics.core.errors import InputError, JobError, KafkaForensicsError
from kafka_forensics.core.tables import EVENT_COLUMNS, EVENTS, EVENTS_SCHEMA, FILES, PARSE_TABLES
from kafka_forensics.core.tables import QUARANTINE as QUARANTINE_TABLE
from kafka_forensics.parsers.gc_pause import cyclic_gc_paused
from kafka_forensics.parsers.records import ParseOptions, parse_file

from .discovery import InputFile, discover
from .events_writer import finish, local_events_dir, write_events
from .fs import absolute, delete_path, path_exists, rename_path, write_text
from .spark_errors import short_error
from .stored_tables import read_table

ROW_KIND = "row_kind"
MAX_LENGTH_CONF = "spark.sql.sources.binaryFile.maxLength"
EVENT, QUARANTINE, FILE = "event", "quarantine", "file"
BATCH_ROWS = 8192
UNIFIED_SCHEMA = pa.schema([f.with_nullable(True) for f in EVENTS_SCHEMA] + [pa.field(ROW_KIND, pa.string())])
_FILE_COUNTS = ("lines_read", "records", "continuation_lines", "quarantined", "out_of_order")


def _event_batches(rows: list[list], kind: str | None = EVENT):
    """Rows (lists in EVENT_COLUMNS order) → Arrow batches, one zip per batch; with a ``kind``,
    in UNIFIED_SCHEMA (for Spark), else in EVENTS_SCHEMA (for events_writer)."""
    for start in range(0, len(rows), BATCH_ROWS):
        chunk = rows[start : start + BATCH_ROWS]
        columns = list(zip(*chunk))
        arrays = [pa.array(col, f.type) for col, f in zip(columns, EVENTS_SCHEMA)]
        if kind is None:
            yield pa.RecordBatch.from_arrays(arrays, schema=EVENTS_SCHEMA)
            continue
        arrays.append(pa.array([kind] * len(chunk), pa.string()))
        yield pa.RecordBatch.from_arrays(arrays, schema=UNIFIED_SCHEMA)


def _as_event_row(values: dict) -> list:
    return [values.get(name) for name in EVENT_COLUMNS]


def _quarantine_rows(rows: list[dict]) -> list[list]:
    return [
        _as_event_row(
            {
                "source_file": q["source_file"],
                "line_no": q["line_no"],
                "broker": q["broker"],
                "message": q["raw"],
                "attrs": {"reason": q["reason"]},
                "event_type": QUARANTINE,
                "n_continuation": 0,
            }
        )
        for q in rows
    ]


def _file_row(summary: dict) -> list:
    attrs = {k: str(summary[k]) for k in _FILE_COUNTS}
    attrs["compressed"] = "true" if summary["compressed"] else "false"
    if summary["read_error"]:
        attrs["read_error"] = summary["read_error"]
    return _as_event_row(
        {
            "source_file": summary["source_file"],
            "line_no": 0,
            "dialect": summary["dialect"],
            "attrs": attrs,
            "event_type": FILE,
            "n_continuation": 0,
        }
    )


def parse_arrow_batches(batches, options: ParseOptions, displays: dict[str, str], events_dir: str | None = None):
    """mapInArrow body: (path, content) rows → event, quarantine and file rows.

    With ``events_dir`` (a local directory, see events_writer.py) the events are written there by
    this worker and only the quarantine and file rows are returned."""
    for batch in batches:
        paths = batch.column("path").to_pylist()
        contents = batch.column("content")
        for i, uri in enumerate(paths):
            data = contents[i].as_py() or b""
            result = parse_file(data, displays.get(uri, uri), options)
            if events_dir is None:
                yield from _event_batches(result.rows, EVENT)
            else:
                with cyclic_gc_paused():  # the batches are built from every row of the file at once
                    write_events(list(_event_batches(result.rows, None)), events_dir, uri)
            yield from _event_batches(_quarantine_rows(result.quarantine), QUARANTINE)
            yield from _event_batches([_file_row(result.summary)], FILE)


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


def parse_to_frames(
    spark: SparkSession, files: list[InputFile], options: ParseOptions, events_dir: str | None = None
) -> DataFrame:
    """The parsed rows of all files, not yet split (lazy: each action parses again). With
    ``events_dir``, events go straight to that local directory and the frame holds the rest."""
    displays = {f.uri: f.display for f in files}
    raw = spark.read.format("binaryFile").load([f.uri for f in files]).select("path", "content")
    return raw.mapInArrow(
        lambda it: parse_arrow_batches(it, options, displays, events_dir), from_arrow_schema(UNIFIED_SCHEMA)
    )


def events_of(unified: DataFrame) -> DataFrame:
    return unified.filter(F.col(ROW_KIND) == EVENT).select(*EVENT_COLUMNS)


def quarantine_of(unified_or_staged: DataFrame) -> DataFrame:
    return unified_or_staged.select(
        "source_file", "line_no", "broker", F.col("message").alias("raw"), F.col("attrs")["reason"].alias("reason")
    )


def files_of(unified_or_staged: DataFrame) -> DataFrame:
    columns = [F.col("source_file")]
    columns += [F.col("attrs")[k].cast("long").alias(k) for k in _FILE_COUNTS]
    columns += [
        F.col("dialect"),
        (F.col("attrs")["compressed"] == "true").alias("compressed"),
        F.col("attrs")["read_error"].alias("read_error"),
    ]
    return unified_or_staged.select(*columns)


def _staged(spark: SparkSession, staging: str, kind: str) -> DataFrame:
    """One partition of the staging table (empty, with the right schema, if no row had that kind)."""
    path = f"{staging}/{ROW_KIND}={kind}"
    if path_exists(spark, path):
        return spark.read.schema(from_arrow_schema(pa.schema(list(EVENTS_SCHEMA)))).parquet(path)
    return spark.createDataFrame([], from_arrow_schema(pa.schema(list(EVENTS_SCHEMA))))


def run_parse(spark: SparkSession, inputs: list[str], out_dir: str, options: ParseOptions) -> ParseSummary:
    out_dir = absolute(out_dir)
    files = discover(spark, inputs)
    _check_sizes(spark, files)
    staging = f"{out_dir}/_staging"
    try:
        staging_events = f"{out_dir}/_staging_events"
        direct = local_events_dir(spark, staging_events)
        if direct is not None:
            shutil.rmtree(direct, ignore_errors=True)
        # One pass: parse and write every row once. Rows leave each task in file and line order
        # (a file is parsed start to end in one task) and concurrent writers keep that order.
        (
            parse_to_frames(spark, files, options, direct)
            .write.mode("overwrite")
            .option("maxRecordsPerFile", 0)
            .partitionBy(ROW_KIND)
            .parquet(staging)
        )
        for table in PARSE_TABLES:
            delete_path(spark, f"{out_dir}/{table}")
        events_path = f"{staging}/{ROW_KIND}={EVENT}" if direct is None else staging_events
        if path_exists(spark, events_path) if direct is None else finish(direct):
            rename_path(spark, events_path, f"{out_dir}/events")
        else:
            spark.createDataFrame([], from_arrow_schema(EVENTS_SCHEMA)).write.parquet(f"{out_dir}/events")
        quarantine_of(_staged(spark, staging, QUARANTINE)).coalesce(1).write.parquet(f"{out_dir}/quarantine")
        files_of(_staged(spark, staging, FILE)).coalesce(1).write.parquet(f"{out_dir}/files")
        delete_path(spark, staging)
        if direct is not None:
            shutil.rmtree(direct, ignore_errors=True)  # left only when no file had events
        summary = summarize(spark, out_dir)
    except KafkaForensicsError:
        raise
    except Exception as err:
        raise JobError(f"parse job failed: {short_error(err)}") from err
    write_text(spark, f"{out_dir}/parse_summary.json", summary.to_json())
    if summary.records == 0:
        raise InputError(
            f"no recognisable Kafka log lines in {len(files)} file(s) "
            f"({summary.quarantined} line(s) quarantined; see {out_dir}/quarantine)"
        )
    return summary


def _check_sizes(spark: SparkSession, files: list[InputFile]) -> None:
    """A file is read whole (binaryFile): one over the reader's limit (2 GiB by default) would fail
    deep inside a task with a Java stack trace; say so up front, with what to do."""
    limit = int(spark.conf.get(MAX_LENGTH_CONF, str(2**31 - 1)))
    too_big = [f for f in files if f.size > limit]
    if too_big:
        first = too_big[0]
        name = first.display.rsplit("/", 1)[-1]
        more = f" (and {len(too_big) - 1} more)" if len(too_big) > 1 else ""
        raise InputError(
            f"{first.display} is {_human(first.size)}{more}; each log file is read whole and Spark's "
            f"binaryFile reader takes at most {_human(limit)} ({MAX_LENGTH_CONF}): split it at line "
            f"boundaries first, e.g. split -C 512M -d {name} {name}.part- "
            f"(findings then cite the parts' line numbers)"
        )


def _human(size: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20)):
        if size >= scale:
            return f"{size / scale:.2f} {unit}"
    return f"{size:,} bytes"


def summarize(spark: SparkSession, out_dir: str) -> ParseSummary:
    """Counts from the written tables (column reads), checked against the readers' own counts."""
    summary = ParseSummary(out_dir=out_dir)
    for row in read_table(spark, out_dir, FILES).orderBy("source_file").collect():  # one row per file
        entry = row.asDict()
        summary.files.append(entry)
        summary.lines_read += entry["lines_read"]
        if entry["read_error"]:
            summary.read_errors.append(f"{entry['source_file']}: {entry['read_error']}")
    events = read_table(spark, out_dir, EVENTS)
    counted = events.agg(
        F.count(F.lit(1)).alias("n"),
        F.sum("n_continuation").alias("c"),
        F.sum(F.col("ts_out_of_order").cast("int")).alias("o"),
    ).first()
    summary.records = int(counted["n"] or 0)
    summary.continuation_lines = int(counted["c"] or 0)
    summary.out_of_order = int(counted["o"] or 0)
    quarantine = read_table(spark, out_dir, QUARANTINE_TABLE)
    summary.quarantined = quarantine.count()
    summary.by_event_type = {r[0]: r[1] for r in events.groupBy("event_type").count().orderBy("event_type").collect()}
    summary.by_dialect = {r[0]: r[1] for r in events.groupBy("dialect").count().orderBy("dialect").collect()}
    summary.quarantine_reasons = {
        r[0]: r[1] for r in quarantine.groupBy("reason").count().orderBy(F.desc("count"), "reason").limit(20).collect()
    }
    return summary
