"""The simulated cluster's ``__cluster_metadata`` log, written as ``kafka-dump-log.sh
--cluster-metadata-decoder`` prints it (the input of parsers/metadata_dump.py).

KraftOps records one entry per metadata offset it allocates (records in the JSON field order of
metadata/src/main/resources/common/metadata/*.json@3.9.0-rc3, tagged fields only when not default,
as JsonConverterGenerator writes them). Nothing here draws from the RNG or moves the clock, so
recording never changes the simulated log files. Records written at the same instant form one
batch (one ``baseOffset: ...`` line); a record can be written in a batch of its own so that a fault
can drop the whole batch (a lost piece of the log: the offsets jump).
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from kafka_forensics.core.tables import METADATA_OTHER, METADATA_RECORD_EVENT_TYPES

DUMP_DIR = "metadata/__cluster_metadata-0"
SOURCE_DIR = "/var/lib/kafka/data/__cluster_metadata-0"
MIGRATING_DIR = "AAAAAAAAAAAAAAAAAAAAAA"  # DirectoryId.MIGRATING


@dataclass
class _Entry:
    offset: int
    ms: int
    epoch: int
    rtype: Optional[str]  # None = a LEADER_CHANGE control record
    version: int = 0
    data: dict = field(default_factory=dict)
    solo: bool = False
    dropped: bool = False


@dataclass(frozen=True)
class DumpSegment:
    """What ``LogOutput.ref_text`` needs of a file: its name."""

    name: str


class MetadataLog:
    """Metadata records of one simulation (kept only when a scenario enables it)."""

    def __init__(self) -> None:
        self.enabled = False
        self.entries: list[_Entry] = []

    def add(
        self,
        offset: int,
        ms: int,
        epoch: int,
        rtype: Optional[str],
        data: Optional[dict] = None,
        version: int = 0,
        solo: bool = False,
    ) -> Optional[_Entry]:
        if not self.enabled:
            return None
        entry = _Entry(offset, ms, epoch, rtype, version, data or {}, solo)
        self.entries.append(entry)
        return entry

    # ---- record builders (field order = the JSON schema's) ----------------------------------------
    @staticmethod
    def partition_record(p) -> dict:
        data = {
            "partitionId": p.index,
            "topicId": p.topic.topic_id,
            "replicas": list(p.replicas),
            "isr": list(p.isr),
            "removingReplicas": [],
            "addingReplicas": [],
            "leader": p.leader,
        }
        if getattr(p, "recovering", False):
            data["leaderRecoveryState"] = 1
        data.update(
            {
                "leaderEpoch": p.leader_epoch,
                "partitionEpoch": p.zk_version,
                "directories": [MIGRATING_DIR] * len(p.replicas),
            }
        )
        return data

    @staticmethod
    def partition_change(p, isr=None, leader=None, recovery=None) -> dict:
        data = {"partitionId": p.index, "topicId": p.topic.topic_id}
        if isr is not None:
            data["isr"] = list(isr)
        if leader is not None:
            data["leader"] = leader
        if recovery is not None:
            data["leaderRecoveryState"] = recovery
        return data

    @staticmethod
    def register_broker(b: int, incarnation: str, epoch: int) -> dict:
        return {
            "brokerId": b,
            "isMigratingZkBroker": False,
            "incarnationId": incarnation,
            "brokerEpoch": epoch,
            "endPoints": [{"name": "PLAINTEXT", "host": f"broker-{b}", "port": 9092, "securityProtocol": 0}],
            "features": [{"name": "metadata.version", "minSupportedVersion": 1, "maxSupportedVersion": 21}],
            "rack": None,
            "fenced": True,
            "inControlledShutdown": False,
        }  # logDirs: tagged, omitted when empty

    @staticmethod
    def registration_change(b: int, epoch: int, fenced: int, shutdown: int) -> dict:
        data = {"brokerId": b, "brokerEpoch": epoch}
        if fenced:
            data["fenced"] = fenced
        if shutdown:
            data["inControlledShutdown"] = shutdown
        return data

    # ---- output ---------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The dump's relative path: a segment is named after its first offset."""
        base = min((e.offset for e in self.entries), default=0)
        return f"{DUMP_DIR}/{base:020d}.log.dump"

    def write(self, root: Path, manifest: Optional[list]) -> tuple[str, int, int, dict]:
        """Write the dump; returns (relative name, records, lines, {offset: line number})."""
        base = min((e.offset for e in self.entries), default=0)
        name = self.name
        seg = DumpSegment(name)
        lines = [f"Dumping {SOURCE_DIR}/{base:020d}.log", f"Log starting offset: {base}"]
        line_of: dict[int, int] = {}
        records = 0
        position = 0
        for batch in self._batches():
            payloads = [_payload(e) for e in batch]
            size = 61 + sum(_value_size(p) + 10 for p in payloads)
            if batch[0].dropped:
                position += size
                continue
            first, last = batch[0], batch[-1]
            crc = zlib.crc32("".join(payloads).encode("utf-8"))
            lines.append(
                f"baseOffset: {first.offset} lastOffset: {last.offset} count: {len(batch)} baseSequence: -1 "
                f"lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: {first.epoch} "
                f"isTransactional: false isControl: {str(first.rtype is None).lower()} deleteHorizonMs: "
                f"OptionalLong.empty position: {position} CreateTime: {last.ms} size: {size} magic: 2 "
                f"compresscodec: none crc: {crc} isvalid: true"
            )
            position += size
            for entry, payload in zip(batch, payloads):
                head = f"| offset: {entry.offset} CreateTime: {entry.ms} "
                if entry.rtype is None:
                    lines.append(
                        head + "keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] controlType: LEADER_CHANGE(2)"
                    )
                    event_type, fields = "metadata_control", {}
                else:
                    lines.append(
                        head + f"keySize: -1 valueSize: {_value_size(payload)} sequence: -1 headerKeys: [] "
                        f"payload: {payload}"
                    )
                    event_type = METADATA_RECORD_EVENT_TYPES.get(entry.rtype, METADATA_OTHER)
                    fields = {"partition": entry.data["partitionId"]} if "partitionId" in entry.data else {}
                records += 1
                line_of[entry.offset] = len(lines)
                if manifest is not None:
                    manifest.append(((seg, len(lines), entry.ms), event_type, fields, "metadata", None))
        path = Path(root) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        return name, records, len(lines), line_of

    def _batches(self) -> list[list[_Entry]]:
        batches: list[list[_Entry]] = []
        for e in sorted(self.entries, key=lambda e: e.offset):
            prev = batches[-1][-1] if batches else None
            if (
                prev is None
                or e.solo
                or prev.solo
                or e.rtype is None
                or prev.rtype is None
                or e.ms != prev.ms
                or e.epoch != prev.epoch
                or e.offset != prev.offset + 1
            ):
                batches.append([e])
            else:
                batches[-1].append(e)
        return batches


def _payload(e: _Entry) -> str:
    if e.rtype is None:
        return ""
    return json.dumps({"type": e.rtype, "version": e.version, "data": e.data}, separators=(",", ":"))


def _value_size(payload: str) -> int:
    """A plausible serialized size (the dump prints the binary size; the text is about 3x longer)."""
    return max(4, len(payload) // 3)
