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
import pyarrow.dataset as ds

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

# Every line a cluster-wide stage may read. Each clause may take more lines than its stage reads, never fewer:
# a refusal's error code 11 (``stale_epochs.TOP_LEVEL_ERROR_11``) cannot match without "error_code=11" or "11)".
# NULLs count as false.
_SIDE_CLAUSES = (
    "list_contains($side_types, event_type)",
    "log_kind = 'metadata'",
    f"event_type = '{RESPONSE}' AND (contains(attrs['{RESPONSE_ATTR}'], 'error_code=11')"
    f" OR contains(attrs['{RESPONSE_ATTR}'], '11)'))",
    f"map_contains(attrs, '{OFFSET_GAP_ATTR}')",
    f"contains(message, '{SETTING}')",
    f"starts_with(message, '{CONFIG_DUMP_START}')",
)
SIDE = " OR ".join(f"coalesce({c}, false)" for c in _SIDE_CLAUSES)
# One partition's line (``replay.local.is_partition_line``), when not a side line.
PARTITION = "topic IS NOT NULL AND partition IS NOT NULL AND list_contains($partition_types, event_type)"
_SIDE_TYPES = sorted(
    CLUSTER_EVENT_TYPES | RECORD_TYPES | {TOPIC_RECORD, REJECTED, OFFLINE_REPLICAS_MARKED, DELETION_COMPLETED}
)
for _literal in (SETTING, CONFIG_DUMP_START, OFFSET_GAP_ATTR, RESPONSE_ATTR, *_SIDE_TYPES):
    assert "'" not in _literal, _literal  # spelled into the SQL above
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
        self._files = ds.dataset(path, format="parquet").files
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

    def _params(self) -> dict:
        return {"side_types": _SIDE_TYPES, "partition_types": sorted(PARTITION_EVENT_TYPES)}

    def _batches(self, sql: str, params: dict) -> Iterator[pa.RecordBatch]:
        """The query's result a batch at a time (DuckDB takes exactly the parameters the query names)."""
        if not self._files:
            return iter(())
        named = {k: v for k, v in params.items() if f"${k}" in sql}
        return iter(self._con.sql(sql, params=named).to_arrow_reader(BATCH_ROWS))

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
            for batch in self._batches(sql, self._params()):
                out += compact_batch(batch)
        return out

    def light_lines(self) -> Iterator[dict]:
        """The lines that are neither side lines nor a partition's, and the controllers' actions among a
        partition's lines (``IN_GROUP`` true), with ``LIGHT_COLUMNS`` only."""
        sql = (
            f"SELECT {', '.join(LIGHT_COLUMNS)}, coalesce({PARTITION}, false) AS {IN_GROUP} FROM lines"
            f" WHERE NOT ({SIDE}) AND (NOT coalesce({PARTITION}, false) OR list_contains($acting, event_type))"
        )
        for batch in self._batches(sql, {**self._params(), "acting": sorted(ACTING_TYPES)}):
            yield from compact_batch(batch, **{IN_GROUP: batch.column(IN_GROUP).to_pylist()})

    def partition_groups(self) -> Iterator[tuple[tuple, list[dict]]]:
        """((cluster, topic, partition), its lines): every partition's lines that are not side lines, in the
        order of the key, then Spark's (``ts`` nulls first, ``source_file``, ``line_no``). Message and stack
        only on the lines a rule reads them of (``TEXT_EVENT_TYPES``)."""
        text = "list_contains($text_types, event_type)"
        columns = [
            f"CASE WHEN {text} THEN {c} END AS {c}" if c in ("message", "stack") else c
            for c in (*LINE_COLUMNS, "cluster")
        ]
        sql = (
            f"SELECT {', '.join(columns)} FROM lines WHERE NOT ({SIDE}) AND {PARTITION}"
            " ORDER BY cluster, topic, partition, ts NULLS FIRST, source_file, line_no"
        )
        key, group = None, []
        with rare_full_collections():
            for batch in self._batches(sql, {**self._params(), "text_types": sorted(TEXT_EVENT_TYPES)}):
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
