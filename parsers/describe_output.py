"""What operators collect at incident time, as text: ``kafka-topics --describe`` and ``kafka-metadata-quorum
describe --status``. The replay compares it with its own state at the snapshot's time (replay/final_state.py).

``kafka-topics --describe`` prints one line per topic and one tab-indented line per partition, fields
``Key: value`` separated by tabs:

* topic line, 0.10 - 2.3: ``Topic:t<TAB>PartitionCount:3<TAB>ReplicationFactor:3<TAB>Configs:k=v,...``
  (K:admin/TopicCommand.scala@0.10.2.2:206, @2.3.0:366), 1.1+ with ``<TAB>MarkedForDeletion:true``
  (@1.1.1:226-228); 2.4 - 3.4 ``Topic: t<TAB>PartitionCount: 3<TAB>...`` (@2.4.1:103-108), 2.8+ with
  ``<TAB>TopicId: X`` after the name (@2.8.2:116-122); 3.5+ the same from Java
  (T:tools/TopicCommand.java@3.9.0-rc3:301-308);
* partition line: ``<TAB>Topic: t<TAB>Partition: 0<TAB>Leader: 1<TAB>Replicas: 1,2,3<TAB>Isr: 1,2,3``
  (@0.10.2.2:217-221; the leader is ``none`` when absent, and 0.10 prints ``-1``), then
  ``<TAB>MarkedForDeletion: true`` (1.1+, @1.1.1:241-248), ``<TAB>Adding Replicas: ..<TAB>Removing
  Replicas: ..`` during a reassignment (2.8+, @2.8.2:163-164), ``<TAB>Elr: ..<TAB>LastKnownElr: ..`` or
  ``N/A`` for each (3.9, KIP-966, T:tools/TopicCommand.java@3.9.0-rc3:356-390; the same at trunk
  1eb7644, 2024-10-25). No TopicCommand of the mirror prints an ``Offline:`` field; a field this module does
  not know is kept in ``other``, never dropped.

``kafka-metadata-quorum describe --status`` prints ``LeaderId:`` and ``LeaderEpoch:`` lines among others
(T:tools/MetadataQuorumCommand.java@3.9.0-rc3:266-275): the active controller and its epoch.

Every line of the text is accounted for: a partition, a topic, a quorum field, blank, or ``other_lines``
(tool warnings, ``Topic x doesn't exist!``) with its line number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from kafka_forensics.core.errors import InputError

_FIELD = re.compile(r"^([A-Za-z][A-Za-z ]*?)\s*:\s?(.*)$")
_QUORUM = re.compile(
    r"^(ClusterId|LeaderId|LeaderEpoch|HighWatermark|MaxFollowerLag|MaxFollowerLagTimeMs|CurrentVoters|CurrentObservers):\s*(.*)$"
)
_LISTS = {
    "Replicas": "replicas",
    "Isr": "isr",
    "Elr": "elr",
    "LastKnownElr": "last_known_elr",
    "Adding Replicas": "adding_replicas",
    "Removing Replicas": "removing_replicas",
}

_TOPIC_FIELDS = ("Topic", "TopicId", "PartitionCount", "ReplicationFactor", "Configs", "MarkedForDeletion")


@dataclass(frozen=True)
class DescribedPartition:
    topic: str
    partition: int
    leader: Optional[int]  # None: "none" or -1 (no leader)
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    line_no: int
    elr: Optional[tuple[int, ...]] = None  # None: not printed, or N/A (ZooKeeper mode)
    last_known_elr: Optional[tuple[int, ...]] = None
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    marked_for_deletion: bool = False
    other: tuple[tuple[str, str], ...] = ()  # fields this module does not know, as printed
    printed: tuple[str, ...] = ()  # the list fields the line printed (``_LISTS`` names), in order


@dataclass(frozen=True)
class DescribedTopic:
    topic: str
    line_no: int
    topic_id: Optional[str] = None
    partition_count: Optional[int] = None
    replication_factor: Optional[int] = None
    configs: Optional[tuple[tuple[str, str], ...]] = None  # None: no ``Configs:`` field printed
    marked_for_deletion: bool = False
    other: tuple[tuple[str, str], ...] = ()  # fields this module does not know, as printed


@dataclass(frozen=True)
class QuorumStatus:
    leader_id: Optional[int]
    leader_epoch: Optional[int]
    line_no: int  # of the LeaderId line


@dataclass(frozen=True)
class Snapshot:
    """One file of tool output, parsed. ``source`` is the file's name as given (evidence is ``source:line``)."""

    source: str
    topics: tuple[DescribedTopic, ...] = ()
    partitions: tuple[DescribedPartition, ...] = ()
    quorum: Optional[QuorumStatus] = None
    other_lines: tuple[tuple[int, str], ...] = field(default=())

    def ref(self, line_no: int) -> str:
        return f"{self.source}:{line_no}"


def _ids(text: str) -> Optional[tuple[int, ...]]:
    text = text.strip()
    if text.upper() == "N/A":
        return None
    return tuple(int(x) for x in re.findall(r"-?\d+", text))


def _leader(text: str) -> Optional[int]:
    text = text.strip()
    if not re.fullmatch(r"-?\d+", text):
        return None  # "none"
    value = int(text)
    return None if value < 0 else value


def _configs(text: str) -> tuple[tuple[str, str], ...]:
    out = []
    for item in filter(None, (s.strip() for s in re.split(r",(?=[\w.]+=)", text))):  # values may hold commas
        key, _, value = item.partition("=")
        out.append((key, value))
    return tuple(out)


def _fields(line: str) -> list[tuple[str, str]]:
    out = []
    for part in line.strip("\r\n").split("\t"):
        m = _FIELD.match(part.strip())
        if m:
            out.append((m.group(1).strip(), m.group(2).strip()))
    return out


def parse_describe(text: str, source: str) -> Snapshot:
    """Parse ``kafka-topics --describe`` and/or ``kafka-metadata-quorum describe --status`` output."""
    topics: list[DescribedTopic] = []
    partitions: list[DescribedPartition] = []
    other: list[tuple[int, str]] = []
    quorum: dict[str, tuple[str, int]] = {}
    for line_no, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        q = _QUORUM.match(raw.strip())
        if q:
            quorum[q.group(1)] = (q.group(2).strip(), line_no)
            continue
        fields = _fields(raw)
        keys = [k for k, _ in fields]
        if not fields or keys[0] != "Topic":
            other.append((line_no, raw))
            continue
        values = dict(fields)
        if "Partition" in values and values["Partition"].lstrip("-").isdigit():
            extra = tuple(
                (k, v) for k, v in fields if k not in ("Topic", "Partition", "Leader", "MarkedForDeletion", *_LISTS)
            )
            lists = {_LISTS[k]: _ids(v) for k, v in fields if k in _LISTS}
            partitions.append(
                DescribedPartition(
                    topic=values["Topic"],
                    partition=int(values["Partition"]),
                    leader=_leader(values.get("Leader", "none")),
                    replicas=lists.get("replicas") or (),
                    isr=lists.get("isr") or (),
                    line_no=line_no,
                    elr=lists.get("elr"),
                    last_known_elr=lists.get("last_known_elr"),
                    adding_replicas=lists.get("adding_replicas") or (),
                    removing_replicas=lists.get("removing_replicas") or (),
                    marked_for_deletion=values.get("MarkedForDeletion", "").lower() == "true",
                    other=extra,
                    printed=tuple(lists),
                )
            )
        elif "PartitionCount" in values:
            count, factor = values.get("PartitionCount", ""), values.get("ReplicationFactor", "")
            topics.append(
                DescribedTopic(
                    topic=values["Topic"],
                    line_no=line_no,
                    topic_id=values.get("TopicId") or None,
                    partition_count=int(count) if count.isdigit() else None,
                    replication_factor=int(factor) if factor.isdigit() else None,
                    configs=_configs(values["Configs"]) if "Configs" in values else None,
                    marked_for_deletion=values.get("MarkedForDeletion", "").lower() == "true",
                    other=tuple((k, v) for k, v in fields if k not in _TOPIC_FIELDS),
                )
            )
        else:
            other.append((line_no, raw))
    status = None
    if "LeaderId" in quorum:
        leader, line_no = quorum["LeaderId"]
        epoch = quorum.get("LeaderEpoch", ("", 0))[0]
        status = QuorumStatus(
            leader_id=int(leader) if leader.lstrip("-").isdigit() and int(leader) >= 0 else None,
            leader_epoch=int(epoch) if epoch.lstrip("-").isdigit() else None,
            line_no=line_no,
        )
    if not topics and not partitions and status is None:
        raise InputError(f"{source}: no kafka-topics --describe or kafka-metadata-quorum describe --status line in it")
    return Snapshot(source, tuple(topics), tuple(partitions), status, tuple(other))


__all__ = [
    "DescribedPartition",
    "DescribedTopic",
    "QuorumStatus",
    "Snapshot",
    "parse_describe",
]
