"""The incident story in Spark: leader elections classified and grouped into rounds on the executors,
then only the bounded results reach the driver (``replay.story.tell`` writes the sentences).

What is collected: at most ``CAPS[ELECTION]`` rounds per (cluster, election kind) and the count of the
rest; at most ``CAPS[FINDING]`` findings per cluster, the most severe first, and the count of the rest.
Controllers, brokers and the lines that give a controller change its reason are already in the
broadcast ``ClusterContext`` (small: they grow with controller and broker events, not with lines).
"""

from __future__ import annotations

from typing import Iterable, Iterator

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from kafka_forensics.replay.cluster import ClusterContext
from kafka_forensics.replay.story import (
    CAPS,
    CONTROLLER_SOURCES,
    ELECTION,
    FINDING,
    ROUND_GAP_SECONDS,
    ROUND_SAMPLE,
    STORY_JSON,
    Story,
    election_kind,
    state_before,
    story_document,
    story_json,
    tell,
)

from .fs import write_text
from .replay_job import ReplayFrames, collect_arrow, severity_rank

_TS = pa.timestamp("us", tz="UTC")
_CHANGE_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("ts_start", _TS),
        pa.field("controller_epoch", pa.int32()),
        pa.field("leader", pa.int32()),
        pa.field("prev_leader", pa.int32()),
        pa.field("cause", pa.string()),
        pa.field("kind", pa.string()),
    ]
)
_FINDING_COLUMNS = (
    "finding_id",
    "cluster",
    "rule",
    "severity",
    "topic",
    "partition",
    "replica",
    "ts",
    "ts_end",
    "summary",
    "evidence",
    "evidence_count",
)


def leader_changes(partition_timeline: DataFrame, contexts_bc) -> DataFrame:
    """Every election of the controller-side timeline rows with its kind (``replay.story.leader_changes``,
    row by row: the previous row of any source and the previous controller-side leader come from windows)."""
    part = Window.partitionBy("cluster", "topic", "partition").orderBy("seq")
    rows = (
        partition_timeline.withColumn("prev_seq", F.lag("seq").over(part))
        .withColumn("prev_state", F.lag("state").over(part))
        .withColumn("prev_isr", F.lag("isr").over(part))
        .withColumn("prev_replicas", F.lag("replicas").over(part))
        .filter(F.col("source").isin(*CONTROLLER_SOURCES))
        .withColumn("prev_leader", F.lag("leader").over(part))
        .filter((F.col("leader") >= 0) & (F.col("prev_leader").isNull() | (F.col("prev_leader") != F.col("leader"))))
        .select(
            "cluster",
            "topic",
            "partition",
            "ts_start",
            "controller_epoch",
            "leader",
            "replicas",
            "state",
            "source",
            "cause_event_type",
            "prev_seq",
            "prev_state",
            "prev_isr",
            "prev_replicas",
            "prev_leader",
            "cause",
        )
    )

    def classify(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        contexts: dict[str, ClusterContext] = contexts_bc.value
        for batch in batches:
            out = []
            for r in batch.to_pylist():
                previous = (
                    None
                    if r["prev_seq"] is None
                    else {"state": r["prev_state"], "isr": r["prev_isr"], "replicas": r["prev_replicas"]}
                )
                kind = election_kind(state_before(previous, r["prev_leader"]), r, contexts.get(r["cluster"]))
                if kind is not None:
                    out.append({**{k: r[k] for k in _CHANGE_SCHEMA.names if k != "kind"}, "kind": kind})
            yield pa.RecordBatch.from_pylist(out, schema=_CHANGE_SCHEMA)

    return rows.mapInArrow(classify, from_arrow_schema(_CHANGE_SCHEMA))


def election_rounds(changes: DataFrame) -> DataFrame:
    """Changes of one (cluster, kind, controller epoch) closer than ``ROUND_GAP_SECONDS`` are one round
    (the Spark twin of ``replay.story.election_rounds``), with the rank of each round in its kind."""
    key = ("cluster", "kind", "controller_epoch")
    in_order = Window.partitionBy(*key).orderBy("ts_start", "topic", "partition")
    gap = F.col("ts_start").cast("double") - F.lag(F.col("ts_start").cast("double")).over(in_order)
    starts = F.when(gap.isNull() | (gap > ROUND_GAP_SECONDS), 1).otherwise(0)
    numbered = changes.withColumn("new_round", starts).withColumn(
        "round", F.sum("new_round").over(in_order.rowsBetween(Window.unboundedPreceding, Window.currentRow))
    )
    sample = F.slice(
        F.array_sort(F.collect_list(F.struct("ts_start", "topic", "partition", "leader", "prev_leader"))),
        1,
        ROUND_SAMPLE,
    )
    rounds = numbered.groupBy(*key, "round").agg(
        F.min("ts_start").alias("ts"),
        F.max("ts_start").alias("ts_end"),
        F.count(F.lit(1)).alias("n"),
        F.min(F.struct("ts_start", "cause")).alias("first"),
        F.max(F.struct("ts_start", "cause")).alias("last"),
        sample.alias("sample"),
    )
    ranked = Window.partitionBy("cluster", "kind").orderBy("ts", "controller_epoch")
    return rounds.withColumn("rank", F.row_number().over(ranked)).withColumn(
        "of_kind", F.count(F.lit(1)).over(Window.partitionBy("cluster", "kind"))
    )


def _top_findings(findings: DataFrame) -> DataFrame:
    order = Window.partitionBy("cluster").orderBy(severity_rank(), F.col("ts").asc_nulls_last(), "finding_id")
    return (
        findings.withColumn("rank", F.row_number().over(order))
        .withColumn("of_cluster", F.count(F.lit(1)).over(Window.partitionBy("cluster")))
        .filter(F.col("rank") <= CAPS[FINDING])
        .select(*_FINDING_COLUMNS, "of_cluster")
    )


def stories(spark: SparkSession, frames: ReplayFrames) -> list[Story]:
    """Every cluster's story from the replay's frames (nothing written)."""
    contexts_bc = spark.sparkContext.broadcast(frames.contexts)
    rounds = collect_arrow(
        election_rounds(leader_changes(frames.partition_timeline, contexts_bc))
        .filter(F.col("rank") <= CAPS[ELECTION])
        .orderBy("cluster", "ts", "kind")
    )
    found = collect_arrow(_top_findings(frames.findings).orderBy("cluster", "ts", "finding_id"))
    out = []
    for cluster in sorted(frames.contexts):
        mine = [r for r in rounds if r["cluster"] == cluster]
        left_out: dict[str, int] = {}
        for r in mine:
            left_out[f"{ELECTION}:{r['kind']}"] = max(int(r["of_kind"]) - CAPS[ELECTION], 0)
        told = [
            {
                "cluster": cluster,
                "kind": r["kind"],
                "controller_epoch": r["controller_epoch"],
                "ts": r["ts"],
                "ts_end": r["ts_end"],
                "n": int(r["n"]),
                "first_ref": r["first"]["cause"],
                "last_ref": r["last"]["cause"],
                "sample": r["sample"],
            }
            for r in mine
        ]
        fs = [f for f in found if f["cluster"] == cluster]
        if fs:
            left_out[FINDING] = max(int(fs[0]["of_cluster"]) - len(fs), 0)
        out.append(tell(frames.contexts[cluster], told, fs, left_out))
    return out


def story_rows(told: list[Story]) -> list[dict]:
    return [s.to_row() for story in told for s in story.sentences]


def run_story(spark: SparkSession, inputs: list[str], parse_options, replay_options) -> list[Story]:
    """``kafka-forensics story``: parse and replay in memory, then tell every cluster's story."""
    from .inspect_job import replayed_in_memory

    with replayed_in_memory(spark, inputs, parse_options, replay_options) as (_, frames):
        return stories(spark, frames)


def write_story(spark: SparkSession, told: list[Story], out_dir: str) -> None:
    write_text(spark, f"{out_dir}/{STORY_JSON}", story_json(told))


__all__ = [
    "STORY_JSON",
    "election_rounds",
    "leader_changes",
    "run_story",
    "stories",
    "story_document",
    "write_story",
]
