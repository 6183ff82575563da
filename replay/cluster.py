"""The cluster around every partition: who was controller (id, epoch) when, which brokers were alive.

Built once per cluster from the few lines that carry it (controller elections and resignations,
broker-change callbacks, controlled shutdown, live-broker sets, KRaft fencing) plus one row per
(controller, epoch) summarising the controller's own actions; small enough to broadcast to every
partition replay. Pure Python: the Spark job hands in plain dicts sorted by (ts, file, line).

Clock skew: these lines come from the controller's log, so comparisons between them are on one
clock, except where two different brokers are compared (a zombie controller's last action vs the
new controller's election): there a difference must exceed ``skew_seconds`` to count.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Collection, Iterable, Optional

from kafka_forensics.core.eras import VersionRange
from kafka_forensics.core.versions import KafkaVersion
from kafka_forensics.parsers.grammar_loader import template_lives

from .events import attr
from .findings import CRITICAL, ERROR, Finding, consolidate, evidence_ref, ref_of

# Lines that start a controller epoch (K:controller/KafkaController.scala@0.8.2.2:671-700,
# @1.1.1:1189-1221, @3.9.0-rc3:1547-1582; M:controller/QuorumController.java@3.9.0-rc3 claim()).
ELECTION_TYPES = frozenset(
    {
        "controller_elected",
        "controller_epoch_incremented",
        "controller_ready",
        "kraft_controller_activated",
        "kraft_new_epoch",
    }
)
# Lines after which the logging broker no longer acts as controller.
RESIGN_TYPES = frozenset(
    {"controller_resigned", "controller_moved", "kraft_leadership_renounced", "zk_session_expired"}
)
BROKER_TYPES = frozenset(
    {
        "broker_change",
        "broker_failure",
        "broker_startup",
        "controlled_shutdown",
        "live_brokers",
        "kraft_broker_fenced",
        "kraft_broker_unfenced",
        "kraft_broker_registered",
        "kraft_broker_registration_changed",
        "kraft_controlled_shutdown",
    }
)
# KRaft metadata records about brokers (parsers/metadata_dump.py): fencing straight from the log.
METADATA_BROKER_TYPES = frozenset(
    {
        "metadata_register_broker",
        "metadata_unregister_broker",
        "metadata_broker_registration_change",
        "metadata_fence_broker",
        "metadata_unfence_broker",
    }
)
BROKER_TYPES = BROKER_TYPES | METADATA_BROKER_TYPES
VERSION_TYPES = frozenset({"kafka_version", "metadata_feature_level"})
# Lines that say why a controller changed (kept in the context for the incident story, replay/story.py).
REASON_LINE_TYPES = RESIGN_TYPES | frozenset({"kraft_new_epoch"})
# KRaft: the leader of Raft epoch E appends a LEADER_CHANGE control record first thing in its epoch
# (R:raft/LeaderState.java@3.9.0-rc3 appendLeaderChangeMessage, KafkaRaftClient.onBecomeLeader); the
# dump prints it as "controlType: LEADER_CHANGE(2)" in a batch whose partitionLeaderEpoch is E
# (K:tools/DumpLogSegments.scala@3.9.0-rc3:311-331, unchanged at trunk@1eb7644 2024-10-25). The
# LeaderChangeMessage itself (leaderId, voters) is NOT printed, so the dump dates an epoch but does
# not name its leader: that comes from controller.log ("In the new epoch E, the leader is N").
RAFT_EPOCH_TYPES = frozenset({"metadata_control"})
# The first metadata record after skipped offsets in a dumped segment (parsers/metadata_dump.py); a
# cluster row whatever its event type (jobs/replay_kraft.cluster_rows_filter selects it).
OFFSET_GAP_ATTR = "offset_gap_after"
# ZooKeeper mode, TopicDeletionManager at INFO: "Deletion of topic T (re)started" and "Deletion of topic T
# successfully completed". The partitions' own transitions to NonExistentPartition are logged at TRACE only,
# so at INFO these lines say when the topic is gone (``ClusterContext.deletions``): at the start from 2.1, at
# completion before (core/eras.PARTITIONS_GONE_AT_DELETION_START_SINCE); at completion every replica is
# NonExistentReplica too (completeDeleteTopic, K:controller/TopicDeletionManager.scala@3.9.0-rc3:238-244).
DELETION_COMPLETED = "topic_deletion_completed"
DELETION_RESTARTED = "topic_deletion_restarted"
DELETION_TYPES = frozenset({DELETION_COMPLETED, DELETION_RESTARTED})
CLUSTER_EVENT_TYPES = ELECTION_TYPES | RESIGN_TYPES | BROKER_TYPES | VERSION_TYPES | RAFT_EPOCH_TYPES | DELETION_TYPES

# Controller-authored lines that prove the controller acted with the epoch in their prefix.
ACTING_TYPES = frozenset(
    {
        "partition_state_change",
        "replica_state_change",
        "partition_state_change_failed",
        "replica_state_change_failed",
        "send_leader_and_isr",
        "send_update_metadata",
        "send_stop_replica",
        "send_leader_and_isr_summary",
        "send_update_metadata_summary",
        "send_stop_replica_summary",
        "leader_elected",
        "leader_election_started",
        "leader_election_aborted",
        "partition_isr_removed",
        "controller_send_failed",  # "Controller 1 epoch 7 fails to send request …": it was sending with epoch 7
    }
)

ALIVE, SHUTTING_DOWN, DEAD, FENCED = "alive", "shutting_down", "dead", "fenced"
LIVE_STATES = frozenset({ALIVE})  # Kafka's liveBrokerIds exclude shutting-down brokers (elections.py)


@dataclass(frozen=True)
class ControllerInterval:
    controller_id: Optional[int]  # None: a Raft epoch known only from the metadata log (leader not printed)
    controller_epoch: int
    ts_start: Optional[datetime]
    ts_end: Optional[datetime]
    evidence: tuple[str, ...]
    elected: bool  # an election line was seen (else the interval is inferred from actions only)
    first_action_ts: Optional[datetime] = None
    last_action_ts: Optional[datetime] = None
    n_actions: int = 0
    end_evidence: Optional[str] = None

    def to_row(self, cluster: str) -> dict:
        return {
            "cluster": cluster,
            "controller_id": self.controller_id,
            "controller_epoch": self.controller_epoch,
            "ts_start": self.ts_start,
            "ts_end": self.ts_end,
            "evidence": list(self.evidence),
            "elected": self.elected,
            "first_action_ts": self.first_action_ts,
            "last_action_ts": self.last_action_ts,
            "n_actions": self.n_actions,
            "end_evidence": self.end_evidence,
        }


@dataclass(frozen=True)
class BrokerInterval:
    broker: int
    state: str
    ts_start: Optional[datetime]
    ts_end: Optional[datetime]
    evidence: str

    def to_row(self, cluster: str) -> dict:
        return {
            "cluster": cluster,
            "broker": self.broker,
            "state": self.state,
            "ts_start": self.ts_start,
            "ts_end": self.ts_end,
            "evidence": self.evidence,
        }


@dataclass(frozen=True)
class _Snapshot:
    ts: datetime
    registered: frozenset  # every broker registered in /brokers/ids (or unfenced in KRaft)
    ref: str


@dataclass
class ClusterContext:
    """Controllers, broker liveness and broker versions of one cluster (picklable, broadcast)."""

    cluster: str = ""
    controllers: list[ControllerInterval] = field(default_factory=list)
    brokers: list[BrokerInterval] = field(default_factory=list)
    broker_versions: dict[int, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    _snapshots: list[_Snapshot] = field(default_factory=list)
    _broker_events: dict[int, list[tuple[datetime, str, str]]] = field(default_factory=dict)
    _recorded_states: dict[int, list[BrokerInterval]] = field(default_factory=dict)  # from metadata records only
    _starts: list[tuple[datetime, int]] = field(default_factory=list)  # (ts_start, epoch), sorted
    resets: list[datetime] = field(default_factory=list)  # elections whose epoch went back (sorted)
    metadata_versions: list[tuple[datetime, int]] = field(default_factory=list)  # KRaft metadata.version levels
    dated: dict[int, VersionRange] = field(default_factory=dict)  # broker -> releases that print all its lines
    reason_lines: list[dict] = field(default_factory=list)  # REASON_LINE_TYPES lines, in time order
    # topic -> its DELETION_TYPES lines (ts, source_file, line_no, event_type, broker, dialect), in time order
    deletions: dict[str, list[dict]] = field(default_factory=dict)
    # KRaft: the latest dumped ``__cluster_metadata`` record among the cluster rows (broker, feature and control
    # records): a lower bound of where the dump ends, so the records are known to hold everything until then
    metadata_until: Optional[datetime] = None

    def metadata_version_at(self, ts: Optional[datetime]) -> Optional[int]:
        """The KRaft ``metadata.version`` feature level in force at ``ts`` (None if never seen)."""
        if not self.metadata_versions:
            return None
        if ts is None:
            return self.metadata_versions[-1][1]
        i = bisect_right(self.metadata_versions, (ts, 1 << 30)) - 1
        return self.metadata_versions[max(i, 0)][1]

    # ---- controller lookups -------------------------------------------------------------
    def controller_at(self, ts: Optional[datetime]) -> Optional[ControllerInterval]:
        """The interval that started last at or before ``ts`` (None before the first one)."""
        if ts is None or not self._starts:
            return None
        i = bisect_right(self._starts, (ts, 1 << 62)) - 1
        if i < 0:
            return None
        epoch = self._starts[i][1]
        return next((c for c in self.controllers if c.controller_epoch == epoch), None)

    def generation_at(self, ts: Optional[datetime]) -> int:
        """How many controller-epoch resets happened at or before ``ts`` (0 without resets)."""
        return 0 if ts is None else bisect_right(self.resets, ts)

    def epoch_at(self, ts: Optional[datetime]) -> Optional[int]:
        c = self.controller_at(ts)
        return None if c is None else c.controller_epoch

    def interval_of_epoch(self, epoch: Optional[int]) -> Optional[ControllerInterval]:
        if epoch is None:
            return None
        return next((c for c in self.controllers if c.controller_epoch == epoch), None)

    # ---- broker lookups ----------------------------------------------------------------------
    def broker_state_at(self, broker: int, ts: Optional[datetime]) -> tuple[Optional[str], Optional[str]]:
        """(alive | shutting_down | dead | fenced | None, evidence) for ``broker`` at ``ts``."""
        if ts is None:
            return None, None
        best: tuple[Optional[datetime], Optional[str], Optional[str]] = (None, None, None)
        events = self._broker_events.get(broker, [])
        i = bisect_right(events, (ts, "\uffff", "\uffff")) - 1
        if i >= 0:
            best = events[i]
        j = bisect_right(self._snapshots, ts, key=lambda s: s.ts) - 1
        if j >= 0:
            snap = self._snapshots[j]
            if best[0] is None or snap.ts > best[0]:
                return (ALIVE if broker in snap.registered else DEAD), snap.ref
        return best[1], best[2]

    def is_live(self, broker: int, ts: Optional[datetime]) -> Optional[bool]:
        """Live the way Kafka's elections mean it (registered and not shutting down); None = unknown."""
        state, _ = self.broker_state_at(broker, ts)
        return None if state is None else state in LIVE_STATES

    def alive_since(self, broker: int, ts: Optional[datetime]) -> Optional[datetime]:
        """When ``broker``, alive at ``ts``, last became alive (its registration or restart), else None."""
        if ts is None:
            return None
        found = None
        for interval in self.brokers:
            if interval.broker == broker and interval.ts_start is not None and interval.ts_start <= ts:
                found = interval
        return found.ts_start if found is not None and found.state in LIVE_STATES else None

    def live_spans(
        self, broker: int, start: datetime, end: datetime, include_end: bool = False
    ) -> list[tuple[datetime, list[str]]]:
        """When ``broker`` was live in [``start``, ``end``) (``include_end``: [``start``, ``end``]): for each live
        interval overlapping it, the first instant of the overlap and every line saying the broker was live then
        (the interval's first line, and the later ones restating it before ``end``: each controller replaying
        the same record, the broker's own line).

        KRaft: where metadata records state the broker's registration, they alone draw its timeline. They share
        the partition records' clock (the active controller's ``CreateTime``) and an unfencing's elections share
        its batch (``handleBrokerUnfenced``, M:controller/ReplicationControlManager.java@3.9.0-rc3:1339-1351),
        while the controller logs its decision before it appends that batch ("The request from broker N to
        unfence has been granted ...", M:controller/BrokerHeartbeatManager.java@3.9.0-rc3:549): a line would
        make the broker live a millisecond before the election that the same batch holds."""
        out = []
        recorded = self._recorded_states.get(broker)
        for interval in recorded if recorded else self.brokers:
            if interval.broker != broker or interval.state not in LIVE_STATES or interval.ts_start is None:
                continue
            since = max(interval.ts_start, start)
            stop = end if interval.ts_end is None else min(interval.ts_end, end)
            if not (
                since < stop or (include_end and since == end and (interval.ts_end is None or interval.ts_end > end))
            ):
                continue
            refs = [interval.evidence]
            for ts, state, ref in self._broker_events.get(broker, ()):
                if state in LIVE_STATES and interval.ts_start <= ts and (ts < stop or ts == since) and ref not in refs:
                    refs.append(ref)
            out.append((since, refs))
        return out

    def live_brokers_at(self, ts: Optional[datetime]) -> tuple[list[int], list[str]]:
        """The brokers alive at ``ts`` as far as the logs say, and the lines that say so (the last full
        live set - ``Currently active brokers``, ``all live brokers`` - and any later per-broker change)."""
        known = set(self._broker_events)
        for snap in self._snapshots:
            known |= snap.registered
        live, refs = [], []
        for b in sorted(known):
            state, ref = self.broker_state_at(b, ts)
            if state in LIVE_STATES:
                live.append(b)
            if ref is not None and ref not in refs:
                refs.append(ref)
        return live, refs

    def version_of(self, broker: Optional[int]) -> Optional[str]:
        return None if broker is None else self.broker_versions.get(broker)

    def dated_range_of(self, broker: Optional[int]) -> Optional[VersionRange]:
        """The releases that print every line ``broker`` wrote (``date_brokers``), None if unknown."""
        return None if broker is None else self.dated.get(broker)


def date_brokers(templates: Iterable[tuple[Optional[int], Optional[str]]]) -> dict[int, VersionRange]:
    """Each broker's lines date its release: the intersection of the lives of the templates that typed
    them (``//@ since..until`` in the grammar, from Kafka's source at each tag). ``templates``: the
    distinct (broker, template) pairs of the input. A broker whose templates share no release (an upgrade
    inside the logs) or that writes KRaft lines is left out."""
    lives = template_lives()
    spans: dict[int, list[tuple[KafkaVersion, KafkaVersion]]] = {}
    kraft: set[int] = set()
    for broker, template in templates:
        spec = lives.get(template or "")
        if broker is None or spec is None:
            continue
        if spec.kraft_only:
            kraft.add(broker)
        spans.setdefault(broker, []).append((KafkaVersion.parse(spec.since.line), spec.until))
    out = {}
    for broker, found in spans.items():
        first, last = max(f for f, _ in found), min(u for _, u in found)
        if broker not in kraft and first <= last:
            out[broker] = VersionRange(first, last)
    return out


def _int(text: Optional[str]) -> Optional[int]:
    try:
        return None if text is None else int(text)
    except ValueError:
        return None


def _claimant(event: dict) -> Optional[int]:
    """Who an election line says became controller."""
    et = event["event_type"]
    if et == "kraft_new_epoch":
        return _int(attr(event, "new_leader"))  # "(none)" -> None
    elected = _int(attr(event, "elected_controller"))
    if elected is not None:
        return elected
    return event.get("controller_id") if event.get("controller_id") is not None else event.get("broker")


def _broker_updates(event: dict) -> list[tuple[str, Collection[int]]]:
    """What one broker line says: ("snapshot", set) or (state, [brokers])."""
    et = event["event_type"]
    out: list[tuple[str, Collection[int]]] = []
    live = event.get("live_brokers")
    if et == "broker_change" and live is not None:
        out.append(("snapshot", frozenset(live)))
    elif et == "broker_change":
        if event.get("deleted_brokers"):
            out.append((DEAD, event["deleted_brokers"]))
        if event.get("added_brokers"):
            out.append((ALIVE, event["added_brokers"]))
    elif et == "live_brokers" and live is not None:
        # "Currently active brokers in the cluster" (failover) is a full set; "Live brokers: …"
        # (controlled shutdown, DEBUG) is liveBrokerIds = registered minus shutting down.
        kind = "snapshot" if "Currently active" in (event.get("message") or "") else ALIVE
        out.append((kind, frozenset(live) if kind == "snapshot" else list(live)))
    elif et == "broker_failure" and event.get("deleted_brokers"):
        out.append((DEAD, event["deleted_brokers"]))
    elif et == "broker_startup" and event.get("added_brokers"):
        out.append((ALIVE, event["added_brokers"]))
    elif et == "controlled_shutdown" and event.get("target_broker") is not None:
        out.append((SHUTTING_DOWN, [event["target_broker"]]))
    elif et in ("kraft_broker_fenced",) and event.get("target_broker") is not None:
        out.append((FENCED, [event["target_broker"]]))
    elif et == "kraft_broker_unfenced" and event.get("target_broker") is not None:
        out.append((ALIVE, [event["target_broker"]]))
    elif et == "kraft_broker_registered" and event.get("target_broker") is not None:
        # A registration is fenced unless it says otherwise: RegisterBrokerRecord's ``fenced`` defaults to true
        # (metadata/src/main/resources/common/metadata/RegisterBrokerRecord.json@3.9.0-rc3:56) and a new
        # incarnation never sets it ("Registering a new incarnation of broker ...",
        # M:controller/ClusterControlManager.java@3.9.0-rc3:422-426,461-476); only an amended registration (same
        # incarnation) keeps the old state (:477-483). Unfencing comes later, with the heartbeat ("The request
        # from broker N to unfence has been granted ...", M:controller/BrokerHeartbeatManager.java@3.9.0-rc3:549).
        out.append((FENCED if attr(event, "fenced") != "false" else ALIVE, [event["target_broker"]]))
    elif et == "kraft_broker_registration_changed" and event.get("target_broker") is not None:
        change = attr(event, "fencing_change")
        if change in ("fence", "unfence"):
            out.append((FENCED if change == "fence" else ALIVE, [event["target_broker"]]))
        if attr(event, "controlled_shutdown_change") == "in_controlled_shutdown":
            out.append((SHUTTING_DOWN, [event["target_broker"]]))
    elif et == "kraft_controlled_shutdown" and event.get("target_broker") is not None:
        out.append((SHUTTING_DOWN, [event["target_broker"]]))
    elif et in METADATA_BROKER_TYPES and event.get("target_broker") is not None:
        out.extend(_metadata_broker_update(event))
    return out


def _metadata_broker_update(event: dict) -> list[tuple[str, Collection[int]]]:
    """RegisterBrokerRecord (starts fenced), BrokerRegistrationChangeRecord, Fence/UnfenceBrokerRecord,
    UnregisterBrokerRecord (M:metadata/BrokerRegistration.java, ClusterControlManager.replay@3.9.0-rc3)."""
    et, broker = event["event_type"], [event["target_broker"]]
    if et == "metadata_register_broker":
        return [(FENCED if attr(event, "fenced") != "false" else ALIVE, broker)]
    if et == "metadata_unregister_broker":
        return [(DEAD, broker)]
    if et == "metadata_fence_broker":
        return [(FENCED, broker)]
    if et == "metadata_unfence_broker":
        return [(ALIVE, broker)]
    out: list[tuple[str, Collection[int]]] = []
    change = attr(event, "fencing_change")
    if change in ("fence", "unfence"):
        out.append((FENCED if change == "fence" else ALIVE, broker))
    if attr(event, "controlled_shutdown_change") == "in_controlled_shutdown":
        out.append((SHUTTING_DOWN, broker))
    return out


def build_cluster_context(
    cluster: str,
    events: Iterable[dict],
    activities: Iterable[dict],
    skew_seconds: float = 2.0,
    templates: Iterable[tuple[Optional[int], Optional[str]]] = (),
) -> ClusterContext:
    """``events``: cluster lines sorted by (ts, file, line); ``activities``: one dict per
    (controller_id, controller_epoch) with first_ts, last_ts, n, first_ref, last_ref; ``templates``: the
    distinct (broker, template) pairs of every line (``date_brokers``)."""
    events = [e for e in events if e.get("ts") is not None]
    activities = list(activities)
    ctx = ClusterContext(cluster=cluster, dated=date_brokers(templates))
    _collect_brokers(ctx, events)
    _collect_versions(ctx, events)
    _collect_controllers(ctx, events, activities, timedelta(seconds=skew_seconds))
    ctx.findings.extend(_offset_gap_findings(cluster, events))
    ctx.metadata_until = max((e["ts"] for e in events if e.get("log_kind") == "metadata"), default=None)
    ctx.reason_lines = [
        {
            k: e.get(k)
            for k in ("ts", "source_file", "line_no", "event_type", "broker", "controller_id", "controller_epoch")
        }
        for e in events
        if e["event_type"] in REASON_LINE_TYPES
    ]
    for e in events:
        if e["event_type"] in DELETION_TYPES and e.get("topic"):
            ctx.deletions.setdefault(e["topic"], []).append(
                {k: e.get(k) for k in ("ts", "source_file", "line_no", "event_type", "broker", "dialect")}
            )
    times = {ref_of(e): e["ts"] for e in events}
    for a in activities:
        times.setdefault(a["first_ref"], a.get("first_ts"))
        times.setdefault(a["last_ref"], a.get("last_ts"))
    ctx.findings = consolidate(ctx.findings, times.get)
    return ctx


def is_cluster_row(event: dict) -> bool:
    """The rows ``build_cluster_context`` reads (the in-process twin of replay_kraft.cluster_rows_filter)."""
    if event["event_type"] in CLUSTER_EVENT_TYPES:
        return True
    return event["attrs"] is not None and attr(event, OFFSET_GAP_ATTR) is not None


def _offset_gap_findings(cluster: str, events: list[dict]) -> list[Finding]:
    """Offsets skipped inside one dumped ``__cluster_metadata`` segment: lost or removed records."""
    out = []
    for e in events:
        before = _int(attr(e, OFFSET_GAP_ATTR))
        after = _int(attr(e, "offset"))
        if before is None or after is None:
            continue
        prev_line = _int(attr(e, "offset_gap_prev_line"))
        evidence = ([evidence_ref(e["source_file"], prev_line)] if prev_line is not None else []) + [ref_of(e)]
        out.append(
            Finding.make(
                "metadata_offset_gap",
                ERROR,
                f"the metadata log skips offsets {before + 1}..{after - 1} ({after - before - 1} record(s)) between two "
                f"batches of {e['source_file']}: __cluster_metadata is never compacted, so records are missing (a lost "
                f"or edited segment); the partition history replayed across the gap may miss changes",
                evidence,
                cluster=cluster,
                controller_epoch=e.get("controller_epoch"),
                ts=e.get("ts"),
                kind="segment",
                episode=("segment", e["source_file"]),
            )
        )
    return out


def _collect_versions(ctx: ClusterContext, events: list[dict]) -> None:
    for e in events:
        if e["event_type"] == "kafka_version" and e.get("broker") is not None:
            version = attr(e, "kafka_version")
            if version:
                ctx.broker_versions[e["broker"]] = version  # the last one wins (upgrades)
        elif e["event_type"] == "metadata_feature_level":
            level = _int(attr(e, "metadata_version"))
            if level is not None:
                ctx.metadata_versions.append((e["ts"], level))


def _collect_brokers(ctx: ClusterContext, events: list[dict]) -> None:
    per_broker: dict[int, list[tuple[datetime, str, str]]] = {}
    recorded: dict[int, list[tuple[datetime, str, str]]] = {}  # the changes metadata records state
    for e in events:
        if e["event_type"] not in BROKER_TYPES:
            continue
        for state, brokers in _broker_updates(e):
            if state == "snapshot":
                ctx._snapshots.append(_Snapshot(e["ts"], frozenset(brokers), ref_of(e)))
                for b in brokers:
                    per_broker.setdefault(b, [])
                continue
            for b in brokers:
                change = (e["ts"], state, ref_of(e))
                per_broker.setdefault(b, []).append(change)
                if e["event_type"] in METADATA_BROKER_TYPES:
                    recorded.setdefault(b, []).append(change)
    ctx._broker_events = per_broker
    ctx.brokers = _broker_intervals(ctx, per_broker)
    ctx._recorded_states = {b: _intervals_of(b, changes) for b, changes in recorded.items()}


def _broker_intervals(ctx: ClusterContext, per_broker: dict) -> list[BrokerInterval]:
    """Merge per-broker lines and full live sets into one state timeline per broker."""
    known = set(per_broker)
    for snap in ctx._snapshots:
        known |= set(snap.registered)
    out: list[BrokerInterval] = []
    for b in sorted(known):
        changes: list[tuple[datetime, str, str]] = list(per_broker.get(b, []))
        changes += [(s.ts, ALIVE if b in s.registered else DEAD, s.ref) for s in ctx._snapshots]
        out.extend(_intervals_of(b, changes))
    return out


def _intervals_of(broker: int, changes: list[tuple[datetime, str, str]]) -> list[BrokerInterval]:
    """One broker's (ts, state, line) changes as its state timeline: a repeated state opens no interval."""
    merged: list[list] = []
    for ts, state, ref in sorted(changes, key=lambda c: (c[0], c[2])):
        if merged and merged[-1][1] == state:
            continue
        merged.append([ts, state, ref])
    return [
        BrokerInterval(broker, state, ts, merged[i + 1][0] if i + 1 < len(merged) else None, ref)
        for i, (ts, state, ref) in enumerate(merged)
    ]


def _collect_controllers(ctx: ClusterContext, events: list[dict], activities: list[dict], skew: timedelta) -> None:
    claims: dict[tuple[int, int], list[tuple[datetime, str]]] = {}  # (epoch, id) -> election lines
    epoch_starts: dict[int, tuple[datetime, str]] = {}  # every epoch seen starting (KRaft "(none)" too)
    resignations: dict[int, list[tuple[datetime, str]]] = {}
    pending: dict[int, tuple[datetime, str]] = {}  # 0.11 "X successfully elected" before its epoch line
    election_order: list[tuple[datetime, int, int, str]] = []
    raft_epochs: dict[int, tuple[datetime, str]] = {}  # KRaft epoch -> first LEADER_CHANGE record
    for e in events:
        et = e["event_type"]
        if et in ELECTION_TYPES:
            who = _claimant(e)
            epoch = e.get("controller_epoch")
            if epoch is None:
                if who is not None and et == "controller_elected":
                    pending[who] = (e["ts"], ref_of(e))
                continue
            epoch_starts.setdefault(epoch, (e["ts"], ref_of(e)))
            if who is None:
                continue
            lines = claims.setdefault((epoch, who), [])
            if who in pending:
                lines.append(pending.pop(who))
            lines.append((e["ts"], ref_of(e)))
            election_order.append((e["ts"], epoch, who, ref_of(e)))
        elif et in RESIGN_TYPES:
            who = e.get("controller_id") if e.get("controller_id") is not None else e.get("broker")
            if who is not None:
                resignations.setdefault(who, []).append((e["ts"], ref_of(e)))
        elif (
            et in RAFT_EPOCH_TYPES
            and attr(e, "control_type") == "LEADER_CHANGE"
            and e.get("controller_epoch") is not None
        ):
            raft_epochs.setdefault(e["controller_epoch"], (e["ts"], ref_of(e)))  # several dumps: the first
            epoch_starts.setdefault(e["controller_epoch"], (e["ts"], ref_of(e)))
    acts = {
        (a["controller_epoch"], a["controller_id"]): a
        for a in activities
        if a.get("controller_epoch") is not None and a.get("controller_id") is not None
    }
    keys = sorted(set(claims) | set(acts))
    named_epochs = {epoch for epoch, _ in keys}
    unnamed = sorted(epoch for epoch in raft_epochs if epoch not in named_epochs)
    starts: dict[tuple[int, Optional[int]], tuple[Optional[datetime], tuple[str, ...]]] = {}
    for key in keys:
        lines = sorted(claims.get(key, []))
        act = acts.get(key)
        times = [t for t, _ in lines] + ([act["first_ts"]] if act and act.get("first_ts") else [])
        refs = tuple(r for _, r in lines) or ((act["first_ref"],) if act else ())
        if key[0] in raft_epochs and key in claims:  # the same election, seen in the metadata log too
            times.append(raft_epochs[key[0]][0])
            refs += (raft_epochs[key[0]][1],)
        start = min(times) if times else None
        starts[key] = (start, refs)
        if start is not None:
            epoch_starts.setdefault(key[0], (start, refs[0]))
    ordered_epochs = sorted(epoch_starts)
    intervals: list[ControllerInterval] = []
    resigned: dict[tuple[int, int], tuple[datetime, str]] = {}
    for epoch, cid in keys:
        ts_start = starts[(epoch, cid)][0]
        after = [(t, r) for t, r in resignations.get(cid, []) if ts_start is not None and t >= ts_start]
        if after:
            resigned[(epoch, cid)] = after[0]
    for epoch in unnamed:
        starts[(epoch, None)] = (raft_epochs[epoch][0], (raft_epochs[epoch][1],))
    for epoch, cid in keys + [(epoch, None) for epoch in unnamed]:
        ts_start, refs = starts[(epoch, cid)]
        act = acts.get((epoch, cid))
        later = [epoch_starts[e][0] for e in ordered_epochs if e > epoch and epoch_starts[e][0] is not None]
        end_candidates = [t for t in later if ts_start is None or t >= ts_start]
        ts_end = min(end_candidates) if end_candidates else None
        end_ref = None
        for t, ref in resignations.get(cid, []):
            if ts_start is not None and t >= ts_start and (ts_end is None or t < ts_end):
                ts_end, end_ref = t, ref
                break
        intervals.append(
            ControllerInterval(
                controller_id=cid,
                controller_epoch=epoch,
                ts_start=ts_start,
                ts_end=ts_end,
                evidence=refs,
                elected=(epoch, cid) in claims or cid is None,
                first_action_ts=act.get("first_ts") if act else None,
                last_action_ts=act.get("last_ts") if act else None,
                n_actions=int(act.get("n", 0)) if act else 0,
                end_evidence=end_ref,
            )
        )
    intervals.sort(
        key=lambda c: (
            c.controller_epoch,
            c.ts_start is not None,
            c.ts_start.timestamp() if c.ts_start else 0.0,
            c.controller_id,
        )
    )
    ctx.controllers = intervals
    ctx._starts = sorted((c.ts_start, c.controller_epoch) for c in intervals if c.ts_start is not None)
    ctx.findings.extend(_same_epoch_findings(ctx.cluster, intervals))
    ctx.findings.extend(_zombie_findings(ctx.cluster, intervals, acts, epoch_starts, skew, resigned))
    seen = [
        (c.ts_start, c.controller_epoch, c.controller_id, c.evidence[0])
        for c in intervals
        if c.ts_start is not None and c.evidence
    ]
    regressions, ctx.resets = _election_regressions(ctx.cluster, election_order, seen, skew)
    ctx.findings.extend(regressions)


def _id_order(controller_id: Optional[int]) -> tuple[bool, int]:
    """Controller ids in order, an unknown one (an epoch only the metadata log dates) last."""
    return controller_id is None, controller_id or 0


def _same_epoch_findings(cluster: str, intervals: list[ControllerInterval]) -> list[Finding]:
    """I5/A7 (KAFKA-1096): one controller epoch, two controller ids."""
    by_epoch: dict[int, list[ControllerInterval]] = {}
    for c in intervals:
        by_epoch.setdefault(c.controller_epoch, []).append(c)
    out = []
    for epoch, group in sorted(by_epoch.items()):
        ids = sorted({c.controller_id for c in group}, key=_id_order)
        if len(ids) < 2:
            continue
        evidence = [r for c in sorted(group, key=lambda c: _id_order(c.controller_id)) for r in c.evidence]
        out.append(
            Finding.make(
                "concurrent_controllers",
                CRITICAL,
                f"controllers {', '.join(map(str, ids))} all acted as controller with epoch {epoch}; an epoch belongs "
                f"to one election (I5; KAFKA-1096 let an old controller adopt the new epoch before 0.8.2)",
                evidence,
                cluster=cluster,
                controller_epoch=epoch,
                kind="same_epoch",
                ts=min((c.ts_start for c in group if c.ts_start), default=None),
            )
        )
    return out


def _zombie_findings(
    cluster: str,
    intervals: list[ControllerInterval],
    acts: dict,
    epoch_starts: dict,
    skew: timedelta,
    resigned: dict,
) -> list[Finding]:
    """I6/A3/A8: a controller still acting with epoch E after a newer epoch started.

    An *action* is needed: a controller-authored line with the old epoch (a state change, a request
    sent, ``ACTING_TYPES``) later than the newer epoch's start. A deposed controller that only resigns
    late (``processExpire`` -> ``onControllerResignation``, K:controller/KafkaController.scala@2.4.1:
    1849-1852, ``Resigned`` @2.4.1:377) never acted beside the new one: no finding. When it did act, its
    late ``Resigned`` line (``resigned``) is evidence of the same zombie episode."""
    out = []
    for (epoch, cid), act in sorted(acts.items()):
        last = act.get("last_ts")
        if last is None:
            continue
        newer = [(e, epoch_starts[e]) for e in sorted(epoch_starts) if e > epoch and epoch_starts[e][0] is not None]
        began = next((c.ts_start for c in intervals if (c.controller_epoch, c.controller_id) == (epoch, cid)), None)
        for new_epoch, (start, start_ref) in newer:
            if began is not None and start <= began:
                continue  # the newer epoch predates this one's start: an epoch reset, not a zombie
            new_ids = {c.controller_id for c in intervals if c.controller_epoch == new_epoch}
            tolerance = timedelta(0) if new_ids == {cid} else skew
            late = [resigned[(epoch, cid)]] if (epoch, cid) in resigned else []
            if last > start + tolerance:
                out.append(
                    Finding.make(
                        "concurrent_controllers",
                        ERROR,
                        f"controller {cid} still acted with epoch {epoch} at {last:%Y-%m-%d %H:%M:%S} after epoch "
                        f"{new_epoch} started at {start:%Y-%m-%d %H:%M:%S} (zombie controller, I6; ZooKeeper writes "
                        f"are fenced only from 2.1, KAFKA-6082)",
                        [start_ref, act["last_ref"], *(r for _, r in late)],
                        cluster=cluster,
                        controller_epoch=epoch,
                        kind="zombie",
                        ts=start,
                        ts_end=max([last, *(t for t, _ in late)]),
                        controller_epoch_end=new_epoch,
                        broker=cid,
                        anchor=act["first_ref"],
                    )
                )
                break
    return out


def _election_regressions(
    cluster: str,
    elections: list[tuple[datetime, int, int, str]],
    seen: list[tuple[datetime, int, Optional[int], str]],
    skew: timedelta,
) -> tuple[list[Finding], list[datetime]]:
    """I5: a new election logging an epoch lower than one seen before it (elected or acting).

    The /controller_epoch znode only goes back when ZooKeeper's data is lost or replaced; from
    then on epochs restart, so the replay orders lines by (generation, epoch, time) where a
    generation ends at each such reset (``ClusterContext.generation_at``).
    """
    out: list[Finding] = []
    resets: list[datetime] = []
    seen_sorted = sorted(seen, key=lambda x: (x[0], x[3]))
    for ts, epoch, who, ref in sorted(elections, key=lambda x: (x[0], x[3])):
        if resets and ts <= resets[-1]:
            continue
        earlier = [
            o
            for o in seen_sorted
            if o[1] > epoch
            and o[0] < ts - (timedelta(0) if o[2] == who else skew)
            and (not resets or o[0] > resets[-1])
        ]
        if not earlier:
            continue
        top = max(earlier, key=lambda o: (o[1], o[0]))
        resets.append(ts)
        out.append(
            Finding.make(
                "controller_epoch_regression",
                ERROR,
                f"controller {who} was elected with epoch {epoch} after controller {top[2]} had used epoch {top[1]} "
                f"({top[0]:%Y-%m-%d %H:%M:%S}): the /controller_epoch znode went back (ZooKeeper data lost or "
                f"replaced), so brokers that remember epoch {top[1]} reject the new controller until they restart (I5)",
                [top[3], ref],
                cluster=cluster,
                controller_epoch=epoch,
                kind="election",
                ts=ts,
                broker=who,
            )
        )
    return out, resets


__all__ = [
    "ACTING_TYPES",
    "CLUSTER_EVENT_TYPES",
    "DELETION_COMPLETED",
    "DELETION_RESTARTED",
    "OFFSET_GAP_ATTR",
    "REASON_LINE_TYPES",
    "BrokerInterval",
    "ClusterContext",
    "ControllerInterval",
    "build_cluster_context",
    "date_brokers",
    "is_cluster_row",
]
