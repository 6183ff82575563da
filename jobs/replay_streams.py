"""The events table as the driver's replay reads it: three streams from an in-process DuckDB, never the whole table.

Why: a replay that holds every line as a Python event needs about 3 KB a line (bench/RESULTS.md), so 10 M lines
do not fit a driver. But almost every line is one partition's line, which only that partition's replay reads,
and the few lines the whole cluster needs (who was controller, stale-epoch refusals, KRaft records, configs)
are small. So the lines are read in three streams, each a DuckDB query over the events' Parquet files:

- ``side_lines``: every line a cluster-wide stage may read, whole. The test (``SIDE``) is written so that it
  can only take too many lines, never too few: the replay routes these lines with the same Python code as
  lines in memory (``replay.local.ClusterLines``), and a partition's line among them joins its partition.
- ``light_lines``: the other lines that are not one partition's (facts only: a broker's line, the last time),
  and the controllers' actions among partitions' lines, each with only the few columns those read.
- ``partition_groups``: each partition's lines, together and in Spark's order (``jobs.replay_job``:
  ``ts``, ``source_file``, ``line_no``), with the message only where a rule reads it. DuckDB sorts them and
  spills to disk past ``MEMORY_LIMIT``; one group at a time is in Python.

A line's cluster comes from its file's path (``--cluster-from-path``): the files are few, so Python works out
each one's cluster and DuckDB joins it. Nothing here decides what a line means; the tests are built from the
replay's own constants (event types, attribute names, the literals the rules' patterns require).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Callable, Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from kafka_forensics.core.errors import InputError, JobError
from kafka_forensics.core.tables import EVENTS
from kafka_forensics.replay.cluster import ACTING_TYPES, CLUSTER_EVENT_TYPES, DELETION_COMPLETED, OFFSET_GAP_ATTR
from kafka_forensics.replay.collector import rare_full_collections
from kafka_forensics.replay.events import LINE_COLUMNS, TEXT_EVENT_TYPES, compact_batch
from kafka_forensics.replay.impact import CONFIG_DUMP_START, SETTING
from kafka_forensics.replay.kraft import RECORD_TYPES, TOPIC_RECORD
from kafka_forensics.replay.local import is_partition_line
from kafka_forensics.replay.partition import PARTITION_EVENT_TYPES
from kafka_forensics.replay.partition_view import OFFLINE_REPLICAS_MARKED
from kafka_forensics.replay.stale_epochs import REJECTED, RESPONSE, RESPONSE_ATTR

# What DuckDB may hold before its sort spills to disk (it runs beside the replay's own Python objects).
MEMORY_LIMIT = "1GB"
BATCH_ROWS = 4096
# Partitions' lines sorted at a time by Arrow, in memory: about 0.2 GB (measured: 1 M lines of the events table)
BUCKET_ROWS = 1_000_000


# Every line a cluster-wide stage may read. Each clause may take more lines than its stage reads, never fewer:
# a refusal's error code 11 (``stale_epochs.TOP_LEVEL_ERROR_11``) cannot match without "error_code=11" or "11)".
# NULLs count as false.
def _strings(values) -> str:
    """A list of our own constants as a SQL literal (none holds a quote: asserted below)."""
    return "[" + ", ".join(f"'{v}'" for v in sorted(values)) + "]"


_SIDE_CLAUSES = (
    f"list_contains({_strings(CLUSTER_EVENT_TYPES | RECORD_TYPES | {TOPIC_RECORD, REJECTED, OFFLINE_REPLICAS_MARKED, DELETION_COMPLETED})}, event_type)",
    "log_kind = 'metadata'",
    f"event_type = '{RESPONSE}' AND (contains(attrs['{RESPONSE_ATTR}'], 'error_code=11')"
    f" OR contains(attrs['{RESPONSE_ATTR}'], '11)'))",
    f"map_contains(attrs, '{OFFSET_GAP_ATTR}')",
    f"contains(message, '{SETTING}')",
    f"starts_with(message, '{CONFIG_DUMP_START}')",
)
SIDE = " OR ".join(f"coalesce({c}, false)" for c in _SIDE_CLAUSES)
# One partition's line (``replay.local.is_partition_line``), when not a side line.
PARTITION = (
    f"topic IS NOT NULL AND partition IS NOT NULL AND list_contains({_strings(PARTITION_EVENT_TYPES)}, event_type)"
)
_TEXT = f"list_contains({_strings(TEXT_EVENT_TYPES)}, event_type)"
for _literal in (
    SETTING,
    CONFIG_DUMP_START,
    OFFSET_GAP_ATTR,
    RESPONSE_ATTR,
    *CLUSTER_EVENT_TYPES,
    *RECORD_TYPES,
    *PARTITION_EVENT_TYPES,
    *TEXT_EVENT_TYPES,
    *ACTING_TYPES,
    TOPIC_RECORD,
    REJECTED,
    OFFLINE_REPLICAS_MARKED,
    DELETION_COMPLETED,
):
    assert "'" not in _literal, _literal  # spelled into the SQL
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
IN_GROUP = "in_group"  # a light line that is also a partition's line (its facts come with its group)


class EventStreams:
    """The three streams of ``out_dir/events`` (see the module), each line with its ``cluster``."""

    def __init__(self, out_dir: str, cluster_of: Callable[[str], str]):
        import duckdb

        path = Path(out_dir) / EVENTS
        if not path.is_dir():
            raise InputError(f"{path}: no events table (run parse first)")
        dataset = ds.dataset(path, format="parquet")
        self._files, self._rows = dataset.files, dataset.count_rows()
        self._spill = tempfile.TemporaryDirectory(prefix="kafka-forensics-replay-")
        self._con = duckdb.connect(config={"memory_limit": MEMORY_LIMIT, "temp_directory": self._spill.name})
        self._con.sql("SET TimeZone = 'UTC'")
        self._con.sql("SET preserve_insertion_order = false")
        if not self._files:
            return
        sources = [
            r[0] for r in self._con.sql(f"SELECT DISTINCT source_file FROM read_parquet({self._list()})").fetchall()
        ]
        clusters = pa.table({"source_file": sources, "cluster": [cluster_of(s) for s in sources]})
        self._con.register("clusters", clusters)
        self._con.sql(
            f"CREATE VIEW lines AS SELECT e.*, c.cluster FROM read_parquet({self._list()}, filename = true,"
            " file_row_number = true) e"
            " JOIN clusters c USING (source_file)"
        )

    def _list(self) -> str:
        return "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in self._files) + "]"

    def close(self) -> None:
        self._con.close()
        self._spill.cleanup()

    def __enter__(self) -> "EventStreams":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _batches(self, sql: str) -> Iterator[pa.RecordBatch]:
        """The query's result a batch at a time."""
        if not self._files:
            return iter(())
        return iter(self._con.sql(sql).to_arrow_reader(BATCH_ROWS))

    def templates(self) -> dict[str, set]:
        """Per cluster, the (broker, template) pairs of every line (what dates each broker's release)."""
        if not self._files:
            return {}
        out: dict[str, set] = {}
        for cluster, broker, template in self._con.sql(
            "SELECT DISTINCT cluster, broker, template FROM lines WHERE template IS NOT NULL"
        ).fetchall():
            out.setdefault(cluster, set()).add((broker, template))
        return out

    def side_lines(self) -> list[dict]:
        """Every side line, whole (``LINE_COLUMNS`` and ``cluster``), as the replay reads events, in the table's
        order (its files' names, which ``pyarrow.dataset`` lists sorted, then their rows)."""
        columns = ", ".join((*LINE_COLUMNS, "cluster"))
        out: list[dict] = []
        with rare_full_collections():
            sql = f"SELECT {columns} FROM lines WHERE {SIDE} ORDER BY filename, file_row_number"
            for batch in self._batches(sql):
                out += compact_batch(batch)
        return out

    def light_lines(self) -> Iterator[dict]:
        """The lines that are neither side lines nor a partition's, and the controllers' actions among a
        partition's lines (``IN_GROUP`` true), with ``LIGHT_COLUMNS`` only."""
        sql = (
            f"SELECT {', '.join(LIGHT_COLUMNS)}, coalesce({PARTITION}, false) AS {IN_GROUP} FROM lines"
            f" WHERE NOT ({SIDE}) AND (NOT coalesce({PARTITION}, false) OR list_contains({_strings(ACTING_TYPES)}, event_type))"
        )
        for batch in self._batches(sql):
            yield from compact_batch(batch, **{IN_GROUP: batch.column(IN_GROUP).to_pylist()})

    def partition_groups(self) -> Iterator[tuple[tuple, list[dict]]]:
        """((cluster, topic, partition), its lines): every partition's lines that are not side lines, each
        partition's together and in Spark's order (``ts`` nulls first, ``source_file``, ``line_no``), message and
        stack only on the lines a rule reads them of (``TEXT_EVENT_TYPES``).

        Sorting all of them at once needs more memory than DuckDB may take (10 M lines: out of memory at 1 GB,
        nested columns and all), so past ``BUCKET_ROWS`` lines they are first written out in buckets by a hash of
        the partition (one pass), and each bucket is read and sorted by Arrow alone: the partitions come bucket
        by bucket, each one whole."""
        if not self._files:
            return
        columns = [
            f"CASE WHEN {_TEXT} THEN {c} END AS {c}" if c in ("message", "stack") else c
            for c in (*LINE_COLUMNS, "cluster")
        ]
        select = f"SELECT {', '.join(columns)} FROM lines WHERE NOT ({SIDE}) AND {PARTITION}"
        buckets = -(-self._rows // BUCKET_ROWS)
        if buckets <= 1:
            tables: Iterator[pa.Table] = iter([self._con.sql(select).to_arrow_table()])
        else:
            where = Path(self._spill.name) / "groups"
            self._con.sql(
                f"COPY (SELECT *, hash(cluster, topic, partition) % {buckets} AS bucket FROM ({select}))"
                f" TO '{where}' (FORMAT parquet, PARTITION_BY (bucket))"
            )
            names = [*LINE_COLUMNS, "cluster"]
            tables = (pq.read_table(part, columns=names) for part in sorted(where.glob("bucket=*")))
        with rare_full_collections():
            for table in tables:
                yield from _groups(_in_spark_order(table))


def _in_spark_order(table: pa.Table) -> pa.Table:
    """Each partition's lines as the Spark job's replay gets them (``jobs.replay_job._grouped_map``: ascending,
    nulls first); a line without a time sorts first by a key of its own (no null placement per key before Arrow 25)."""
    timed = "_timed"
    keys = [(c, "ascending") for c in ("cluster", "topic", "partition", timed, "ts", "source_file", "line_no")]
    order = table.append_column(timed, pc.is_valid(table.column("ts"))).sort_by(keys)
    return order.drop_columns([timed])


def _groups(table: pa.Table) -> Iterator[tuple[tuple, list[dict]]]:
    """The groups of a table sorted by partition, converted a batch at a time."""
    key, group = None, []
    for batch in table.to_batches(max_chunksize=BATCH_ROWS):
        for e in compact_batch(batch):
            if not is_partition_line(e):  # the SQL tests disagree with the replay's own
                raise JobError(f"{e['source_file']}:{e['line_no']}: a cluster-wide line read as a partition's")
            at = (e["cluster"], e["topic"], e["partition"])
            if at != key:
                if group:
                    yield key, group
                key, group = at, []
            group.append(e)
    if group:
        yield key, group


__all__ = ["IN_GROUP", "LIGHT_COLUMNS", "MEMORY_LIMIT", "PARTITION", "SIDE", "EventStreams"]
