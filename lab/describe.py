"""``kafka-topics --describe`` text -> the small JSON form the lab records in truth.json.

The text is parsed by the tool's one describe parser (``parsers.describe_output``, which also feeds the
final-state oracle); this module only lays its result out as JSON: per topic its id, partition count,
replication factor, configs and unknown fields (``other``), per partition its leader (None for ``none``
or ``-1``), every list field the line printed (``Elr``/``LastKnownElr`` of ``N/A`` as None) and its
unknown fields. Keys are sorted so that a recording is byte-stable.
"""

from __future__ import annotations

from kafka_forensics.parsers.describe_output import DescribedPartition, DescribedTopic
from kafka_forensics.parsers.describe_output import parse_describe as parse_snapshot


def _partition(d: DescribedPartition) -> dict:
    part: dict = {"partition": d.partition, "leader": d.leader}
    for name in d.printed:
        value = getattr(d, name)
        part[name] = None if value is None else list(value)
    other = dict(d.other)
    if d.marked_for_deletion:
        other["MarkedForDeletion"] = "true"
    if other:
        part["other"] = other
    return part


def _topic(t: DescribedTopic) -> dict:
    topic: dict = {"topic": t.topic, "partitions": {}}
    if t.topic_id is not None:
        topic["topic_id"] = t.topic_id
    if t.partition_count is not None:
        topic["partition_count"] = t.partition_count
    if t.replication_factor is not None:
        topic["replication_factor"] = t.replication_factor
    if t.configs is not None:
        topic["configs"] = dict(t.configs)
    other = dict(t.other)
    if t.marked_for_deletion:
        other["MarkedForDeletion"] = "true"
    if other:
        topic["other"] = other
    return topic


def parse_describe(text: str) -> dict:
    """``{"topics": {name: {..., "partitions": {"0": {...}}}}}`` (JSON-ready, keys sorted)."""
    snapshot = parse_snapshot(text, "describe")
    topics: dict[str, dict] = {t.topic: _topic(t) for t in snapshot.topics}
    for d in snapshot.partitions:
        topic = topics.setdefault(d.topic, {"topic": d.topic, "partitions": {}})
        topic["partitions"][str(d.partition)] = _partition(d)
    return {"topics": {k: topics[k] for k in sorted(topics)}}


def partitions(parsed: dict, include_internal: bool = True):
    """Yield ``(topic, partition, state)`` of a parsed describe, sorted."""
    for name, topic in parsed["topics"].items():
        if not include_internal and name.startswith("__"):
            continue
        for key in sorted(topic["partitions"], key=int):
            yield name, int(key), topic["partitions"][key]
