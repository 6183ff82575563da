"""``timeline`` and ``describe``: parse and replay in memory (nothing written), then read one
partition's story or every partition's state at an instant. Only the rows asked for reach the driver.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from kafka_forensics.core.errors import InputError
from kafka_forensics.replay.cluster import ClusterContext

from .discovery import discover
from .parse_job import events_of, parse_to_frames
from .replay_job import ReplayFrames, ReplayOptions, arrow_batches, collect_arrow, replay_frames


def _events_from_inputs(spark: SparkSession, inputs: list[str], parse_options) -> tuple[DataFrame, DataFrame]:
    """Parse without writing (timeline/describe print to the terminal)."""
    # Persisted: several actions follow, and each would parse every file again; materialising
    # whole partitions also keeps Python workers from being cut off mid-stream by a limit().
    unified = parse_to_frames(spark, discover(spark, list(inputs)), parse_options).persist(StorageLevel.MEMORY_AND_DISK)
    events = events_of(unified)
    if not events.select(F.lit(1)).limit(1).collect():
        unified.unpersist()
        raise InputError("no recognisable Kafka log lines in the inputs")
    return events, unified


@contextlib.contextmanager
def replayed_in_memory(
    spark: SparkSession, inputs: list[str], parse_options, replay_options: ReplayOptions
) -> Iterator[tuple[DataFrame, ReplayFrames]]:
    """Parse and replay without writing; yields (events, frames) and frees both."""
    events, unified = _events_from_inputs(spark, inputs, parse_options)
    try:
        with arrow_batches(spark):
            frames = replay_frames(spark, events, replay_options)
            try:
                yield events, frames
            finally:
                frames.unpersist()
    finally:
        unified.unpersist()


@dataclass
class Timeline:
    """One partition's story: its state intervals, its replicas', its findings and the lines that caused them."""

    rows: list[dict] = field(default_factory=list)
    replicas: list[dict] = field(default_factory=list)
    findings: list[dict] = field(default_factory=list)
    lines: dict[str, str] = field(default_factory=dict)  # file:line -> message


def run_timeline(
    spark: SparkSession,
    inputs: list[str],
    parse_options,
    replay_options: ReplayOptions,
    topic: str,
    partition: int,
    cluster: Optional[str] = None,
) -> Timeline:
    """``kafka-forensics timeline``: the replay's rows for one partition (``replay_options`` selects it)."""
    with replayed_in_memory(spark, inputs, parse_options, replay_options) as (events, frames):

        def pick(df: DataFrame) -> DataFrame:
            return df if cluster is None else df.filter(df["cluster"] == cluster)

        return Timeline(
            rows=collect_arrow(pick(frames.partition_timeline).orderBy("cluster", "seq")),
            replicas=collect_arrow(pick(frames.replica_timeline).orderBy("cluster", "replica", "seq")),
            findings=collect_arrow(pick(frames.findings).orderBy("cluster", "ts", "finding_id")),
            lines={
                f"{r['source_file']}:{r['line_no']}": r["message"]
                for r in collect_arrow(
                    events.filter((events["topic"] == topic) & (events["partition"] == partition)).select(
                        "source_file", "line_no", "message"
                    )
                )
            },
        )


@dataclass
class Described:
    """Every partition's state at an instant, the partitions first seen after it, and the controllers."""

    rows: list[dict] = field(default_factory=list)
    later: list[dict] = field(default_factory=list)
    contexts: dict[str, ClusterContext] = field(default_factory=dict)
    last: Optional[Any] = None  # the last state change in the logs


def run_describe(
    spark: SparkSession, inputs: list[str], parse_options, replay_options: ReplayOptions, at: dt.datetime
) -> Described:
    """``kafka-forensics describe``: what ``kafka-topics --describe`` would have printed at ``at``."""
    with replayed_in_memory(spark, inputs, parse_options, replay_options) as (_, frames):
        at_lit = F.lit(at).cast("timestamp")
        known = frames.partition_timeline.filter(
            (F.col("ts_start") <= at_lit) & (F.col("ts_end").isNull() | (F.col("ts_end") > at_lit))
        )
        last = collect_arrow(frames.partition_timeline.agg(F.max("ts_start").alias("last")))
        return Described(
            rows=collect_arrow(known.orderBy("cluster", "topic", "partition")),
            later=collect_arrow(
                frames.partition_timeline.groupBy("cluster", "topic", "partition")
                .agg(F.min("ts_start").alias("first"), F.max("ts_start").alias("last"))
                .filter(F.col("first") > at_lit)
                .orderBy("cluster", "topic", "partition")
            ),
            contexts=frames.contexts,
            last=last[0]["last"] if last else None,
        )


__all__ = ["Described", "Timeline", "replayed_in_memory", "run_describe", "run_timeline"]
