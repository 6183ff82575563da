"""Replay one partition's log lines through its era's state machines: timelines and findings.

Input: every event of one (cluster, topic, partition), in any order, plus the ``ClusterContext``.
Lines are put in replay order (``ordering``), then each one either moves the replayed state
(partition state, leader, ISR, replicas, epochs; replica states) or is checked against it:

* a logged ``from X to Y`` pair the era forbids is an *illegal transition* - judged on the logged
  pair alone, so missing lines can never produce one (DESIGN: absence is not illegality);
* a logged ``from X`` that differs from the replayed state is a *gap* (lines are missing);
* Kafka's own ERROR lines for refused or failed state changes are illegal transitions too;
* invariants, failover consistency (stale reads), unclean elections and liveness are checked
  along the way and at the end of every controller epoch (``partition_checks``, ``epoch_checks``);
* every finding names its episode, and ``replay_partition`` hands back one finding per episode
  (``findings.consolidate``), so the Spark job and the in-process replay give the same rows.

A new controller re-derives states without logging them (``initializePartitionState`` /
``initializeReplicaState``, K:controller/PartitionStateMachine.scala@3.9.0-rc3:85-100,
ReplicaStateMachine.scala@3.9.0-rc3:58-73), so across a controller epoch the replayed state is
only "one of" those out-of-band states.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple, Optional

from kafka_forensics.core.eras import INFO_LEVEL_DIALECTS, VersionRange, range_for_line
from kafka_forensics.statemachines.elections import is_unclean_leader_change, written_by_clean_election
from kafka_forensics.statemachines.invariants import LEADER_DURING_DELETE, NO_LEADER
from kafka_forensics.statemachines.legality import is_forbidden, legal_pairs, previous_states
from kafka_forensics.statemachines.states import Entity
from kafka_forensics.statemachines.states import PartitionState as P
from kafka_forensics.statemachines.states import ReplicaState as R

from .cluster import DELETION_COMPLETED, ClusterContext
from .epoch_checks import EpochChecks
from .events import attr, attrs_of
from .findings import ERROR, INFO, WARNING, Finding, consolidate, first_line, ref_of
from .kraft import KRAFT_PARTITION_TYPES, RECORD_TYPES, has_metadata, kraft_unclean_lines, replay_kraft_partition
from .ordering import replay_order
from .partition_checks import Progression, ReplicaGaps, SnapshotInvariants, unclean_finding
from .partition_view import (
    BROKER_VIEW,
    BROKER_VIEW_TYPES,
    CONTROLLER_VIEW,
    CONTROLLER_VIEW_TYPES,
    DECISION,
    DECISION_TYPES,
    FAILURE,
    FAILURE_TYPES,
    LEADER_ISR_CHANGE,
    LEADER_ISR_TYPES,
    OFFLINE_REPLICAS_MARKED,
    Observation,
    PartitionStatus,
    apply_observation,
    is_stale,
    observation_of,
    source_of,
)

# initializePartitionState: leader znode + live leader -> Online, else Offline; no znode -> New.
FAILOVER_PARTITION_STATES = frozenset({P.NewPartition, P.OnlinePartition, P.OfflinePartition})
# initializeReplicaState: Online if live, else Offline (0.8.0) / ReplicaDeletionIneligible (0.8.1+),
# and 2.3+ moves the latter to Offline at startup (statemachines/out_of_band.py).
FAILOVER_REPLICA_STATES = frozenset({R.OnlineReplica, R.OfflineReplica, R.ReplicaDeletionIneligible})
# The lines the replay reads (every other partition line is neither state nor evidence for a rule).
PARTITION_EVENT_TYPES = frozenset(
    DECISION_TYPES
    | CONTROLLER_VIEW_TYPES
    | BROKER_VIEW_TYPES
    | LEADER_ISR_TYPES
    | FAILURE_TYPES
    | {"replica_state_change", "leader_election_aborted", "kraft_alter_partition_rejected", "partition_created"}
    | {"stale_leader_epoch_rejected"}  # a broker refusing a stale request: evidence of a stale read
    | {OFFLINE_REPLICAS_MARKED}  # once per partition it names (partition_view.per_partition_events)
    | KRAFT_PARTITION_TYPES
)


@dataclass(frozen=True)
class ReplayConfig:
    cluster: str = ""
    user_version: Optional[str] = None  # --kafka-version: overrides what the lines say


class LineRules(NamedTuple):
    """What the lines of one (dialect, broker) are judged against: the releases they may come from
    (``range_for_line``) and the transitions those allow (``legal_pairs``; None: nothing is forbidden)."""

    vrange: VersionRange
    partition_pairs: Optional[frozenset[tuple[str, str]]]
    replica_pairs: Optional[frozenset[tuple[str, str]]]


@dataclass
class ReplayResult:
    partition_intervals: list[dict] = field(default_factory=list)
    replica_intervals: list[dict] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


class Intervals:
    """One row per state interval; an interval ends where the next one starts."""

    def __init__(self, base: dict):
        self.base = base
        self.rows: list[dict] = []

    def open(self, event: dict, epoch: int, values: dict, source: Optional[str], ref: Optional[str] = None) -> None:
        ts = event.get("ts")
        if self.rows:
            prev = self.rows[-1]
            # a skewed clock can make the next line look earlier: never end before the start
            prev["ts_end"] = (
                ts if prev["ts_start"] is None or ts is None or ts >= prev["ts_start"] else prev["ts_start"]
            )
        self.rows.append(
            {
                **self.base,
                "seq": len(self.rows),
                "ts_start": ts,
                "ts_end": None,
                **values,
                "controller_epoch": epoch,
                "cause": ref or ref_of(event),
                "cause_event_type": event["event_type"],
                "source": source,
            }
        )


class PartitionReplay(EpochChecks):
    """The replay of one partition (and its replicas). Use ``replay_partition``."""

    def __init__(self, events: list[dict], ctx: ClusterContext, cfg: ReplayConfig):
        first = events[0]
        self.ctx, self.cfg = ctx, cfg
        self.where = {"cluster": cfg.cluster, "topic": first.get("topic"), "partition": first.get("partition")}
        self.events = events
        self.trace_seen = any(e.get("level") == "TRACE" and e.get("log_kind") == "state-change" for e in events)
        self.cur = PartitionStatus()
        self.state_ref: Optional[str] = None  # line that last set/observed the state-machine state
        self.state_epoch: Optional[int] = None
        self.leader_ref: Optional[str] = None  # line that last set leader/ISR
        self.incarnation = 0
        self.topic_id: Optional[str] = None
        self.replicas: dict[int, dict] = {}
        self.implied: dict[int, dict] = {}  # replica -> a transition stated by another line, awaiting its own
        self.p_rows = Intervals(dict(self.where))
        self.r_rows: dict[int, Intervals] = {}
        self.findings: list[Finding] = []
        self.invariants = SnapshotInvariants(dict(self.where))
        self.ctrl_progress = Progression(dict(self.where), kind="controller")
        self.broker_progress = Progression(dict(self.where), kind="broker_view")
        self.replica_gaps = ReplicaGaps(dict(self.where))
        # every ISR seen, by incarnation: [(isr, version, leader epoch, ref)]; elections judged; the last
        # leader a controller decision or request named (broker views may show a new leader first)
        self.isr_seen: dict[int, list[tuple]] = {}
        # the versions among them, sorted, and the first ISR seen at each, by incarnation: an election asks
        # for the highest version below its own without scanning every ISR seen (``_previous_isr``)
        self.isr_versions: dict[int, tuple[list[int], dict[int, tuple]]] = {}
        self.judged_elections: set = set()
        self.decided_leader: Optional[int] = None
        self.isr_by_leader = False  # the current ISR was last set by the leader's own shrink/expand line
        self.deleting = False
        self.vrange: Optional[VersionRange] = None
        self.rules: dict[tuple, LineRules] = {}  # (dialect, broker) -> what its lines are judged against
        # per controller epoch
        self.generation: Optional[int] = None
        self.epoch: Optional[int] = None
        self.first_epoch: Optional[int] = None
        self.epoch_first_ts: Optional[datetime] = None
        self.epoch_last_ts: Optional[datetime] = None
        self.creation_refs: list[str] = []
        self.online_refs: list[str] = []
        self.replica_lines = 0
        self.failures: list[dict] = []
        self.pending_failover: Optional[dict] = None
        self.stale_view: Optional[dict] = None  # the stale read a new controller epoch started from
        self.last_write: tuple[Optional[PartitionStatus], Optional[str]] = (None, None)  # state, its last line
        self.last_versioned: tuple[Optional[PartitionStatus], Optional[str]] = (None, None)  # with a zkVersion
        self.offline_anchor: Optional[str] = None  # the line that began the current offline episode

    # ---- driver ------------------------------------------------------------------------------
    def run(self) -> ReplayResult:
        deletions = list(self.ctx.deletions.get(self.where["topic"] or "", ()))
        for generation, epoch, event in replay_order(self.events, self.ctx.epoch_at, self.ctx.generation_at):
            ts = event.get("ts")
            while deletions and ts is not None and ts > deletions[0]["ts"]:
                self._topic_deleted(deletions.pop(0))
            if generation != self.generation:
                self._new_generation(generation)
            if epoch != self.epoch:
                self._epoch_boundary(epoch, event)
            self._step(epoch, event)
            if ts is not None:
                self.epoch_last_ts = ts
        for deletion in deletions:
            self._topic_deleted(deletion)
        if self.epoch is not None:
            self._end_of_epoch()
        self._flush_failures()  # an offline episode the logs do not see end
        findings = (
            self.findings
            + self.replica_gaps.findings()
            + self.invariants.findings()
            + self.ctrl_progress.findings()
            + self.broker_progress.findings()
        )
        replica_rows = [row for r in sorted(self.r_rows) for row in self.r_rows[r].rows]
        return ReplayResult(self.p_rows.rows, replica_rows, findings)

    def _step(self, epoch: int, event: dict) -> None:
        et = event["event_type"]
        source = source_of(et)
        key = (event.get("dialect"), event.get("broker"))
        rules = self.rules.get(key) or self._rules_of(*key)  # the cache read inline: once per line
        vrange = rules.vrange
        if source in (DECISION, CONTROLLER_VIEW, FAILURE):
            self.vrange = vrange
        if et == "partition_state_change":
            self._partition_transition(epoch, event, vrange, rules.partition_pairs)
        elif et in ("partition_state_change_failed", "no_replica_alive"):
            self._partition_failure(epoch, event, vrange)
        elif et == "replica_state_change":
            self._replica_transition(epoch, event, vrange, rules.replica_pairs)
        elif et == "replica_state_change_failed":
            self._replica_failure(epoch, event, vrange)
        elif et == "partition_isr_removed":
            self._observe(epoch, event, vrange, DECISION)
            if event.get("replica") is not None and event.get("to_state"):
                self._implied_replica_transition(epoch, event, event["replica"], event["to_state"])
        elif et == "unclean_leader_election":
            obs = observation_of(event)
            self.findings.append(unclean_finding(self.where, event, epoch, obs, self._previous_isr(obs), "logged"))
            self._observe(epoch, event, vrange, DECISION, unclean_logged=True)
        elif et == "leader_election_aborted":
            self._zombie_abort(epoch, event)
        elif et == "kraft_alter_partition_rejected":
            self._alter_partition_rejected(epoch, event)
        elif et == "partition_created":
            self._partition_created(event)
        elif et == OFFLINE_REPLICAS_MARKED and event.get("replica") is not None:
            # the controller then moves the replica to OfflineReplica (onReplicasBecomeOffline,
            # K:controller/KafkaController.scala@3.9.0-rc3:1446-1447): its TRACE line, if logged, confirms it
            self._implied_replica_transition(epoch, event, event["replica"], R.OfflineReplica)
        elif et == "stale_leader_epoch_rejected":
            # Kafka's answer to every failover when the epoch is equal (K:server/ReplicaManager.scala@2.2.2:1089-1093):
            # never a finding of its own, only evidence of a stale read it refused.
            stale = self.stale_view
            if stale is not None and stale["epoch"] == epoch:
                if self._repeats_stale_view(Observation(leader_epoch=event.get("leader_epoch")), stale):
                    self._stale_evidence(epoch, event)
        elif source is not None:
            self._observe(epoch, event, vrange, source)

    def _rules_of(self, dialect: Optional[str], broker: Optional[int]) -> LineRules:
        """What a line of ``dialect`` written by ``broker`` is judged against, worked out once per
        (dialect, broker) of the partition: it depends on nothing else of the line."""
        rules = self.rules.get((dialect, broker))
        if rules is None:
            vrange = range_for_line(
                dialect, self.ctx.version_of(broker), self.cfg.user_version, self.ctx.dated_range_of(broker)
            )
            rules = self.rules[dialect, broker] = LineRules(
                vrange, legal_pairs(Entity.PARTITION, vrange), legal_pairs(Entity.REPLICA, vrange)
            )
        return rules

    # ---- controller epochs -------------------------------------------------------------------
    def _new_generation(self, generation: int) -> None:
        """The controller epoch was reset (ZooKeeper data lost): nothing known before carries over."""
        if self.epoch is not None:
            self._end_of_epoch()
        self._flush_failures()
        if self.generation is not None:
            self.incarnation += 1
            self.cur, self.replicas, self.implied, self.decided_leader = PartitionStatus(), {}, {}, None
            self.isr_by_leader = False
            self.state_ref = self.leader_ref = None
            self.state_epoch = None
            self.epoch = self.first_epoch = None
            self.pending_failover = self.stale_view = None
            self.last_write = self.last_versioned = (None, None)
        self.generation = generation

    def _epoch_boundary(self, epoch: int, event: dict) -> None:
        if self.epoch is not None:
            self._end_of_epoch()
            if epoch > self.epoch and self.last_write[0] is not None:
                # what the previous controllers had written when this epoch began: the new controller's first
                # read cannot be older (versions), and may or may not hold a leader's write racing with it
                self.pending_failover = {
                    "ts": self.epoch_last_ts,
                    "from_epoch": self.epoch,
                    "write": self.last_write,
                    "versioned": self.last_versioned,
                    "explained": False,
                }
        if self.first_epoch is None:
            self.first_epoch = epoch
        self.epoch = epoch
        self.epoch_first_ts = event.get("ts")
        self.epoch_last_ts = event.get("ts")
        self.creation_refs, self.online_refs, self.replica_lines = [], [], 0

    def _end_of_epoch(self) -> None:
        self._check_replica_lines_logged()
        if self.epoch is None or self.epoch < 0:
            return
        interval = self.ctx.interval_of_epoch(self.epoch)
        failover = self.epoch != self.first_epoch or (interval is not None and interval.elected)
        if failover:
            self._check_dead_members(interval)
        self._check_offline_with_live_replicas()

    # ---- partition lines ---------------------------------------------------------------------
    def _partition_transition(
        self, epoch: int, event: dict, vrange: VersionRange, legal: Optional[frozenset[tuple[str, str]]]
    ) -> None:
        src, dst = event.get("from_state"), event.get("to_state")
        # a legal pair is one set lookup; any other goes to is_forbidden (unknown names raise there)
        if (
            src
            and dst
            and legal is not None
            and (src, dst) not in legal
            and is_forbidden(Entity.PARTITION, src, dst, vrange)
        ):
            self.findings.append(
                Finding.make(
                    "illegal_transition",
                    ERROR,
                    f"logged transition {src} -> {dst} is not allowed by the partition state machine of Kafka "
                    f"{vrange.label} (valid previous states of {dst}: "
                    f"{', '.join(s.value for s in previous_states(Entity.PARTITION, dst, vrange))})",
                    [ref_of(event)],
                    controller_epoch=epoch,
                    ts=event.get("ts"),
                    kind="logged_pair_invalid",
                    **self.where,
                )
            )
        self._check_partition_gap(epoch, event, src, dst, vrange)
        if src == P.NonExistentPartition and dst == P.NewPartition:
            if self.cur.state is not None or self.cur.leader is not None:
                self.incarnation += 1  # deleted and re-created: epochs restart at 0
            self.deleting, self.decided_leader = False, None
            self.cur = PartitionStatus(state=self.cur.state, replicas=self.cur.replicas)
            self.creation_refs.append(ref_of(event))
        elif src == P.NewPartition and dst == P.OnlinePartition:
            self.creation_refs.append(ref_of(event))
            self.online_refs.append(ref_of(event))
        if dst == P.NonExistentPartition:
            self._set(epoch, event, PartitionStatus(state=dst, replicas=self.cur.replicas), DECISION)
            self.deleting = False
        else:
            self._observe(epoch, event, vrange, DECISION, state=dst)
        self.state_ref, self.state_epoch = ref_of(event), epoch
        if dst == P.OnlinePartition:  # the offline episode (failed elections) ends here
            for failure in self.failures:
                failure.setdefault("recovered", ref_of(event))
            self._flush_failures()

    def _partition_failure(self, epoch: int, event: dict, vrange: VersionRange) -> None:
        src, dst = event.get("from_state"), event.get("to_state")
        if event["event_type"] == "no_replica_alive":
            src, dst = src or P.NewPartition, dst or P.OnlinePartition
        self._check_partition_gap(epoch, event, src, dst, vrange)
        refused = "should be in" in (event.get("stack") or "") + (event.get("message") or "")
        why = first_line(event.get("stack")) or first_line(event.get("message"))
        offline_episode = next((f["episode"] for f in self.failures if f["entity"] == "partition"), None)
        self.failures.append(
            {
                "event": event,
                "epoch": epoch,
                "src": src,
                "dst": dst,
                "refused": refused,
                "why": why,
                "entity": "partition",
                "vrange": vrange,
                # one episode from the first failed election until the partition is online again: Kafka
                # re-tries every offline partition at each broker change and logs the same ERROR
                # (KafkaController.onBrokerStartup/onReplicasBecomeOffline, K:controller/KafkaController.scala@2.4.1:407-430)
                "episode": offline_episode or ("offline_partition", ref_of(event)),
            }
        )
        obs = observation_of(event)
        if obs.replicas:
            self._set(epoch, event, self.cur.with_(replicas=obs.replicas), FAILURE)
        if src and self.cur.state != src:
            self._set(epoch, event, self.cur.with_(state=src), FAILURE)
        if src:
            self.state_ref, self.state_epoch = ref_of(event), epoch
        if dst == P.OnlinePartition:
            self._check_offline_with_live_replicas(at=event)

    def _check_partition_gap(
        self, epoch: int, event: dict, src: Optional[str], dst: Optional[str], vrange: VersionRange
    ) -> None:
        if not src or self.cur.state is None:
            return
        allowed = {self.cur.state}
        if epoch != self.state_epoch:
            allowed |= FAILOVER_PARTITION_STATES
        if src in allowed:
            return
        if (
            src == dst == P.OnlinePartition
            and self.cur.state in (P.OfflinePartition, P.NewPartition)
            and vrange.logs_state_after_put()
        ):
            return  # 0.8.0 prints the state after the put (VersionRange.logs_state_after_put)
        info_era = (
            event.get("dialect") in INFO_LEVEL_DIALECTS or vrange.state_change_at_info()
        ) and not self.trace_seen
        explained = info_era and src in (P.OfflinePartition, P.NonExistentPartition)
        reason = (
            "the transition into it is logged at TRACE only since 2.6 (KAFKA-8470) and this log is at INFO"
            if explained
            else "the lines in between are missing (rotation loss, a filtered or truncated file)"
        )
        self.findings.append(
            Finding.make(
                "state_gap",
                INFO if explained else WARNING,
                f"line says the partition was {src}, the replay has it {self.cur.state} since {self.state_ref}: {reason}",
                [self.state_ref, ref_of(event)],
                controller_epoch=epoch,
                ts=event.get("ts"),
                kind="from_state_mismatch",
                **self.where,
            )
        )

    def _observe(
        self,
        epoch: int,
        event: dict,
        vrange: VersionRange,
        source: str,
        state: Optional[str] = None,
        unclean_logged: bool = False,
    ) -> None:
        obs = observation_of(event)
        et = event["event_type"]
        has_state = obs.has_state
        if has_state:
            self.invariants.observe(obs, event, epoch, vrange)
        stale_read = self._failover_view(epoch, event, source, obs)
        if source in (DECISION, CONTROLLER_VIEW) and has_state and not stale_read:
            self.ctrl_progress.observe("controller", obs, event, epoch, self.incarnation)
        if et in ("leader_starts", "follower_starts") and obs.leader_epoch is not None:
            self.broker_progress.observe(
                ("starts", event.get("broker")),
                Observation(leader_epoch=obs.leader_epoch),
                event,
                epoch,
                self.incarnation,
                broker=event.get("broker"),
            )
        if et == "isr_updated" and obs.partition_epoch is not None:
            self.broker_progress.observe(
                ("isr", event.get("broker")),
                Observation(partition_epoch=obs.partition_epoch),
                event,
                epoch,
                self.incarnation,
                broker=event.get("broker"),
            )
        if obs.leader == -2:
            self.deleting = True
        if stale_read or (
            source in (BROKER_VIEW, CONTROLLER_VIEW) and (is_stale(obs, self.cur) or self._echo_of_older_isr(obs))
        ):
            return  # a delayed echo of an older state: benign, and it must not move the timeline back
        if source in (DECISION, CONTROLLER_VIEW) and state != P.NewPartition and not unclean_logged:
            self._judge_election(epoch, event, obs)
        self._record_isr(event, obs)
        if source == LEADER_ISR_CHANGE and not self._leader_isr_change_applies(event):
            return
        new = apply_observation(self.cur, obs, state)
        if source == LEADER_ISR_CHANGE and obs.partition_epoch is None and new.partition_epoch is not None:
            # "Shrinking/Expanding ISR from A to B" precedes the leader's conditional ZooKeeper write of the
            # new ISR, which bumps the zkVersion (K:cluster/Partition.scala@1.1.1:384,515,698-710; "ISR updated to
            # [..] and zkVersion updated to [N]" is TRACE there): without the bump, the controller's UpdateMetadata
            # still carrying the old ISR and zkVersion would not be recognised as the stale echo it is.
            new = new.with_(partition_epoch=new.partition_epoch + 1)
        ref = ref_of(event)
        if obs.leader is not None or obs.isr is not None:
            self.leader_ref = ref
        if obs.leader is not None and source in (DECISION, CONTROLLER_VIEW):
            self.decided_leader = obs.leader
        if obs.isr is not None or obs.leader_epoch is not None:
            self.isr_by_leader = source == LEADER_ISR_CHANGE
        self._set(epoch, event, new, source, ref)
        if source in (DECISION, CONTROLLER_VIEW, LEADER_ISR_CHANGE) and has_state:
            self.last_write = (self.cur, ref)
            if obs.partition_epoch is not None and obs.partition_epoch >= 0:
                self.last_versioned = (self.cur, ref)
            self.stale_view = None  # a fresh state (an election, a write) ends the stale read

    def _echo_of_older_isr(self, obs: Observation) -> bool:
        """Before AlterIsr (2.7) the leader writes its ISR to ZooKeeper itself and the controller learns it
        later (ISR change notification), so a view at the same leader epoch that carries no zkVersion (0.10's
        "sending UpdateMetadata request (Leader:1,ISR:1,LeaderEpoch:2,...)") and an ISR other than the one the
        leader set since is the controller's cache, not news (K:cluster/Partition.scala@0.10.2.2:277,470; K:controller/
        ControllerChannelManager.scala@0.10.2.2:375)."""
        return (
            self.isr_by_leader
            and obs.partition_epoch is None
            and obs.isr is not None
            and obs.leader_epoch is not None
            and obs.leader_epoch == self.cur.leader_epoch
            and self.cur.isr is not None
            and set(obs.isr) != set(self.cur.isr)
        )

    def _leader_isr_change_applies(self, event: dict) -> bool:
        """Only the leader shrinks/expands its ISR; a line about an older ISR is out of date."""
        broker = event.get("broker")
        if broker is not None and self.cur.leader is not None and self.cur.leader >= 0 and broker != self.cur.leader:
            return False
        previous = attr(event, "previous_isr")
        if previous and self.cur.isr is not None:
            try:
                if {int(x) for x in previous.split(",") if x.strip()} != set(self.cur.isr):
                    return False
            except ValueError:
                return True
        return True

    def _record_isr(self, event: dict, obs: Observation) -> None:
        """Every ISR a line shows, with its version where it has one (zkVersion / partition epoch): the
        controller's decisions and requests, the leader's and the controller's ISR writes (server.log
        ``ISR updated to``, controller.log ``ISR for partition ... updated to``), a broker's copy of an
        UpdateMetadata state. A stale echo is harmless: its version is lower."""
        if obs.isr is None or obs.leader == LEADER_DURING_DELETE:
            return
        seen = (obs.isr, obs.partition_epoch, obs.leader_epoch, ref_of(event))
        self.isr_seen.setdefault(self.incarnation, []).append(seen)
        if obs.partition_epoch is not None:
            versions, first_at = self.isr_versions.setdefault(self.incarnation, ([], {}))
            if obs.partition_epoch not in first_at:
                first_at[obs.partition_epoch] = seen
                insort(versions, obs.partition_epoch)

    def _previous_isr(self, obs: Observation) -> Optional[tuple]:
        """The last ISR seen before an election: ``(isr, version, ref)``, the highest version below the
        election's when versions are printed, else the latest."""
        if obs.partition_epoch is not None and self.incarnation in self.isr_versions:
            versions, first_at = self.isr_versions[self.incarnation]
            below = bisect_left(versions, obs.partition_epoch)  # versions[below - 1]: the highest below
            if below:
                best = first_at[versions[below - 1]]
                return best[0], best[1], best[3]
        seen = self.isr_seen.get(self.incarnation, ())
        if obs.leader_epoch is not None:
            # the latest ISR of an older (or unknown) leader epoch
            latest = next((x for x in reversed(seen) if x[2] is None or x[2] < obs.leader_epoch), None)
        else:
            latest = seen[-1] if seen else None
        return (latest[0], None, latest[3]) if latest is not None else None

    def _judge_election(self, epoch: int, event: dict, obs: Observation) -> None:
        """I11: was a new leader elected from outside the ISR? Severity follows the evidence:

        * RECOVERING in the new state (3.2+, IBP >= 3.2: Election.leaderForOffline marks a leader from
          outside the old ISR, K:controller/Election.scala@3.9.0-rc3:44-51): critical, direct;
        * a new ISR holding its leader and another replica: clean by construction
          (``elections.written_by_clean_election``), whatever ISR the logs showed before;
        * a leader outside the previous ISR seen at the version just before the election's (every write
          is version+1: nothing unseen in between): critical; with a version gap, or without versions,
          a warning that names what is missing (2.6+ logs ISR expansions in no state-change.log).
        """
        if obs.leader is None or obs.leader < 0 or (obs.leader == self.decided_leader and not obs.recovering):
            return
        key = (self.incarnation, obs.leader_epoch) if obs.leader_epoch is not None else (ref_of(event),)
        if key in self.judged_elections:
            return
        self.judged_elections.add(key)
        previous = self._previous_isr(obs)
        if obs.recovering:
            self.findings.append(unclean_finding(self.where, event, epoch, obs, previous, "recovering"))
            return
        if obs.isr is not None and written_by_clean_election(obs.leader, obs.isr):
            return
        if previous is None or not is_unclean_leader_change(previous[0], obs.leader):
            return
        direct = previous[1] is not None and obs.partition_epoch is not None and previous[1] == obs.partition_epoch - 1
        self.findings.append(
            unclean_finding(self.where, event, epoch, obs, previous, "inferred" if direct else "possible")
        )

    def _set(
        self, epoch: int, event: dict, new: PartitionStatus, source: Optional[str], ref: Optional[str] = None
    ) -> None:
        """Move the replayed partition to ``new`` (a new interval) if it differs; ``ref``: the event's, if known."""
        if new == self.cur:
            return
        self.cur = new
        ref = ref or ref_of(event)
        offline = new.state == P.OfflinePartition or new.leader == NO_LEADER
        self.offline_anchor = (self.offline_anchor or ref) if offline else None
        self.p_rows.open(
            event,
            epoch,
            {
                "state": new.state,
                "leader": new.leader,
                "isr": new.isr,  # the line's own tuples (``events``): nothing for the collector to track
                "replicas": new.replicas,
                "leader_epoch": new.leader_epoch,
                "partition_epoch": new.partition_epoch,
            },
            source,
            ref,
        )

    def _topic_deleted(self, line: dict) -> None:
        """A controller's topic deletion line (``ClusterContext.deletions``): the partition no longer exists
        from its deletion's start (2.1+) or completion (before), its replicas from the completion, though
        their own transitions are logged at TRACE only (2.6+ ships state.change.logger at INFO, KAFKA-8470).

        Only where no state-change line of the partition is at TRACE: there the transitions are logged
        themselves, a millisecond after the "(re)started" line (recorded: ``real-2.4-zk-topic-deletion``,
        broker-3/controller.log.gz:68 then state-change.log.gz:175-177). Applied once the replay has passed
        the line's time; what is already NonExistent is left as it is, and a partition the line finds in no
        state has nothing to end."""
        if self.trace_seen:
            return  # state-change lines at TRACE: the transitions themselves are logged (just after the line)
        completed = line["event_type"] == DELETION_COMPLETED
        if (
            not completed
            and not self._rules_of(line.get("dialect"), line.get("broker")).vrange.partitions_gone_at_deletion_start()
        ):
            return
        if self.cur.state is None or (self.cur.state == P.NonExistentPartition and not completed):
            return
        epoch = self.epoch if self.epoch is not None else -1
        if self.cur.state != P.NonExistentPartition:
            gone = PartitionStatus(state=P.NonExistentPartition.value, replicas=self.cur.replicas)
            self._set(epoch, line, gone, DECISION)
            self.state_ref, self.state_epoch = ref_of(line), epoch
            self.deleting, self.decided_leader = False, None
        for replica in sorted(self.replicas) if completed else ():
            if self.replicas[replica]["state"] != R.NonExistentReplica:
                self._set_replica(epoch, line, replica, R.NonExistentReplica.value)

    def _partition_created(self, event: dict) -> None:
        topic_id = attr(event, "topic_id")
        if topic_id and self.topic_id and topic_id != self.topic_id:
            self.incarnation += 1
            self.decided_leader = None
        self.topic_id = topic_id or self.topic_id

    # ---- replica lines -----------------------------------------------------------------------
    def _replica_transition(
        self, epoch: int, event: dict, vrange: VersionRange, legal: Optional[frozenset[tuple[str, str]]]
    ) -> None:
        replica, src, dst = event.get("replica"), event.get("from_state"), event.get("to_state")
        self.replica_lines += 1
        if replica is None or not dst:
            return
        if src and legal is not None and (src, dst) not in legal and is_forbidden(Entity.REPLICA, src, dst, vrange):
            self.findings.append(
                Finding.make(
                    "illegal_transition",
                    ERROR,
                    f"logged transition {src} -> {dst} of replica {replica} is not allowed by the replica state machine "
                    f"of Kafka {vrange.label} (valid previous states of {dst}: "
                    f"{', '.join(s.value for s in previous_states(Entity.REPLICA, dst, vrange)) or 'none'})",
                    [ref_of(event)],
                    controller_epoch=epoch,
                    ts=event.get("ts"),
                    kind="logged_pair_invalid",
                    replica=replica,
                    **self.where,
                )
            )
        self._check_replica_gap(epoch, event, replica, src, vrange)
        self._set_replica(epoch, event, replica, dst)

    def _replica_failure(self, epoch: int, event: dict, vrange: VersionRange) -> None:
        replica, src, dst = event.get("replica"), event.get("from_state"), event.get("to_state")
        self.replica_lines += 1
        if replica is None:
            return
        self._check_replica_gap(epoch, event, replica, src, vrange)
        refused = "should be in" in (event.get("stack") or "") + (event.get("message") or "")
        why = first_line(event.get("stack")) or first_line(event.get("message"))
        self.failures.append(
            {
                "event": event,
                "epoch": epoch,
                "src": src,
                "dst": dst,
                "refused": refused,
                "why": why,
                "entity": "replica",
                "replica": replica,
                "vrange": vrange,
            }
        )
        if src:
            self._set_replica(epoch, event, replica, src)

    def _implied_replica_transition(self, epoch: int, event: dict, replica: int, dst: str) -> None:
        """A line that states a replica transition without being its ``Changed state of replica`` line.

        2.6+ ``Partition P state changed to (...) after removing replica R from the ISR as part of transition
        to OfflineReplica`` (INFO) is printed *before* the TRACE ``Changed state of replica R ... from <state
        before> to OfflineReplica`` of the same transition (K:controller/ReplicaStateMachine.scala@2.6.0:228-240,
        @3.9.0-rc3:229 then :238-240): the replica is Offline from the first line, and the TRACE line that
        follows confirms it with the state before, which is no gap."""
        self.implied[replica] = {"before": self.replicas.get(replica), "to": dst, "epoch": epoch}
        self._set_replica(epoch, event, replica, dst)

    def _check_replica_gap(
        self, epoch: int, event: dict, replica: int, src: Optional[str], vrange: VersionRange
    ) -> None:
        known = self.replicas.get(replica)
        implied = self.implied.pop(replica, None)
        if (
            implied is not None
            and implied["epoch"] == epoch
            and implied["to"] == event.get("to_state")
            and known is not None
            and known["state"] == implied["to"]
        ):
            known = implied["before"]  # judge the line's from-state against the state before the transition
        if not src or known is None:
            return
        allowed = {known["state"]}
        if epoch != known["epoch"]:
            allowed |= FAILOVER_REPLICA_STATES
        if src in allowed:
            return
        self.replica_gaps.found(epoch, replica, src, known["state"], known["ref"], ref_of(event), event.get("ts"))

    def _set_replica(self, epoch: int, event: dict, replica: int, state: str) -> None:
        known = self.replicas.get(replica)
        self.replicas[replica] = {"state": state, "ref": ref_of(event), "epoch": epoch, "ts": event.get("ts")}
        if known is not None and known["state"] == state:
            return
        rows = self.r_rows.setdefault(replica, Intervals({**self.where, "replica": replica}))
        c = self.cur
        rows.open(
            event,
            epoch,
            {
                "state": state,
                "leader": c.leader,
                "isr": c.isr,
                "replicas": c.replicas,
                "leader_epoch": c.leader_epoch,
                "partition_epoch": c.partition_epoch,
            },
            source_of(event["event_type"]) or DECISION,
        )

    def _zombie_abort(self, epoch: int, event: dict) -> None:
        newer = attr(event, "new_controller_epoch")
        self.findings.append(
            Finding.make(
                "concurrent_controllers",
                ERROR,
                f"controller {event.get('controller_id')} with epoch {event.get('controller_epoch')} tried to elect a "
                f"leader after another controller wrote the partition state with epoch {newer}: it is a zombie "
                f"controller that went through a soft failure (I10, A3/A8)",
                [ref_of(event)],
                controller_epoch=event.get("controller_epoch"),
                ts=event.get("ts"),
                kind="aborted_by_newer_controller",
                broker=event.get("controller_id"),
                **self.where,
            )
        )

    def _alter_partition_rejected(self, epoch: int, event: dict) -> None:
        attrs = attrs_of(event)
        if (
            attrs.get("request_partition_epoch") is None
        ):  # not a stale partition epoch: leader, leader epoch, RECOVERING
            reason = _rejection_reason(event, attrs)
            self.findings.append(
                Finding.make(
                    "alter_partition_rejected",
                    WARNING,
                    f"the controller rejected an AlterPartition from broker {attrs.get('requesting_broker')}: "
                    f"{reason[:300]}",
                    [ref_of(event)],
                    controller_epoch=event.get("controller_epoch"),
                    ts=event.get("ts"),
                    kind="rejected",
                    broker=_int(attrs.get("requesting_broker")),
                    **self.where,
                )
            )
            return
        self.findings.append(
            Finding.make(
                "stale_epoch_rejected",
                INFO,
                f"the controller rejected an AlterPartition from broker {attrs.get('requesting_broker')} carrying "
                f"partition epoch {attrs.get('request_partition_epoch')}; the current one is "
                f"{event.get('partition_epoch')} (the leader's view was stale; it retries with fresh metadata)",
                [ref_of(event)],
                controller_epoch=event.get("controller_epoch"),
                ts=event.get("ts"),
                kind="stale_partition_epoch",
                broker=_int(attrs.get("requesting_broker")),
                **self.where,
            )
        )


def _rejection_reason(event: dict, attrs: dict) -> str:
    """Why the controller rejected an AlterPartition (the forms of kraft.lark without a partition epoch)."""
    if attrs.get("request_leader_epoch") is not None:
        return f"its leader epoch {attrs['request_leader_epoch']} is not the current {event.get('leader_epoch')}"
    if attrs.get("new_isr") is not None:
        return (
            f"the ISR {attrs['new_isr']} had more than one replica while the leader was still RECOVERING "
            f"from an unclean election"
        )
    if event.get("leader") is not None:
        return f"the current leader is {event['leader']}"
    return "rejected"


def _int(text) -> Optional[int]:
    try:
        return None if text is None else int(text)
    except ValueError:
        return None


def _line_times(events: list[dict]) -> dict[str, Optional[datetime]]:
    """``file:line`` -> the line's timestamp, for ``consolidate`` (built only where there are findings)."""
    return {ref_of(e): e.get("ts") for e in events}


def replay_partition(events: list[dict], ctx: ClusterContext, cfg: ReplayConfig = ReplayConfig()) -> ReplayResult:
    """Replay every line of one partition (events of a single (cluster, topic, partition))."""
    if not events:
        return ReplayResult()
    if not has_metadata(events):
        result = PartitionReplay(events, ctx, cfg).run()
        found = kraft_unclean_lines(events, result.findings, cfg.cluster)  # KRaft logs without a dump
        return ReplayResult(
            result.partition_intervals,
            result.replica_intervals,
            consolidate(found, _line_times(events).get) if found else [],
        )
    # KRaft metadata records are the partition's history (replay/kraft.py); the log lines
    # still go through the line replay for their own checks, but its timelines give way.
    kraft = replay_kraft_partition(events, ctx, cfg.cluster)
    lines = [e for e in events if e["event_type"] not in RECORD_TYPES]
    found = kraft.findings + (PartitionReplay(lines, ctx, cfg).run().findings if lines else [])
    return ReplayResult(
        kraft.partition_intervals,
        kraft.replica_intervals,
        consolidate(found, _line_times(events).get) if found else [],
    )
