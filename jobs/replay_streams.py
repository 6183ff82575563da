"""The events table as the driver's replay reads it: split in one pass, never held whole.

Why: a replay that holds every line as a Python event needs about 3 KB a line (bench/RESULTS.md), so 10 M lines
do not fit a driver. But almost every line is one partition's line, which only that partition's replay reads,
and the few lines the whole cluster needs (who was controller, stale-epoch refusals, KRaft records, configs)
are small. So ``EventStreams.split`` reads the table a batch at a time and sorts each batch's lines with Arrow's
compute functions into:

- side lines: every line a cluster-wide stage may read, whole. The test (``side_mask``) is written so that it
  can only take too many lines, never too few: the replay routes these lines with the same Python code as
  lines in memory (``replay.local.ClusterLines``), and a partition's line among them joins its partition;
- light lines: the other lines that are not one partition's (facts only: a broker's line, the last time),
  and the controllers' actions among partitions' lines, each with only the few columns those read;
- each partition's lines, kept as Arrow in buckets by partition (one bucket in memory, or past ``BUCKET_ROWS``,
  or when several processes replay them, bucket files), which ``bucket_groups`` then hands out one partition
  at a time, in Spark's order (``jobs.replay_job``: ``ts``, ``source_file``, ``line_no``), with the message only
  where a rule reads it. A bucket is replayed on its own (``jobs.replay_partitions``).

DuckDB is not used: its one sort of 10 M partitions' lines, and its partitioned ``COPY`` of them, ran out of
memory at 1 GB. A line's cluster comes from its file's path (``--cluster-from-path``). Nothing here decides what
a line means; the tests are built from the replay's own constants (event types, attribute names, the literals
the rules' patterns require).
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Protocol, Union

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from kafka_forensics.core.errors import InputError, JobError
from kafka_forensics.core.tables import EVENTS
from kafka_forensics.replay.cluster import ACTING_TYPES, CLUSTER_EVENT_TYPES, DELETION_COMPLETED, OFFSET_GAP_ATTR
from kafka_forensics.replay.collector import rare_full_collections
from kafka_forensics.replay.events import (
    BATCH_ROWS,
    GROUP_COLUMNS,
    LINE_COLUMNS,
    TEXT_EVENT_TYPES,
    compact_batch,
    epoch_micros,
    instants,
)
from kafka_forensics.replay.impact import CONFIG_DUMP_START, SETTING, FactsBuilder
from kafka_forensics.replay.kraft import METADATA, RECORD_TYPES, TOPIC_RECORD
from kafka_forensics.replay.local import is_partition_line
from kafka_forensics.replay.partition import PARTITION_EVENT_TYPES
from kafka_forensics.replay.partition_view import OFFLINE_REPLICAS_MARKED
from kafka_forensics.replay.stale_epochs import REJECTED, RESPONSE, RESPONSE_ATTR

from .process_pool import map_in_pool

# Partitions' lines sorted at a time by Arrow, in memory. The replay's peak (2026-11-26): 1.06 GB at 998,821 lines
# (one bucket), 1.73 GB at 9,886,206 (ten). Past one bucket they wait in the system's temp directory (``TMPDIR``).
BUCKET_ROWS = 1_000_000
SCAN_ROWS = 65_536  # rows of the events table read at a time
Bucket = Union[tuple[str, ...], pa.Table]  # a bucket's files (one per process that split), or the one bucket held


# The event types whose every line is a side line (``side_mask``).
_SIDE_TYPES = pa.array(
    sorted(CLUSTER_EVENT_TYPES | RECORD_TYPES | {TOPIC_RECORD, REJECTED, OFFLINE_REPLICAS_MARKED, DELETION_COMPLETED})
)
_PARTITION_TYPES = pa.array(sorted(PARTITION_EVENT_TYPES))
_TEXT_TYPES = pa.array(sorted(TEXT_EVENT_TYPES))
_ACTING_TYPES = pa.array(sorted(ACTING_TYPES))


def _any(*conditions: pa.Array) -> pa.Array:
    """The rows any condition holds for (a null is false)."""
    out = pc.fill_null(conditions[0], False)
    for c in conditions[1:]:
        out = pc.or_(out, pc.fill_null(c, False))
    return out


def side_mask(batch: pa.RecordBatch) -> pa.Array:
    """Every line a cluster-wide stage may read. Each condition may take more lines than its stage reads, never
    fewer: a refusal's error code 11 (``stale_epochs.TOP_LEVEL_ERROR_11``) cannot match without "error_code=11"
    or "11)"; an attribute counts as ``events.attr`` reads it (present, not null)."""
    event_type, attrs, message = batch.column("event_type"), batch.column("attrs"), batch.column("message")
    response = pc.map_lookup(attrs, pa.scalar(RESPONSE_ATTR), "first")
    return _any(
        pc.is_in(event_type, value_set=_SIDE_TYPES),
        pc.equal(batch.column("log_kind"), METADATA),
        pc.and_(
            pc.equal(event_type, RESPONSE),
            _any(pc.match_substring(response, "error_code=11"), pc.match_substring(response, "11)")),
        ),
        pc.is_valid(pc.map_lookup(attrs, pa.scalar(OFFSET_GAP_ATTR), "first")),
        # RE2 finds a literal 7x faster than ``match_substring`` (0.06 s against 0.41 s over the 1 M table's
        # messages, 2026-11-27): the search the side test pays on every line
        pc.match_substring_regex(message, re.escape(SETTING)),
        pc.starts_with(message, CONFIG_DUMP_START),
    )


def partition_mask(batch: pa.RecordBatch) -> pa.Array:
    """One partition's line (``replay.local.is_partition_line``), when not a side line."""
    return _any(
        pc.and_(
            pc.and_(pc.is_valid(batch.column("topic")), pc.is_valid(batch.column("partition"))),
            pc.is_in(batch.column("event_type"), value_set=_PARTITION_TYPES),
        )
    )


LIGHT_COLUMNS = (
    "cluster",
    "ts",
    "source_file",
    "line_no",
    "event_type",
    "log_kind",
    "broker",
    "topic",
    "controller_id",
    "controller_epoch",
)
# the columns ``FactsBuilder.add`` reads
FACT_COLUMNS = ("cluster", "ts", "source_file", "line_no", "event_type", "log_kind", "broker", "topic")
IN_GROUP = "in_group"  # a light line that is also a partition's line (its facts come with its group)


class ClusterOf:
    """A line's cluster from its file's path (``--cluster-from-path``: the regex's last group, '' without a match),
    as ``jobs.replay_job.with_cluster`` gives it; picklable, for the processes that split the table's files."""

    def __init__(self, cluster_from_path: Optional[str]):
        self.cluster_from_path = cluster_from_path
        self._rx = re.compile(cluster_from_path) if cluster_from_path else None

    def __call__(self, path: str) -> str:
        if self._rx is None:
            return ""
        found = self._rx.search(path)
        return (found.group(self._rx.groups) or "") if found else ""

    def __reduce__(self):
        return ClusterOf, (self.cluster_from_path,)


class LineSink(Protocol):
    """What ``split`` hands the light lines to: ``add`` one line; ``merge`` what a copy of it gathered in another
    process (``split`` pickles an empty one to each process that splits a share of the files)."""

    def add(self, e: dict) -> None: ...

    def merge(self, other: Any) -> None: ...


class EventStreams:
    """The lines of ``out_dir/events`` split in one pass (``split``) into what the replay reads of them (see the
    module), each line with its ``cluster``; then each partition's lines (``buckets``, ``partition_groups``)."""

    def __init__(self, out_dir: str, cluster_of: Callable[[str], str], workers: Callable[[int], int] = lambda rows: 1):
        """``workers``: how many processes split the table and replay the buckets, given its rows. Each holds a
        bucket at a time, so with several the buckets are that much smaller, and at least two per worker (to
        balance them)."""
        path = Path(out_dir) / EVENTS
        if not path.is_dir():
            raise InputError(f"{path}: no events table (run parse first)")
        dataset = ds.dataset(path, format="parquet")
        self._files, self.rows = dataset.files, dataset.count_rows()
        self._cluster_of = cluster_of
        self._spill = tempfile.TemporaryDirectory(prefix="kafka-forensics-replay-")
        self.workers = max(1, workers(self.rows))
        self._buckets = max(-(-self.rows // (BUCKET_ROWS // self.workers)), 2 * self.workers if self.workers > 1 else 1)
        self._held: list[pa.Table] = []  # one bucket: the partitions' lines in memory
        self._pieces: dict[int, list[str]] = {}  # bucket -> its files (one per process that split)
        self.templates: dict[str, set] = {}  # per cluster, the (broker, template) pairs of every line

    def close(self) -> None:
        self._spill.cleanup()

    def __enter__(self) -> "EventStreams":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def split(self, light: LineSink) -> list[dict]:
        """One pass over the lines: returns the side lines, whole, in the table's order; hands each light line to
        ``light``; keeps the templates (``templates``) and each partition's lines for ``buckets``.

        With several workers the files are split in shares, each in its own process, side by side (a light line's
        every use is a sum, a minimum or a maximum, so the shares' sinks are merged into ``light``)."""
        if self.workers > 1 and len(self._files) > 1:
            shares = _shares(self._files, 2 * self.workers)
            works = [
                ShareWork(files, self._cluster_of, self._buckets, self._spill.name, f"{n}", light)
                for n, files in enumerate(shares)
            ]
            done = map_in_pool(split_share, works, min(self.workers, len(works)), cost=lambda w: w.bytes)
        else:
            done = [split_share(ShareWork(self._files, self._cluster_of, self._buckets, self._spill.name, "", light))]
        side: list[dict] = []
        for share in done:
            side += share.side
            if share.light is not light:
                light.merge(share.light)
            for cluster, found in share.templates.items():
                self.templates.setdefault(cluster, set()).update(found)
            self._held += share.held
            for k, piece in share.pieces.items():
                self._pieces.setdefault(k, []).append(piece)
        return side

    def buckets(self) -> list[tuple[int, Bucket]]:
        """After ``split``: each bucket's partitions' lines, its files' paths or (one bucket) the table in memory,
        by bucket number; ``bucket_groups`` reads one. A bucket holds every line of its partitions."""
        if self._buckets == 1:
            held, self._held = self._held, []
            return [(0, pa.concat_tables(held))] if held else []
        pieces, self._pieces = self._pieces, {}
        return [(k, tuple(pieces[k])) for k in sorted(pieces)]

    def bucket_ids(self, partitions: list[tuple[str, str, int]]) -> list[int]:
        """The bucket of each (cluster, topic, partition), as ``split`` put their lines."""
        if self._buckets == 1 or not partitions:
            return [0] * len(partitions)
        cluster, topic, partition = zip(*partitions)
        keys = pa.record_batch(
            [pa.array(cluster, pa.string()), pa.array(topic, pa.string()), pa.array(partition, pa.int64())],
            names=["cluster", "topic", "partition"],
        )
        return _bucket_of(keys, self._buckets).to_pylist()

    def partition_groups(self) -> Iterator[tuple[tuple, list[dict]]]:
        """((cluster, topic, partition), its lines), after ``split``: every partition's lines that are not side
        lines, each partition's together and in Spark's order (``ts`` nulls first, ``source_file``, ``line_no``),
        message and stack only on the lines a rule reads them of (``TEXT_EVENT_TYPES``), bucket by bucket."""
        for _, bucket in self.buckets():
            yield from bucket_groups(bucket)


def bucket_groups(bucket: Bucket) -> Iterator[tuple[tuple, list[dict]]]:
    """A bucket's partitions, each one's lines together and in Spark's order (``partition_groups``): ``table_groups``
    of ``read_bucket``."""
    return table_groups(read_bucket(bucket))


def read_bucket(bucket: Bucket) -> pa.Table:
    """A bucket's lines, as ``split`` kept them; a bucket file is deleted once read.

    Sorting all of the partitions' lines at once needs more memory than DuckDB may take (10 M lines: out of memory
    at 1 GB, nested columns and all, and so was its partitioned ``COPY``), so past ``BUCKET_ROWS`` lines ``split``
    writes them out in buckets by partition (``_bucket_of``), and each bucket is read and sorted by Arrow alone."""
    if not isinstance(bucket, tuple):
        return bucket
    tables = []
    for piece in bucket:
        with pa.OSFile(piece) as source:
            tables.append(pa.ipc.open_file(source).read_all())
        Path(piece).unlink()
    return pa.concat_tables(tables)


def table_groups(table: pa.Table) -> Iterator[tuple[tuple, list[dict]]]:
    """The partitions of a table of partitions' lines (a bucket's), each one's lines together and in Spark's order
    (``partition_groups``)."""
    with rare_full_collections():
        yield from _groups(_in_spark_order(table))


def gather_facts(facts: FactsBuilder, table: pa.Table) -> None:
    """``facts.add`` of every line of ``table`` (with its ``cluster``), column-wise: a worker's bucket holds up to a
    million lines, and ``add`` costs 1 µs a line (the 1 M replay stage on one core, 2026-11-27). A topic's
    deletion, the one line ``add`` does more with, goes through ``add`` itself."""
    table = table.select(list(FACT_COLUMNS))
    table = table.filter(pc.is_valid(table.column("ts")))
    deletion = pc.fill_null(pc.equal(table.column("event_type"), DELETION_COMPLETED), False)
    if pc.any(deletion).as_py():
        for e in compact_batch(table.filter(deletion)):
            facts.add(e)
        table = table.filter(pc.invert(deletion))
    clusters = table.column("cluster")
    names = pc.unique(clusters).to_pylist()
    for cluster in names:
        lines = table.filter(pc.equal(clusters, cluster)) if len(names) > 1 else table
        # a broker's own lines: ``add``'s writers (a broker, and not a KRaft metadata record)
        written = lines.filter(
            pc.and_(
                pc.is_valid(lines.column("broker")),
                pc.invert(pc.fill_null(pc.equal(lines.column("log_kind"), METADATA), False)),
            )
        )
        files = written.column("source_file").combine_chunks().dictionary_encode()
        facts.add_columns(
            cluster,
            instants([pc.max(epoch_micros(lines.column("ts"))).as_py()])[0],
            written.column("broker").to_numpy(),
            epoch_micros(written.column("ts")).to_numpy(),
            files.dictionary.to_pylist(),
            files.indices.to_numpy(),
            written.column("line_no").to_numpy(),
        )


@dataclass
class ShareWork:
    """Some of the table's files, split by one process (``split_share``): the partitions' lines go to ``buckets``
    bucket files in ``spill`` (named with ``tag``), the light lines to ``light``."""

    files: list[str]
    cluster_of: Callable[[str], str]
    buckets: int
    spill: str
    tag: str
    light: LineSink

    @property
    def bytes(self) -> int:
        return sum(os.path.getsize(name) for name in self.files)


@dataclass
class Share:
    """What splitting some files left: their side lines (in their order), the sink of their light lines, the
    templates, and their partitions' lines: held in memory (one bucket) or in one file per bucket."""

    side: list[dict] = field(default_factory=list)
    light: Any = None
    templates: dict[str, set] = field(default_factory=dict)
    held: list[pa.Table] = field(default_factory=list)
    pieces: dict[int, str] = field(default_factory=dict)


def split_share(work: ShareWork) -> Share:
    """One pass over ``work``'s files, a batch at a time (``EventStreams.split``, in this process or a worker)."""
    out = Share(light=work.light)
    writers: dict[int, pa.ipc.RecordBatchFileWriter] = {}
    try:
        with rare_full_collections():
            for batch in _scan(work.files, work.cluster_of):
                _templates(batch, out.templates)
                on_side = side_mask(batch)
                if pc.any(on_side).as_py():
                    out.side += compact_batch(batch.filter(on_side))
                off_side = pc.invert(on_side)
                partitions = pc.and_(off_side, partition_mask(batch))
                acting = pc.is_in(batch.column("event_type"), value_set=_ACTING_TYPES)
                lightly = pc.and_(off_side, pc.or_(pc.invert(partitions), acting))
                if pc.any(lightly).as_py():
                    found = batch.select(list(LIGHT_COLUMNS)).filter(lightly)
                    in_group = partitions.filter(lightly).to_pylist()
                    for e in compact_batch(found, **{IN_GROUP: in_group}):
                        out.light.add(e)
                if pc.any(partitions).as_py():
                    _keep(_as_replayed(batch).filter(partitions), work, out, writers)
    finally:
        for writer in writers.values():
            writer.close()
    return out


def _scan(files: list[str], cluster_of: Callable[[str], str]) -> Iterator[pa.RecordBatch]:
    """The files' rows a batch at a time with their ``cluster``, in the table's order (its files' names, as
    ``pyarrow.dataset`` lists them, then their rows): what is in memory is one batch of one file."""
    clusters: dict[str, str] = {}
    for name in files:
        for batch in pq.ParquetFile(name).iter_batches(batch_size=SCAN_ROWS, columns=list(LINE_COLUMNS)):
            sources = batch.column("source_file").to_pylist()
            for source in set(sources) - clusters.keys():
                clusters[source] = cluster_of(source)
            yield batch.append_column("cluster", pa.array([clusters[s] for s in sources], pa.string()))


def _templates(batch: pa.RecordBatch, templates: dict[str, set]) -> None:
    dated = batch.select(["cluster", "broker", "template"]).filter(pc.is_valid(batch.column("template")))
    if dated.num_rows:
        for row in pa.Table.from_batches([dated]).group_by(["cluster", "broker", "template"]).aggregate([]).to_pylist():
            templates.setdefault(row["cluster"], set()).add((row["broker"], row["template"]))


def _as_replayed(rows: pa.RecordBatch) -> pa.RecordBatch:
    """Partitions' lines as the Spark job hands them to a partition's replay (``jobs.replay_job``): their
    ``GROUP_COLUMNS`` (not the template: the driver dates brokers by ``templates``), with their
    message and stack only where a rule reads them (``TEXT_EVENT_TYPES``). Applied before the lines are picked
    from a batch, so that the messages no rule reads are never copied."""
    rows = rows.select(list(GROUP_COLUMNS))
    text = pc.is_in(rows.column("event_type"), value_set=_TEXT_TYPES)
    for name in ("message", "stack"):
        column = rows.column(name)
        rows = rows.set_column(
            rows.schema.get_field_index(name), name, pc.if_else(text, column, pa.nulls(len(column), column.type))
        )
    return rows


def _keep(rows: pa.RecordBatch, work: ShareWork, out: Share, writers: dict) -> None:
    """Partitions' lines kept for ``EventStreams.buckets``: in memory (one bucket), or appended to their bucket's
    file."""
    if work.buckets == 1:
        out.held.append(pa.Table.from_batches([rows]))
        return
    ids = _bucket_of(rows, work.buckets)
    for k in pc.unique(ids).to_pylist():
        part = rows.filter(pc.equal(ids, k))
        if k not in writers:
            out.pieces[k] = str(Path(work.spill) / f"bucket-{k}-{work.tag}.arrow")
            writers[k] = pa.ipc.new_file(out.pieces[k], part.schema)
        writers[k].write_batch(part)


def _shares(files: list[str], n: int) -> list[list[str]]:
    """``files`` in at most ``n`` runs of consecutive files of about equal bytes (the side lines keep the table's
    order: the shares' are concatenated in this order)."""
    sizes = [os.path.getsize(name) for name in files]
    total, out, current, held = sum(sizes), [], [], 0
    for name, size in zip(files, sizes):
        current.append(name)
        held += size
        if held >= total * (len(out) + 1) / n and len(out) < n - 1:
            out.append(current)
            current = []
    return out + [current] if current else out


def _bucket_of(rows: pa.RecordBatch, buckets: int) -> pa.Array:
    """Each row's bucket, from its partition alone (one partition's lines share a bucket): the partition's number
    plus its topic's and cluster's name lengths, modulo ``buckets``. Arrow has no hash of strings to offer; a
    cluster's partitions are numbered densely per topic, which this spreads evenly enough."""
    spread = pc.add(
        pc.cast(rows.column("partition"), pa.int64()),
        pc.add(
            pc.multiply(pc.cast(pc.utf8_length(rows.column("topic")), pa.int64()), 31),
            pc.multiply(pc.cast(pc.utf8_length(rows.column("cluster")), pa.int64()), 7),
        ),
    )
    spread = pc.abs(spread)
    return pc.subtract(spread, pc.multiply(pc.divide(spread, buckets), buckets))


def spark_order(e: dict) -> tuple:
    """An event's place in ``_in_spark_order``'s order within its partition (``ts`` nulls first, file, line), to merge
    a partition's side lines into its group."""
    ts = e.get("ts")
    return (ts is not None, ts or _MIN_TS, e["source_file"], e["line_no"])


_MIN_TS = datetime.min.replace(tzinfo=timezone.utc)


def _in_spark_order(table: pa.Table) -> pa.Table:
    """Each partition's lines as the Spark job's replay gets them (``jobs.replay_job._grouped_map``: ascending,
    nulls first); a line without a time sorts first by a key of its own (no null placement per key before Arrow 25)."""
    timed = "_timed"
    keys = [(c, "ascending") for c in ("cluster", "topic", "partition", timed, "ts", "source_file", "line_no")]
    order = table.append_column(timed, pc.is_valid(table.column("ts"))).sort_by(keys)
    return order.drop_columns([timed])


def _groups(table: pa.Table) -> Iterator[tuple[tuple, list[dict]]]:
    """The groups of a table sorted by partition, converted a batch at a time."""
    key: tuple = ()
    group: list[dict] = []
    for batch in table.to_batches(max_chunksize=BATCH_ROWS):
        for e in compact_batch(batch):
            if not is_partition_line(e):  # the masks disagree with the replay's own routing
                raise JobError(f"{e['source_file']}:{e['line_no']}: a cluster-wide line read as a partition's")
            at = (e["cluster"], e["topic"], e["partition"])
            if at != key:
                if group:
                    yield key, group
                key, group = at, []
            group.append(e)
    if group:
        yield key, group


__all__ = [
    "BUCKET_ROWS",
    "IN_GROUP",
    "LIGHT_COLUMNS",
    "Bucket",
    "EventStreams",
    "bucket_groups",
    "gather_facts",
    "partition_mask",
    "read_bucket",
    "side_mask",
    "spark_order",
    "table_groups",
]
