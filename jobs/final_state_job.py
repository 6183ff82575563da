"""The final-state oracle in Spark: collect, for each snapshot, only the timeline rows ``replay.final_state``
compares (per described partition its first row, the rows around T and its state at T; the states at T of
the described topics' other partitions; the topics alive at T the snapshot does not list, counted and at
most ``MAX_NAMED_TOPICS`` named). What reaches the driver is bounded by the snapshot, which the driver has
already read, not by the logs.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Optional

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from kafka_forensics.core.errors import InputError
from kafka_forensics.parsers.describe_output import parse_describe
from kafka_forensics.replay.cluster import ClusterContext
from kafka_forensics.replay.final_state import (
    GONE,
    MAX_NAMED_TOPICS,
    SnapshotAt,
    compare_clusters,
)
from kafka_forensics.replay.findings import Finding

from .fs import scheme_of
from .impact_job import effective_frame

_KEY = ("cluster", "topic", "partition")


def read_snapshot(spark: Optional[SparkSession], path: str, at: Optional[dt.datetime]) -> SnapshotAt:
    """Read and parse one snapshot file: a local path here, any other path Spark reads (``spark``
    None: local paths only). Without ``at``, the file's modification time (UTC, to the millisecond as
    Hadoop's FileSystem gives it) is the snapshot's time, and the findings say so."""
    if scheme_of(path) is None:
        content, mtime = _read_local(path)
    else:
        if spark is None:
            raise InputError(f"--describe {path}: only local files can be read without Spark")
        content, mtime = _read_with_spark(spark, path)
    snapshot = parse_describe(content.decode("utf-8", errors="replace"), path)
    if at is not None:
        return SnapshotAt(snapshot, at, "--describe-at")
    return SnapshotAt(snapshot, mtime, "file modification time")


def _read_local(path: str) -> tuple[bytes, dt.datetime]:
    try:
        with open(path, "rb") as handle:
            return handle.read(), local_mtime(path)
    except IsADirectoryError:
        raise InputError(f"--describe {path}: expected one file, found a directory") from None
    except OSError as err:  # a missing path is the user's: one sentence, exit 2
        raise InputError(f"--describe {path}: cannot read it ({err.strerror or type(err).__name__})") from err


def _read_with_spark(spark: SparkSession, path: str) -> tuple[bytes, dt.datetime]:
    try:
        rows = spark.read.format("binaryFile").load(path).select("content", "modificationTime").collect()
    except Exception as err:  # a missing path is the user's: one sentence, exit 2
        raise InputError(f"--describe {path}: cannot read it ({type(err).__name__})") from err
    if len(rows) != 1:
        raise InputError(f"--describe {path}: expected one file, found {len(rows)}")
    mtime = rows[0]["modificationTime"]
    if mtime.tzinfo is None:  # Spark hands local wall time to Python: turn it into the instant it is
        mtime = mtime.astimezone()
    return bytes(rows[0]["content"]), mtime.astimezone(dt.timezone.utc)


def local_mtime(path: str) -> dt.datetime:
    """A local file's modification time as an aware UTC instant, to the millisecond (as Hadoop's
    local FileSystem and Spark's binaryFile source give it)."""
    millis = os.stat(path).st_mtime_ns // 1_000_000
    return dt.datetime.fromtimestamp(millis // 1000, dt.timezone.utc).replace(microsecond=(millis % 1000) * 1000)


def _as_dicts(rows) -> list[dict]:
    return [r.asDict(recursive=True) for r in rows]


def final_state_findings(
    spark: SparkSession,
    timeline: DataFrame,
    contexts: dict[str, ClusterContext],
    snapshots: tuple[SnapshotAt, ...],
    lag: dt.timedelta,
    skew: dt.timedelta,
) -> list[Finding]:
    """Every ``final_state_mismatch`` finding of ``snapshots`` against the replayed ``timeline``."""
    from .replay_job import collect_arrow

    if not snapshots:
        return []
    eff = effective_frame(timeline).filter(F.col("ts_start").isNotNull())
    out: list[Finding] = []
    for s in snapshots:
        at = F.lit(s.at).cast("timestamp")
        until = F.lit(s.at + skew).cast("timestamp")
        since = F.lit(s.at - lag).cast("timestamp")
        upto = eff.filter(F.col("ts_start") <= until)
        described = sorted({d.topic for d in s.snapshot.partitions} | {t.topic for t in s.snapshot.topics})
        names = F.broadcast(spark.createDataFrame([(t,) for t in described] or [("",)], "d_topic string"))
        ours = upto.join(names, F.col("topic") == F.col("d_topic"), "left").withColumn(
            "_ours", F.col("d_topic").isNotNull()
        )
        w = Window.partitionBy(*_KEY)
        at_or_before = F.when(F.col("ts_start") <= at, F.col("seq"))
        marked = ours.withColumn("_first", F.min("seq").over(w)).withColumn("_current", F.max(at_or_before).over(w))
        window = (F.col("ts_start") <= until) & (F.col("ts_end").isNull() | (F.col("ts_end") > since))
        needed = marked.filter(
            F.col("_ours") & ((F.col("seq") == F.col("_first")) | (F.col("seq") == F.col("_current")) | window)
        )
        rows = collect_arrow(needed.drop("d_topic", "_ours", "_first", "_current").orderBy(*_KEY, "seq"))
        current = collect_arrow(
            marked.filter(F.col("_ours") & (F.col("seq") == F.col("_current")))
            .drop("d_topic", "_ours", "_first", "_current")
            .orderBy(*_KEY)
        )
        # topics the snapshot does not list, alive at T: per topic the earliest first row of its alive partitions
        not_ours = marked.filter(~F.col("_ours"))
        alive = not_ours.filter(
            (F.col("seq") == F.col("_current")) & (F.col("state").isNull() | ~F.col("state").isin(*GONE))
        ).select(*_KEY)
        firsts = not_ours.filter(F.col("seq") == F.col("_first")).select(*_KEY, "ts_start", "cause")
        alive_topics = (
            alive.join(firsts, list(_KEY))
            .groupBy("cluster", "topic")
            .agg(F.min(F.struct("ts_start", "cause")).alias("first"))
        )
        totals = {
            r["cluster"]: int(r["n"])
            for r in collect_arrow(alive_topics.groupBy("cluster").agg(F.count(F.lit(1)).alias("n")))
        }
        wn = Window.partitionBy("cluster").orderBy("topic")
        named = collect_arrow(
            alive_topics.withColumn("_n", F.row_number().over(wn))
            .filter(F.col("_n") <= MAX_NAMED_TOPICS)
            .select("cluster", "topic", F.col("first.cause").alias("cause"))
            .orderBy("cluster", "topic")
        )
        by_partition: dict[tuple[str, str, int], list[dict]] = {}
        for r in rows:
            by_partition.setdefault((r["cluster"], r["topic"], r["partition"]), []).append(r)
        other_topics: dict[str, list[tuple[str, str]]] = {}
        for r in named:
            other_topics.setdefault(r["cluster"], []).append((r["topic"], r["cause"]))
        out += compare_clusters(s, by_partition, current, other_topics, totals, contexts, lag, skew)
    return out


__all__ = ["final_state_findings", "local_mtime", "read_snapshot"]
