"""The Spark side of ``kafka-forensics merge``: every record of every broker's logs, in one time order.

Why Spark and not a local n-way merge: the inputs of ``merge`` are those of ``analyze`` (a fleet's
rotated, gzipped logs, possibly on hdfs:// or s3a://), and it must parse each file with the same
grammar to know each line's broker, topic and partition on every Kafka era. Each file is parsed in a
Python worker (as the parse job does), one row per record with its original text and its stack
trace, then Spark sorts the rows globally (range partitioning) and the driver streams the result
with ``toLocalIterator``: it holds one partition at a time, never the whole merge.

Order: ``(ts + the broker's clock offset, source_file, line_no)`` - a total, stable order, so two
lines with the same millisecond always come out the same way (the file they came from, then their
place in it). A broker whose clock ran off by a known amount is corrected with ``--clock-skew
BROKER=SECONDS`` (added to that broker's timestamps before sorting; the printed lines are
unchanged). Records with no timestamp sort last, in file order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from kafka_forensics.core.errors import InputError, UsageError
from kafka_forensics.core.tables import EVENT_COLUMNS
from kafka_forensics.parsers.reader import read_lines
from kafka_forensics.parsers.records import ParseOptions, parse_file

from .discovery import discover
from .filters import EventFilter, apply_strict

MERGE_SCHEMA = pa.schema(
    [
        pa.field("source_file", pa.string()),
        pa.field("line_no", pa.int64()),
        pa.field("broker", pa.int32()),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("event_type", pa.string()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("text", pa.string()),  # the record's line(s) exactly as logged
        pa.field("stack", pa.string()),  # its continuation lines (stack trace), newline-joined
    ]
)
_COL = {name: i for i, name in enumerate(EVENT_COLUMNS)}
BATCH_ROWS = 8192


@dataclass(frozen=True)
class MergeOptions:
    event_filter: EventFilter = field(default_factory=EventFilter)
    clock_offsets: dict = field(default_factory=dict)  # broker id -> seconds added to its timestamps


def parse_clock_offsets(pairs: tuple[str, ...]) -> dict[int, float]:
    """``--clock-skew 2=-1.5`` (repeatable) → {2: -1.5}."""
    offsets: dict[int, float] = {}
    for pair in pairs:
        broker, sep, seconds = pair.partition("=")
        try:
            if not sep:
                raise ValueError
            offsets[int(broker)] = float(seconds)
        except ValueError:
            raise UsageError(f"--clock-skew expects BROKER=SECONDS (e.g. 2=-1.5), got {pair!r}") from None
    return offsets


def record_rows(data: bytes, source_file: str, options: ParseOptions) -> list[list]:
    """One row per record of one file: the parse's typing plus the record's original text."""
    result = parse_file(data, source_file, options)
    lines, _ = read_lines(data, options.max_line_bytes)
    text_of = {ln.line_no: ln.text for ln in lines}
    rows = []
    for r in result.rows:
        line_no, stack = r[_COL["line_no"]], r[_COL["stack"]]
        stack_lines = stack.count("\n") + 1 if stack else 0
        joined = r[_COL["n_continuation"]] - stack_lines  # a message that went on over more lines
        text = "\n".join(text_of.get(line_no + k) or "" for k in range(joined + 1))
        rows.append(
            [
                source_file,
                line_no,
                r[_COL["broker"]],
                r[_COL["ts"]],
                r[_COL["event_type"]],
                r[_COL["topic"]],
                r[_COL["partition"]],
                text,
                stack,
            ]
        )
    return rows


def _batches(rows: list[list]) -> Iterator[pa.RecordBatch]:
    for start in range(0, len(rows), BATCH_ROWS):
        columns = list(zip(*rows[start : start + BATCH_ROWS]))
        yield pa.RecordBatch.from_arrays(
            [pa.array(c, f.type) for c, f in zip(columns, MERGE_SCHEMA)], schema=MERGE_SCHEMA
        )


@dataclass(frozen=True)
class MergePlan:
    records: DataFrame  # parsed, filtered, with the sort key
    ordered: DataFrame  # the same, globally sorted


def merge_frame(
    spark: SparkSession, inputs: list[str], parse_options: ParseOptions, options: MergeOptions
) -> MergePlan:
    """The merged records and their global order (lazy: nothing runs until ``iter_merged``)."""
    files = discover(spark, list(inputs))
    displays = {f.uri: f.display for f in files}

    def run(batches):
        for batch in batches:
            paths = batch.column("path").to_pylist()
            contents = batch.column("content")
            for i, uri in enumerate(paths):
                rows = record_rows(contents[i].as_py() or b"", displays.get(uri, uri), parse_options)
                yield from _batches(rows)

    raw = spark.read.format("binaryFile").load([f.uri for f in files]).select("path", "content")
    records = apply_strict(raw.mapInArrow(run, from_arrow_schema(MERGE_SCHEMA)), options.event_filter)
    offset_us = F.lit(0)
    for broker, seconds in sorted(options.clock_offsets.items()):
        offset_us = F.when(F.col("broker") == broker, F.lit(round(seconds * 1_000_000))).otherwise(offset_us)
    keyed = records.withColumn("sort_us", F.unix_micros("ts") + offset_us)
    order = (F.col("sort_us").asc_nulls_last(), F.col("source_file"), F.col("line_no"))
    ranges = keyed.repartitionByRange(sort_partitions(spark, files), *order)
    return MergePlan(records=keyed, ordered=ranges.sortWithinPartitions(*order))


SORTED_PARTITION_BYTES = 16 << 20  # the driver holds one sorted partition at a time (toLocalIterator)
GZIP_RATIO = 8  # a Kafka log compresses about this much; a .gz file's listed size undercounts the text


def sort_partitions(spark: SparkSession, files) -> int:
    """Enough range partitions that each holds ~16 MB of log text, so streaming the merge to the
    driver never needs more than that at once, however large the input (a fixed count made one
    partition of a 1 M-line input too big for a 1 GB driver heap)."""
    text_bytes = sum(f.size * (GZIP_RATIO if f.uri.endswith(".gz") else 1) for f in files)
    default = int(spark.conf.get("spark.sql.shuffle.partitions"))
    return max(default, -(-text_bytes // SORTED_PARTITION_BYTES))


def iter_merged(plan: MergePlan) -> Iterator[dict]:
    """Stream the sorted rows to the driver one partition at a time.

    The unsorted records are persisted first: the global sort samples its input to choose its
    ranges, and without it every file would be parsed twice. Freed when the stream ends."""
    columns = [f.name for f in MERGE_SCHEMA]
    plan.records.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        for row in plan.ordered.select(*columns).toLocalIterator(prefetchPartitions=False):
            yield row.asDict()
    finally:
        plan.records.unpersist()


def format_record(row: dict, annotate: bool = True) -> str:
    """``broker 1 | file:12 | <line as logged>`` then the stack trace lines as logged."""
    text = row["text"]
    if annotate:
        broker = "?" if row["broker"] is None else str(row["broker"])
        text = f"broker {broker} | {row['source_file']}:{row['line_no']} | {text}"
    if row.get("stack"):
        text += "\n" + row["stack"]
    return text


@dataclass
class MergeCounts:
    records: int = 0
    brokers: set = field(default_factory=set)


def write_merged(rows: Iterator[dict], out, annotate: bool = True) -> MergeCounts:
    counts = MergeCounts()
    for row in rows:
        out.write(format_record(row, annotate) + "\n")
        counts.records += 1
        counts.brokers.add(row["broker"])
    return counts


def require_records(counts: MergeCounts, flt: EventFilter, inputs) -> None:
    if counts.records == 0 and not flt.active:
        raise InputError(f"no recognisable Kafka log lines in {', '.join(map(str, inputs))}")


__all__ = [
    "MERGE_SCHEMA",
    "MergeOptions",
    "MergePlan",
    "format_record",
    "iter_merged",
    "merge_frame",
    "parse_clock_offsets",
    "record_rows",
    "write_merged",
]
