"""Named incidents: each drives a small cluster through operations and faults and records its truth.

A scenario works for every release it lists; timings (ZooKeeper session timeout, replica lag,
restarts) are realistic defaults perturbed by the seed. ``run_scenario`` is the one entry point.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from kafka_forensics.core.errors import UsageError

from . import faults
from .engine import SimResult, Simulation
from .metadata_log import DumpSegment
from .profile import PROFILES
from .readme import write_readme

ZK_VERSIONS = tuple(k for k, p in PROFILES.items() if not p.kraft)
ALL_VERSIONS = tuple(PROFILES)
SESSION_MS = 6000  # zookeeper.session.timeout.ms (broker default 6000 up to 2.4, 18000 from 2.5)


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str
    run: Callable[[Simulation], None]
    versions: tuple[str, ...]
    brokers: tuple[int, ...] = (1, 2, 3)


def _session_ms(sim) -> int:
    return 18000 if sim.prof.at_least("2.5") else SESSION_MS


def _wait(sim, lo: int, hi: int) -> None:
    sim.clock.sleep(sim.rng.randint(lo, hi))


def _restart(sim, b: int) -> None:
    """A broker process comes back, the controller sees it, the leaders add it back to the ISRs."""
    ops = sim.ops
    ops.broker_start(b)
    _wait(sim, 50, 300)
    ops.broker_change(sim.cluster.controller, added=[b])
    _wait(sim, 2000, 8000)
    ops.catch_up(b)


def _crash(sim, b: int) -> None:
    """A hard kill; ZooKeeper notices after the session timeout."""
    ops = sim.ops
    ops.broker_crash(b)
    sim.clock.sleep(_session_ms(sim))
    ops.broker_change(sim.cluster.controller, deleted=[b])


# ---- scenarios --------------------------------------------------------------------------------
def clean_failover(sim: Simulation) -> None:
    """Controller 1 resigns (its /controller znode is deleted), broker 2 takes over with every broker
    live; an hour later broker 2's session expires and broker 3 takes over (2.3+: dead replicas go
    Offline, nothing stale is left). The files roll over at the hour."""
    ops = sim.ops
    sim.boot(controller=1)
    _wait(sim, 30_000, 90_000)
    ops.create_topic("orders", [[1, 2, 3], [2, 3, 1], [3, 1, 2]])
    ops.create_topic("payments", [[2, 3, 1], [3, 1, 2]])
    _wait(sim, 120_000, 300_000)
    ops.resign(1, session_expired=False)
    _wait(sim, 20, 200)
    faults.failover(sim, 2)
    _wait(sim, 3_700_000, 3_800_000)  # across the hour: rotation
    sim.truth.event("controller 2 is hard-killed (2.3+) / resigns (<= 2.2)")
    if sim.legal.has("failover_offline_replica_transition"):
        ops.broker_crash(2)
        sim.clock.sleep(_session_ms(sim))
        faults.failover(sim, 3)
        _wait(sim, 20_000, 40_000)
        _restart(sim, 2)
    else:
        # <= 2.2 a failover with a dead broker leaves it in ISRs (KAFKA-3143): resign instead.
        ops.resign(2, session_expired=False)
        _wait(sim, 20, 200)
        faults.failover(sim, 3)
    _wait(sim, 5_000, 20_000)
    ops.preferred_election(list(sim.cluster.partitions()), "AutoTriggered")


def unclean_election(sim: Simulation) -> None:
    """Both followers of ``events-0`` fall out of the ISR, then its leader (broker 1) dies: with
    unclean.leader.election.enable=true on the topic the controller elects broker 2, which was
    not in the ISR (A18). 3.2+: the new leader is RECOVERING, then reports RECOVERED. Then the lab's
    script (``lab record unclean-election``): ``fragile-0`` on brokers [2, 1] loses its follower,
    then its leader; no replica is left until the follower returns and is elected from outside
    the ISR [2]."""
    ops = sim.ops
    sim.boot(controller=3)
    _wait(sim, 30_000, 60_000)
    t = ops.create_topic("events", [[1, 2, 3], [2, 3, 1]], unclean=True)
    _wait(sim, 60_000, 120_000)
    ops.lag_out(t.partitions[0], [2, 3])
    _wait(sim, 5_000, 20_000)
    since = len(sim.notes)
    _crash(sim, 1)
    _unclean_truth(sim, since)
    _wait(sim, 30_000, 90_000)
    _restart(sim, 1)
    _wait(sim, 30_000, 60_000)
    ops.create_topic("fragile", [[2, 1]], unclean=True)
    _wait(sim, 5_000, 20_000)
    _crash(sim, 1)
    _wait(sim, 5_000, 20_000)
    _crash(sim, 2)  # the last ISR member: fragile-0 has no live replica
    _wait(sim, 5_000, 20_000)
    since = len(sim.notes)
    _restart(sim, 1)
    _unclean_truth(sim, since)
    _wait(sim, 5_000, 20_000)
    _restart(sim, 2)


def _unclean_truth(sim: Simulation, since: int) -> None:
    for n in sim.notes_of("unclean", since):
        p = n["partition"]
        sim.truth.add(
            "unclean_election",
            evidence=[n["ref"], n["ctl_ref"]],
            topic=p.topic.name,
            partition=p.index,
            replica=p.leader,
            controller_epoch=n["controller"].epoch,
            note=f"leader {p.leader} elected from outside the ISR {n['old_isr']}",
        )


def zombie_controller(sim: Simulation) -> None:
    """Controller 1's ZooKeeper session expires during a long GC pause; broker 2 becomes controller
    (epoch E+1) while broker 1, not yet aware, works through its event queue with epoch E: from 2.7
    a queued AlterIsr makes it send UpdateMetadata that the brokers refuse (KAFKA-6082 / A3, I6);
    before 2.7 nothing is queued and it resigns without a request, as the recorded real zombies did."""
    ops = sim.ops
    sim.boot(controller=1)
    _wait(sim, 30_000, 60_000)
    ops.create_topic("orders", [[2, 3, 1], [3, 1, 2], [1, 2, 3]])
    _wait(sim, 120_000, 300_000)
    faults.zombie_controller(sim, 1, 2, topics=["orders"])
    _wait(sim, 5_000, 15_000)
    ops.catch_up(1)


def kafka_3143(sim: Simulation) -> None:
    """The controller (broker 1) is hard-killed while it leads ``solo-0`` (RF 1) and follows
    ``orders-0``/``orders-1``; broker 2 takes over, and the logs end before broker 1 returns. Up
    to 2.2 the new controller leaves broker 1 in the ISRs of orders-0 and orders-1 and as the
    leader of solo-0 (KAFKA-3143); from 2.3 Kafka fixes that at failover, so the simulator injects
    the old behaviour as a fault."""
    ops = sim.ops
    sim.boot(controller=1)
    _wait(sim, 30_000, 60_000)
    ops.create_topic("orders", [[2, 1, 3], [3, 2, 1]])
    ops.create_topic("solo", [[1]])
    _wait(sim, 60_000, 180_000)
    ops.broker_crash(1)
    sim.clock.sleep(_session_ms(sim))
    suppress = sim.legal.has("failover_offline_replica_transition")
    faults.failover(sim, 2, suppress_offline=suppress)
    if suppress:
        sim.truth.event("fault: failover skipped the KAFKA-3143 OfflineReplica transitions")
    # The logs are collected while broker 1 is still down: the stale state is still there.
    _wait(sim, 60_000, 120_000)
    ops.preferred_election(list(sim.cluster.partitions()), "AutoTriggered")


def reassignment(sim: Simulation) -> None:
    """``orders-0`` moves from [1,2,3] to [2,3,4] (the leader leaves: reassignment election) and
    ``orders-1`` from [2,3,1] to [2,3,4] (the leader stays: epoch bump), then a preferred election."""
    ops = sim.ops
    sim.boot(controller=1)
    _wait(sim, 30_000, 60_000)
    t = ops.create_topic("orders", [[1, 2, 3], [2, 3, 1]])
    _wait(sim, 60_000, 120_000)
    ops.reassign_start(t.partitions[0], [2, 3, 4])
    ops.reassign_start(t.partitions[1], [2, 3, 4])
    _wait(sim, 5_000, 30_000)
    ops.catch_up(4)
    _wait(sim, 100, 2000)
    ops.reassign_complete(t.partitions[0])
    ops.reassign_complete(t.partitions[1])
    _wait(sim, 300_000, 300_000)
    ops.preferred_election(t.partitions, "AutoTriggered")


def lifecycle(sim: Simulation) -> None:
    """Everything a healthy cluster does in a day, with no fault: topic creation, a broker crash and
    restart, controlled shutdown and restart, preferred election, reassignment, topic deletion and a
    controller resignation. Across an hour boundary. The replay must report nothing above "info"."""
    ops = sim.ops
    sim.boot(controller=1)
    _wait(sim, 30_000, 60_000)
    t = ops.create_topic("orders", [[1, 2, 3], [2, 3, 1], [3, 1, 2]])
    ops.create_topic("audit", [[3, 1, 2]])
    _wait(sim, 120_000, 300_000)
    _crash(sim, 3)
    _wait(sim, 60_000, 120_000)
    _restart(sim, 3)
    _wait(sim, 300_000, 600_000)
    ops.preferred_election(list(sim.cluster.partitions()), "AutoTriggered")
    _wait(sim, 600_000, 900_000)
    ops.controlled_shutdown(2)
    sim.clock.sleep(_session_ms(sim) // 3)
    ops.broker_change(sim.cluster.controller, deleted=[2])
    _wait(sim, 60_000, 120_000)
    _restart(sim, 2)
    _wait(sim, 300_000, 300_000)
    ops.preferred_election(list(sim.cluster.partitions()), "AutoTriggered")
    _wait(sim, 1_200_000, 1_800_000)
    if not sim.prof.kraft:  # the KRaft simulation does not model reassignment
        ops.reassign_start(t.partitions[2], [3, 2, 1])
        _wait(sim, 1000, 5000)
        ops.reassign_complete(t.partitions[2])
    _wait(sim, 60_000, 120_000)
    ops.delete_topic("audit")
    _wait(sim, 60_000, 120_000)
    ops.resign(1, session_expired=False)
    _wait(sim, 20, 200)
    faults.failover(sim, 2)


def topic_deletion_stuck(sim: Simulation) -> None:
    """``old-events`` is deleted while broker 3 is down: its replicas park in
    ReplicaDeletionIneligible (before 2.3 Kafka refuses that move from OfflineReplica with an ERROR,
    KAFKA-8237, benign) until broker 3 returns and the deletion completes."""
    ops = sim.ops
    sim.boot(controller=1)
    _wait(sim, 30_000, 60_000)
    ops.create_topic("old-events", [[1, 2, 3], [2, 3, 1]])
    ops.create_topic("orders", [[2, 1], [1, 2]])
    _wait(sim, 60_000, 120_000)
    _crash(sim, 3)
    _wait(sim, 30_000, 60_000)
    since = len(sim.notes)
    ops.delete_topic("old-events")
    for n in sim.notes_of("deletion_stuck", since):
        sim.truth.event(
            "deletion stuck on offline replicas",
            None,
            topic=n["topic"],
            replicas=[f"{name}/{r}" for name, r in n["replicas"]],
        )
    _wait(sim, 120_000, 300_000)
    _restart(sim, 3)


def illegal_transition(sim: Simulation) -> None:
    """A healthy cluster whose controller log holds one transition no release allows
    (``OnlinePartition -> NewPartition``), as a corrupted or foreign line would show it."""
    ops = sim.ops
    sim.boot(controller=1)
    _wait(sim, 30_000, 60_000)
    t = ops.create_topic("orders", [[1, 2, 3], [2, 3, 1]])
    _wait(sim, 60_000, 120_000)
    faults.illegal_transition(sim, t.partitions[1])
    _wait(sim, 60_000, 120_000)
    ops.preferred_election(t.partitions, "AutoTriggered")


def lost_segment(sim: Simulation) -> None:
    """The controller's state-change.log loses the lines of ``orders``' NewPartition ->
    OnlinePartition step (a deleted chunk); the next visible transition of each partition starts
    from OnlinePartition while the last visible state is NewPartition (state_gap)."""
    ops = sim.ops
    sim.boot(controller=1)
    _wait(sim, 30_000, 60_000)
    c = sim.cluster.controller
    t = ops.create_topic(
        "orders", [[2, 1, 3], [2, 3, 1]], wrap_online=lambda step: faults.lost_segment(sim, c.id, "state-change", step)
    )
    _wait(sim, 120_000, 240_000)
    with sim.out.capture() as lines:
        ops.controlled_shutdown(2)
    for p in t.partitions:
        refs = [
            ref
            for ref, b, kind, msg in lines
            if b == c.id
            and kind == "state-change"
            and faults._mentions(p).search(msg)
            and "from OnlinePartition" in msg
        ]
        if refs:
            sim.truth.add(
                "state_gap",
                evidence=refs[:1],
                topic=p.topic.name,
                partition=p.index,
                controller_epoch=c.epoch,
                note="logged from-state OnlinePartition, last visible state NewPartition: the lines "
                "in deleted_lines are missing",
            )
    sim.clock.sleep(_session_ms(sim) // 3)
    ops.broker_change(sim.cluster.controller, deleted=[2])
    _wait(sim, 60_000, 90_000)
    _restart(sim, 2)


def skew_and_shared_file(sim: Simulation) -> None:
    """Broker 3's clock runs 4.2 s ahead; brokers 1 and 2 share one log directory, so their
    state-change.log and server.log are one file each. A broker crash and restart on top."""
    faults.clock_skew(sim, 3, 4200)
    faults.shared_file(sim, [1, 2], "state-change", "shared/state-change.log")
    faults.shared_file(sim, [1, 2], "server", "shared/server.log")
    ops = sim.ops
    sim.boot(controller=1)
    _wait(sim, 30_000, 60_000)
    ops.create_topic("orders", [[1, 2, 3], [2, 3, 1], [3, 1, 2]])
    _wait(sim, 60_000, 120_000)
    _crash(sim, 2)
    _wait(sim, 60_000, 120_000)
    _restart(sim, 2)
    _wait(sim, 300_000, 300_000)
    ops.preferred_election(list(sim.cluster.partitions()), "AutoTriggered")


def kraft_metadata(sim: Simulation) -> None:
    """A 3.9 KRaft cluster whose ``__cluster_metadata`` log is dumped next to the logs
    (``metadata/__cluster_metadata-0/*.log.dump``, as ``kafka-dump-log.sh --cluster-metadata-decoder``
    prints it), with three faults: the batch holding the ISR shrink of ``payments-1`` is missing
    from the dump (the brokers later report a partition epoch no record reaches); after broker 2 is
    fenced a controller bug makes it leader of ``payments-0`` again; broker 1 logs leadership of
    ``payments-2`` that no metadata record gives it."""
    ops = sim.ops
    ops.mlog.enabled = True
    sim.boot(controller=3)
    _wait(sim, 30_000, 60_000)
    t = ops.create_topic("payments", [[2, 1, 3], [2, 3, 1], [3, 1, 2]])
    p0, p1, p2 = t.partitions
    epoch = sim.cluster.controller.epoch
    _wait(sim, 60_000, 120_000)
    phantom = sim.T.sc_leader(1, p2, None, -1)
    sim.truth.add(
        "metadata_view_mismatch",
        evidence=[phantom],
        topic="payments",
        partition=2,
        controller_epoch=epoch,
        note="broker 1 says it leads payments-2 at leader epoch 0; the record that made partition epoch 0 has leader 3",
    )
    _wait(sim, 5_000, 20_000)
    ops.lag_out(p1, [1])
    dropped = ops.last_isr_record
    dropped.dropped = True
    _wait(sim, 5_000, 20_000)
    ops.lag_out(p0, [1, 3])
    _wait(sim, 5_000, 20_000)
    with sim.out.capture() as lines:
        _crash(sim, 2)
    views = [ref for ref, _b, _k, msg in lines if "payments-1 " in msg and "starts at leader epoch" in msg]
    sim.truth.add(
        "partition_epoch_gap",
        evidence=views,
        topic="payments",
        partition=1,
        controller_epoch=sim.cluster.controller.epoch,
        note=f"brokers apply partition epoch {p1.zk_version}; without the dropped record the dump "
        f"reaches {p1.zk_version - 1}",
    )
    _wait(sim, 5_000, 20_000)
    with sim.out.capture() as lines:
        ops.fault_elect_fenced(p0, 2)
    views = [ref for ref, _b, _k, msg in lines if "payments-0 " in msg]
    sim.truth.add(
        "leader_on_fenced_broker",
        evidence=views,
        topic="payments",
        partition=0,
        controller_epoch=sim.cluster.controller.epoch,
        note="PartitionChangeRecord makes fenced broker 2 the leader of payments-0",
    )
    _wait(sim, 30_000, 60_000)
    line_of = sim.write_metadata_dump()
    around = [e for e in ops.mlog.entries if e.offset in (dropped.offset - 1, dropped.offset + 1)]
    sim.truth.add(
        "metadata_offset_gap",
        evidence=[
            (DumpSegment(ops.mlog.name), line_of[e.offset], e.ms) for e in sorted(around, key=lambda e: e.offset)
        ],
        controller_epoch=dropped.epoch,
        note=f"the dump skips offset {dropped.offset} (the dropped batch) between two batches of one segment",
    )


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "clean-failover",
            "controller resignation and session-expiry failovers, nothing stale",
            clean_failover,
            ALL_VERSIONS,
        ),
        Scenario(
            "unclean-election", "leader dies with an ISR of one: unclean election", unclean_election, ALL_VERSIONS
        ),
        Scenario(
            "zombie-controller",
            "old controller acts with a stale epoch; brokers reject it",
            zombie_controller,
            ZK_VERSIONS,
        ),
        Scenario("kafka-3143", "dead broker kept as leader / in ISR after failover", kafka_3143, ZK_VERSIONS),
        Scenario(
            "reassignment",
            "partition reassignment (leader moves / stays) and preferred election",
            reassignment,
            ZK_VERSIONS,
            (1, 2, 3, 4),
        ),
        Scenario(
            "lifecycle", "a healthy day: every operation, no fault (no finding expected)", lifecycle, ALL_VERSIONS
        ),
        Scenario(
            "topic-deletion-stuck",
            "deletion parked on an offline broker's replicas, resumed on restart",
            topic_deletion_stuck,
            ZK_VERSIONS,
        ),
        Scenario("illegal-transition", "one transition the state machine forbids", illegal_transition, ZK_VERSIONS),
        Scenario(
            "lost-segment", "a contiguous run of controller state-change lines is missing", lost_segment, ZK_VERSIONS
        ),
        Scenario(
            "kraft-metadata",
            "KRaft metadata dump: a missing record, a fenced leader, a broker view no record explains",
            kraft_metadata,
            ("3.9-kraft",),
        ),
        Scenario(
            "skew-and-shared-file",
            "one broker's clock skewed, two brokers sharing log files",
            skew_and_shared_file,
            ALL_VERSIONS,
        ),
    )
}


def run_scenario(
    name: str,
    kafka_version: str,
    out_dir: Path,
    *,
    seed: int = 0,
    trace: bool = False,
    gzip: bool = False,
    expect: bool = False,
) -> SimResult:
    """Simulate scenario ``name`` for ``kafka_version`` into ``out_dir`` (writes truth.json)."""
    scenario = SCENARIOS.get(name)
    if scenario is None:
        raise UsageError(f"unknown scenario {name!r} (known: {', '.join(SCENARIOS)})")
    sim = Simulation(out_dir, kafka_version, seed=seed, trace=trace, gzip=gzip, expect=expect, brokers=scenario.brokers)
    key = "3.9-kraft" if sim.prof.kraft else sim.prof.line
    if key not in scenario.versions:
        raise UsageError(
            f"scenario {name} is not defined for Kafka {sim.prof.label} (it runs on {', '.join(scenario.versions)})"
        )
    scenario.run(sim)
    res = sim.finish(name, scenario.summary)
    write_readme(res.out_dir, res.truth, scenario.run.__doc__ or scenario.summary)
    return res


def scenario_names(kafka_version: Optional[str] = None) -> list[str]:
    return sorted(SCENARIOS)
