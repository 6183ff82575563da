"""Findings a replayed partition can only be judged on at the end of a controller epoch.

Kafka's own refused/failed state changes (reported once the epoch shows whether the partition
recovered), creations whose replica lines are absent, a new controller starting from a state the
old one did not leave (failover consistency), dead leaders/ISR members kept after a failover
(KAFKA-3143) and partitions left offline while replicas are live. Mixed into ``PartitionReplay``;
the state it reads is documented there.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Optional

from kafka_forensics.core.eras import INFO_LEVEL_DIALECTS, VersionRange, range_for_line
from kafka_forensics.core.rule_changes import has_rule
from kafka_forensics.statemachines.states import PartitionState as P
from kafka_forensics.statemachines.states import ReplicaState as R

from .cluster import ClusterContext
from .findings import ERROR, INFO, WARNING, Finding, ref_of
from .findings import fmt_ints as _fmt
from .partition_view import CONTROLLER_VIEW, DECISION, LEADER_ISR_CHANGE, NO_LEADER, Observation, PartitionStatus

if TYPE_CHECKING:  # the replay imports this mixin
    from .partition import Intervals, ReplayConfig

# Replicas being deleted, and replicas no longer serving (a dead broker's replica stays Offline).
R_DELETING = frozenset({R.ReplicaDeletionStarted, R.ReplicaDeletionSuccessful, R.ReplicaDeletionIneligible})
R_GONE = R_DELETING | {R.OfflineReplica, R.NonExistentReplica}


class EpochChecks:
    """End-of-epoch and failover checks of ``PartitionReplay`` (a mixin: it uses the replay's state,
    declared here; ``PartitionReplay.__init__`` sets it)."""

    ctx: ClusterContext
    cfg: ReplayConfig
    where: dict[str, Any]
    events: list[dict]
    findings: list[Finding]
    trace_seen: bool
    cur: PartitionStatus
    state_ref: Optional[str]
    leader_ref: Optional[str]
    replicas: dict[int, dict]
    p_rows: Intervals
    deleting: bool
    vrange: Optional[VersionRange]
    epoch: Optional[int]
    epoch_first_ts: Optional[datetime]
    epoch_last_ts: Optional[datetime]
    creation_refs: list[str]
    online_refs: list[str]
    replica_lines: int
    failures: list[dict]
    pending_failover: Optional[dict]
    reported_offline: set

    def _flush_failures(self) -> None:
        """Kafka's own ERROR lines for refused/failed state changes (reference §1.4)."""
        for f in self.failures:
            event, vrange = f["event"], f["vrange"]
            what = (
                f"replica {f['replica']} " if f["entity"] == "replica" else "partition "
            ) + f"{f['src']} -> {f['dst']}"
            expected = (
                f["entity"] == "replica"
                and f["src"] == R.OfflineReplica
                and f["dst"] == R.ReplicaDeletionIneligible
                and vrange.may_predate("offline_replica_to_deletion_ineligible")
            )
            if f["refused"]:
                kind, severity = "refused", INFO if expected else ERROR
                text = f"Kafka refused the transition {what} (invalid previous state)"
                if expected:
                    text += "; expected before 2.3 for dead replicas of a topic being deleted (KAFKA-8237)"
            else:
                kind = "failed"
                offline = (
                    f["entity"] == "partition"
                    and f["dst"] == P.OnlinePartition
                    and f["src"] in (P.OfflinePartition, P.NewPartition)
                )
                severity = ERROR if offline and "recovered" not in f else WARNING
                text = f"Kafka failed the state change {what}"
                if offline and "recovered" not in f:
                    text += " and left the partition without a leader"
            if f.get("why"):
                text += f": {f['why']}"
            evidence = [ref_of(event)]
            if "recovered" in f:
                text += f"; the partition became OnlinePartition later in the same controller epoch ({f['recovered']})"
                evidence.append(f["recovered"])
            self.findings.append(
                Finding.make(
                    "illegal_transition",
                    severity,
                    text,
                    evidence,
                    controller_epoch=f["epoch"],
                    ts=event.get("ts"),
                    kind=kind,
                    replica=f.get("replica"),
                    **self.where,
                )
            )
        self.failures = []

    def _check_replica_lines_logged(self) -> None:
        """Creating a partition moves its replicas NonExistent -> New -> Online (reference §2.4);
        none of those lines is in the log."""
        if not self.online_refs or self.replica_lines:
            return  # (a creation cut off before New -> Online proves nothing: the log may just end)
        vrange = self.vrange or range_for_line(None, None, self.cfg.user_version)
        info_era = vrange.state_change_at_info() or any(
            e.get("dialect") in INFO_LEVEL_DIALECTS for e in self.events if ref_of(e) in self.creation_refs
        )
        explained = info_era and not self.trace_seen
        reason = (
            "replica transitions are logged at TRACE only since 2.6 (KAFKA-8470) and this log is at INFO: "
            "the replica timeline is unknown"
            if explained
            else "the replica lines that must follow are missing"
        )
        self.findings.append(
            Finding.make(
                "state_gap",
                INFO if explained else WARNING,
                f"partition created without any replica state line: {reason}",
                self.creation_refs,
                controller_epoch=self.epoch,
                kind="replica_transitions_not_logged",
                ts=next((e.get("ts") for e in self.events if ref_of(e) == self.creation_refs[0]), None),
                **self.where,
            )
        )

    def _check_failover_consistency(self, epoch: int, event: dict, source: str, obs: Observation) -> None:
        """A new controller starts from ZooKeeper's state, i.e. the last one the old controller wrote."""
        pending = self.pending_failover
        if pending is None or epoch <= pending["from_epoch"]:
            return
        if source in (LEADER_ISR_CHANGE, DECISION):
            self.pending_failover = None if source == DECISION else {**pending, "explained": True}
            return
        if source != CONTROLLER_VIEW or (obs.leader is None and obs.isr is None):
            return
        self.pending_failover = None
        prev: PartitionStatus = pending["prev"]
        diffs = []
        if obs.leader is not None and prev.leader is not None and obs.leader != prev.leader and obs.leader != -2:
            diffs.append(f"leader {prev.leader} -> {obs.leader}")
        if obs.isr is not None and prev.isr is not None and set(obs.isr) != set(prev.isr):
            diffs.append(f"ISR {_fmt(prev.isr)} -> {_fmt(obs.isr)}")
        if (
            obs.leader_epoch is not None
            and prev.leader_epoch is not None
            and obs.leader_epoch != prev.leader_epoch
            and obs.leader_epoch >= 0
        ):
            diffs.append(f"leader epoch {prev.leader_epoch} -> {obs.leader_epoch}")
        if not diffs or pending["explained"]:
            return
        brokers = set((prev.isr or ()) + (prev.replicas or ()) + (obs.isr or ()))
        brokers |= {b for b in (prev.leader, obs.leader) if b is not None and b >= 0}
        if self._broker_changed(brokers, pending["ts"], event.get("ts")):
            return
        known = {c.controller_epoch for c in self.ctx.controllers}
        missing = [e for e in range(pending["from_epoch"] + 1, epoch) if e not in known]
        if missing:
            span = f"{missing[0]}" if len(missing) == 1 else f"{missing[0]}-{missing[-1]}"
            self.findings.append(
                Finding.make(
                    "state_gap",
                    WARNING,
                    f"between controller epochs {pending['from_epoch']} and {epoch} the state changed "
                    f"({', '.join(diffs)}) while controller epoch(s) {span} left no line in these logs",
                    [pending["ref"], ref_of(event)],
                    controller_epoch=epoch,
                    ts=event.get("ts"),
                    kind="controller_epochs_missing",
                    **self.where,
                )
            )
            return
        self.findings.append(
            Finding.make(
                "leader_isr_mismatch_after_failover",
                WARNING,
                f"controller epoch {epoch} starts from {', '.join(diffs)} compared with the last state of epoch "
                f"{pending['from_epoch']}, and no logged election, ISR change or broker change explains it "
                f"(lines missing, or a write by a deposed controller: KAFKA-3083/KAFKA-6082)",
                [pending["ref"], ref_of(event)],
                controller_epoch=epoch,
                ts=event.get("ts"),
                kind="unexplained_change",
                **self.where,
            )
        )

    def _broker_changed(self, brokers: set, start: Optional[datetime], end: Optional[datetime]) -> bool:
        if start is None or end is None:
            return False
        return any(self.ctx.broker_state_at(b, start)[0] != self.ctx.broker_state_at(b, end)[0] for b in brokers)

    def _check_dead_members(self, interval) -> None:
        """KAFKA-3143 (A1): after a failover, a dead leader or dead ISR members that stay."""
        c, t_first, t_last = self.cur, self.epoch_first_ts, self.epoch_last_ts
        if c.leader is None or c.leader < 0 or c.isr is None:
            return

        def dead(b: int) -> bool:
            return self.ctx.is_live(b, t_first) is False and self.ctx.is_live(b, t_last) is False

        dead_leader = dead(c.leader)
        dead_isr = [b for b in c.isr if dead(b)]
        if not dead_leader and not dead_isr:
            return
        vrange = self.vrange or range_for_line(None, None, self.cfg.user_version)
        if vrange.all_have("failover_offline_replica_transition"):
            why = "from 2.3 the new controller moves them to OfflineReplica (KAFKA-3143 fix), and no line shows it"
        elif not vrange.in_any(lambda v: has_rule(v, "failover_offline_replica_transition")):
            why = (
                "Kafka before 2.3 leaves replicas of dead brokers in ZooKeeper's ISR and a dead leader in place "
                "at failover (KAFKA-3143, fixed in 2.3.0 by 423610f3d08)"
            )
        else:
            why = (
                f"Kafka {vrange.label}: before 2.3 this is KAFKA-3143 (dead replicas stay in the ISR at "
                "failover); from 2.3 the new controller moves them to OfflineReplica, and no line shows it"
            )
        dead_brokers = sorted({*dead_isr, *([c.leader] if dead_leader else [])})
        liveness = [self.ctx.broker_state_at(b, t_last)[1] for b in dead_brokers]
        evidence = [self.leader_ref, *liveness, *(interval.evidence[:1] if interval is not None else [])]
        if dead_leader:
            severity, kind = ERROR, "dead_leader"
            text = f"leader {c.leader} is on a dead broker after the failover to controller epoch {self.epoch}"
        else:
            severity, kind = WARNING, "dead_isr_members"
            text = f"ISR {_fmt(c.isr)} still holds dead broker(s) {_fmt(dead_isr)} after the failover to controller epoch {self.epoch}"
        self.findings.append(
            Finding.make(
                "leader_isr_mismatch_after_failover",
                severity,
                f"{text}: {why}",
                [r for r in evidence if r],
                controller_epoch=self.epoch,
                ts=t_last,
                kind=kind,
                **self.where,
            )
        )

    def _check_offline_with_live_replicas(self) -> None:
        c, t = self.cur, self.epoch_last_ts
        offline = c.state == P.OfflinePartition or (
            c.leader == NO_LEADER and c.state not in (P.NewPartition, P.NonExistentPartition)
        )
        if not offline or self.deleting or c.state == P.NonExistentPartition:
            return
        if any(r["state"] in R_DELETING for r in self.replicas.values()):
            return  # topic deletion in progress
        candidates = c.replicas or c.isr or ()
        live = [r for r in candidates if self.ctx.is_live(r, t) and self.replicas.get(r, {}).get("state") not in R_GONE]
        if not live:
            return
        key = (self.p_rows.rows[-1]["seq"] if self.p_rows.rows else -1, tuple(live))
        if key in self.reported_offline:
            return
        self.reported_offline.add(key)
        live_isr = [r for r in live if c.isr and r in c.isr]
        cause = self.p_rows.rows[-1]["cause"] if self.p_rows.rows else self.state_ref
        liveness = [self.ctx.broker_state_at(r, t)[1] for r in live]
        if live_isr:
            severity = ERROR
            text = (
                f"partition is offline (leader {c.leader}) although ISR member(s) {_fmt(live_isr)} are on live "
                f"brokers: every Kafka version elects a live ISR member, and no election is logged (I12)"
            )
        else:
            severity = WARNING
            text = (
                f"partition is offline (leader {c.leader}, ISR {_fmt(c.isr)}) although replica(s) {_fmt(live)} "
                f"are on live brokers: only an unclean election could bring it back"
            )
        self.findings.append(
            Finding.make(
                "offline_with_live_replicas",
                severity,
                text,
                [r for r in [cause, *liveness] if r],
                controller_epoch=self.epoch,
                ts=t,
                kind="isr_member_live" if live_isr else "replica_live",
                **self.where,
            )
        )
