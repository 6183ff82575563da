"""KRaft: one partition's history from its ``__cluster_metadata`` records, checked against brokers.

A KRaft partition has no state machine: its registration changes only by ``PartitionRecord``
(creation, or a snapshot restating it) and ``PartitionChangeRecord`` (every change), applied with
``PartitionRegistration.merge`` semantics (M:metadata/PartitionRegistration.java@3.9.0-rc3:241-280):

* a field absent from a change record is unchanged (every change field is tagged, default null;
  ``leader`` default -2 = ``NO_LEADER_CHANGE``, M:metadata/LeaderConstants.java@3.9.0-rc3;
  ``leaderRecoveryState`` -1 = no change, M:metadata/LeaderRecoveryState.java@3.9.0-rc3);
* ``partitionEpoch`` + 1 on **every** change record; ``leaderEpoch`` + 1 iff the record carries
  ``leader`` (even the same leader: PartitionChangeBuilder sets it to force a bump on reassignment,
  ``triggerLeaderEpochBumpForReplicaReassignmentIfNeeded``, and on ISR shrink only when
  ``metadata.version`` < 3.6-IV0, ``triggerLeaderEpochBumpForIsrShrinkIfNeeded``,
  M:controller/PartitionChangeBuilder.java@3.9.0-rc3:378-425, KAFKA-15021).

So the epochs the replay computes are right by construction *if no record is missing*; the checks
are against what states them absolutely: a snapshot's ``PartitionRecord`` and the brokers'
``Leader/Follower t-p ... starts at leader epoch E ... with partition epoch P`` lines
(K:cluster/Partition.scala@3.9.0-rc3:773-778,875-878). States: ``OnlinePartition`` (leader >= 0),
``OfflinePartition`` (leader -1), ``RecoveringPartition`` (leaderRecoveryState 1, KIP-704),
``NonExistentPartition`` after ``RemoveTopicRecord``. Every registration is also handed to
``kraft_leaderless``, which judges each leaderless span against the brokers' activity.

A broker line is compared with the records of the topic id it prints (3.3+), else with the topic
incarnation created last before it: a deleted and re-created topic keeps its name, not its id.
The controller's ``UNCLEAN partition change`` line (every controller logs it on replay) is cited by
the record's ``unclean_election`` finding, or stands alone when no record explains it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import Optional

from kafka_forensics.statemachines.states import PartitionState as P
from kafka_forensics.statemachines.states import ReplicaState as R

from .cluster import DEAD, FENCED, ClusterContext
from .events import attr, attrs_of
from .findings import CRITICAL, ERROR, INFO, MAX_EVIDENCE, WARNING, Finding, ref_of
from .kraft_leaderless import LeaderlessEpisodes

P_RECOVERING = "RecoveringPartition"
METADATA = "metadata"
NO_LEADER = -1
NO_LEADER_CHANGE = -2  # a PartitionChangeRecord's ``leader`` default (M:metadata/LeaderConstants.java@3.9.0-rc3)
RECOVERING = 1
# MetadataVersion feature levels (SC:MetadataVersion.java@3.9.0-rc3): 3.2-IV0 = 3 enables leader
# recovery (isLeaderRecoverySupported :315-317); 4.0-IV0 = 22 enables ELR in 3.9 (isElrSupported :347-349).
MV_LEADER_RECOVERY = 3
MV_ELR = 22
RECORD_TYPES = frozenset({"metadata_partition", "metadata_partition_change", "metadata_remove_topic"})
TOPIC_RECORD = "metadata_topic"  # a TopicRecord: the name of a topic id (``resolve_metadata_events``)
BROKER_VIEW_TYPES = frozenset({"leader_starts", "follower_starts"})
# "UNCLEAN partition change for t-p with topic ID X: <diff>" (kraft.lark; every controller logs it on replay).
UNCLEAN_LINE = "kraft_unclean_partition_change"
KRAFT_PARTITION_TYPES = RECORD_TYPES | BROKER_VIEW_TYPES | {UNCLEAN_LINE}
# The automatic trigger: ReplicationControlManager.maybeTriggerUncleanLeaderElectionForLeaderlessPartitions
# logs (ERROR) "Triggering unclean leader election for offline partition t-p." after electLeader
# (M:controller/ReplicationControlManager.java@3.9.0-rc3:1700-1716); ElectLeaders(UNCLEAN) from an admin
# goes through the same electLeader (:1485-1533) and logs nothing at INFO or above.
TRIGGER_TEXT = "Triggering unclean leader election for offline partition"
TRIGGER_WINDOW_S = 5.0
_DIFF_ARROW = re.compile(r"(?:^|, )(leader|leaderEpoch|partitionEpoch): (-?\d+) -> (-?\d+)")


@dataclass(frozen=True)
class Registration:
    """A ``PartitionRegistration`` (the fields the replay needs)."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int
    partition_epoch: int
    recovery: int = 0
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()

    @property
    def state(self) -> str:
        if self.leader < 0:
            return P.OfflinePartition
        return P_RECOVERING if self.recovery == RECOVERING else P.OnlinePartition


def _attr_list(attrs: dict, key: str) -> Optional[tuple[int, ...]]:
    text = attrs.get(key)
    if text is None:
        return None
    return tuple(int(x) for x in text.split(",") if x.strip())


def _int(text) -> Optional[int]:
    try:
        return None if text is None else int(text)
    except ValueError:
        return None


def registration_of(event: dict) -> Registration:
    """A ``PartitionRecord`` as a full registration."""
    attrs = attrs_of(event)
    return Registration(
        replicas=tuple(event.get("replicas") or ()),
        isr=tuple(event.get("isr") or ()),
        leader=event["leader"] if event.get("leader") is not None else NO_LEADER,
        leader_epoch=event.get("leader_epoch") or 0,
        partition_epoch=event.get("partition_epoch") or 0,
        recovery=_int(attrs.get("leader_recovery_state")) or 0,
        elr=_attr_list(attrs, "elr") or (),
        last_known_elr=_attr_list(attrs, "last_known_elr") or (),
        adding=_attr_list(attrs, "adding_replicas") or (),
        removing=_attr_list(attrs, "removing_replicas") or (),
    )


def merge(cur: Registration, event: dict) -> Registration:
    """``PartitionRegistration.merge(PartitionChangeRecord)``: absent = unchanged, epochs as in Kafka."""
    attrs = attrs_of(event)
    leader = event.get("leader")
    changed_leader = leader is not None and leader != NO_LEADER_CHANGE
    recovery = _int(attrs.get("leader_recovery_state"))
    return replace(
        cur,
        replicas=tuple(event["replicas"]) if event.get("replicas") is not None else cur.replicas,
        isr=tuple(event["isr"]) if event.get("isr") is not None else cur.isr,
        leader=leader if leader is not None and changed_leader else cur.leader,
        leader_epoch=cur.leader_epoch + 1 if changed_leader else cur.leader_epoch,
        partition_epoch=cur.partition_epoch + 1,
        recovery=recovery if recovery is not None and recovery >= 0 else cur.recovery,
        elr=_replaced_list(attrs, "elr", cur.elr),
        last_known_elr=_replaced_list(attrs, "last_known_elr", cur.last_known_elr),
        adding=_replaced_list(attrs, "adding_replicas", cur.adding),
        removing=_replaced_list(attrs, "removing_replicas", cur.removing),
    )


def _replaced_list(attrs: dict, key: str, current: tuple[int, ...]) -> tuple[int, ...]:
    """A record's list field: absent = unchanged (``PartitionChangeRecord`` tagged fields)."""
    value = _attr_list(attrs, key)
    return current if value is None else value


def log_position(event: dict) -> tuple:
    """Order in the metadata log: a segment record by its offset; a snapshot's records right after
    the last offset it contains (end offset - 1), in snapshot order."""
    attrs = attrs_of(event)
    offset = _int(attrs.get("offset"))
    if offset is not None:
        return (offset, 0, 0)
    end = _int(attrs.get("snapshot_end_offset"))
    if end is not None:
        return (end - 1, 1, _int(attrs.get("snapshot_index")) or 0)
    return (1 << 62, 2, 0)


_EVENT_TYPE = itemgetter("event_type")


def has_metadata(events: list[dict]) -> bool:
    """Does any line of ``events`` hold a metadata record? (Asked of every partition: one pass at C speed.)"""
    return not RECORD_TYPES.isdisjoint(map(_EVENT_TYPE, events))


@dataclass
class KraftResult:
    partition_intervals: list[dict]
    replica_intervals: list[dict]
    findings: list[Finding]


class KraftPartitionReplay:
    """The metadata history of one partition, its invariants and the broker views against it."""

    def __init__(self, events: list[dict], ctx: ClusterContext, cluster: str):
        first = events[0]
        self.ctx = ctx
        self.where = {"cluster": cluster, "topic": first.get("topic"), "partition": first.get("partition")}
        self.records = _dedupe(
            sorted(
                (e for e in events if e["event_type"] in RECORD_TYPES),
                key=lambda e: (log_position(e), e["source_file"], e["line_no"]),
            )
        )
        self.views = sorted(
            (e for e in events if e["event_type"] in BROKER_VIEW_TYPES),
            key=lambda e: (e.get("ts") is None, e.get("ts"), e["source_file"], e["line_no"]),
        )
        self.unclean_lines = sorted(
            (e for e in events if e["event_type"] == UNCLEAN_LINE),
            key=lambda e: (e.get("ts") is None, e.get("ts"), e["source_file"], e["line_no"]),
        )
        self.triggers = [
            e
            for e in events
            if e["event_type"] == "unclean_leader_election"
            and e.get("ts") is not None
            and TRIGGER_TEXT in (e.get("message") or "")
        ]
        self.explained_lines: set[str] = set()  # UNCLEAN lines cited by a record's finding
        self.cur: Optional[Registration] = None
        self.cur_ref: Optional[str] = None
        self.history: list[tuple[Registration, dict]] = []  # every state with the record that made it
        self.p_rows: list[dict] = []
        self.r_rows: dict[int, list[dict]] = {}
        self.replica_state: dict[int, str] = {}
        self.findings: list[Finding] = []
        self.relative = False  # no PartitionRecord seen: epochs are relative to the first change
        self.leader_known = False  # a record stated the leader (not the placeholder of ``relative``)
        self.leaderless = LeaderlessEpisodes(ctx, self.where, self.views)

    # ---- driver ------------------------------------------------------------------------------
    def run(self) -> KraftResult:
        for event in self.records:
            et = event["event_type"]
            if et == "metadata_partition":
                self._partition_record(event)
            elif et == "metadata_partition_change":
                self._change_record(event)
            elif et == "metadata_remove_topic" and self.cur is not None:
                self._removed(event)
        self.by_epoch: dict[tuple, tuple[Registration, dict]] = {}
        for reg, ev in self.history:
            self.by_epoch.setdefault((_topic_id(ev), reg.partition_epoch), (reg, ev))
        for view in self.views:
            self._broker_view(view)
        self.findings.extend(self.leaderless.findings())
        rest = [e for e in self.unclean_lines if ref_of(e) not in self.explained_lines]
        self.findings.extend(unclean_line_findings(rest, self.triggers, self.where))
        replica_rows = [row for r in sorted(self.r_rows) for row in self.r_rows[r]]
        return KraftResult(self.p_rows, replica_rows, self.findings)

    def _finding(self, rule: str, severity: str, summary: str, evidence: list, event: dict, kind: str, **extra) -> None:
        self.findings.append(
            Finding.make(
                rule,
                severity,
                summary,
                [r for r in evidence if r],
                controller_epoch=event.get("controller_epoch"),
                ts=event.get("ts"),
                kind=kind,
                **{**self.where, **extra},
            )
        )

    # ---- records -----------------------------------------------------------------------------
    def _partition_record(self, event: dict) -> None:
        new = registration_of(event)
        snapshot = "snapshot_end_offset" in attrs_of(event)
        if self.cur is not None and snapshot and not self.relative:
            if new == self.cur:
                return  # the snapshot restates the replayed state: nothing new to check or show
            self._compare_snapshot(new, self.cur, event)
        if self.relative:  # absolute epochs from here on
            self.relative, self.history = False, []
        self._apply(new, event)

    def _compare_snapshot(self, snap: Registration, cur: Registration, event: dict) -> None:
        ref = self.cur_ref
        if snap.partition_epoch > cur.partition_epoch:
            self._finding(
                "partition_epoch_gap",
                WARNING,
                f"the snapshot has partition epoch {snap.partition_epoch}, the records replayed up to its end offset "
                f"reach only {cur.partition_epoch}: {snap.partition_epoch - cur.partition_epoch} PartitionChangeRecord(s) "
                f"are missing from the dumped log",
                [ref, ref_of(event)],
                event,
                "snapshot_ahead",
            )
        elif snap.partition_epoch < cur.partition_epoch:
            self._finding(
                "partition_epoch_regression",
                ERROR,
                f"the snapshot has partition epoch {snap.partition_epoch}, lower than the {cur.partition_epoch} the "
                f"records before its end offset reached",
                [ref, ref_of(event)],
                event,
                "snapshot_behind",
            )
        elif (snap.leader, snap.leader_epoch, set(snap.isr), snap.replicas) != (
            cur.leader,
            cur.leader_epoch,
            set(cur.isr),
            cur.replicas,
        ):
            self._finding(
                "metadata_view_mismatch",
                ERROR,
                f"at partition epoch {snap.partition_epoch} the snapshot has leader {snap.leader} (epoch "
                f"{snap.leader_epoch}) ISR {list(snap.isr)}, the replayed records leader {cur.leader} (epoch "
                f"{cur.leader_epoch}) ISR {list(cur.isr)}",
                [ref, ref_of(event)],
                event,
                "snapshot_differs",
            )

    def _change_record(self, event: dict) -> None:
        if self.cur is None:
            self._finding(
                "partition_epoch_gap",
                INFO,
                "a PartitionChangeRecord for a partition whose PartitionRecord is not in the dump (the dump starts "
                "after its creation, or no snapshot was dumped): epochs before it are unknown",
                [ref_of(event)],
                event,
                "no_base_record",
            )
            base = Registration(replicas=(), isr=(), leader=NO_LEADER, leader_epoch=-1, partition_epoch=-1)
            self.cur, self.relative = base, True  # epochs stay relative: not compared with broker views
        prev, prev_ref = self.cur, self.cur_ref
        new = merge(prev, event)
        self._check_unclean(prev, prev_ref, new, event)
        self._apply(new, event)

    def _removed(self, event: dict) -> None:
        self._open_partition(event, P.NonExistentPartition, self.cur)
        for replica in list(self.replica_state):
            self._set_replica(event, replica, R.NonExistentReplica)
        self.cur, self.cur_ref = None, ref_of(event)
        self.leader_known = False
        self.leaderless.step(None, event, False)

    def _apply(self, new: Registration, event: dict) -> None:
        self.cur, self.cur_ref = new, ref_of(event)
        leader = event.get("leader")
        self.leader_known |= event["event_type"] == "metadata_partition" or (
            leader is not None and leader != NO_LEADER_CHANGE
        )
        self.leaderless.step(new, event, self.leader_known)
        if not self.relative:
            self.history.append((new, event))
        self._invariants(new, event)
        if event["event_type"] == "metadata_partition" or event.get("leader") is not None:
            self._check_fenced_leader(new, event)
        self._open_partition(event, new.state, new)
        for replica in new.replicas:
            state = R.OnlineReplica
            broker_state, _ = self.ctx.broker_state_at(replica, event.get("ts"))
            if broker_state in (FENCED, DEAD):
                state = R.OfflineReplica
            self._set_replica(event, replica, state)
        for replica in [
            r for r, s in self.replica_state.items() if r not in new.replicas and s != R.NonExistentReplica
        ]:
            self._set_replica(event, replica, R.NonExistentReplica)

    # ---- checks ------------------------------------------------------------------------------
    def _invariants(self, reg: Registration, event: dict) -> None:
        ref = ref_of(event)
        if reg.leader >= 0 and reg.leader not in reg.isr:
            self._finding(
                "leader_not_in_isr",
                ERROR,
                f"leader {reg.leader} is not in the ISR {list(reg.isr)} (partition epoch {reg.partition_epoch})",
                [ref],
                event,
                "metadata",
            )
        if reg.recovery == RECOVERING and list(reg.isr) != [reg.leader]:
            self._finding(
                "recovering_isr_not_singleton",
                ERROR,
                f"leader {reg.leader} is RECOVERING but the ISR is {list(reg.isr)}, not [{reg.leader}] "
                f"(KIP-704: validateAlterPartitionData rejects such a change)",
                [ref],
                event,
                "metadata",
            )
        extra = set(reg.isr) - set(reg.replicas)
        if extra and reg.replicas:
            self._finding(
                "isr_not_subset_of_replicas",
                ERROR,
                f"ISR members {sorted(extra)} are not replicas {list(reg.replicas)}",
                [ref],
                event,
                "metadata",
            )
        mv = self.ctx.metadata_version_at(event.get("ts"))
        elr_enabled = mv is not None and mv >= MV_ELR
        if not reg.isr and reg.replicas and not elr_enabled:
            self._finding(
                "empty_isr",
                ERROR,
                f"empty ISR while ELR is not enabled (metadata.version level {mv}; an empty ISR is only "
                f"written with ELR, PartitionChangeBuilder.java@3.9.0-rc3)",
                [ref],
                event,
                "metadata",
            )
        overlap = set(reg.isr) & set(reg.elr)
        if overlap:
            self._finding(
                "elr_overlaps_isr",
                ERROR,
                f"replicas {sorted(overlap)} are in both the ISR {list(reg.isr)} and the ELR {list(reg.elr)} "
                f"(ReplicationControlManager logs 'has overlapping ISR=... and ELR=...')",
                [ref],
                event,
                "metadata",
            )
        if reg.elr and not elr_enabled and mv is not None:
            self._finding(
                "elr_overlaps_isr",
                WARNING,
                f"ELR {list(reg.elr)} written while metadata.version level {mv} does not enable ELR "
                f"(needs {MV_ELR}, isElrSupported)",
                [ref],
                event,
                "elr_without_metadata_version",
            )
        if reg.recovery == RECOVERING and mv is not None and mv < MV_LEADER_RECOVERY:
            self._finding(
                "recovering_isr_not_singleton",
                WARNING,
                f"RECOVERING written at metadata.version level {mv} < {MV_LEADER_RECOVERY} (3.2-IV0)",
                [ref],
                event,
                "recovery_without_metadata_version",
            )

    def _check_unclean(self, prev: Registration, prev_ref: Optional[str], new: Registration, event: dict) -> None:
        leader = event.get("leader")
        if leader is None or leader < 0 or prev_ref is None:
            return
        attrs = attrs_of(event)
        marked = _int(attrs.get("leader_recovery_state")) == RECOVERING
        eligible = set(prev.isr) or set(prev.elr)
        outside = leader not in prev.isr and not (not prev.isr and leader in prev.elr)
        # The controller's UNCLEAN line for this change is explained by the record even when the record
        # shows a clean ELR election: electionWasClean tests only the previous ISR, so a leader taken from
        # the ELR of an empty ISR is logged UNCLEAN too (M:metadata/PartitionRegistration.java@3.9.0-rc3:168).
        lines = [e for e in self.unclean_lines if _line_matches(e, prev, new, self.relative)]
        self.explained_lines.update(ref_of(e) for e in lines)
        if marked or (outside and eligible):
            why = (
                "the record marks the leader RECOVERING (only an unclean election does, KIP-704)"
                if marked
                else f"leader {leader} is not in the previous ISR {list(prev.isr)}"
            )
            trigger = _trigger_text(self.triggers, event)
            self._finding(
                "unclean_election",
                CRITICAL,
                f"unclean leader election in the metadata log: {why}; messages committed only on the old "
                f"ISR may be lost ({trigger})",
                [prev_ref, ref_of(event)] + [ref_of(e) for e in lines],
                event,
                "metadata",
                replica=leader,
            )

    def _check_fenced_leader(self, reg: Registration, event: dict) -> None:
        if reg.leader < 0:
            return
        state, evidence = self.ctx.broker_state_at(reg.leader, event.get("ts"))
        if state in (FENCED, DEAD):
            self._finding(
                "leader_on_fenced_broker",
                ERROR,
                f"leader {reg.leader} was elected while broker {reg.leader} was {state} (the controller "
                f"only elects active brokers: LeaderAcceptor, ReplicationControlManager.java@3.9.0-rc3)",
                [evidence, ref_of(event)],
                event,
                state,
                broker=reg.leader,
            )

    def _broker_view(self, view: dict) -> None:
        """A broker's ``starts at leader epoch E ... with partition epoch P`` against the records."""
        if not self.history:
            return
        epoch, leader_epoch = view.get("partition_epoch"), view.get("leader_epoch")
        if epoch is None or leader_epoch is None:
            return
        incarnation = _incarnation(self.history, view)
        if not incarnation:
            return  # a topic id no dumped record has (an incarnation of the name before or after the dump)
        top, top_event = incarnation[-1]
        low = incarnation[0][0].partition_epoch
        topic_id = _topic_id(top_event)
        if epoch > top.partition_epoch:
            self._finding(
                "partition_epoch_gap",
                WARNING,
                f"broker {view.get('broker')} applied partition epoch {epoch} (leader epoch {leader_epoch}); the "
                f"metadata records replayed reach only partition epoch {top.partition_epoch}: "
                f"{epoch - top.partition_epoch} PartitionChangeRecord(s) missing from the dump",
                [ref_of(top_event), ref_of(view)],
                view,
                "broker_ahead",
                broker=view.get("broker"),
                anchor=ref_of(view),  # one finding per broker's line: the record cited first is the same for all
            )
            return
        if epoch < low:
            return  # before the dumped history
        match = self.by_epoch.get((topic_id, epoch))
        if match is None:
            return
        reg, ev = match
        expected_leader = view.get("broker") if view["event_type"] == "leader_starts" else view.get("leader")
        if reg.leader_epoch != leader_epoch or (expected_leader is not None and reg.leader != expected_leader):
            self._finding(
                "metadata_view_mismatch",
                ERROR,
                f"broker {view.get('broker')} says partition epoch {epoch} has leader {expected_leader} at leader epoch "
                f"{leader_epoch}; the metadata record that made partition epoch {epoch} has leader {reg.leader} at "
                f"leader epoch {reg.leader_epoch}: no record explains the broker's view",
                [ref_of(ev), ref_of(view)],
                view,
                "broker_view",
                broker=view.get("broker"),
                anchor=ref_of(view),  # one finding per broker's line: the record cited first is the same for all
            )

    # ---- timelines ---------------------------------------------------------------------------
    def _open_partition(self, event: dict, state: str, reg: Optional[Registration]) -> None:
        values = {
            "state": state,
            "leader": reg.leader if reg else None,
            "isr": reg.isr if reg else None,
            "replicas": reg.replicas if reg else None,
            "leader_epoch": reg.leader_epoch if reg and not self.relative else None,
            "partition_epoch": reg.partition_epoch if reg and not self.relative else None,
        }
        if self.p_rows and all(self.p_rows[-1][k] == v for k, v in values.items()):
            return  # a snapshot restating the same state opens no interval
        _open(self.p_rows, {**self.where}, event, values)

    def _set_replica(self, event: dict, replica: int, state: str) -> None:
        if self.replica_state.get(replica) == state:
            return
        self.replica_state[replica] = state
        c = self.cur
        values = {
            "state": state,
            "leader": c.leader if c else None,
            "isr": c.isr if c else None,
            "replicas": c.replicas if c else None,
            "leader_epoch": c.leader_epoch if c else None,
            "partition_epoch": c.partition_epoch if c else None,
        }
        _open(self.r_rows.setdefault(replica, []), {**self.where, "replica": replica}, event, values)


def _topic_id(event: dict) -> Optional[str]:
    return attr(event, "topic_id")


def _incarnation(history: list[tuple[Registration, dict]], view: dict) -> list[tuple[Registration, dict]]:
    """The records of the topic incarnation a broker line is about: by the topic id it prints
    ("Leader t-0 with topic id Some(X)", 3.3+), else the incarnation created last at or before
    the line (a deleted and re-created topic keeps its name, not its id)."""
    view_id = attr(view, "topic_id")
    ids = [_topic_id(ev) for _, ev in history]
    if view_id not in (None, "None"):
        chosen = view_id if view_id in ids else None
    else:
        starts = [(ev.get("ts"), _topic_id(ev)) for reg, ev in history if ev["event_type"] == "metadata_partition"]
        ts = view.get("ts")
        before = [tid for t, tid in starts if ts is None or t is None or t <= ts]
        chosen = before[-1] if before else (ids[0] if ids else None)
    return [(reg, ev) for reg, ev in history if _topic_id(ev) == chosen]


def _diff_arrows(event: dict) -> dict[str, tuple[int, int]]:
    detail = attr(event, "detail") or ""
    return {m[1]: (int(m[2]), int(m[3])) for m in _DIFF_ARROW.finditer(detail)}


def _line_matches(line: dict, prev: Registration, new: Registration, relative: bool) -> bool:
    """An UNCLEAN line about the same change as a record: same leader move and (absolute epochs
    known) the same partition epoch step."""
    arrows = _diff_arrows(line)
    if arrows.get("leader", (None, new.leader))[1] != new.leader:
        return False
    if not relative and "partitionEpoch" in arrows:
        return arrows["partitionEpoch"] == (prev.partition_epoch, new.partition_epoch)
    return "leader" in arrows


def _trigger_text(triggers: list[dict], event: dict) -> str:
    """Automatic or not, as far as the controller's INFO+ lines tell."""
    ts = event.get("ts")
    near = [t for t in triggers if ts is not None and abs((t["ts"] - ts).total_seconds()) <= TRIGGER_WINDOW_S]
    if near:
        return f'automatic: unclean.leader.election.enable, "{TRIGGER_TEXT} ..." at {ref_of(near[0])}'
    return (
        "trigger not logged: an admin ElectLeaders(UNCLEAN) logs nothing at INFO, and neither does an "
        "automatic election made while fencing or shutting down a broker (generateLeaderAndIsrUpdates with "
        "unclean.leader.election.enable)"
    )


def unclean_line_findings(lines: list[dict], triggers: list[dict], where: dict) -> list[Finding]:
    """``UNCLEAN partition change`` lines no metadata record explains (no dump, or the record is
    missing from it): one finding per change, citing every controller that logged it."""
    groups: dict[tuple, list[dict]] = {}
    for e in lines:
        groups.setdefault((_topic_id(e), attr(e, "detail")), []).append(e)
    out = []
    for group in groups.values():
        first = group[0]
        arrows = _diff_arrows(first)
        leader = arrows.get("leader", (None, None))[1]
        step = arrows.get("partitionEpoch")
        at = f" (partition epoch {step[0]} -> {step[1]})" if step else ""
        out.append(
            Finding.make(
                "unclean_election",
                CRITICAL,
                f"the controller logged an UNCLEAN partition change{at}: leader {leader} was not in the previous ISR; "
                f"messages committed only on the old ISR may be lost ({_trigger_text(triggers, first)}; with ELR enabled "
                f"a leader taken from the ELR of an empty ISR is logged the same way: a metadata dump tells them apart)",
                [ref_of(e) for e in group],
                controller_epoch=first.get("controller_epoch"),
                ts=first.get("ts"),
                kind="controller_log",
                replica=leader,
                **where,
            )
        )
    return out


def _open(rows: list[dict], base: dict, event: dict, values: dict) -> None:
    ts = event.get("ts")
    if rows:
        prev = rows[-1]
        prev["ts_end"] = ts if prev["ts_start"] is None or ts is None or ts >= prev["ts_start"] else prev["ts_start"]
    rows.append(
        {
            **base,
            "seq": len(rows),
            "ts_start": ts,
            "ts_end": None,
            **values,
            "controller_epoch": event.get("controller_epoch"),
            "cause": ref_of(event),
            "cause_event_type": event["event_type"],
            "source": METADATA,
        }
    )


def _dedupe(records: list[dict]) -> list[dict]:
    """The same metadata log dumped on several controllers: keep one record per log position."""
    out, seen = [], set()
    for e in records:
        key = log_position(e)
        if key[1] == 2 or key not in seen:
            out.append(e)
            seen.add(key)
    return out


def resolve_metadata_events(events: list[dict]) -> list[dict]:
    """In-process twin of jobs/replay_kraft.prepare_metadata_events: topic names by topic id (from
    any TopicRecord), and each RemoveTopicRecord repeated for every partition of its topic."""
    names: dict[tuple, str] = {}
    for e in events:
        if e["event_type"] == TOPIC_RECORD:
            tid = attr(e, "topic_id")
            if e.get("topic") and tid:
                key = (e.get("cluster", ""), tid)
                names[key] = min(names.get(key, e["topic"]), e["topic"])
    partitions: dict[tuple, set] = {}
    out: list[dict] = []
    removals: list[dict] = []
    for e in events:
        if e["event_type"] not in RECORD_TYPES and e.get("log_kind") != "metadata":
            out.append(e)  # a log line: nothing to resolve
            continue
        tid = attr(e, "topic_id")
        if e.get("log_kind") == "metadata" and tid and e.get("topic") is None:
            e = {**e, "topic": names.get((e.get("cluster", ""), tid))}
        if (
            e["event_type"] in ("metadata_partition", "metadata_partition_change")
            and tid
            and e.get("partition") is not None
        ):
            partitions.setdefault((e.get("cluster", ""), tid), set()).add(e["partition"])
        (removals if e["event_type"] == "metadata_remove_topic" else out).append(e)
    for e in removals:
        tid = attr(e, "topic_id")
        out.extend({**e, "partition": p} for p in sorted(partitions.get((e.get("cluster", ""), tid), ())))
    return out


def kraft_unclean_lines(events: list[dict], findings: list[Finding], cluster: str = "") -> list[Finding]:
    """Without metadata records: ``findings`` (of the line replay) with the ``UNCLEAN partition
    change`` lines added - as evidence of an unclean election the line replay already reported
    at the same time (from "Triggering unclean leader election ..." or PartitionChangeBuilder's
    "... using an unclean election"), else as findings of their own."""
    if UNCLEAN_LINE not in map(_EVENT_TYPE, events):  # asked of every partition: one pass at C speed
        return findings
    lines = sorted(
        (e for e in events if e["event_type"] == UNCLEAN_LINE),
        key=lambda e: (e.get("ts") is None, e.get("ts"), e["source_file"], e["line_no"]),
    )
    if not lines:
        return findings
    triggers = [
        e
        for e in events
        if e["event_type"] == "unclean_leader_election"
        and e.get("ts") is not None
        and TRIGGER_TEXT in (e.get("message") or "")
    ]
    where = {"cluster": cluster, "topic": lines[0].get("topic"), "partition": lines[0].get("partition")}
    out = list(findings)
    for new in unclean_line_findings(lines, triggers, where):
        i = next(
            (
                i
                for i, f in enumerate(out)
                if f.rule == "unclean_election"
                and f.ts is not None
                and new.ts is not None
                and abs((f.ts - new.ts).total_seconds()) <= TRIGGER_WINDOW_S
            ),
            None,
        )
        if i is None:
            out.append(new)
        else:
            old = out[i]
            refs = list(old.evidence) + [r for r in new.evidence if r not in old.evidence]
            out[i] = old._replace(
                evidence=tuple(refs[:MAX_EVIDENCE]),
                evidence_count=old.evidence_count + len(refs) - len(old.evidence),
            )
    return out


def replay_kraft_partition(events: list[dict], ctx: ClusterContext, cluster: str = "") -> KraftResult:
    """Replay one (cluster, topic, partition)'s metadata records and broker views."""
    if not has_metadata(events):
        return KraftResult([], [], [])
    return KraftPartitionReplay(events, ctx, cluster).run()
