"""The Spark replay job: events -> cluster tables -> per-partition replay -> timelines and findings.

1. Cluster stage (small, on the driver): the lines that say who was controller and which brokers
   were alive (elections, resignations, broker changes, controlled shutdown, live sets, KRaft
   fencing; one row per cluster line) and one aggregate row per (controller, epoch) of the
   controller's own actions are collected and turned into a ``ClusterContext`` per cluster, which
   is broadcast. Their size grows with controller/broker events, not with partitions or lines.
2. Partition stage: the events of each (cluster, topic, partition) are brought together with
   ``repartition`` + ``sortWithinPartitions`` and replayed in a Python worker (``mapInArrow``) by
   ``replay.partition``: ordered by controller epoch, then time, then (file, line) - see
   ``statemachines.ordering`` for how clock skew between brokers is contained. Replicas are
   replayed inside their partition's group, because a replica's story depends on its partition.
3. Refusals for a stale controller epoch carry no partition; they are grouped the same way by
   (controller, stale epoch): one zombie episode, whichever brokers refused it.
Nothing that grows with the input is collected; tables and ``findings.jsonl`` are written by Spark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta
from types import ModuleType
from typing import Callable, Iterable, Iterator, Optional

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from kafka_forensics.core.errors import JobError, KafkaForensicsError
from kafka_forensics.core.tables import (
    BROKERS_SCHEMA,
    CONTROLLERS_SCHEMA,
    EVENTS,
    FINDING_LISTING_COLUMNS,
    FINDINGS,
    FINDINGS_SCHEMA,
    IMPACT,
    IMPACT_TOTALS,
    PARTITION_TIMELINE_SCHEMA,
    REPLICA_TIMELINE_SCHEMA,
)
from kafka_forensics.replay.cluster import (
    ACTING_TYPES,
    ClusterContext,
    build_cluster_context,
)
from kafka_forensics.replay.collector import rare_full_collections
from kafka_forensics.replay.events import GROUP_COLUMNS, TEXT_EVENT_TYPES, compact_batch, compact_events
from kafka_forensics.replay.findings import FINDINGS_ORDER, SEVERITIES
from kafka_forensics.replay.partition import PARTITION_EVENT_TYPES, ReplayConfig, replay_partition
from kafka_forensics.replay.partition_view import OFFLINE_REPLICAS_MARKED, PARTITION_TEXT
from kafka_forensics.replay.stale_epochs import REJECTED, TOP_LEVEL_ERROR_11, stale_epoch_finding

from .filters import apply_place, apply_time
from .final_state_job import final_state_findings
from .fs import absolute, write_text
from .impact_job import impact_frame, impact_totals_frame
from .replay_kraft import cluster_rows_filter, prepare_metadata_events
from .replay_options import ReplayOptions, ReplaySummary, impact_summary, validate_options
from .spark_errors import short_error
from .stored_tables import read_table

BATCH_ROWS = 4096
_STALE_TYPES = ("stale_controller_epoch_rejected", "controller_response")

# The Python workers emit the three replay tables in one Arrow stream, told apart by ROW_KIND.
ROW_KIND = "row_kind"


def _unified() -> pa.Schema:
    fields = [pa.field(ROW_KIND, pa.string())]
    seen = {ROW_KIND}
    for schema in (PARTITION_TIMELINE_SCHEMA, REPLICA_TIMELINE_SCHEMA, FINDINGS_SCHEMA):
        for f in schema:
            if f.name not in seen:
                seen.add(f.name)
                fields.append(f)
    return pa.schema(fields)


REPLAY_OUTPUT_SCHEMA = _unified()  # what the Python workers emit: the three tables in one stream


@dataclass
class ReplayFrames:
    partition_timeline: DataFrame
    replica_timeline: DataFrame
    findings: DataFrame
    controllers: DataFrame
    brokers: DataFrame
    contexts: dict[str, ClusterContext]
    impact: DataFrame
    impact_totals: DataFrame
    _persisted: list[DataFrame] = field(default_factory=list)

    def unpersist(self) -> None:
        for df in self._persisted:
            df.unpersist()


def with_cluster(events: DataFrame, cluster_from_path: Optional[str]) -> DataFrame:
    """Add ``cluster``: the regex's last group in source_file ('' = the one cluster, or no match)."""
    if not cluster_from_path:
        return events.withColumn("cluster", F.lit(""))
    groups = re.compile(cluster_from_path).groups
    return events.withColumn("cluster", F.regexp_extract("source_file", cluster_from_path, groups))


def _prepare(events: DataFrame) -> DataFrame:
    """The columns the Python side reads (``replay.events.GROUP_COLUMNS``), message and stack only where a rule
    reads them."""
    text_wanted = F.col("event_type").isin(*sorted(TEXT_EVENT_TYPES))
    return events.select(
        *[F.when(text_wanted, F.col(c)).alias(c) if c in ("message", "stack") else F.col(c) for c in GROUP_COLUMNS]
    )


# ---- cluster stage ---------------------------------------------------------------------------
def collect_arrow(df: DataFrame) -> list[dict]:
    """Collect a small result through Arrow: timestamps stay UTC-aware (``collect()`` would turn them
    into naive datetimes in the driver's local time zone)."""
    return df.toArrow().to_pylist()


def severity_rank(functions: ModuleType = F) -> F.Column:
    """A finding's severity as a sort key, most severe first: 1, 2, ... in ``SEVERITIES``' order, an unknown or
    null severity last (99). ``functions``: the engine's functions module (``frames.functions_of``)."""
    severity = functions.col("severity")
    rank = functions.when(severity == SEVERITIES[0], 1)
    for position, name in enumerate(SEVERITIES[1:], start=2):
        rank = rank.when(severity == name, position)
    return rank.otherwise(99)


def top_findings(spark: SparkSession, out_dir: str, n: int) -> list[dict]:
    """The ``n`` most severe findings (episodes) of a replay output (then earliest, then by id): what the CLI prints.
    ``spark``: Spark's session or SQLFrame's DuckDB one (``frames``)."""
    from .frames import functions_of
    from .frames import read_table as read_frame

    fn = functions_of(spark)
    return collect_arrow(
        read_frame(spark, out_dir, FINDINGS)
        .withColumn("_rank", severity_rank(fn))
        .orderBy("_rank", fn.col("ts").asc_nulls_last(), "finding_id")
        .select(*FINDING_LISTING_COLUMNS)
        .limit(n)
    )


def build_contexts(
    events: DataFrame, options: ReplayOptions, templates: Optional[DataFrame] = None
) -> dict[str, ClusterContext]:
    """One ``ClusterContext`` per cluster, from the cluster lines, per-(controller, epoch) actions and
    the distinct (cluster, broker, template) rows that date each broker's release (``templates``)."""
    cluster_rows = collect_arrow(
        events.filter(cluster_rows_filter() & F.col("ts").isNotNull()).orderBy(
            "cluster", "ts", "source_file", "line_no"
        )
    )
    first = F.min(F.struct("ts", "source_file", "line_no"))
    last = F.max(F.struct("ts", "source_file", "line_no"))
    acting = collect_arrow(
        events.filter(
            F.col("event_type").isin(*ACTING_TYPES)
            & F.col("controller_id").isNotNull()
            & F.col("controller_epoch").isNotNull()
            & F.col("ts").isNotNull()
        )
        .groupBy("cluster", "controller_id", "controller_epoch")
        .agg(first.alias("f"), last.alias("l"), F.count(F.lit(1)).alias("n"))
        .orderBy("cluster", "controller_epoch", "controller_id")
    )
    clusters = sorted(
        {r["cluster"] for r in cluster_rows}
        | {r["cluster"] for r in acting}
        | {r["cluster"] for r in collect_arrow(events.select("cluster").distinct())}
    )
    by_cluster: dict[str, list[dict]] = {c: [] for c in clusters}
    for r in compact_events(cluster_rows):
        by_cluster[r["cluster"]].append(r)
    acts: dict[str, list[dict]] = {c: [] for c in clusters}
    for r in acting:
        acts[r["cluster"]].append(
            {
                "controller_id": r["controller_id"],
                "controller_epoch": r["controller_epoch"],
                "n": r["n"],
                "first_ts": r["f"]["ts"],
                "last_ts": r["l"]["ts"],
                "first_ref": f"{r['f']['source_file']}:{r['f']['line_no']}",
                "last_ref": f"{r['l']['source_file']}:{r['l']['line_no']}",
            }
        )
    dating: dict[str, list[tuple]] = {c: [] for c in clusters}
    if templates is not None:
        for r in collect_arrow(templates.orderBy("cluster", "broker", "template")):
            dating.setdefault(r["cluster"], []).append((r["broker"], r["template"]))
    return {
        c: build_cluster_context(c, by_cluster[c], acts[c], options.clock_skew_seconds, dating.get(c, ()))
        for c in clusters
    }


# ---- grouped replay in Python workers ----------------------------------------------------------
def _to_batches(rows: list[dict]) -> Iterator[pa.RecordBatch]:
    for start in range(0, len(rows), BATCH_ROWS):
        yield pa.RecordBatch.from_pylist(rows[start : start + BATCH_ROWS], schema=REPLAY_OUTPUT_SCHEMA)


def _grouped_map(
    df: DataFrame, keys: tuple[str, ...], per_group: Callable[[tuple, list[dict]], list[dict]]
) -> DataFrame:
    """Bring each key's rows together (repartition + sort) and call ``per_group`` on each group."""
    ordered = df.repartition(*keys).sortWithinPartitions(*keys, "ts", "source_file", "line_no")

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        key, group, out = None, [], []
        with rare_full_collections():  # a Python worker of its own: the policy holds while it runs
            for batch in batches:
                # what replay.local.replay_events hands the replay, read column-wise
                for row in compact_batch(batch):
                    k = tuple(row[c] for c in keys)
                    if group and k != key:
                        out.extend(per_group(key, group))
                        group = []
                    key = k
                    group.append(row)
                if len(out) >= BATCH_ROWS:
                    yield from _to_batches(out)
                    out = []
            if group:
                out.extend(per_group(key, group))
            yield from _to_batches(out)

    return ordered.mapInArrow(run, from_arrow_schema(REPLAY_OUTPUT_SCHEMA))


def _partition_rows(contexts_bc, user_version: Optional[str]) -> Callable[[tuple, list[dict]], list[dict]]:
    def per_group(key: tuple, events: list[dict]) -> list[dict]:
        cluster = key[0]
        ctx = contexts_bc.value.get(cluster) or ClusterContext(cluster=cluster)
        result = replay_partition(events, ctx, ReplayConfig(cluster=cluster, user_version=user_version))
        rows = [{ROW_KIND: "partition", **r} for r in result.partition_intervals]
        rows += [{ROW_KIND: "replica", **r} for r in result.replica_intervals]
        rows += [{ROW_KIND: "finding", **f.to_row()} for f in result.findings]
        return rows

    return per_group


def _stale_rows(key: tuple, events: list[dict]) -> list[dict]:
    return [{ROW_KIND: "finding", **stale_epoch_finding(key[0], events).to_row()}]


def _per_partition(ev: DataFrame) -> DataFrame:
    """Lines that name their partitions only in text, once per partition (``partition_view.per_partition_events``)."""
    text = F.explode(F.split(F.col("attrs")["partitions"], ","))
    named = (
        ev.filter(F.col("event_type") == OFFLINE_REPLICAS_MARKED)
        .withColumn("kf_partition_text", text)
        .withColumn("kf_partition_text", F.trim("kf_partition_text"))
    )
    found = F.regexp_extract("kf_partition_text", PARTITION_TEXT, 2)
    return (
        named.filter(found != "")
        .withColumn("topic", F.regexp_extract("kf_partition_text", PARTITION_TEXT, 1))
        .withColumn("partition", found.cast("int"))
        .withColumn("replica", F.col("target_broker"))
        .drop("kf_partition_text")
    )


def _stale_epoch_lines(df: DataFrame) -> DataFrame:
    """Refusals of a stale controller epoch and top-level error-11 responses (``stale_epochs.is_stale_epoch_event``)."""
    return df.filter(
        (F.col("event_type") == REJECTED)
        | ((F.col("event_type") == "controller_response") & F.col("attrs")["response"].rlike(TOP_LEVEL_ERROR_11))
    )


def _select(df: DataFrame, kind: str, schema: pa.Schema) -> DataFrame:
    return df.filter(F.col(ROW_KIND) == kind).select(*schema.names)


def replay_frames(spark: SparkSession, events: DataFrame, options: ReplayOptions) -> ReplayFrames:
    """The replay tables as DataFrames (partition/replica/findings/impact persisted once, unpersist after use)."""
    validate_options(options)
    clustered = with_cluster(events, options.cluster_from_path)
    templates = (  # bounded: brokers x templates; every line (before the time filter) dates its broker
        clustered.filter(F.col("template").isNotNull()).select("cluster", "broker", "template").distinct()
    )
    ev = apply_time(_prepare(clustered), options.event_filter)
    ev = prepare_metadata_events(ev)  # KRaft records: topic names by topic id, removals per partition
    contexts = build_contexts(ev, options, templates)
    contexts_bc = spark.sparkContext.broadcast(contexts)
    partition_events = ev.filter(
        F.col("topic").isNotNull() & F.col("partition").isNotNull() & F.col("event_type").isin(*PARTITION_EVENT_TYPES)
    ).unionByName(_per_partition(ev))
    if options.topic is not None:
        partition_events = partition_events.filter(F.col("topic") == options.topic)
    if options.partition is not None:
        partition_events = partition_events.filter(F.col("partition") == options.partition)
    partition_events = apply_place(partition_events, options.event_filter)
    replayed = _grouped_map(
        partition_events, ("cluster", "topic", "partition"), _partition_rows(contexts_bc, options.kafka_version)
    )
    stale = _grouped_map(  # one zombie episode per (cluster, controller, stale epoch): stale_epochs.group_key
        _stale_epoch_lines(ev.filter(F.col("event_type").isin(*_STALE_TYPES))),
        ("cluster", "controller_id", "controller_epoch"),
        _stale_rows,
    )
    if options.has_place:  # stale-epoch episodes name no partition
        stale = stale.limit(0)
    out = replayed.unionByName(stale).persist(StorageLevel.MEMORY_AND_DISK)
    partition_timeline = _select(out, "partition", PARTITION_TIMELINE_SCHEMA)
    cluster_findings = [{**f.to_row()} for c in sorted(contexts) for f in contexts[c].findings]
    cluster_findings += [
        f.to_row()
        for f in final_state_findings(
            spark,
            partition_timeline,
            contexts,
            options.snapshots,
            timedelta(seconds=options.describe_lag_seconds),
            timedelta(seconds=options.clock_skew_seconds),
        )
    ]
    cluster_findings_df = _frame(spark, cluster_findings, FINDINGS_SCHEMA)
    findings = _select(out, "finding", FINDINGS_SCHEMA).unionByName(cluster_findings_df).dropDuplicates(["finding_id"])
    controllers = _frame(
        spark, [c.to_row(name) for name in sorted(contexts) for c in contexts[name].controllers], CONTROLLERS_SCHEMA
    )
    brokers = _frame(
        spark, [b.to_row(name) for name in sorted(contexts) for b in contexts[name].brokers], BROKERS_SCHEMA
    )
    raw = with_cluster(events, options.cluster_from_path)
    impact = impact_frame(partition_timeline, brokers, findings, raw, ev, options.min_isr).persist(
        StorageLevel.MEMORY_AND_DISK
    )
    return ReplayFrames(
        partition_timeline=partition_timeline,
        replica_timeline=_select(out, "replica", REPLICA_TIMELINE_SCHEMA),
        findings=findings,
        controllers=controllers,
        brokers=brokers,
        contexts=contexts,
        impact=impact,
        impact_totals=impact_totals_frame(impact),
        _persisted=[out, impact],
    )


def _frame(spark: SparkSession, rows: list[dict], schema: pa.Schema) -> DataFrame:
    """A small driver-side table (cluster findings, controllers, brokers) as a DataFrame."""
    data = [tuple(r.get(name) for name in schema.names) for r in rows]
    return spark.createDataFrame(data, from_arrow_schema(schema))


def sorted_findings(findings: DataFrame) -> DataFrame:
    """The deterministic order of findings.jsonl (``replay.findings.FINDINGS_ORDER``), in one task."""
    return findings.repartition(1).sortWithinPartitions(
        *[F.col(c).asc_nulls_last() if nulls_last else F.col(c).asc_nulls_first() for c, nulls_last in FINDINGS_ORDER]
    )


def write_replay(spark: SparkSession, frames: ReplayFrames, out_dir: str) -> ReplaySummary:
    """Write the five tables (Parquet), findings.jsonl and replay_summary.json under ``out_dir``."""
    order = ("cluster", "topic", "partition")
    frames.partition_timeline.sortWithinPartitions(*order, "seq").write.mode("overwrite").parquet(
        f"{out_dir}/partition_timeline"
    )
    frames.replica_timeline.sortWithinPartitions(*order, "replica", "seq").write.mode("overwrite").parquet(
        f"{out_dir}/replica_timeline"
    )
    findings = sorted_findings(frames.findings)
    findings.drop("json").write.mode("overwrite").parquet(f"{out_dir}/findings")
    _write_jsonl(spark, findings.select("json"), f"{out_dir}/findings.jsonl")
    frames.controllers.coalesce(1).write.mode("overwrite").parquet(f"{out_dir}/controllers")
    frames.brokers.coalesce(1).write.mode("overwrite").parquet(f"{out_dir}/brokers")
    frames.impact.sortWithinPartitions(*order, "kind", "episode").write.mode("overwrite").parquet(f"{out_dir}/{IMPACT}")
    frames.impact_totals.coalesce(1).sortWithinPartitions(
        "cluster", "kind", F.col("topic").asc_nulls_first()
    ).write.mode("overwrite").parquet(f"{out_dir}/{IMPACT_TOTALS}")
    summary = summarize(frames, out_dir)
    write_text(spark, f"{out_dir}/replay_summary.json", summary.to_json())
    return summary


def _write_jsonl(spark: SparkSession, lines: DataFrame, path: str) -> None:
    """One text file (not a directory of parts): written by one task, then renamed."""
    tmp = f"{path}.parts"
    lines.write.mode("overwrite").text(tmp)
    jvm = spark.sparkContext._jvm
    hconf = spark.sparkContext._jsc.hadoopConfiguration()
    fs = jvm.org.apache.hadoop.fs.Path(tmp).getFileSystem(hconf)
    parts = [
        s.getPath()
        for s in fs.listStatus(jvm.org.apache.hadoop.fs.Path(tmp))
        if s.getPath().getName().startswith("part-")
    ]
    target = jvm.org.apache.hadoop.fs.Path(path)
    fs.delete(target, False)
    if parts:
        fs.rename(parts[0], target)
    else:
        fs.create(target, True).close()
    fs.delete(jvm.org.apache.hadoop.fs.Path(tmp), True)


def summarize(frames: ReplayFrames, out_dir: Optional[str]) -> ReplaySummary:
    summary = ReplaySummary(out_dir=out_dir, clusters=sorted(frames.contexts))
    summary.controllers = sum(len(c.controllers) for c in frames.contexts.values())
    summary.broker_intervals = sum(len(c.brokers) for c in frames.contexts.values())
    counts = frames.partition_timeline.agg(
        F.count(F.lit(1)).alias("n"), F.countDistinct("cluster", "topic", "partition").alias("p")
    ).first()
    summary.partition_intervals, summary.partitions = int(counts["n"]), int(counts["p"])
    summary.replica_intervals = frames.replica_timeline.count()
    summary.count_findings(
        (r["rule"], r["severity"], r["count"]) for r in frames.findings.groupBy("rule", "severity").count().collect()
    )
    summary.impact = impact_summary(collect_arrow(frames.impact_totals.filter(F.col("topic").isNull())))
    return summary


def replay_events(spark: SparkSession, events: DataFrame, out_dir: str, options: ReplayOptions) -> ReplaySummary:
    """Replay an events table (as written by ``parse``) and write the replay tables and the story."""
    out_dir = absolute(out_dir)
    with arrow_batches(spark):
        try:
            frames = replay_frames(spark, events, options)
        except KafkaForensicsError:
            raise
        except Exception as err:
            raise JobError(f"replay job failed: {short_error(err)}") from err
        try:
            summary = write_replay(spark, frames, out_dir)
            from .story_job import stories, write_story  # story_job builds on this module

            write_story(spark, stories(spark, frames), out_dir)
            return summary
        except KafkaForensicsError:
            raise
        except Exception as err:
            raise JobError(f"replay job failed: {short_error(err)}") from err
        finally:
            frames.unpersist()


def run_replay(spark: SparkSession, inputs: list[str], out_dir: str, parse_options, options: ReplayOptions):
    """``kafka-forensics replay``: parse (``run_parse``, writes DIR/events), then replay. Returns both summaries."""
    from .parse_job import run_parse

    validate_options(options)
    parsed = run_parse(spark, inputs, out_dir, parse_options)
    events = read_table(spark, out_dir, EVENTS)
    return parsed, replay_events(spark, events, out_dir, options)


class arrow_batches:
    """Arrow batches of many rows for the replay (the parse job sets 1 row per batch for whole files),
    bounded by rows only.

    Spark also bounds a batch by bytes (``maxBytesPerBatch``, 64 MiB), but it checks by asking the
    Arrow writer for its size after every row, and for nested vectors (``attrs``, the ISR and replica
    lists) that size is computed over the whole batch so far: feeding the 1 M-row events table of the
    simulated 1 M-line incident to a Python function that does nothing took 32.4 s with 10,000 rows per
    batch, 5.6 s with 1,000, and 1.6 s with the byte check off (bench/RESULTS.md, "The Arrow writer's
    size check"). So the check is off (``Int.MaxValue``, which Spark treats as "no limit") and a batch
    holds at most ``rows`` rows: the replay's input keeps text only for the few event types that need
    it (``replay.events.TEXT_EVENT_TYPES``), each message at most the reader's line limit (1 MiB by default)."""

    def __init__(self, spark: SparkSession, rows: int = 1000):
        self.spark = spark
        self.settings = {
            "spark.sql.execution.arrow.maxRecordsPerBatch": str(rows),
            "spark.sql.execution.arrow.maxBytesPerBatch": str(2**31 - 1),
        }
        self.saved: dict[str, Optional[str]] = {}

    def __enter__(self):
        for key, value in self.settings.items():
            self.saved[key] = self.spark.conf.get(key, None)
            self.spark.conf.set(key, value)
        return self

    def __exit__(self, *exc):
        for key, value in self.saved.items():
            if value is None:
                self.spark.conf.unset(key)
            else:
                self.spark.conf.set(key, value)
        return False


__all__ = [
    "ReplayFrames",
    "ReplayOptions",
    "ReplaySummary",
    "arrow_batches",
    "build_contexts",
    "collect_arrow",
    "replay_events",
    "replay_frames",
    "run_replay",
    "sorted_findings",
    "top_findings",
    "validate_options",
    "with_cluster",
    "write_replay",
]
