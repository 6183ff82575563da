"""`kafka-dump-log.sh --cluster-metadata-decoder` output → metadata event rows (log_kind ``metadata``).

A KRaft cluster's partition history is the ``__cluster_metadata`` log itself; this module reads the
text that ``DumpLogSegments`` prints for its segments (``*.log``) and snapshots (``*.checkpoint``).
The payload of each record is one JSON object, so it is read with ``json.loads``, not with the Lark
grammars: the log4j grammars describe free text, while here the structure is already explicit
and a grammar would only re-implement a JSON parser.

The exact shape (``K:tools/DumpLogSegments.scala@3.9.0-rc3`` ``dumpLog``/``printBatchLevel``/
``ClusterMetadataLogMessageParser``; unchanged on trunk@1eb7644, the newest 4.0-line code in the
mirror, which has no 4.0.0 tag)::

    Dumping /var/lib/kafka/__cluster_metadata-0/00000000000000000000.log
    Log starting offset: 0                                   (segments; "Snapshot end offset: N,
                                                              epoch: E" for a .checkpoint)
    baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1
      producerEpoch: -1 partitionLeaderEpoch: 1 isTransactional: false isControl: false
      deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000000 size: 150 magic: 2
      compresscodec: none crc: 1234 isvalid: true            (one line)
    | offset: 0 CreateTime: 1700000000000 keySize: -1 valueSize: 30 sequence: -1 headerKeys: []
      payload: {"type":"TOPIC_RECORD","version":0,"data":{"name":"t","topicId":"..."}}   (one line)

With ``--skip-record-metadata`` a record line is ``" payload: {...}"`` (the ``| `` indent is printed
only before a key, and metadata records have none), and a control record prints an empty line.
Control records (``isControl: true``) print ``controlType: LEADER_CHANGE(2)``, ``SnapshotHeader
{...}``, ``SnapshotFooter {...}``, ``KRaftVersion {...}`` or ``KRaftVoters {...}`` instead of a
payload; 4.1 decodes the leader change too, ``LeaderChange: {"version":0,"leaderId":3,...}`` (the
recorded 4.1 dumps, sample_logs/real-4.1-kraft-*/metadata). A record that fails to decode prints ``payload: Error at N, skipping. ...``.

JSON rendering (``generator/.../JsonConverterGenerator.java@3.9.0-rc3`` ``generateWrite``): field
names are camelCase; every non-tagged field of the record's version is written even when it holds
its default; a *tagged* field is written only when it differs from its default. So in a
``PartitionChangeRecord`` (``metadata/src/main/resources/common/metadata/PartitionChangeRecord.json@
3.9.0-rc3``, all fields but partitionId/topicId tagged) an absent ``isr``/``leader``/``replicas``
means "unchanged" (leader default -2 = ``NO_LEADER_CHANGE``), and an absent
``leaderRecoveryState`` means -1 (no change); in a ``PartitionRecord`` it means 0 (RECOVERED).

Offset gaps: ``__cluster_metadata`` is never compacted (``cleanup.policy=delete``, and the
KRaft log only drops whole segments below a snapshot), so within one dumped segment every batch
starts at the previous batch's ``lastOffset + 1``. The first record after a jump carries
``attrs.offset_gap_after`` (the last offset before it) and ``offset_gap_prev_line`` (that record's
line); a segment or snapshot starting at offset N > 0 is not a gap.

Accounting: every line is a record (a metadata or control record), a continuation line (the
structure lines: file and batch headers, trailer and stderr notes, which describe the records
around them) or quarantined, so ``lines_read = records + continuation_lines + quarantined``.
Lists go to ``attrs`` as comma-joined text (``""`` = present and empty; absent key = absent field).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
import zlib
from typing import Any, Optional

from kafka_forensics.core.tables import EVENT_COLUMNS, METADATA_CONTROL, METADATA_OTHER, METADATA_RECORD_EVENT_TYPES

from .reader import GZIP_MAGIC, read_lines, repair_counts

COL = {name: i for i, name in enumerate(EVENT_COLUMNS)}
LOG_KIND = "metadata"
DIALECT = "kraft-metadata"

_DUMPING = re.compile(r"^Dumping (.+)$")
_STARTING = re.compile(r"^(?:Log starting offset|Starting offset): (-?\d+)$")
_SNAPSHOT = re.compile(r"^Snapshot end offset: (-?\d+), epoch: (-?\d+)$")
_BOOTSTRAP = "KRaft bootstrap snapshot"
_BATCH = re.compile(
    r"^baseOffset: (?P<base>-?\d+) lastOffset: (?P<last>-?\d+) count: (?P<count>\S+) .*?"
    r"partitionLeaderEpoch: (?P<epoch>-?\d+) isTransactional: \w+ isControl: (?P<control>true|false)"
    r".* position: \d+ (?:CreateTime|LogAppendTime|NoTimestampType): (?P<ts>-?\d+) size: \d+"
)
_RECORD = re.compile(
    r"^\| offset: (?P<offset>-?\d+) (?:CreateTime|LogAppendTime|NoTimestampType): (?P<ts>-?\d+) "
    r"keySize: -?\d+ valueSize: -?\d+(?: sequence: -?\d+ headerKeys: \[[^\]]*\])?(?P<rest>.*)$"
)
_CONTROL = re.compile(
    r"^ (?:controlType: (?P<ctype>\w+)\(-?\d+\)|(?P<kind>SnapshotHeader|SnapshotFooter|"
    r"KRaftVersion|KRaftVoters|LeaderChange):? (?P<json>\{.*\}))$"
)
_PAYLOAD = " payload: "
_TRAILER = re.compile(
    r"^(?:Found \d+ invalid bytes at the end of .+|Non-consecutive offsets in .+|"
    r"  -?\d+ is followed by -?\d+|Ignoring unknown file .+)$"
)
_CONTROL_TYPES = {
    "SnapshotHeader": "SNAPSHOT_HEADER",
    "SnapshotFooter": "SNAPSHOT_FOOTER",
    "KRaftVersion": "KRAFT_VERSION",
    "KRaftVoters": "KRAFT_VOTERS",
    "LeaderChange": "LEADER_CHANGE",  # 4.1 decodes it: " LeaderChange: {...}" (sample_logs/real-4.1-kraft-*/metadata)
}

EVENT_TYPES = METADATA_RECORD_EVENT_TYPES  # record type -> event type (core.tables)
OTHER = METADATA_OTHER
CONTROL = METADATA_CONTROL
METADATA_EVENT_TYPES = frozenset(EVENT_TYPES.values()) | {OTHER, CONTROL}
PARTITION_TYPES = frozenset({"metadata_partition", "metadata_partition_change"})
BROKER_RECORD_TYPES = frozenset(
    {
        "metadata_register_broker",
        "metadata_unregister_broker",
        "metadata_broker_registration_change",
        "metadata_fence_broker",
        "metadata_unfence_broker",
    }
)

# (JSON key, attrs key) for list fields kept in attrs.
_LIST_ATTRS = (
    ("eligibleLeaderReplicas", "elr"),
    ("lastKnownElr", "last_known_elr"),
    ("addingReplicas", "adding_replicas"),
    ("removingReplicas", "removing_replicas"),
)


def looks_like_metadata_dump(data: bytes) -> bool:
    """Content detection: the first lines of a DumpLogSegments run over metadata files."""
    head_bytes = data[:4096]
    if data[:2] == GZIP_MAGIC:
        try:
            head_bytes = zlib.decompressobj(wbits=31).decompress(data[:65536], 4096)
        except zlib.error:
            return False
    head = head_bytes.decode("utf-8", "replace").splitlines()[:6]
    if not head or not _DUMPING.match(head[0]):
        return False
    return any(_STARTING.match(h) or _SNAPSHOT.match(h) or h == _BOOTSTRAP or _BATCH.match(h) for h in head[1:])


def _ints(values) -> str:
    return ",".join(str(int(v)) for v in values)


@functools.lru_cache(maxsize=4096)
def _second_text(seconds: int) -> str:
    return dt.datetime.fromtimestamp(seconds, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S,")


def _ts_raw(millis: int) -> str:
    return _second_text(millis // 1000) + f"{millis % 1000:03d}"


class _Position:
    """Where the reader is: file kind (segment or snapshot), current batch, its records left."""

    def __init__(self) -> None:
        self.new_file()

    def new_file(self) -> None:
        """Forget the previous file's batches (offsets restart with each dumped file)."""
        self.snapshot_end: Optional[int] = None
        self.snapshot_epoch: Optional[int] = None
        self.batch_ts: Optional[int] = None
        self.batch_epoch: Optional[int] = None
        self.batch_control = False
        self.next_offset: Optional[int] = None  # offset of the next record of the batch
        self.last_offset: Optional[int] = None
        self.snapshot_index = 0
        self.prev_last: Optional[int] = None  # lastOffset of the previous batch of this segment
        self.prev_record: Optional[tuple[int, int]] = None  # (offset, line) of the last record emitted
        self.gap_from: Optional[tuple[int, Optional[int]]] = None  # pending: (last offset before, its line)

    def batch(self, m: re.Match) -> None:
        base = int(m["base"])
        if self.snapshot_end is None and self.prev_last is not None and base > self.prev_last + 1:
            line = self.prev_record[1] if self.prev_record and self.prev_record[0] == self.prev_last else None
            self.gap_from = (self.prev_last, line)
        self.batch_ts, self.batch_epoch = int(m["ts"]), int(m["epoch"])
        self.batch_control = m["control"] == "true"
        self.next_offset, self.last_offset = base, int(m["last"])
        self.prev_last = self.last_offset

    def in_batch(self) -> bool:
        return self.next_offset is not None and self.last_offset is not None and self.next_offset <= self.last_offset


def _record_columns(record: dict, topics: dict[str, str]) -> tuple[str, dict, dict]:
    """(event type, columns, attrs) of one decoded metadata record."""
    rtype = str(record.get("type"))
    data: dict[str, Any] = record["data"] if isinstance(record.get("data"), dict) else {}
    et = EVENT_TYPES.get(rtype, OTHER)
    cols: dict = {}
    attrs: dict = {"record_type": rtype, "record_version": str(record.get("version"))}
    topic_id = data.get("topicId")
    if topic_id is not None:
        attrs["topic_id"] = str(topic_id)
    if et == "metadata_topic":
        cols["topic"] = data.get("name")
        if topic_id is not None and data.get("name") is not None:
            topics[str(topic_id)] = str(data["name"])
    elif et in PARTITION_TYPES or et == "metadata_remove_topic":
        if topic_id is not None and str(topic_id) in topics:
            cols["topic"] = topics[str(topic_id)]
        if et != "metadata_remove_topic":
            cols["partition"] = data.get("partitionId")
            for key, col in (("replicas", "replicas"), ("isr", "isr")):
                if data.get(key) is not None:
                    cols[col] = [int(x) for x in data[key]]
            if "leader" in data:
                cols["leader"] = data["leader"]
            for key, name in _LIST_ATTRS:
                if data.get(key) is not None:
                    attrs[name] = _ints(data[key])
            if "leaderRecoveryState" in data:
                attrs["leader_recovery_state"] = str(data["leaderRecoveryState"])
            elif et == "metadata_partition":
                attrs["leader_recovery_state"] = "0"  # tagged, default 0: omitted when RECOVERED
            if et == "metadata_partition":
                cols["leader_epoch"] = data.get("leaderEpoch")
                cols["partition_epoch"] = data.get("partitionEpoch")
    elif et in ("metadata_register_broker", "metadata_unregister_broker", "metadata_broker_registration_change"):
        cols["target_broker"] = data.get("brokerId")
        if "brokerEpoch" in data:
            attrs["broker_epoch"] = str(data["brokerEpoch"])
        if et == "metadata_register_broker":
            attrs["fenced"] = "true" if data.get("fenced", True) else "false"
            attrs["in_controlled_shutdown"] = "true" if data.get("inControlledShutdown") else "false"
            if data.get("incarnationId") is not None:
                attrs["incarnation_id"] = str(data["incarnationId"])
        elif et == "metadata_broker_registration_change":
            fenced = data.get("fenced", 0)  # BrokerRegistrationFencingChange: -1 unfence, 0 none, 1 fence
            if fenced in (1, -1):
                attrs["fencing_change"] = "fence" if fenced == 1 else "unfence"
            if data.get("inControlledShutdown", 0) == 1:
                attrs["controlled_shutdown_change"] = "in_controlled_shutdown"
    elif et in ("metadata_fence_broker", "metadata_unfence_broker"):
        cols["target_broker"] = data.get("id")
        if "epoch" in data:
            attrs["broker_epoch"] = str(data["epoch"])
    elif et == "metadata_feature_level":
        attrs["feature"] = str(data.get("name"))
        attrs["feature_level"] = str(data.get("featureLevel"))
        if data.get("name") == "metadata.version":
            attrs["metadata_version"] = str(data.get("featureLevel"))
    return et, cols, attrs


def parse_metadata_dump(data: bytes, source_file: str, path_broker: Optional[int], max_line_bytes: int):
    """Parse one dump: (rows in EVENT_COLUMNS order, quarantine dicts, summary) - the parts of a
    ``records.FileResult``, whose summary keys it shares."""
    line_iter, info = read_lines(data, max_line_bytes)
    lines = read = list(line_iter)
    rows: list[list] = []
    quarantine: list[dict] = []
    counts = {"lines_read": 0, "records": 0, "continuation_lines": 0, "quarantined": 0, "out_of_order": 0}
    topics: dict[str, str] = {}
    pos = _Position()
    last_ts: Optional[int] = None

    def quarantined(line_no: int, raw: str, reason: str) -> None:
        counts["quarantined"] += 1
        quarantine.append(
            {"source_file": source_file, "line_no": line_no, "broker": path_broker, "raw": raw, "reason": reason}
        )

    def emit(line, et: str, cols: dict, attrs: dict, millis: Optional[int], offset: Optional[int]) -> None:
        nonlocal last_ts
        row: list[Any] = [None] * len(EVENT_COLUMNS)
        row[COL["source_file"]], row[COL["line_no"]] = source_file, line.line_no
        row[COL["broker"]] = path_broker
        row[COL["broker_source"]] = "path" if path_broker is not None else None
        if millis is not None and millis >= 0:
            row[COL["ts"]] = millis * 1000
            row[COL["ts_raw"]] = _ts_raw(millis)
        out_of_order = millis is not None and last_ts is not None and millis < last_ts
        row[COL["ts_out_of_order"]] = out_of_order
        counts["out_of_order"] += int(out_of_order)
        if millis is not None and (last_ts is None or millis > last_ts):
            last_ts = millis
        row[COL["log_kind"]], row[COL["dialect"]], row[COL["event_type"]] = LOG_KIND, DIALECT, et
        row[COL["controller_epoch"]] = pos.snapshot_epoch if pos.snapshot_end is not None else pos.batch_epoch
        if offset is not None:  # a snapshot's records are numbered within the snapshot file
            attrs["snapshot_record_offset" if pos.snapshot_end is not None else "offset"] = str(offset)
        if pos.gap_from is not None and pos.snapshot_end is None:  # first record after skipped offsets
            attrs["offset_gap_after"] = str(pos.gap_from[0])
            if pos.gap_from[1] is not None:
                attrs["offset_gap_prev_line"] = str(pos.gap_from[1])
            pos.gap_from = None
        if offset is not None and pos.snapshot_end is None:
            pos.prev_record = (offset, line.line_no)
        if pos.snapshot_end is not None:
            attrs["snapshot_end_offset"] = str(pos.snapshot_end)
            attrs["snapshot_index"] = str(pos.snapshot_index)
            pos.snapshot_index += 1
        for name, value in cols.items():
            row[COL[name]] = value
        row[COL["attrs"]] = attrs
        row[COL["message"]] = line.text
        row[COL["n_continuation"]] = 0
        row[COL["crlf"]] = line.crlf
        rows.append(row)
        counts["records"] += 1

    for line in lines:
        counts["lines_read"] += 1
        text = line.text
        if text is None:
            quarantined(line.line_no, line.raw or "", line.problem or "unreadable line")
            continue
        if text[:2] in ("| ", " p") or not text:  # record lines first: they are most of a dump
            _record_line(line, text, pos, topics, emit, quarantined)
            continue
        m = _DUMPING.match(text)
        if m:
            pos.new_file()
            counts["continuation_lines"] += 1
            continue
        m = _SNAPSHOT.match(text)
        if m:
            pos.snapshot_end, pos.snapshot_epoch = int(m[1]), int(m[2])
            counts["continuation_lines"] += 1
            continue
        if _STARTING.match(text) or text == _BOOTSTRAP or _TRAILER.match(text):
            counts["continuation_lines"] += 1
            continue
        m = _BATCH.match(text)
        if m:
            pos.batch(m)
            counts["continuation_lines"] += 1
            continue
        _record_line(line, text, pos, topics, emit, quarantined)
    summary = {
        "source_file": source_file,
        **counts,
        "ts_invalid": 0,
        **repair_counts(read),
        "dialect": DIALECT,
        "compressed": info["compressed"],
        "read_error": info["read_error"],
    }
    return rows, quarantine, summary


def _record_line(line, text: str, pos: _Position, topics: dict, emit, quarantined) -> None:
    """A record line (with or without per-record metadata), or quarantine."""
    m = _RECORD.match(text)
    offset: Optional[int]
    millis: Optional[int]
    if m:
        offset, millis, rest = int(m["offset"]), int(m["ts"]), m["rest"]
    elif text.startswith(_PAYLOAD) or (text == "" and pos.batch_control):
        offset, millis, rest = pos.next_offset, pos.batch_ts, text
    else:
        quarantined(line.line_no, text, "not a line of a kafka-dump-log --cluster-metadata-decoder dump")
        return
    if not pos.in_batch() and pos.next_offset is not None:
        quarantined(line.line_no, text, "record line beyond its batch's lastOffset")
        return
    if offset is not None:
        pos.next_offset = offset + 1
    if pos.batch_control:
        c = _CONTROL.match(rest)
        attrs = {}
        if c and c["ctype"]:
            attrs["control_type"] = c["ctype"]
        elif c:
            attrs["control_type"] = _CONTROL_TYPES[c["kind"]]
            attrs["control_json"] = c["json"]
        elif rest:
            quarantined(line.line_no, text, "control record in an unrecognised form")
            return
        emit(line, CONTROL, {}, attrs, millis, offset)
        return
    if not rest.startswith(_PAYLOAD):
        quarantined(
            line.line_no, text, "metadata record without a payload (dump run without --cluster-metadata-decoder?)"
        )
        return
    payload = rest[len(_PAYLOAD) :]
    if payload.startswith("Error at "):
        quarantined(line.line_no, text, "Kafka could not decode this metadata record")
        return
    try:
        record = json.loads(payload)
    except json.JSONDecodeError as err:
        quarantined(line.line_no, text, f"payload is not JSON ({err.msg})")
        return
    if not isinstance(record, dict) or "type" not in record:
        quarantined(line.line_no, text, "payload JSON without a record type")
        return
    et, cols, attrs = _record_columns(record, topics)
    emit(line, et, cols, attrs, millis, offset)
