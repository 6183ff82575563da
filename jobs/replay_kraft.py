"""KRaft metadata events before the partition replay: topic names and topic deletions per partition.

A ``PartitionChangeRecord`` names its topic only by ``topicId``; the parser resolves it from a
``TopicRecord`` in the same file, and here the rest are resolved from every dumped file (a join on
the topic id: a topic's ``TopicRecord`` may be in an older segment or a snapshot). A
``RemoveTopicRecord`` names no partition: it is repeated for every partition the records know of
that topic, so each partition's replay sees its end. Only ``log_kind = metadata`` rows are joined.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kafka_forensics.replay.cluster import CLUSTER_EVENT_TYPES, OFFSET_GAP_ATTR


def cluster_rows_filter() -> Column:
    """The rows ``build_cluster_context`` reads: the cluster event types, and the metadata records
    that follow skipped offsets (any record type; few per dump). Twin of ``cluster.is_cluster_row``."""
    return F.col("event_type").isin(*sorted(CLUSTER_EVENT_TYPES)) | F.col("attrs")[OFFSET_GAP_ATTR].isNotNull()


def prepare_metadata_events(ev: DataFrame) -> DataFrame:
    """``ev`` with metadata topic names resolved and topic removals fanned out to partitions."""
    is_meta = F.col("log_kind") == "metadata"
    meta, rest = ev.filter(is_meta), ev.filter(~is_meta | F.col("log_kind").isNull())
    topic_id = F.col("attrs")["topic_id"]
    names = (
        meta.filter((F.col("event_type") == "metadata_topic") & F.col("topic").isNotNull() & topic_id.isNotNull())
        .groupBy("cluster", topic_id.alias("k_topic_id"))
        .agg(F.min("topic").alias("k_topic"))
    )
    keyed = meta.withColumn("k_topic_id", topic_id)
    named = (
        keyed.join(F.broadcast(names), ["cluster", "k_topic_id"], "left")
        .withColumn("topic", F.coalesce(F.col("topic"), F.col("k_topic")))
        .drop("k_topic")
    )
    partitions = (
        named.filter(
            F.col("event_type").isin("metadata_partition", "metadata_partition_change")
            & F.col("partition").isNotNull()
            & F.col("k_topic_id").isNotNull()
        )
        .select("cluster", "k_topic_id", F.col("partition").alias("k_partition"))
        .distinct()
    )
    removals = (
        named.filter(F.col("event_type") == "metadata_remove_topic")
        .join(partitions, ["cluster", "k_topic_id"], "inner")
        .withColumn("partition", F.col("k_partition"))
        .drop("k_partition")
    )
    kept = named.filter(F.col("event_type") != "metadata_remove_topic")
    return rest.unionByName(kept.drop("k_topic_id")).unionByName(removals.drop("k_topic_id"))
