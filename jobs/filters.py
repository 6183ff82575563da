"""The filters of ``replay.filters`` (``--topic``, ``--partitions``, ``--start-time``, ``--end-time``) as
Spark Columns: the same rules, written for DataFrames (``replay.filters`` says what they keep and why;
``tests/jobs/test_filters.py`` holds both forms equal on real events).
"""

from __future__ import annotations

from typing import Optional

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kafka_forensics.replay.cluster import CLUSTER_EVENT_TYPES
from kafka_forensics.replay.filters import (
    KAFKA_TIME_FORMAT,
    TOPIC_CHARS,
    EventFilter,
    event_filter_from,
    parse_kafka_time,
    parse_partitions,
)


def place_condition(flt: EventFilter, keep_unplaced: bool = True) -> Column:
    """Lines of the selected topic/partitions; with ``keep_unplaced``, also every line about no topic."""
    chosen = F.col("topic") == F.lit(flt.topic)
    if flt.partitions:
        chosen = chosen & (F.col("partition").isNull() | F.col("partition").isin(*flt.partitions))
    unplaced = F.col("topic").isNull()
    if not keep_unplaced:
        unplaced = unplaced & F.col("event_type").isin(*sorted(CLUSTER_EVENT_TYPES))
    return F.coalesce(chosen, F.lit(False)) | unplaced


def time_condition(flt: EventFilter, keep_cluster_before_start: bool = True) -> Column:
    cond = F.lit(True)
    if flt.start is not None:
        after = F.col("ts") >= F.lit(flt.start).cast("timestamp")
        if keep_cluster_before_start:
            after = (
                after
                | F.col("event_type").isin(*sorted(CLUSTER_EVENT_TYPES))
                | (F.col("log_kind") == F.lit("metadata"))
            )
        cond = cond & F.coalesce(after, F.lit(False))
    if flt.end is not None:
        cond = cond & F.coalesce(F.col("ts") <= F.lit(flt.end).cast("timestamp"), F.lit(False))
    return cond


def apply_time(events: DataFrame, flt: Optional[EventFilter]) -> DataFrame:
    """The replay's time window (cluster lines before start-time are kept, see the module doc)."""
    if flt is None or not flt.has_time:
        return events
    return events.filter(time_condition(flt))


def apply_place(events: DataFrame, flt: Optional[EventFilter]) -> DataFrame:
    if flt is None or not flt.has_place:
        return events
    return events.filter(place_condition(flt))


def apply_strict(events: DataFrame, flt: Optional[EventFilter]) -> DataFrame:
    """What ``merge`` shows: the window exactly, and for --topic the topic's lines plus the cluster
    lines (elections, broker changes) that explain them."""
    if flt is None or not flt.active:
        return events
    cond = time_condition(flt, keep_cluster_before_start=False)
    if flt.has_place:
        cond = cond & place_condition(flt, keep_unplaced=False)
    return events.filter(cond)


__all__ = [
    "KAFKA_TIME_FORMAT",
    "TOPIC_CHARS",
    "EventFilter",
    "apply_place",
    "apply_strict",
    "apply_time",
    "event_filter_from",
    "parse_kafka_time",
    "parse_partitions",
    "place_condition",
    "time_condition",
]
