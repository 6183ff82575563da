"""Findings: what the replay reports, with the log lines that prove it and a stable id.

A finding is only as good as its evidence, so every one carries ``file:line`` references a reader
can open. Ids are a hash of what the finding *is* (rule, kind, where, evidence), never of when the
job ran, so the same logs always give the same ids, order and bytes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Iterable, Optional, Sequence

CRITICAL, ERROR, WARNING, INFO = "critical", "error", "warning", "info"
SEVERITIES = (CRITICAL, ERROR, WARNING, INFO)  # most severe first

# rule name -> one sentence (printed by the CLI and the README section).
RULES: dict[str, str] = {
    "illegal_transition": "a logged transition the era's state machine forbids, or Kafka's own refused/failed state change",
    "state_gap": "the logged from-state differs from the replayed state, or implied lines are absent: lines are missing",
    "leader_isr_mismatch_after_failover": "a new controller's leader/ISR differs from the previous controller's without a "
    "logged cause, or keeps dead brokers as leader/ISR (KAFKA-3143)",
    "concurrent_controllers": "two controllers acting in overlapping time, one epoch claimed twice, or a zombie controller",
    "stale_epoch_rejected": "a request or write was refused because its controller (or partition) epoch was stale",
    "leader_not_in_isr": "a leader outside its ISR (I2)",
    "isr_not_subset_of_replicas": "an ISR member outside the assigned replicas (I3; transient during reassignment, KAFKA-9672)",
    "empty_isr": "an empty ISR where that era's controller never writes one (I4)",
    "recovering_isr_not_singleton": "a RECOVERING leader whose ISR is not [leader] (I15, KIP-704)",
    "leader_epoch_regression": "a leader epoch lower than one already established (I7/I8)",
    "leader_epoch_reused": "one leader epoch with two different leaders (I8)",
    "partition_epoch_regression": "a zkVersion / partition epoch lower than one already established (I9)",
    "controller_epoch_regression": "a controller epoch lower than one already seen (I5/I10)",
    "unclean_election": "a leader elected from outside the ISR: committed data may be lost (I11)",
    "offline_with_live_replicas": "a partition left without a leader while replicas of it were on live brokers",
    # KRaft (replay/kraft.py): the __cluster_metadata records against snapshots and broker views
    "partition_epoch_gap": "KRaft: a snapshot or a broker states a partition epoch the replayed metadata records do not "
    "reach: PartitionChangeRecords are missing",
    "metadata_view_mismatch": "KRaft: a broker's leader/leader epoch (or a snapshot's state) that no metadata record explains",
    "leader_on_fenced_broker": "KRaft: a metadata record makes a fenced or unregistered broker the leader",
    "alter_partition_rejected": "KRaft: the controller rejected an AlterPartition (ineligible replica, RECOVERING, "
    "stale leader or leader epoch)",
    "elr_overlaps_isr": "KRaft: a replica in both the ISR and the ELR, or an ELR the metadata.version does not enable (KIP-966)",
    "metadata_offset_gap": "KRaft: a dumped __cluster_metadata segment skips offsets between two batches: records are "
    "missing from the log (it is never compacted)",
    # replay/final_state.py: a snapshot operators took (kafka-topics --describe, kafka-metadata-quorum)
    "final_state_mismatch": "a kafka-topics --describe / kafka-metadata-quorum snapshot differs from the replayed state "
    "at its time: the logs are incomplete (info) or something changed that the logs do not show (warning)",
}

MAX_EVIDENCE = 50  # a finding cites at most this many lines; evidence_count keeps the true number


def evidence_ref(source_file: str, line_no: int) -> str:
    """The ``file:line`` form every finding cites."""
    return f"{source_file}:{line_no}"


def ref_of(event: dict) -> str:
    return evidence_ref(event["source_file"], event["line_no"])


def fmt_ints(values) -> str:
    """An ISR or replica list as a finding's summary prints it."""
    return "[" + ",".join(str(v) for v in values) + "]" if values is not None else "unknown"


def first_line(text: Optional[str]) -> str:
    """The first line of a message or stack trace, as a finding quotes it."""
    return (text or "").strip().splitlines()[0][:300] if (text or "").strip() else ""


def _unique(refs: Iterable[Optional[str]]) -> list[str]:
    """Evidence in order, once each; a reference that is not known (None) is left out."""
    seen: dict[str, None] = {}
    for ref in refs:
        if ref and ref not in seen:
            seen[ref] = None
    return list(seen)


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    summary: str
    evidence: tuple[str, ...]
    cluster: str = ""
    topic: Optional[str] = None
    partition: Optional[int] = None
    replica: Optional[int] = None
    controller_epoch: Optional[int] = None
    ts: Optional[datetime] = None
    kind: str = ""
    broker: Optional[int] = None
    evidence_count: int = field(default=0)

    @staticmethod
    def make(rule: str, severity: str, summary: str, evidence: Sequence[Optional[str]], **where) -> "Finding":
        """Build a finding; evidence is de-duplicated (order kept) and capped at ``MAX_EVIDENCE``."""
        if rule not in RULES:
            raise ValueError(f"unknown rule {rule!r}")
        if severity not in SEVERITIES:
            raise ValueError(f"unknown severity {severity!r}")
        refs = _unique(evidence)
        if not refs:
            raise ValueError(f"finding {rule} without evidence")
        return Finding(
            rule=rule,
            severity=severity,
            summary=summary,
            evidence=tuple(refs[:MAX_EVIDENCE]),
            evidence_count=len(refs),
            **where,
        )

    @property
    def finding_id(self) -> str:
        key = "|".join(
            str(x)
            for x in (self.rule, self.kind, self.cluster, self.topic, self.partition, self.replica, *self.evidence)
        )
        return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]

    def to_row(self) -> dict:
        row = {
            "finding_id": self.finding_id,
            "rule": self.rule,
            "severity": self.severity,
            "kind": self.kind,
            "cluster": self.cluster,
            "topic": self.topic,
            "partition": self.partition,
            "replica": self.replica,
            "broker": self.broker,
            "controller_epoch": self.controller_epoch,
            "ts": self.ts,
            "summary": self.summary,
            "evidence": list(self.evidence),
            "evidence_count": self.evidence_count,
        }
        row["json"] = finding_json(row)
        return row


def format_ts(ts: Optional[datetime]) -> Optional[str]:
    """ISO-8601 UTC with milliseconds, the way findings.jsonl prints instants."""
    if ts is None:
        return None
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=timezone.utc)
    return ts.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


JSON_KEYS = (
    "finding_id",
    "rule",
    "severity",
    "kind",
    "cluster",
    "topic",
    "partition",
    "replica",
    "broker",
    "controller_epoch",
    "ts",
    "summary",
    "evidence",
    "evidence_count",
)


def finding_json(row: dict) -> str:
    """One findings.jsonl line: fixed key order, so the bytes are deterministic."""
    out = {k: row.get(k) for k in JSON_KEYS}
    out["ts"] = format_ts(row.get("ts"))
    return json.dumps(out, ensure_ascii=False, separators=(", ", ": "))


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity)
