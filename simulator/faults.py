"""Faults: the only code allowed to make the logs disagree with correct Kafka behaviour - and the
code that records, for each one, the finding a replay must report and the lines that prove it.

Rule names are those of ``kafka_forensics.replay.findings.RULES``.
"""

from __future__ import annotations

import re
from typing import Callable, Optional, Sequence

from kafka_forensics.core.errors import UsageError

from .model import NEW_P, Controller, Partition
from .requests import Batch


def _mentions(p: Partition) -> re.Pattern:
    """Any spelling of the partition in a message: ``t-0``, ``[t,0]``, ``topicName='t', partitionIndex=0,``."""
    t = re.escape(p.topic.name)
    return re.compile(rf"(?<![\w.-]){t}-{p.index}(?!\d)|\[{t},{p.index}\]|topicName='{t}', partitionIndex={p.index},")


def evidence_for(lines: Sequence[tuple], p: Partition, kinds=("state-change",), limit: int = 8) -> list[tuple]:
    """The captured lines (``(ref, broker, kind, msg)``) that name partition ``p``."""
    pat = _mentions(p)
    return [ref for ref, _b, kind, msg in lines if kind in kinds and pat.search(msg)][:limit]


_LEADER_RX = re.compile(r"(?:leader=|Leader:|\"leader\":|Current leader is )(-?\d+)")
_ISR_RX = re.compile(r"(?:isr=\[|isr=List\(|ISR:|\"isr\":\[|ISR \[|isr=)([\d, ]*)")


def shows_broker(msg: str, broker: int, as_leader: bool) -> bool:
    """Does a line's leader (or ISR) rendering contain ``broker``? (Any release's spelling.)"""
    if as_leader:
        return any(int(m) == broker for m in _LEADER_RX.findall(msg))
    return any(str(broker) in [x.strip() for x in m.split(",")] for m in _ISR_RX.findall(msg))


# ---- controller faults ---------------------------------------------------------------------------
def record_stale_failover_state(sim, c: Controller, lines: Sequence[tuple]) -> int:
    """KAFKA-3143 (A1): after controller ``c`` took over, partitions still led by a dead broker or
    keeping a dead broker in the ISR. Natural up to 2.2 (dead replicas stay
    ReplicaDeletionIneligible), a fault from 2.3 (``suppress_failover_offline``)."""
    live = sim.cluster.live()
    n = 0
    for p in sim.cluster.partitions():
        if p.topic.deleting or not p.has_leadership_info or p.leader < 0:
            continue
        dead_leader = p.leader not in live
        dead_isr = [r for r in p.isr if r not in live]
        if not dead_leader and not dead_isr:
            continue
        replica = p.leader if dead_leader else dead_isr[0]
        # Only lines that show the stale leader/ISR (at INFO from 2.6 a kept dead follower may show nowhere).
        pat = _mentions(p)
        ev = [
            ref
            for ref, _b, kind, msg in lines
            if kind == "state-change"
            and pat.search(msg)
            and (
                shows_broker(msg, replica, dead_leader)
                or (dead_leader and "failed to change state" in msg)
                or (dead_leader and "initiated state change for partition" in msg)
            )
        ][:8]
        what = f"leader {p.leader} is a dead broker" if dead_leader else f"dead broker {replica} kept in ISR"
        if not ev:
            sim.truth.event(f"{p.name}: {what} after failover, but no line at this log level shows it", None)
            continue
        # Pending until the end: if the broker returns within this controller epoch the state heals
        # (the new controller sends it the partitions and the leaders re-expand the ISR).
        sim.stale_candidates.append(
            {
                "epoch": c.epoch,
                "broker": replica,
                "resolved": False,
                "finding": dict(
                    rule="leader_isr_mismatch_after_failover",
                    evidence=ev,
                    topic=p.topic.name,
                    partition=p.index,
                    replica=replica,
                    controller_epoch=c.epoch,
                    note=f"after failover to controller {c.id} (epoch {c.epoch}) {what}: "
                    f"leader={p.leader} isr={p.isr} (KAFKA-3143)",
                ),
            }
        )
        n += 1
    return n


def failover(sim, new_id: int, *, suppress_offline: bool = False) -> Controller:
    """Elect ``new_id`` and record the KAFKA-3143 pattern when this release (or the fault) leaves it."""
    ops = sim.ops
    natural = not sim.legal.has("failover_offline_replica_transition")
    ops.suppress_failover_offline = suppress_offline
    with sim.out.capture() as lines:
        c = ops.elect(new_id)
    ops.suppress_failover_offline = False
    if natural or suppress_offline:
        record_stale_failover_state(sim, c, lines)
    return c


def zombie_controller(sim, zombie_id: int, new_id: int, topics: Optional[Sequence[str]] = None) -> Controller:
    """KAFKA-6082 / A3: controller ``zombie_id`` loses its ZooKeeper session during a pause,
    ``new_id`` takes over with epoch E+1, and the old controller, resumed, first works through what
    its event queue holds before it processes the expiry. Which requests it then sends is the
    release's: from 2.7 (AlterIsr, ``Profile.isr_through_controller``) a leader that dropped
    the paused broker from an ISR sent the change to the controller it knew - the zombie, which
    fails the ZooKeeper write and sends UpdateMetadata with epoch E that the brokers refuse
    (KafkaController.processAlterIsr@2.8.2:2336-2366; recorded real 2.8.2 and 3.9.1 zombies). Before
    2.7 leaders wrote ISR changes to ZooKeeper themselves, nothing is queued, and the zombie
    resigns without a request (recorded real 0.10.2.2, 1.1.1, 2.4.1 zombies)."""
    cl, ops, T, out = sim.cluster, sim.ops, sim.T, sim.out
    old = cl.controller
    if old is None or old.id != zombie_id:
        raise UsageError(f"broker {zombie_id} is not the active controller")
    view = {p.name: p.snap() for p in cl.partitions()}  # what the zombie still believes
    # The session expires in ZooKeeper: /controller and /brokers/ids/<zombie> vanish; the process runs on.
    sim.clock.sleep(6000)
    cl.brokers[zombie_id].alive = False
    cl.controller = None
    new = failover(sim, new_id)
    sim.truth.event("controller failover after session expiry", None, old=zombie_id, new=new_id, epoch=new.epoch)
    sim.clock.sleep(sim.rng.randint(3000, 9000))  # the rest of the GC pause
    zombie = old
    chosen = [p for p in cl.partitions() if (topics is None or p.topic.name in topics) and not p.topic.deleting]
    # The AlterIsr queued during the pause: the first partition another live broker leads with the
    # paused broker in its ISR (that leader removed it once replica.lag.time.max.ms passed).
    queued = [
        p
        for p in chosen
        if sim.prof.isr_through_controller
        and view[p.name][2] != zombie_id
        and cl.brokers[view[p.name][2]].alive
        and zombie_id in view[p.name][4]
    ][:1]
    if queued:
        with out.capture() as lines:
            T.ctl_isr_updating(zombie, queued)
            sim.clock.tick(500, 2500)  # the ZooKeeper client reconnects, the session is gone
            for p in queued:
                T.ctl_isr_update_failed(zombie, p)
            # processUpdateNotifications: UpdateMetadata for the requested partitions to every broker
            # the zombie still believes live, with its cached (unchanged) states.
            batch = Batch()
            for p in queued:
                batch.add_um(sorted(b for b in cl.brokers if b == zombie_id or cl.brokers[b].alive), None)
                batch.um[p.name] = view[p.name]
            sim.flow.send(zombie, batch)
        mine = [ref for ref, b, kind, msg in lines if b == zombie_id and kind in ("state-change", "controller")]
        rejected = [
            ref
            for ref, b, kind, msg in lines
            if b != zombie_id and kind == "state-change" and ("is old" in msg or "old controller" in msg)
        ]
        sim.truth.add(
            "concurrent_controllers",
            evidence=mine[:8],
            controller_epoch=old.epoch,
            note=f"controller {zombie_id} keeps acting with epoch {old.epoch} after controller {new_id} "
            f"was elected with epoch {new.epoch} (a queued AlterIsr)",
        )
        sim.truth.add(
            "stale_epoch_rejected",
            evidence=rejected,
            controller_epoch=old.epoch,
            note=f"brokers reject controller {zombie_id}'s UpdateMetadata: epoch {old.epoch} < {new.epoch}",
        )
    # The zombie finally processes the expiry, resigns and registers again with a new session.
    sim.clock.tick(50, 400)
    T.zk_session_expired(zombie_id)
    ops.resign(zombie_id, session_expired=True)
    br = cl.brokers[zombie_id]
    br.alive = True
    br.forget()
    br.broker_epoch = cl.next_czxid()
    T.server_registered(zombie_id, br.broker_epoch)
    sim.clock.sleep(sim.rng.randint(40, 200))
    ops.broker_change(new, added=[zombie_id])
    return new


def illegal_transition(sim, p: Partition) -> Optional[tuple]:
    """A logged partition transition the release's state machine forbids (I1): ``Changed partition
    t-0 state from OnlinePartition to NewPartition ...`` - NewPartition is only valid from
    NonExistentPartition in every release, and that line shape is visible at the default level."""
    c = sim.cluster.controller
    frm, bad = p.state, NEW_P
    if sim.legal.valid_partition(frm, bad):
        raise UsageError(f"{frm} -> {bad} is legal in Kafka {sim.prof.tag}; pick another partition")
    sim.clock.tick(5, 50)
    ref = sim.T.sc_partition(c, p, frm, bad)
    sim.truth.add(
        "illegal_transition",
        evidence=[ref],
        topic=p.topic.name,
        partition=p.index,
        controller_epoch=c.epoch,
        note=f"{frm} -> {bad}: valid previous states of {bad} are "
        f"{', '.join(sim.legal.previous_states(_P, bad))} (injected line, state unchanged)",
    )
    return ref


def lost_segment(sim, broker: int, kind: str, action: Callable[[], None]) -> list[str]:
    """Run ``action`` while ``broker``'s ``kind`` log loses every line it would write (a deleted
    segment / lost rotation). The removed text is recorded in truth ``deleted_lines``."""
    sink = sim.out.sink(broker, kind)
    before = sink.last_line()
    sim.out.start_drop(broker, kind)
    action()
    dropped = sim.out.stop_drop(sink)
    sim.truth.deleted.append(
        {
            "_after": before,
            "_file": sink.rel,
            "count": sum(t.count("\n") for t in dropped),
            "lines": [t.rstrip("\n") for t in dropped],
        }
    )
    return dropped


def clock_skew(sim, broker: int, skew_ms: int) -> None:
    """Shift one broker's clock (it only changes what that broker prints)."""
    sim.out.skew[broker] = skew_ms
    sim.truth.skews.append({"broker": broker, "skew_ms": skew_ms})


def shared_file(sim, brokers: Sequence[int], kind: str, rel: str) -> None:
    """Several brokers write one file (a shared log directory)."""
    for b in brokers:
        sim.out.route(b, kind, rel)
    sim.truth.shared.append({"file": rel, "brokers": sorted(brokers), "log": kind})


from kafka_forensics.statemachines.states import Entity as _Entity  # noqa: E402

_P = _Entity.PARTITION
