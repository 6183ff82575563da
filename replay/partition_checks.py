"""Invariant checks over a replayed partition (§4 of the kafka-state-machines reference).

Single-line invariants (I2 leader in ISR, I3 ISR within replicas, I4 non-empty ISR, I15) come from
``invariants.check_snapshot`` and are judged against every release the line may come from
(``VersionRange.common``); one finding per distinct offending state, citing every line that shows
it. Progressions (I7-I10: epochs never go back) are compared only between lines written on one
clock: controller-authored lines (ordered by controller epoch, then the controller's own time),
or one broker's own ``starts at leader epoch`` / ``version updated to`` lines.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import datetime
from operator import itemgetter
from typing import Optional

from kafka_forensics.core.eras import VersionRange
from kafka_forensics.statemachines.invariants import (
    CONTROLLER_EPOCH_REGRESSION,
    EMPTY_ISR,
    ISR_NOT_SUBSET_OF_REPLICAS,
    LEADER_EPOCH_REGRESSION,
    LEADER_EPOCH_REUSED,
    LEADER_NOT_IN_ISR,
    PARTITION_EPOCH_REGRESSION,
    RECOVERING_ISR_NOT_SINGLETON,
    PartitionSnapshot,
    check_progression,
    check_snapshot,
)

from .findings import CRITICAL, ERROR, INFO, MIN_TS, WARNING, Finding, ref_of, unique_refs
from .partition_view import Observation

_KRAFT_CHECK_VERSION = "3.9"  # KRaft keeps the ZK invariants by construction (reference §7.2)

_SNAPSHOT_TEXT = {
    LEADER_NOT_IN_ISR: (
        ERROR,
        "leader {leader} is not in ISR {isr} (I2: every election takes the leader from the ISR)",
    ),
    ISR_NOT_SUBSET_OF_REPLICAS: (
        WARNING,
        "ISR {isr} is not within the replicas {replicas} (I3; legal only for a "
        "moment while a reassignment completes, KAFKA-9672)",
    ),
    EMPTY_ISR: (ERROR, "ISR is empty (I4: releases {versions} never write an empty ISR)"),
    RECOVERING_ISR_NOT_SINGLETON: (ERROR, "leader {leader} is RECOVERING but the ISR is {isr} (I15, KIP-704)"),
}
_PROGRESSION_TEXT = {
    LEADER_EPOCH_REGRESSION: (
        ERROR,
        "leader epoch went back from {prev_le} to {le} (I8: every controller decision writes leaderEpoch+1)",
    ),
    LEADER_EPOCH_REUSED: (ERROR, "leader epoch {le} was used by leader {prev_leader} and then by leader {leader} (I8)"),
    PARTITION_EPOCH_REGRESSION: (
        ERROR,
        "partition epoch (zkVersion) went back from {prev_pe} to {pe} (I9: conditional writes only ever increment it)",
    ),
    CONTROLLER_EPOCH_REGRESSION: (
        ERROR,
        "the partition state was written by controller epoch {prev_ce} and later "
        "shows controller epoch {ce} (I10: a newer controller's write was lost or "
        "an older controller overwrote it)",
    ),
}


def _fmt(values) -> str:
    return "[]" if values is None else "[" + ",".join(str(v) for v in values) + "]"


@functools.lru_cache(maxsize=65536)
def snapshot_violations(leader, isr, replicas, recovering: bool, vrange: VersionRange) -> tuple[str, ...]:
    """Violations of one observed state (an ``Observation``'s leader, ISR, replicas, RECOVERING) that every
    release of ``vrange`` agrees on. Cached: a partition shows the same few states over and over."""
    snap = PartitionSnapshot(
        leader=leader,
        isr=isr,
        replicas=replicas,
        leader_recovery_state="RECOVERING" if recovering else None,
    )
    if vrange.kraft:
        return tuple(check_snapshot(snap, _KRAFT_CHECK_VERSION))
    return tuple(vrange.common(lambda v: check_snapshot(snap, v)))


@dataclass
class SnapshotInvariants:
    """One finding per (violation, offending state), with every line that shows it."""

    where: dict
    _groups: dict = field(default_factory=dict)

    def observe(self, obs: Observation, event: dict, epoch: int, vrange: VersionRange) -> None:
        if obs.leader is None and obs.isr is None:
            return
        violations = snapshot_violations(obs.leader, obs.isr, obs.replicas, obs.recovering, vrange)
        for violation in violations:
            key = (violation, obs.leader, obs.isr, obs.replicas)
            group = self._groups.setdefault(key, {"refs": [], "event": event, "epoch": epoch, "vrange": vrange})
            group["refs"].append(ref_of(event))
            group.pop("resolved_by", None)
        if ISR_NOT_SUBSET_OF_REPLICAS not in violations and obs.isr is not None and obs.replicas is not None:
            # KAFKA-9672 / reference §2.5: during a reassignment the LeaderAndIsr carries the new
            # replicas while the ISR still holds the removed ones until the next step shrinks it.
            # A later state within the replicas resolves it; only one that persists is a warning.
            for (violation, *_), group in self._groups.items():
                if violation == ISR_NOT_SUBSET_OF_REPLICAS:
                    group.setdefault("resolved_by", ref_of(event))

    def findings(self) -> list[Finding]:
        out = []
        for (violation, leader, isr, replicas), g in self._groups.items():
            severity, text = _SNAPSHOT_TEXT[violation]
            summary = text.format(leader=leader, isr=_fmt(isr), replicas=_fmt(replicas), versions=g["vrange"].label)
            if violation == ISR_NOT_SUBSET_OF_REPLICAS and g.get("resolved_by"):
                severity = INFO
                summary += f"; transient: resolved by {g['resolved_by']}"
            out.append(
                Finding.make(
                    violation,
                    severity,
                    summary,
                    g["refs"],
                    controller_epoch=g["epoch"],
                    ts=g["event"].get("ts"),
                    kind="state",
                    **self.where,
                )
            )
        return out


@dataclass
class Progression:
    """Epoch progressions between consecutive observations written on one clock.

    A regression is raised on every line that shows it (one stale baseline can be followed by many),
    and ``consolidate`` makes the lines of one (rule, controller epoch, broker) one finding. This check is
    the only one that raises these rules, so it keeps each episode's lines as plain tuples and builds the
    one ``Finding`` that ``consolidate`` would have made of them (same lines in the same order, the
    earliest line's summary), instead of a ``Finding`` per line."""

    where: dict
    kind: str
    _last: dict = field(default_factory=dict)  # lane -> (PartitionSnapshot, ref, incarnation)
    # (violation, controller epoch, broker) -> [(ts is None, ts or MIN_TS, previous line, evidence, ts,
    #                                            previous snapshot, snapshot)]
    _raised: dict = field(default_factory=dict)

    def observe(
        self, lane, obs: Observation, event: dict, epoch: int, incarnation: int, broker: Optional[int] = None
    ) -> None:
        leader_epoch, partition_epoch, controller_epoch = (
            obs.leader_epoch,
            obs.partition_epoch,
            obs.state_controller_epoch,
        )
        if leader_epoch is None and partition_epoch is None and controller_epoch is None:
            return
        leader = obs.leader if obs.leader is None or obs.leader >= 0 else None
        # positional (leader, isr, replicas, leader_epoch, partition_epoch, controller_epoch): one per line
        snap = PartitionSnapshot(leader, None, None, leader_epoch, partition_epoch, controller_epoch)
        prev = self._last.get(lane)
        if prev is None or prev[2] != incarnation:  # nothing to compare with (or another incarnation)
            self._last[lane] = (snap, ref_of(event), incarnation)
            return
        p = prev[0]
        violations = check_progression(p, snap)
        if violations:
            self._found(violations, p, snap, prev[1], event, epoch, broker)
            return  # keep the higher baseline: one stale line gives one finding, not a cascade
        baseline = PartitionSnapshot(
            leader if leader is not None or leader_epoch not in (None, p.leader_epoch) else p.leader,
            None,
            None,
            leader_epoch if leader_epoch is not None else p.leader_epoch,
            partition_epoch if partition_epoch is not None else p.partition_epoch,
            _max(p.controller_epoch, controller_epoch),
        )
        self._last[lane] = (baseline, ref_of(event), incarnation)

    def _found(
        self,
        violations: list[str],
        p: PartitionSnapshot,
        snap: PartitionSnapshot,
        prev_ref: str,
        event: dict,
        epoch: int,
        broker: Optional[int],
    ) -> None:
        line = _raised_line(prev_ref, ref_of(event), event.get("ts"), p, snap)
        for violation in violations:
            self._raised.setdefault((violation, epoch, broker), []).append(line)

    def findings(self) -> list[Finding]:
        """One finding per episode, as ``consolidate`` would merge the findings of its lines."""
        out = []
        for (violation, epoch, broker), lines in self._raised.items():
            (_, _, anchor, _, _, p, snap), evidence, ts, ts_end = _episode(lines)
            severity, text = _PROGRESSION_TEXT[violation]
            summary = text.format(
                prev_le=p.leader_epoch,
                le=snap.leader_epoch,
                prev_pe=p.partition_epoch,
                pe=snap.partition_epoch,
                prev_ce=p.controller_epoch,
                ce=snap.controller_epoch,
                prev_leader=p.leader,
                leader=snap.leader,
            )
            if broker is not None:
                summary = f"broker {broker}: {summary}"
            out.append(
                Finding.make(
                    violation,
                    severity,
                    summary,
                    evidence,
                    controller_epoch=epoch,
                    ts=ts,
                    ts_end=ts_end,
                    kind=self.kind,
                    broker=broker,
                    anchor=anchor,
                    **self.where,
                )
            )
        return out


_IN_TIME = itemgetter(0, 1, 2, 3)  # a raised line's sort key


def _raised_line(anchor: str, ref: str, ts: Optional[datetime], *facts) -> tuple:
    """One line ``ref`` that raised a check against the earlier line ``anchor``, as a plain tuple led by
    ``consolidate``'s order of an episode's lines (time, then the line that raised it): ``(ts is None,
    ts or MIN_TS, anchor, evidence, ts, *facts)``; ``evidence`` is ``unique_refs`` of the two lines."""
    evidence = (anchor,) if ref == anchor else (anchor, ref)
    return (ts is None, ts or MIN_TS, anchor, evidence, ts, *facts)


def _episode(lines: list[tuple]) -> tuple[tuple, list[str], Optional[datetime], Optional[datetime]]:
    """An episode's raised lines (``_raised_line``) as ``consolidate`` merges their findings: the earliest
    line, every line's evidence in that order, and the span of their times."""
    lines.sort(key=_IN_TIME)
    times = [line[4] for line in lines if line[4] is not None]
    evidence = unique_refs(ref for line in lines for ref in line[3])
    return lines[0], evidence, (min(times) if times else None), (max(times) if times else None)


@dataclass
class ReplicaGaps:
    """Replica lines whose logged from-state is not the replayed one (lines are missing): one finding per
    (controller epoch, replica), the episode ``consolidate`` makes of them.

    In a log with missing lines almost every replica line can raise one, so, like ``Progression``, this
    check keeps each line as a plain tuple and builds the one ``Finding`` that ``consolidate`` would have
    made of a finding per line (same lines in the same order, span, anchor and the earliest line's summary)."""

    where: dict
    # (controller epoch, replica) -> [(ts is None, ts or MIN_TS, anchor, evidence, ts, logged state, replayed state)]
    _raised: dict = field(default_factory=dict)

    def found(
        self, epoch: int, replica: int, logged: str, replayed: str, since: str, ref: str, ts: Optional[datetime]
    ) -> None:
        """The line ``ref`` says ``replica`` was ``logged``; the replay has it ``replayed`` since line ``since``."""
        self._raised.setdefault((epoch, replica), []).append(_raised_line(since, ref, ts, logged, replayed))

    def findings(self) -> list[Finding]:
        out = []
        for (epoch, replica), lines in self._raised.items():
            (_, _, anchor, _, _, logged, replayed), evidence, ts, ts_end = _episode(lines)
            out.append(
                Finding.make(
                    "state_gap",
                    WARNING,
                    f"line says replica {replica} was {logged}, the replay has it {replayed} since {anchor}: "
                    f"the lines in between are missing",
                    evidence,
                    controller_epoch=epoch,
                    ts=ts,
                    ts_end=ts_end,
                    kind="from_state_mismatch",
                    replica=replica,
                    anchor=anchor,
                    **self.where,
                )
            )
        return out


def _max(a: Optional[int], b: Optional[int]) -> Optional[int]:
    if a is None or (b is not None and b > a):
        return b
    return a


def unclean_finding(
    where: dict, event: dict, epoch: int, obs: Observation, previous: Optional[tuple], kind: str
) -> Finding:
    """I11/A18: a leader from outside the ISR; committed data may be lost. ``previous``: the last ISR seen
    before the election, ``(isr, version, ref)``; ``kind`` says how strong the evidence is:

    ``logged``      Kafka's own warning (0.8.x ``No broker in ISR is alive ... There's potential data loss.``,
                    K:controller/PartitionLeaderSelector.scala@0.8.2.2:80-81): critical;
    ``recovering``  the new state is RECOVERING (3.2+, K:controller/Election.scala@3.9.0-rc3:44-51): critical;
    ``inferred``    the leader is outside the ISR seen at the version just before the election's: critical;
    ``possible``    outside the last ISR seen, with writes in between not in the logs (or no versions): a
                    warning that names the gap.
    """
    leader = obs.leader
    isr, version, previous_ref = previous if previous is not None else (None, None, None)
    if kind == "logged":
        summary = (
            f"unclean leader election: Kafka logged that leader {leader} was elected from outside the ISR; "
            f"messages committed only on the old ISR are lost (I11; KIP-101 / KAFKA-6361 divergence risk)"
        )
    elif kind == "recovering":
        outside = f" (the previous ISR was {_fmt(isr)})" if isr is not None else ""
        summary = (
            f"unclean leader election: the controller elected leader {leader} from outside the ISR{outside} and "
            f"marked it RECOVERING (KIP-704); messages committed only on the old ISR are lost (I11)"
        )
    elif kind == "inferred":
        summary = (
            f"unclean leader election: leader {leader} is not in the ISR {_fmt(isr)} of version {version}, the "
            f"version just before the election's ({obs.partition_epoch}), and the new ISR is [{leader}]: committed "
            f"data may be lost (I11)"
        )
    else:
        at = f" (version {version})" if version is not None else ""
        if version is not None and obs.partition_epoch is not None:
            missing = list(range(version + 1, obs.partition_epoch))
            gap = (
                f"version{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} of the partition state "
                f"{'are' if len(missing) > 1 else 'is'} not in these logs"
            )
        else:
            gap = "these lines carry no version, so an ISR change in between cannot be ruled out"
        summary = (
            f"possible unclean leader election: leader {leader} is not in the last ISR seen {_fmt(isr)}{at}, but "
            f"{gap} (an ISR expansion in between would make it clean; 2.6+ logs ISR expansions only in "
            f"controller.log at DEBUG or server.log)"
        )
    severity = WARNING if kind == "possible" else CRITICAL
    return Finding.make(
        "unclean_election",
        severity,
        summary,
        [previous_ref, ref_of(event)] if kind != "logged" else [ref_of(event), previous_ref],
        controller_epoch=epoch,
        ts=event.get("ts"),
        kind=kind,
        episode=("election", epoch, leader),
        anchor=ref_of(event),
        **where,
    )
