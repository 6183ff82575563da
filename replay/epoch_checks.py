"""Findings a replayed partition can only be judged on over a span: an offline episode, a failover.

Kafka's own refused/failed state changes (reported once the episode shows whether the partition
came back online), creations whose replica lines are absent, a new controller starting from a
stale read or from a state the old one did not leave (failover consistency), dead leaders/ISR
members kept after a failover (KAFKA-3143) and partitions left offline while replicas are live.
Each finding names its episode (``Finding.episode``) so that ``findings.consolidate`` makes one
finding of every line of it. Mixed into ``PartitionReplay``; the state it reads is declared here.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Optional

from kafka_forensics.core.eras import INFO_LEVEL_DIALECTS, VersionRange, range_for_line
from kafka_forensics.core.rule_changes import has_rule
from kafka_forensics.statemachines.invariants import NO_LEADER
from kafka_forensics.statemachines.states import PartitionState as P
from kafka_forensics.statemachines.states import ReplicaState as R

from .cluster import ClusterContext
from .findings import ERROR, INFO, WARNING, Finding, ref_of
from .findings import fmt_ints as _fmt
from .partition_view import CONTROLLER_VIEW, DECISION, LEADER_ISR_CHANGE, Observation, PartitionStatus

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
    stale_view: Optional[dict]
    last_write: tuple[Optional[PartitionStatus], Optional[str]]
    last_versioned: tuple[Optional[PartitionStatus], Optional[str]]
    offline_anchor: Optional[str]

    def _flush_failures(self) -> None:
        """Kafka's own ERROR lines for refused/failed state changes (reference §1.4), once their episode
        ended: the partition is online again (``recovered``), or the logs end."""
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
                text += f"; the partition became OnlinePartition again at {f['recovered']}"
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
                    episode=(kind, *f["episode"]) if "episode" in f else (),
                    anchor=ref_of(event),
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

    def _failover_view(self, epoch: int, event: dict, source: str, obs: Observation) -> bool:
        """Judge a line of a new controller epoch against the last state the previous controller wrote.

        A new controller reads every partition's leader/ISR znode into its cache and sends it (UpdateMetadata,
        then LeaderAndIsr) before any state machine runs (``onControllerFailover``,
        K:controller/KafkaController.scala@2.2.2:237-285, @3.9.0-rc3:285-339). ZooKeeper reads are not
        linearizable, so that cache can be *older* than the last write: a leader epoch or zkVersion lower than
        the one already written (conditional writes only ever increment it, K:zk/KafkaZkClient.scala
        updateLeaderAndIsr) is a stale read, whatever broker changed in between (KAFKA-3143 class). It is one
        finding (error) citing the new line, the last write and who was alive; every later line of that epoch
        repeating the stale state, and the brokers' refusals of it, are its evidence, not findings of their own
        (nor epoch regressions). Returns True for a line that belongs to a stale read.
        """
        stale = self.stale_view
        if stale is not None and stale["epoch"] == epoch and self._repeats_stale_view(obs, stale):
            self._stale_evidence(epoch, event)
            return True
        pending = self.pending_failover
        if pending is None or epoch <= pending["from_epoch"]:
            return False
        if source == DECISION:
            self.pending_failover = None  # an election or ISR write of the new controller: fresh from ZooKeeper
            return False
        if source == LEADER_ISR_CHANGE:
            # a leader's ISR write after the new epoch began races with the new controller's first read
            # (initializeControllerContext); its ISR change notification reaches the controller later
            pending["explained"] = True
            return False
        if source != CONTROLLER_VIEW or not obs.has_state:
            return False
        self.pending_failover = None
        prev, prev_ref = pending["write"]
        versioned, versioned_ref = pending["versioned"]
        seen_version = versioned.partition_epoch if versioned is not None else None
        if seen_version is not None and obs.partition_epoch is not None and 0 <= obs.partition_epoch <= seen_version:
            # Versions decide: the new controller read the last versioned write, or an older one. A leader's
            # line without a version after it ("Shrinking ISR from ..." is only a proposal from 2.7, sent as
            # AlterIsr/AlterPartition, K:cluster/Partition.scala@3.9.0-rc3:1267-1279; committed it is "ISR
            # updated to ... version ..." :1974) does not count against the same version.
            prev, prev_ref = versioned, versioned_ref
        if prev is None:
            return False
        regressions = _went_back(prev, obs)
        diffs = regressions + _differences(prev, obs)
        if regressions:
            self.stale_view = {
                "epoch": epoch,
                "leader_epoch": obs.leader_epoch,
                "partition_epoch": obs.partition_epoch,
            }
            self._stale_read(epoch, event, obs, prev, prev_ref, pending, diffs)
            return True
        if not diffs or pending["explained"] or self._explained_by_liveness(prev, obs, pending["ts"], event.get("ts")):
            return False
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
                    [prev_ref, ref_of(event)],
                    controller_epoch=epoch,
                    ts=event.get("ts"),
                    kind="controller_epochs_missing",
                    anchor=ref_of(event),
                    **self.where,
                )
            )
            return False
        self.findings.append(
            Finding.make(
                "leader_isr_mismatch_after_failover",
                WARNING,
                f"controller epoch {epoch} starts from {', '.join(diffs)} compared with the last state of epoch "
                f"{pending['from_epoch']}, and no logged election, ISR change or broker change explains it "
                f"(lines missing, or a write by a deposed controller: KAFKA-3083/KAFKA-6082)",
                [prev_ref, ref_of(event)],
                controller_epoch=epoch,
                ts=event.get("ts"),
                kind="unexplained_change",
                episode=("failover", epoch),
                anchor=ref_of(event),
                **self.where,
            )
        )
        return False

    def _stale_read(
        self,
        epoch: int,
        event: dict,
        obs: Observation,
        prev: PartitionStatus,
        prev_ref: Optional[str],
        pending: dict,
        diffs: list[str],
    ) -> None:
        ts = event.get("ts")
        live, live_refs = self.ctx.live_brokers_at(ts)
        alive = f"; live brokers then: {_fmt(live)}" if live_refs else ""
        dead_isr = [b for b in obs.isr or () if self.ctx.is_live(b, ts) is False]
        if obs.leader is not None and obs.leader >= 0 and self.ctx.is_live(obs.leader, ts) is False:
            alive += f"; its leader {obs.leader} is a dead broker"
        if dead_isr:
            alive += f"; its ISR holds dead broker{'s' if len(dead_isr) > 1 else ''} {', '.join(map(str, dead_isr))}"
        self.findings.append(
            Finding.make(
                "leader_isr_mismatch_after_failover",
                ERROR,
                f"controller epoch {epoch} started from a stale read of the partition state ({', '.join(diffs)}) "
                f"compared with the last write of epoch {pending['from_epoch']}: ZooKeeper versions never go back, "
                f"so the new controller cached an older znode than its predecessor wrote (KAFKA-3143 class){alive}",
                [ref_of(event), prev_ref, *live_refs],
                controller_epoch=epoch,
                ts=ts,
                kind="stale_read",
                episode=("failover", epoch),
                anchor=ref_of(event),
                **self.where,
            )
        )

    def _stale_evidence(self, epoch: int, event: dict) -> None:
        """A later line of the same stale read: evidence of its finding (merged by ``consolidate``)."""
        self.findings.append(
            Finding.make(
                "leader_isr_mismatch_after_failover",
                ERROR,
                "repeats the stale state",
                [ref_of(event)],
                controller_epoch=epoch,
                ts=event.get("ts"),
                kind="stale_read",
                episode=("failover", epoch),
                **self.where,
            )
        )

    @staticmethod
    def _repeats_stale_view(obs: Observation, stale: dict) -> bool:
        """A line showing the stale read's versions (a repeated request, its echo, a broker's refusal)."""
        shown = [(obs.leader_epoch, stale["leader_epoch"]), (obs.partition_epoch, stale["partition_epoch"])]
        known = [(a, b) for a, b in shown if a is not None and b is not None]
        return bool(known) and all(a == b for a, b in known)

    def _explained_by_liveness(
        self, prev: PartitionStatus, obs: Observation, start: Optional[datetime], end: Optional[datetime]
    ) -> bool:
        """A broker change between the last write and the new view explains only brokers leaving the ISR
        because they died and a leader moving to a live broker of the old ISR; never a broker added back."""
        if start is None or end is None:
            return False
        changed = {
            b
            for b in {*(prev.isr or ()), *(obs.isr or ()), prev.leader, obs.leader}
            if b is not None and b >= 0 and self.ctx.broker_state_at(b, start)[0] != self.ctx.broker_state_at(b, end)[0]
        }
        if not changed:
            return False
        added = set(obs.isr or ()) - set(prev.isr or ())
        removed = set(prev.isr or ()) - set(obs.isr or ())
        if added or any(self.ctx.is_live(b, end) is not False for b in removed):
            return False
        leader_moved = obs.leader is not None and prev.leader is not None and obs.leader != prev.leader
        return not leader_moved or (obs.leader in (prev.isr or ()) and self.ctx.is_live(obs.leader, end) is True)

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
                episode=("failover", self.epoch),
                **self.where,
            )
        )

    def _replica_gone(self, replica: int, t: Optional[datetime]) -> bool:
        """Is the replica out of service (offline, being deleted) although its broker is alive? A replica moved
        to OfflineReplica before its broker last (re)started is back: at INFO (2.6+) its OfflineReplica ->
        OnlineReplica transition is logged at TRACE only (KAFKA-8470)."""
        known = self.replicas.get(replica)
        if known is None or known["state"] not in R_GONE:
            return False
        since = self.ctx.alive_since(replica, t)
        return not (
            known["state"] == R.OfflineReplica
            and since is not None
            and known.get("ts") is not None
            and known["ts"] < since
        )

    def _check_offline_with_live_replicas(self, at: Optional[dict] = None) -> None:
        """A partition without a leader while replicas of it are on live brokers: at the end of a controller
        epoch, and at each failed election (``at``: Kafka re-tries every offline partition at each broker
        change and logs the failure, so a failure while a replica is live shows the episode even when a later
        election of the same epoch ends it). One finding per offline episode."""
        c = self.cur
        t = at.get("ts") if at is not None else self.epoch_last_ts
        offline = c.state == P.OfflinePartition or (
            c.leader == NO_LEADER and c.state not in (P.NewPartition, P.NonExistentPartition)
        )
        if not offline or self.deleting or c.state == P.NonExistentPartition:
            return
        if any(r["state"] in R_DELETING for r in self.replicas.values()):
            return  # topic deletion in progress
        candidates = c.replicas or c.isr or ()
        live = [r for r in candidates if self.ctx.is_live(r, t) and not self._replica_gone(r, t)]
        if not live:
            return
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
                [r for r in [cause, *liveness, ref_of(at) if at is not None else None] if r],
                controller_epoch=self.epoch,
                ts=t,
                kind="isr_member_live" if live_isr else "replica_live",
                episode=("offline", self.offline_anchor or cause),
                **self.where,
            )
        )


def _went_back(prev: PartitionStatus, obs: Observation) -> list[str]:
    """Versions of ``obs`` lower than those already written (a stale read)."""
    out = []
    if _known(obs.leader_epoch) and _known(prev.leader_epoch) and obs.leader_epoch < prev.leader_epoch:  # type: ignore[operator]
        out.append(f"leader epoch {prev.leader_epoch} -> {obs.leader_epoch}")
    if _known(obs.partition_epoch) and _known(prev.partition_epoch) and obs.partition_epoch < prev.partition_epoch:  # type: ignore[operator]
        out.append(f"zkVersion {prev.partition_epoch} -> {obs.partition_epoch}")
    return out


def _differences(prev: PartitionStatus, obs: Observation) -> list[str]:
    out = []
    if obs.leader is not None and prev.leader is not None and obs.leader != prev.leader and obs.leader >= NO_LEADER:
        out.append(f"leader {prev.leader} -> {obs.leader}")
    if obs.isr is not None and prev.isr is not None and set(obs.isr) != set(prev.isr):
        out.append(f"ISR {_fmt(prev.isr)} -> {_fmt(obs.isr)}")
    if not out and _known(obs.leader_epoch) and _known(prev.leader_epoch) and obs.leader_epoch != prev.leader_epoch:
        out.append(f"leader epoch {prev.leader_epoch} -> {obs.leader_epoch}")
    return out


def _known(value: Optional[int]) -> bool:
    return value is not None and value >= 0
