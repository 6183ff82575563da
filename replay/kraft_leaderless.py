"""KRaft: a partition left without a leader while a replica of it is on an active broker.

The ZooKeeper-mode check (``epoch_checks._check_offline_with_live_replicas``) judges a leaderless
partition where that controller shows it: its ERROR line for every failed election and the end of a
controller epoch. A KRaft controller prints neither. It tries to elect a leader for every leaderless
partition whenever a broker is unfenced: ``handleBrokerUnfenced`` appends the broker's
``BrokerRegistrationChangeRecord`` (``UnfenceBrokerRecord`` before metadata.version 3.3) and, in the
same record list - one batch, one ``CreateTime`` - a ``PartitionChangeRecord`` for each leaderless
partition it can lead (M:controller/ReplicationControlManager.java@3.9.0-rc3:1339-1351 and
``generateLeaderAndIsrUpdates`` :1891-1973; unchanged at trunk 1eb7644349cb:1338-1350, the newest
source in the mirror: there is no 4.1 tag). A leader must be an active broker (registered, not fenced,
not in controlled shutdown: ``ClusterControlManager.isActive`` @3.9.0-rc3:741-745) with an online log
directory (``LeaderAcceptor`` ReplicationControlManager.java@3.9.0-rc3:2343-2366) and, in a clean
election, in the ISR, or in the ELR when the ISR is empty (``PartitionChangeBuilder.isValidNewLeader``
M:controller/PartitionChangeBuilder.java@3.9.0-rc3:331-335, trunk 1eb7644349cb:322-326). When none
is, the controller writes no record, and with unclean leader election disabled it logs only at DEBUG
(``maybeTriggerUncleanLeaderElectionForLeaderlessPartitions`` @3.9.0-rc3:1696-1721): the partition
stays leaderless until an unclean election (``kafka-leader-election --election-type UNCLEAN``) or
the return of an eligible replica.

So the dumped metadata log shows the episode by itself: a record that leaves the leader at -1, a
replica's broker active when it was written or made active during the episode (the cluster context's
broker timeline: registration and fencing records, and the controllers' lines replaying them), and no
record giving the partition a leader in that same batch. Times are the records' ``CreateTime`` (the
active controller's clock; one batch shares one), so an election written in the unfencing batch itself
ends the episode at the instant the broker became active and is no finding. One finding per episode,
citing the record that began it, the lines that show each replica's broker active, the brokers' own
lines applying the leaderless state, and the record that ended it.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Optional

from .cluster import ClusterContext
from .findings import ERROR, WARNING, Finding, ref_of
from .findings import fmt_ints as _fmt

if TYPE_CHECKING:  # kraft.py imports this module
    from .kraft import Registration


class LeaderlessEpisodes:
    """Fed with every registration a partition's records write (``step``), in log order; ``findings``
    judges the episodes without a leader once the records end."""

    def __init__(self, ctx: ClusterContext, where: dict, views: list[dict]):
        self.ctx = ctx
        self.where = where
        self.views = views  # the brokers' "Leader/Follower t-p starts at ..." lines, in time order
        self.spans: list[tuple[Registration, dict]] = []  # the open episode: each registration, its record
        self.out: list[Finding] = []

    def step(self, reg: Optional[Registration], event: dict, leader_known: bool) -> None:
        """``reg``: the registration after ``event`` (None: the topic was removed); ``leader_known``:
        the leader is stated by a record (not the placeholder of a dump that starts after creation)."""
        if self.spans:
            if reg is not None and reg.leader < 0:
                self.spans.append((reg, event))  # still leaderless: the ISR / ELR / replicas may change
                return
            self._judge(event)
        if reg is not None and reg.leader < 0 and leader_known and reg.replicas:
            self.spans = [(reg, event)]

    def findings(self) -> list[Finding]:
        if self.spans:
            self._judge(None)
        return self.out

    def _judge(self, end: Optional[dict]) -> None:
        """One episode, from its first record to ``end`` (the record giving a leader or removing the
        topic; None: still leaderless where the dump ends, as far as the cluster rows show it)."""
        spans, self.spans = self.spans, []
        bound = end.get("ts") if end is not None else self.ctx.metadata_until
        start_ts = spans[0][1].get("ts")
        if start_ts is None or bound is None:
            return
        live: dict[int, tuple[datetime, list[str], bool]] = {}  # replica -> first active, its lines, eligible
        last = len(spans) - 1
        for i, (reg, event) in enumerate(spans):
            since = event.get("ts")
            until = spans[i + 1][1].get("ts") if i < last else bound
            if since is None or until is None:
                continue
            # the last span of an open episode includes the dump's last instant: a broker unfenced then was
            # tried in that batch (handleBrokerUnfenced), and the dump holds no election
            closed = end is not None or i < last
            for replica in reg.replicas:
                eligible = replica in reg.isr or (not reg.isr and replica in reg.elr)
                for at, refs in self.ctx.live_spans(replica, since, until, include_end=not closed):
                    seen_at, seen_refs, seen_eligible = live.get(replica, (at, [], False))
                    live[replica] = (min(at, seen_at), seen_refs + refs, seen_eligible or eligible)
        if not live:
            return
        self.out.append(self._finding(spans, end, live))

    def _finding(
        self,
        spans: list[tuple[Registration, dict]],
        end: Optional[dict],
        live: dict[int, tuple[datetime, list[str], bool]],
    ) -> Finding:
        first_reg, first = spans[0]
        start: datetime = first["ts"]
        replicas = sorted(live)
        eligible = [r for r in replicas if live[r][2]]
        at = min(live[r][0] for r in replicas)
        isr, elr = _fmt(first_reg.isr), _fmt(first_reg.elr)
        held = f"ISR {isr}" + (f", ELR {elr}" if first_reg.elr else "")
        if eligible:
            severity, kind = ERROR, "isr_member_live"
            text = (
                f"partition without a leader ({held}) although ISR/ELR member(s) {_fmt(eligible)} were on active "
                f"brokers: the KRaft controller elects an active ISR member (an ELR member when the ISR is empty) in "
                f"the very batch that leaves the partition leaderless or unfences the member, and no record shows "
                f"it (missing records, or the member's log directory was offline)"
            )
        else:
            severity, kind = WARNING, "replica_live"
            text = (
                f"partition without a leader ({held}) although replica(s) {_fmt(replicas)} were on active brokers: "
                f"the KRaft controller elects only ISR (or, with an empty ISR, ELR) members, so only an unclean "
                f"election (kafka-leader-election --election-type UNCLEAN, or unclean.leader.election.enable) could "
                f"bring it back"
            )
        until = end.get("ts") if end is not None else None
        if end is not None and until is not None and until > at:
            text += f"; leaderless with a live replica for {(until - at).total_seconds():.1f} s until {ref_of(end)}"
        elif end is None:
            text += "; still leaderless where the metadata dump ends"
        views = [
            ref_of(v)
            for v in self.views
            if v.get("ts") is not None
            and start <= v["ts"]
            and (until is None or v["ts"] < until)
            and v.get("leader") is not None
            and v["leader"] < 0
        ]
        evidence = [ref_of(first), *(ref for r in replicas for ref in live[r][1]), *views]
        if end is not None:
            evidence.append(ref_of(end))
        return Finding.make(
            "offline_with_live_replicas",
            severity,
            text,
            evidence,
            controller_epoch=first.get("controller_epoch"),
            ts=at,
            ts_end=until,
            kind=kind,
            replica=replicas[0] if len(replicas) == 1 else None,
            episode=("offline", ref_of(first)),
            anchor=ref_of(first),
            **self.where,
        )
