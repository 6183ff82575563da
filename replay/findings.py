"""Findings: what the replay reports, with the log lines that prove it and a stable id.

A finding is only as good as its evidence, so every one carries ``file:line`` references a reader
can open. One anomaly is one finding: Kafka repeats one problem over many lines (every broker change
re-tries a failed election, every request of a stale view or of a zombie controller is refused), so
the checks emit a finding per line they judge and ``consolidate`` merges those of one *episode* - one
rule, one partition (or the cluster), one span of time or epochs, named by the check's ``episode``
key - into one finding that cites every line in order (capped at ``MAX_EVIDENCE``, with the true
``evidence_count``) and spans ``ts`` .. ``ts_end`` and ``controller_epoch`` .. ``controller_epoch_end``.

Ids are a hash of what the finding *is* (rule, kind, where, and the line that opened the episode),
never of when the job ran or of how much of the episode the logs hold, so the same logs always give
the same ids, order and bytes, and a log cut after the first line of an episode gives its id too.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from typing import Callable, Iterable, NamedTuple, Optional, Sequence

CRITICAL, ERROR, WARNING, INFO = "critical", "error", "warning", "info"
SEVERITIES = (CRITICAL, ERROR, WARNING, INFO)  # most severe first

# rule name -> one sentence (printed by the CLI and the README section).
RULES: dict[str, str] = {
    "illegal_transition": "a logged transition the era's state machine forbids, or Kafka's own refused/failed state change",
    "state_gap": "the logged from-state differs from the replayed state, or implied lines are absent: lines are missing",
    "leader_isr_mismatch_after_failover": "a new controller starts from a stale read of the partition state (a leader "
    "epoch or zkVersion below the last write, dead brokers back in the ISR), differs from the previous controller's "
    "state without a logged cause, or keeps dead brokers as leader/ISR (KAFKA-3143)",
    "concurrent_controllers": "a deposed controller still acting (a state change or request with its old epoch after a "
    "newer epoch began), or one epoch claimed twice",
    "stale_epoch_rejected": "a request or write was refused because its controller (or partition) epoch was stale",
    "leader_not_in_isr": "a leader outside its ISR (I2)",
    "isr_not_subset_of_replicas": "an ISR member outside the assigned replicas (I3; transient during reassignment, KAFKA-9672)",
    "empty_isr": "an empty ISR where that era's controller never writes one (I4)",
    "recovering_isr_not_singleton": "a RECOVERING leader whose ISR is not [leader] (I15, KIP-704)",
    "leader_epoch_regression": "a leader epoch lower than one already established (I7/I8)",
    "leader_epoch_reused": "one leader epoch with two different leaders (I8)",
    "partition_epoch_regression": "a zkVersion / partition epoch lower than one already established (I9)",
    "controller_epoch_regression": "a controller epoch lower than one already seen (I5/I10)",
    "unclean_election": "a leader elected from outside the ISR: committed data may be lost (I11); critical with direct "
    "evidence (RECOVERING, Kafka's own warning, the ISR at the version just before), else a warning",
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
MIN_TS = datetime.min.replace(tzinfo=timezone.utc)


def evidence_ref(source_file: str, line_no: int) -> str:
    """The ``file:line`` form every finding cites."""
    return f"{source_file}:{line_no}"


def ref_of(event: dict) -> str:
    """``evidence_ref`` of an event (written out: the replay asks it several times per line)."""
    return f"{event['source_file']}:{event['line_no']}"


def fmt_ints(values) -> str:
    """An ISR or replica list as a finding's summary prints it."""
    return "[" + ",".join(str(v) for v in values) + "]" if values is not None else "unknown"


def first_line(text: Optional[str]) -> str:
    """The first line of a message or stack trace, as a finding quotes it."""
    return (text or "").strip().splitlines()[0][:300] if (text or "").strip() else ""


def unique_refs(refs: Iterable[Optional[str]]) -> list[str]:
    """Evidence in order, once each; a reference that is not known (None) is left out."""
    seen: dict[Optional[str], None] = dict.fromkeys(refs)
    seen.pop(None, None)
    seen.pop("", None)
    return [ref for ref in seen if ref is not None]


class Finding(NamedTuple):
    """One anomaly with its evidence. A named tuple, not a dataclass: the checks raise one per line they
    judge (``consolidate`` merges those of one episode), so building one must cost little."""

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
    evidence_count: int = 0
    ts_end: Optional[datetime] = None  # the episode's last evidence line (ts: its start)
    controller_epoch_end: Optional[int] = None  # the last controller epoch the episode spans
    # Not written out: what makes two findings one episode (see ``consolidate``), the line that
    # opened it (the id's anchor), and how many partitions a cluster-level finding's lines name.
    episode: tuple = ()
    anchor: str = ""
    partitions: int = 0

    @staticmethod
    def make(
        rule: str,
        severity: str,
        summary: str,
        evidence: Sequence[Optional[str]],
        *,
        cluster: str = "",
        topic: Optional[str] = None,
        partition: Optional[int] = None,
        replica: Optional[int] = None,
        controller_epoch: Optional[int] = None,
        ts: Optional[datetime] = None,
        kind: str = "",
        broker: Optional[int] = None,
        ts_end: Optional[datetime] = None,
        controller_epoch_end: Optional[int] = None,
        episode: tuple = (),
        anchor: Optional[str] = None,
        partitions: int = 0,
    ) -> "Finding":
        """Build a finding; evidence is de-duplicated (order kept) and kept whole until ``consolidate``
        caps it. ``episode``: the key under which findings of one rule and place are one anomaly
        (default: kind, controller epoch, broker, replica); ``anchor``: the line that raised it (default:
        the first evidence line); ``ts_end`` / ``controller_epoch_end`` default to ``ts`` / ``controller_epoch``."""
        if rule not in RULES:
            raise ValueError(f"unknown rule {rule!r}")
        if severity not in SEVERITIES:
            raise ValueError(f"unknown severity {severity!r}")
        refs = unique_refs(evidence)
        if not refs:
            raise ValueError(f"finding {rule} without evidence")
        return Finding(
            rule,
            severity,
            summary,
            tuple(refs),
            cluster,
            topic,
            partition,
            replica,
            controller_epoch,
            ts,
            kind,
            broker,
            len(refs),
            ts if ts_end is None else ts_end,
            controller_epoch if controller_epoch_end is None else controller_epoch_end,
            episode,
            anchor or refs[0],
            partitions,
        )

    @property
    def finding_id(self) -> str:
        key = "|".join(
            str(x)
            for x in (
                self.rule,
                self.kind,
                self.cluster,
                self.topic,
                self.partition,
                self.replica,
                self.anchor or (self.evidence[0] if self.evidence else ""),
            )
        )
        return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]

    def episode_key(self) -> tuple:
        """Findings with equal keys are one anomaly (``consolidate``)."""
        episode = self.episode or (self.kind, self.controller_epoch, self.broker, self.replica)
        return (self.rule, self.cluster, self.topic, self.partition, episode)

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
            "evidence": list(self.evidence[:MAX_EVIDENCE]),
            "evidence_count": max(self.evidence_count, min(len(self.evidence), MAX_EVIDENCE)),
            "ts_end": self.ts_end if self.ts_end is not None else self.ts,
            "controller_epoch_end": (
                self.controller_epoch_end if self.controller_epoch_end is not None else self.controller_epoch
            ),
        }
        row["json"] = finding_json(row)
        return row


def _latest(values: Iterable[Optional[datetime]]) -> Optional[datetime]:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _span_text(n_lines: int, partitions: int, start: Optional[datetime], end: Optional[datetime]) -> str:
    where = f"{partitions} partition{'s' if partitions != 1 else ''}" if partitions else "cluster-wide"
    text = f"{n_lines} line{'s' if n_lines != 1 else ''}, {where}"
    if start is not None and end is not None and end.replace(microsecond=0) > start.replace(microsecond=0):
        until = f"{end:%H:%M:%S}" if start.date() == end.date() else f"{end:%Y-%m-%d %H:%M:%S}"
        text += f", {start:%Y-%m-%d %H:%M:%S} to {until}"
    return text


def consolidate(
    findings: Iterable[Finding], ts_of: Optional[Callable[[str], Optional[datetime]]] = None
) -> list[Finding]:
    """One finding per episode (``Finding.episode_key``): the lines of every finding of an episode in
    time order, capped at ``MAX_EVIDENCE`` with the true count, the most severe member's severity, kind
    and summary, the span ``ts`` .. ``ts_end`` (``ts_of``: a line's timestamp, where the caller knows
    it) and controller epochs, and a summary that says how many lines and partitions it covers.
    Deterministic: the result does not depend on the order of ``findings``."""
    groups: dict[tuple, list[Finding]] = {}
    for f in findings:
        groups.setdefault(f.episode_key(), []).append(f)
    out = []
    for members in groups.values():
        if len(members) > 1:
            members.sort(key=_in_time)
        ranks = [_SEVERITY_RANK[f.severity] for f in members]
        lead = members[ranks.index(min(ranks))]  # the earliest of the most severe
        refs = unique_refs(r for f in members for r in f.evidence)
        hidden = sum(max(0, f.evidence_count - len(f.evidence)) for f in members)
        starts = [f.ts for f in members if f.ts is not None]
        ts = min(starts) if starts else None
        ends = [f.ts_end if f.ts_end is not None else f.ts for f in members]
        if ts_of is not None:
            ends += [ts_of(r) for r in refs]
        epochs = [f.controller_epoch for f in members if f.controller_epoch is not None]
        epoch_ends = [e for f in members for e in (f.controller_epoch_end, f.controller_epoch) if e is not None]
        partitions = max(f.partitions for f in members) or (1 if lead.partition is not None else 0)
        n_lines = len(refs) + hidden
        out.append(
            lead._replace(
                summary=f"{lead.summary} ({_span_text(n_lines, partitions, ts, _latest(ends))})",
                evidence=tuple(refs[:MAX_EVIDENCE]),
                evidence_count=n_lines,
                ts=ts,
                ts_end=_latest([ts, *ends]),
                controller_epoch=min(epochs) if epochs else None,
                controller_epoch_end=max(epoch_ends) if epoch_ends else None,
                broker=_same(f.broker for f in members),
                replica=_same(f.replica for f in members),
                anchor=members[0].anchor,
                partitions=partitions,
            )
        )
    return out


def _in_time(f: Finding) -> tuple:
    return (f.ts is None, f.ts or MIN_TS, f.anchor, f.evidence)


def _same(values: Iterable[Optional[int]]):
    """The one value every member has, else None (an episode over several brokers or replicas)."""
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None


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
    "ts_end",
    "controller_epoch_end",
)


def finding_json(row: dict) -> str:
    """One findings.jsonl line: fixed key order, so the bytes are deterministic."""
    out = {k: row.get(k) for k in JSON_KEYS}
    out["ts"] = format_ts(row.get("ts"))
    out["ts_end"] = format_ts(row.get("ts_end"))
    return json.dumps(out, ensure_ascii=False, separators=(", ", ": "))


_SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity)


def unique_findings(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per id, the last one reported (the Spark job: ``dropDuplicates(["finding_id"])``). The same
    finding may be reported twice (a cluster finding, found again); two *different* findings must never share
    an id: the Spark job would keep either (``tests/jobs/test_replay_driver.py`` checks every recorded incident)."""
    return list({f.finding_id: f for f in findings}.values())


# The order of ``findings.jsonl`` and of the findings table: cluster, time (unknown last), rule, place (none
# first), id. (column, nulls last); the Spark job sorts with the same list (``jobs/replay_job.sorted_findings``).
FINDINGS_ORDER: tuple[tuple[str, bool], ...] = (
    ("cluster", False),
    ("ts", True),
    ("rule", False),
    ("topic", False),
    ("partition", False),
    ("replica", False),
    ("finding_id", False),
)


def findings_order_key(finding) -> tuple:
    """A finding's (a ``Finding`` or a findings row) place in ``FINDINGS_ORDER``: an ascending sort key with
    Spark's null placement (no comparison ever meets a None)."""
    key: list = []
    for column, nulls_last in FINDINGS_ORDER:
        value = finding[column] if isinstance(finding, dict) else getattr(finding, column)
        key += [(value is None) == nulls_last, 0 if value is None else value]
    return tuple(key)
