"""The Spark parse job: log files → ``events/``, ``quarantine/`` and ``files/`` Parquet tables.

Each file is parsed in a Python worker by the columnar parser (``parsers.columnar``: the same rows
as ``parsers.records.parse_file``, column-wise), with its plan built once per worker. Rows come
back as Arrow batches (``mapInArrow``) in the events schema plus a ``row_kind`` column (quarantine
and per-file rows are encoded in the same columns), and are written **once**, partitioned by
``row_kind``, into a staging directory. The event partition is then moved into place as
``events/``; the small quarantine and file partitions are reshaped into their own tables. Parsing
happens once, the big table is written once, and only per-file and per-type counts reach the driver.

Who reads the files: on a local master with local inputs, the workers themselves
(``local_splits.py``; large files in byte-range splits when the workers also write the events);
otherwise (a cluster, ``hdfs://``, ``s3a://``, or ``--conf spark.kafka_forensics.reader=spark``)
Spark's binaryFile source, whole files of at most 2 GiB.

On one machine with a local DIR, the workers write the events themselves with pyarrow
(``events_writer.py``: Spark's row conversion and Parquet writer cost more than the parsing), and
only quarantine and per-file rows take the path above.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass, field
from typing import Optional

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from kafka_forensics.core.errors import InputError, JobError, KafkaForensicsError, UsageError
from kafka_forensics.core.tables import EVENT_COLUMNS, EVENTS, EVENTS_SCHEMA, FILE_COUNTS, FILES, PARSE_TABLES
from kafka_forensics.core.tables import QUARANTINE as QUARANTINE_TABLE
from kafka_forensics.parsers.columnar import SplitResult, parse_file_columnar
from kafka_forensics.parsers.records import ParseOptions

from .discovery import InputFile, discover
from .events_writer import STORED_SCHEMA, finish, local_events_dir, part_name, write_events
from .fs import absolute, delete_path, path_exists, rename_path, write_text
from .local_splits import SPLIT_BYTES, SPLIT_CONF, Split, SplitFacts, parse_split, plan_splits, settle
from .local_splits import part_name as split_part
from .spark_errors import short_error
from .stored_tables import read_table

ROW_KIND = "row_kind"
MAX_LENGTH_CONF = "spark.sql.sources.binaryFile.maxLength"
READER_CONF = "spark.kafka_forensics.reader"  # auto (default: workers read local files) | spark
EVENT, QUARANTINE, FILE = "event", "quarantine", "file"
BATCH_ROWS = 8192
UNIFIED_SCHEMA = pa.schema([f.with_nullable(True) for f in EVENTS_SCHEMA] + [pa.field(ROW_KIND, pa.string())])


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


def _file_row(summary: dict, split_attrs: dict | None = None) -> list:
    attrs = {k: str(summary[k]) for k in FILE_COUNTS}
    attrs.update(split_attrs or {})
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


def _table_batches(events: pa.Table, kind: str | None = EVENT):
    """An events table as Arrow batches: in UNIFIED_SCHEMA with a ``kind`` (for Spark), else as it is."""
    for batch in events.to_batches(max_chunksize=BATCH_ROWS):
        if kind is None:
            yield batch
            continue
        arrays = [*batch.columns, pa.array([kind] * batch.num_rows, pa.string())]
        yield pa.RecordBatch.from_arrays(arrays, schema=UNIFIED_SCHEMA)


def _result_batches(result: SplitResult, events_dir: str | None, uri: str, part: str, split_attrs: dict | None = None):
    """One file's (or split's) rows for Spark; with ``events_dir`` the events are written there
    by this worker (``part``: its events file) and only the quarantine and file rows go on."""
    if events_dir is None:
        yield from _table_batches(result.events, EVENT)
    else:
        write_events(result.events.to_batches(), events_dir, uri, part)
    yield from _event_batches(_quarantine_rows(result.quarantine), QUARANTINE)
    yield from _event_batches([_file_row(result.summary, split_attrs)], FILE)


def parse_arrow_batches(batches, options: ParseOptions, displays: dict[str, str], events_dir: str | None = None):
    """mapInArrow body: (path, content) rows → event, quarantine and file rows (files read by Spark).

    With ``events_dir`` (a local directory, see events_writer.py) the events are written there by
    this worker and only the quarantine and file rows are returned."""
    for batch in batches:
        paths = batch.column("path").to_pylist()
        contents = batch.column("content")
        for i, uri in enumerate(paths):
            data = contents[i].as_py() or b""
            result = parse_file_columnar(data, displays.get(uri, uri), options)
            yield from _result_batches(result, events_dir, uri, part_name(uri))


def parse_split_batches(batches, splits: list[Split], options: ParseOptions, events_dir: str | None = None):
    """mapInArrow body: split numbers (``spark.range``'s ``id``) → the rows of each split (files read
    by the worker)."""
    for batch in batches:
        for index in batch.column("id").to_pylist():
            split = splits[index]
            result = parse_split(split, options)
            facts = {
                "split_index": str(split.index),
                "split_count": str(split.count),
                "uri": split.uri,
                "owners": ",".join(str(o) for o in result.owners),
                "unowned": str(result.unowned),
            }
            for key in ("first_ts", "max_ts"):
                value = getattr(result, key)
                if value is not None:
                    facts[key] = str(value)
            yield from _result_batches(result, events_dir, split.uri, split_part(split.uri, split.index), facts)


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
    ts_invalid: int = 0  # records kept with ts null (attrs.ts_invalid says why)
    bom_lines: int = 0
    ansi_lines: int = 0
    control_lines: int = 0
    notes: list[str] = field(default_factory=list)  # inputs skipped or read once (discovery)
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
    ``events_dir``, events go straight to that local directory and the frame holds the rest.

    On a local master with local inputs the workers read the files themselves (local_splits.py),
    large ones in splits when they also write the events (``events_dir``): the driver then settles
    what needs the whole file (``settle_splits``). Otherwise Spark reads each file whole."""
    splits = local_splits(spark, files, options, split=events_dir is not None)
    if splits is not None:
        # One task per split, in the splits' order. The descriptions (one per file or split) travel
        # with the function and each task reads its number from spark.range, which the JVM builds:
        # a DataFrame of the descriptions themselves (parallelize + createDataFrame) is converted by
        # Python workers of its own, a second daemon and ~0.5 s of CPU per run (bench/RESULTS.md).
        numbers = spark.range(0, len(splits), 1, len(splits))
        return numbers.mapInArrow(
            lambda it: parse_split_batches(it, splits, options, events_dir), from_arrow_schema(UNIFIED_SCHEMA)
        )
    _check_sizes(spark, files)
    displays = {f.uri: f.display for f in files}
    raw = spark.read.format("binaryFile").load([f.uri for f in files]).select("path", "content")
    return raw.mapInArrow(
        lambda it: parse_arrow_batches(it, options, displays, events_dir), from_arrow_schema(UNIFIED_SCHEMA)
    )


def local_splits(spark: SparkSession, files: list[InputFile], options: ParseOptions, split: bool) -> list[Split] | None:
    """The splits the workers read themselves, or None when Spark must read the files (a cluster,
    or an input that is not a local file)."""
    choice = spark.conf.get(READER_CONF, "auto").strip().lower()
    if choice not in ("auto", "spark"):
        raise UsageError(f"{READER_CONF} must be auto or spark, not {choice!r}")
    if choice == "spark" or not spark.sparkContext.master.startswith("local") or not files:
        return None
    jvm = spark.sparkContext._jvm
    paths = {}
    for f in files:
        uri = jvm.org.apache.hadoop.fs.Path(f.uri).toUri()
        if (uri.getScheme() or "file") != "file":
            return None
        paths[f.uri] = str(uri.getPath())
    split = split and not options.use_lark  # plain Lark (--lark) reads whole files, row by row
    size = int(spark.conf.get(SPLIT_CONF, str(SPLIT_BYTES))) if split else 1 << 62
    # the largest first: the last tasks to start are then the short ones
    return sorted(plan_splits(files, paths, options, size), key=lambda s: -(s.end - s.start))


def settle_splits(spark: SparkSession, staging: str, events_dir: str) -> dict[str, int]:
    """After the parse: the file owner and the out-of-order flags across splits (local_splits.py).
    Returns the out-of-order flags added per file."""
    frame = _staged(spark, staging, FILE).filter(F.col("attrs")["split_count"].cast("int") > 1)
    facts = []
    for row in frame.select("source_file", "attrs").collect():  # one row per split of a large file
        a = row.attrs
        facts.append(
            SplitFacts(
                a["uri"],
                row.source_file,
                int(a["split_index"]),
                int(a["split_count"]),
                tuple(int(o) for o in a["owners"].split(",") if o),
                int(a["unowned"]),
                int(a["first_ts"]) if a.get("first_ts") else None,
                int(a["max_ts"]) if a.get("max_ts") else None,
            )
        )
    return settle(facts, events_dir) if facts else {}


def events_of(unified: DataFrame) -> DataFrame:
    return unified.filter(F.col(ROW_KIND) == EVENT).select(*EVENT_COLUMNS)


def quarantine_of(unified_or_staged: DataFrame) -> DataFrame:
    return unified_or_staged.select(
        "source_file", "line_no", "broker", F.col("message").alias("raw"), F.col("attrs")["reason"].alias("reason")
    )


def files_of(unified_or_staged: DataFrame, added_out_of_order: dict[str, int] | None = None) -> DataFrame:
    """One row per file (a large file's splits summed); ``added_out_of_order``: flags settled
    across splits after the parse."""
    counts = [F.sum(F.col("attrs")[k].cast("long")).alias(k) for k in FILE_COUNTS]
    files = unified_or_staged.groupBy("source_file").agg(
        *counts,
        F.first("dialect").alias("dialect"),
        F.max(F.col("attrs")["compressed"] == "true").alias("compressed"),
        F.first(F.col("attrs")["read_error"], ignorenulls=True).alias("read_error"),
    )
    if added_out_of_order:
        spark = unified_or_staged.sparkSession
        added = spark.createDataFrame(list(added_out_of_order.items()), "source_file string, added long")
        files = files.join(F.broadcast(added), "source_file", "left").withColumn(
            "out_of_order", F.col("out_of_order") + F.coalesce(F.col("added"), F.lit(0))
        )
    return files.select("source_file", *FILE_COUNTS, "dialect", "compressed", "read_error")


def _staged(spark: SparkSession, staging: str, kind: str) -> DataFrame:
    """One partition of the staging table (empty, with the right schema, if no row had that kind)."""
    path = f"{staging}/{ROW_KIND}={kind}"
    if path_exists(spark, path):
        return spark.read.schema(from_arrow_schema(pa.schema(list(EVENTS_SCHEMA)))).parquet(path)
    # as Spark reads files back: every column nullable, so an empty table is stored as a full one is
    return spark.createDataFrame([], from_arrow_schema(STORED_SCHEMA))


def run_parse(spark: SparkSession, inputs: list[str], out_dir: str, options: ParseOptions) -> ParseSummary:
    out_dir = absolute(out_dir)
    notes: list[str] = []
    files = discover(spark, inputs, notes)
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
        added = settle_splits(spark, staging, direct) if direct is not None else {}
        for table in PARSE_TABLES:
            delete_path(spark, f"{out_dir}/{table}")
        events_path = f"{staging}/{ROW_KIND}={EVENT}" if direct is None else staging_events
        if path_exists(spark, events_path) if direct is None else finish(direct):
            rename_path(spark, events_path, f"{out_dir}/events")
        else:
            spark.createDataFrame([], from_arrow_schema(EVENTS_SCHEMA)).write.parquet(f"{out_dir}/events")
        quarantine_of(_staged(spark, staging, QUARANTINE)).coalesce(1).write.parquet(f"{out_dir}/quarantine")
        files_of(_staged(spark, staging, FILE), added).coalesce(1).write.parquet(f"{out_dir}/files")
        delete_path(spark, staging)
        if direct is not None:
            shutil.rmtree(direct, ignore_errors=True)  # left only when no file had events
        summary = summarize(spark, out_dir)
        summary.notes = notes
    except KafkaForensicsError:
        raise
    except Exception as err:
        raise JobError(f"parse job failed: {short_error(err)}") from err
    write_text(spark, f"{out_dir}/parse_summary.json", summary.to_json())
    if summary.records == 0:
        raise no_records(summary, len(files), out_dir)
    return summary


def no_records(summary: ParseSummary, files: int, out_dir: Optional[str]) -> InputError:
    """The error of a parse that found no Kafka record in its files (every line quarantined); ``out_dir``
    None: a parse whose quarantine is not kept (``story``)."""
    where = "" if out_dir is None else f"; see {out_dir}/quarantine"
    return InputError(
        f"no recognisable Kafka log lines in {files} file(s) ({summary.quarantined} line(s) quarantined{where})"
    )


def _check_sizes(spark: SparkSession, files: list[InputFile]) -> None:
    """When Spark reads the files (binaryFile, whole files): one over the reader's limit (2 GiB by
    default) would fail deep inside a task with a Java stack trace; say so up front, with what to
    do. Files the workers read themselves have no such limit."""
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
    """The summary of the tables under ``out_dir``: the files table's rows, one scan of two small
    columns of the events (records and out-of-order flags per event type: a dialect is a file's, its
    records come from the files table) and the quarantine's reasons (``summary_of``)."""
    files = [row.asDict() for row in read_table(spark, out_dir, FILES).orderBy("source_file").collect()]
    per_type = (
        read_table(spark, out_dir, EVENTS)
        .groupBy("event_type")
        .agg(F.count(F.lit(1)).alias("n"), F.sum(F.col("ts_out_of_order").cast("int")).alias("o"))
        .orderBy("event_type")
        .collect()
    )
    quarantine = read_table(spark, out_dir, QUARANTINE_TABLE)
    reasons = quarantine.groupBy("reason").count().orderBy(F.desc("count"), "reason").limit(QUARANTINE_REASONS)
    return summary_of(
        out_dir,
        files,
        {r["event_type"]: (r["n"], int(r["o"] or 0)) for r in per_type},
        quarantine.count(),
        {r[0]: r[1] for r in reasons.collect()},
    )


QUARANTINE_REASONS = 20  # the most frequent quarantine reasons a summary names


def summary_of(
    out_dir: str, files: list[dict], per_type: dict[str, tuple[int, int]], quarantined: int, reasons: dict[str, int]
) -> ParseSummary:
    """A parse's summary from its counts: ``files`` (the files table's rows, in ``source_file`` order),
    ``per_type`` (event type -> records, out-of-order records), the quarantine's size and its most
    frequent ``reasons``, the counts checked against the readers' own.

    Every line read is an event row, a quarantine row, or a line the reader folded into its records
    (``files.continuation_lines``): a stack trace's lines, which the events carry as ``n_continuation``,
    and a metadata dump's file and batch headers, which describe the records around them and belong
    to none (parsers/metadata_dump.py). So the continuation lines are the readers' count, as in the
    report's reconciliation, not the events' ``n_continuation`` alone."""
    summary = ParseSummary(out_dir=out_dir)
    for entry in files:  # one row per file
        summary.files.append(entry)
        summary.lines_read += entry["lines_read"]
        summary.continuation_lines += entry["continuation_lines"] or 0
        for counter in ("ts_invalid", "bom_lines", "ansi_lines", "control_lines"):
            setattr(summary, counter, getattr(summary, counter) + (entry[counter] or 0))
        if entry["read_error"]:
            summary.read_errors.append(f"{entry['source_file']}: {entry['read_error']}")
    summary.by_event_type = {t: n for t, (n, _) in sorted(per_type.items())}
    summary.records = sum(n for n, _ in per_type.values())
    summary.out_of_order = sum(o for _, o in per_type.values())
    for entry in summary.files:
        if entry["records"]:
            summary.by_dialect[entry["dialect"]] = summary.by_dialect.get(entry["dialect"], 0) + entry["records"]
    summary.by_dialect = dict(sorted(summary.by_dialect.items()))
    summary.quarantined = quarantined
    summary.quarantine_reasons = reasons
    return summary
