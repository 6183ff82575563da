"""``kafka-topics --describe`` text -> a small JSON form (the lab's record of what Kafka said).

Every release prints one line per topic (``Topic:x<TAB>PartitionCount:...`` up to 2.x,
``Topic: x<TAB>TopicId: ...`` later) and one tab-indented line per partition
(``Topic: x<TAB>Partition: 0<TAB>Leader: 1<TAB>Replicas: 1,2<TAB>Isr: 1,2`` plus, depending on the
release, ``Offline:``, ``Adding Replicas:``, ``Removing Replicas:``, ``Elr:``, ``LastKnownElr:``).
Fields are ``Key: value`` pairs separated by tabs; a leader of ``none`` or ``-1`` means no leader.
Keys this module does not know are kept under ``other``, never dropped.
"""

from __future__ import annotations

import re
from typing import Optional

_FIELD = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?)\s*:\s*(.*)$")
_LISTS = {
    "Replicas": "replicas",
    "Isr": "isr",
    "Offline": "offline",
    "Adding Replicas": "adding_replicas",
    "Removing Replicas": "removing_replicas",
    "Elr": "elr",
    "LastKnownElr": "last_known_elr",
}


def _fields(line: str) -> dict[str, str]:
    out = {}
    for part in line.split("\t"):
        m = _FIELD.match(part)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


def _ids(text: str) -> Optional[list[int]]:
    """``1,2,3`` -> [1, 2, 3]; empty -> []; ``N/A`` (ZooKeeper mode has no ELR) -> None."""
    if text.upper() == "N/A":
        return None
    return [int(x) for x in re.findall(r"-?\d+", text)]


def _leader(text: str) -> Optional[int]:
    if not re.fullmatch(r"-?\d+", text):
        return None  # "none"
    value = int(text)
    return None if value < 0 else value


def _configs(text: str) -> dict[str, str]:
    out = {}
    for item in filter(None, (s.strip() for s in re.split(r",(?=[\w.]+=)", text))):  # values may hold commas
        key, _, value = item.partition("=")
        out[key] = value
    return out


def parse_describe(text: str) -> dict:
    """``{"topics": {name: {..., "partitions": {"0": {...}}}}}`` (JSON-ready, keys sorted)."""
    topics: dict[str, dict] = {}
    for raw in text.splitlines():
        if not raw.strip():
            continue
        f = _fields(raw)
        name = f.get("Topic")
        if name is None:
            continue
        topic = topics.setdefault(name, {"topic": name, "partitions": {}})
        if "Partition" in f:
            part = {"partition": int(f["Partition"]), "leader": _leader(f.get("Leader", "none"))}
            other = {}
            for key, value in f.items():
                if key in _LISTS:
                    part[_LISTS[key]] = _ids(value)
                elif key not in ("Topic", "Partition", "Leader"):
                    other[key] = value
            if other:
                part["other"] = other
            topic["partitions"][str(part["partition"])] = part
        else:
            for key, value in f.items():
                if key == "TopicId":
                    topic["topic_id"] = value
                elif key == "PartitionCount":
                    topic["partition_count"] = int(value)
                elif key == "ReplicationFactor":
                    topic["replication_factor"] = int(value)
                elif key == "Configs":
                    topic["configs"] = _configs(value)
                elif key != "Topic":
                    topic.setdefault("other", {})[key] = value
    return {"topics": {k: topics[k] for k in sorted(topics)}}


def partitions(parsed: dict, include_internal: bool = True):
    """Yield ``(topic, partition, state)`` of a parsed describe, sorted."""
    for name, topic in parsed["topics"].items():
        if not include_internal and name.startswith("__"):
            continue
        for key in sorted(topic["partitions"], key=int):
            yield name, int(key), topic["partitions"][key]
