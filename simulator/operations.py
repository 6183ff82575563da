"""The ZooKeeper-mode controller's operations (kafka-state-machines.md §2), driving the model.

Each public method is one controller event - failover, broker change, topic creation, controlled
shutdown, reassignment, preferred election, topic deletion - and runs the partition/replica
state-machine steps of the simulated release in Kafka's order. Legality (valid previous states,
elections, ISR shrink, failover out-of-band states) is always asked of ``legality.Legality``,
i.e. of ``kafka_forensics.statemachines``; an illegal step is logged the way that release logs a
refused transition and leaves the state unchanged, as Kafka does.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

from .model import (
    DEL_INELIGIBLE,
    DEL_OK,
    DEL_STARTED,
    NEW_P,
    NEW_R,
    NO_LEADER,
    NON_EXISTENT_P,
    NON_EXISTENT_R,
    OFFLINE_P,
    OFFLINE_R,
    ONLINE_P,
    ONLINE_R,
    Controller,
    Partition,
    Topic,
)
from .requests import Batch

STRATEGIES = {
    "offline": "OfflinePartitionLeaderElectionStrategy",
    "reassign": "ReassignPartitionLeaderElectionStrategy",
    "preferred": "PreferredReplicaPartitionLeaderElectionStrategy",
    "controlled_shutdown": "ControlledShutdownPartitionLeaderElectionStrategy",
}


class ZkOps:
    """Controller operations for one simulation (``sim`` = engine.Simulation)."""

    def __init__(self, sim) -> None:
        self.sim = sim
        self.T = sim.T
        self.L = sim.legal
        self.cl = sim.cluster
        self.clock = sim.clock
        self.flow = sim.flow
        self.suppress_failover_offline = False  # KAFKA-3143 fault on >= 2.3
        self.pending_reassign: dict[str, tuple[list[int], list[int]]] = {}

    # ---- liveness ----------------------------------------------------------------------------
    def live(self) -> set[int]:
        return self.cl.live()

    def reachable(self) -> set[int]:
        """``liveOrShuttingDownBrokerIds``: where requests can go."""
        return self.cl.live()

    def send(self, c: Controller, batch: Batch) -> None:
        self.flow.send(c, batch)

    # ---- partition state machine -------------------------------------------------------------
    def p_change(
        self,
        c: Controller,
        parts: Sequence[Partition],
        to: str,
        strategy: str = "offline",
        unclean: Optional[bool] = None,
        target: Optional[dict] = None,
        send: bool = True,
    ) -> list[Partition]:
        """``PartitionStateMachine.handleStateChanges(parts, to, strategy)``; returns those that moved."""
        T, L = self.T, self.L
        if not parts:
            return []
        T.ctl_invoking(c, "partition", to, [self.T.r.tap(p.topic.name, p.index) for p in parts])
        batch = Batch()
        moved = []
        live, sd, reach = self.live(), self.cl.shutting_down(), self.reachable()
        for p in parts:
            self.clock.tick(0, 1)
            frm = p.state
            if not L.valid_partition(frm, to):
                valid = L.previous_states(_P, to)
                T.sc_partition_failed(c, p, frm, to, T.exc_invalid_partition(p, frm, to, valid))
                continue
            if to != ONLINE_P:
                p.state = to
                T.sc_partition(c, p, frm, to)
                moved.append(p)
                continue
            if frm == NEW_P:
                res = L.new_partition(p.replicas, live, sd)
                if not res.elected:
                    T.sc_partition_failed(c, p, frm, to, T.exc_new_partition_failed(c, p, live - sd))
                    continue
                p.leader, p.isr, p.leader_epoch, p.zk_version, p.ctrl_epoch = res.leader, list(res.isr), 0, 0, c.epoch
                p.state = ONLINE_P
                T.sc_partition(c, p, frm, to)
                batch.add_lai(res.isr, p, True, reach)
                moved.append(p)
                continue
            T.sc_election_started(c, p)
            res = self._elect(p, strategy, live, sd, unclean, target)
            if not res.elected:
                kind = "no_live_replica" if not any(r in live - sd for r in p.replicas) else "no_isr"
                ref = T.sc_partition_failed(
                    c, p, frm, to, T.exc_election_failed(c, p, STRATEGIES[strategy], live - sd, kind)
                )
                self.sim.note("election_failed", ref=ref, partition=p, controller=c)
                continue
            if res.not_needed:  # <= 1.0 preferred election of the current leader: logged, no write
                T.sc_elected(c, p)
                T.sc_partition(c, p, frm, to)
                continue
            old_isr, old_leader = list(p.isr), p.leader
            if strategy == "controlled_shutdown":
                T.ctl_cs_leader(c, p, old_leader, res.leader)
            p.leader, p.isr = res.leader, list(res.isr)
            p.leader_epoch += 1
            p.zk_version += 1
            p.ctrl_epoch = c.epoch
            p.recovering = res.leader_recovering
            p.leo += self.sim.rng.randint(0, 40)
            ctl_ref = None
            if res.unclean:
                ctl_ref = T.ctl_unclean(c, p, res.leader, [r for r in p.replicas if r in live - sd])
            elif strategy == "offline":
                T.ctl_offline_selected(c, p, res.leader, res.isr)
            T.sc_elected(c, p)
            p.state = ONLINE_P
            ref = T.sc_partition(c, p, frm, to)
            if res.unclean:
                self.sim.note("unclean", ref=ref, ctl_ref=ctl_ref, partition=p, controller=c, old_isr=old_isr)
            recipients = res.recipients if res.recipients else p.replicas
            batch.add_lai(recipients, p, False, reach)
            moved.append(p)
        if send:
            self.send(c, batch)
        return moved

    def _elect(self, p, strategy, live, sd, unclean, target):
        L = self.L
        if strategy == "offline":
            allowed = p.topic.unclean if unclean is None else unclean
            return L.offline(p.replicas, p.isr, live, sd, allowed)
        if strategy == "reassign":
            return L.reassign(target[p.name], p.isr, live, sd)
        if strategy == "preferred":
            return L.preferred(p.replicas, p.isr, live, p.leader, sd)
        return L.controlled_shutdown(p.replicas, p.isr, live, sd, p.leader)

    # ---- replica state machine ---------------------------------------------------------------
    def r_change(self, c: Controller, items: Sequence[tuple[Partition, int]], to: str, send: bool = True) -> None:
        """``ReplicaStateMachine.handleStateChanges(replicas, to)``."""
        T, L = self.T, self.L
        if not items:
            return
        T.ctl_invoking(c, "replica", to, [f"[Topic={p.topic.name},Partition={p.index},Replica={r}]" for p, r in items])
        batch = Batch()
        reach = self.reachable()
        offline = []
        for p, r in items:
            self.clock.tick(0, 1)
            frm = p.rstates.get(r, NON_EXISTENT_R)
            if not L.valid_replica(frm, to):
                ref = T.sc_replica_failed(c, p, r, frm, to, L.previous_states(_R, to))
                self.sim.note("replica_refused", ref=ref, partition=p, replica=r, frm=frm, to=to)
                continue
            if to == NEW_R:
                if p.has_leadership_info and p.leader != r:
                    batch.add_lai([r], p, True, reach)
            elif to == ONLINE_R:
                if frm != NEW_R and p.has_leadership_info and not p.topic.deleting:
                    batch.add_lai([r], p, False, reach)
            elif to == OFFLINE_R:
                batch.add_stop(r, p, False, reach)
                if p.has_leadership_info:
                    offline.append((p, r, frm))
                    continue
            elif to == DEL_STARTED:
                batch.add_stop(r, p, True, reach)
            elif to == NON_EXISTENT_R:
                T.sc_replica(c, p, r, frm, to)
                p.rstates.pop(r, None)
                continue
            T.sc_replica(c, p, r, frm, to)
            p.rstates[r] = to
        for p, r, frm in offline:
            self._remove_from_isr(c, p, r, batch, reach)
            T.sc_replica(c, p, r, frm, OFFLINE_R)
            p.rstates[r] = OFFLINE_R
        if send:
            self.send(c, batch)

    def _remove_from_isr(self, c: Controller, p: Partition, r: int, batch: Batch, reach: set[int]) -> None:
        """The OfflineReplica side effect: the controller's ISR shrink (statemachines.isr_shrink)."""
        old_isr = list(p.isr)
        res = self.L.remove_from_isr(p.leader, p.isr, r, p.topic.unclean)
        if res.written:
            p.leader, p.isr = res.leader, list(res.isr)
            p.leader_epoch += 1
            p.zk_version += 1
            p.ctrl_epoch = c.epoch
            self.T.ctl_isr_removal(c, p, r, old_isr, r in res.isr)
        else:
            self.T.ctl_isr_not_member(c, p, r)
        ref = self.T.sc_isr_removed(c, p, r)
        self.sim.note("isr_removed", ref=ref, partition=p, replica=r, written=res.written)
        if not p.topic.deleting:
            batch.add_lai([x for x in p.replicas if x != r], p, False, reach)

    # ---- controller election and failover (§2.1) --------------------------------------------------
    def elect(self, bid: int) -> Controller:
        """Broker ``bid`` wins the ``/controller`` race and runs ``onControllerFailover``."""
        cl, T = self.cl, self.T
        self.clock.tick(5, 40)
        cl.epoch += 1
        cl.epoch_zk_version += 1
        c = Controller(bid, cl.epoch, cl.epoch_zk_version)
        cl.controller = c
        live = sorted(self.live())
        topics = list(cl.topics)
        ref = T.ctl_failover(c, live, topics)
        self.sim.note("controller_elected", ref=ref, controller=c)
        for b in live:
            if b != bid:
                T.ctl_elected_elsewhere(b, bid)
        parts = list(cl.partitions())
        # UpdateMetadata to every live broker before the state machines start (0.10.2+, KAFKA-4443).
        batch = Batch()
        batch.add_um(live, None)
        for p in parts:
            if p.has_leadership_info:
                batch.add_um((), p)
        self.send(c, batch)
        # initializeReplicaState / initializePartitionState: out-of-band, never logged (§1.3).
        oob = self.L.oob
        online = set(live)
        for p in parts:
            for r in p.replicas:
                p.rstates[r] = (
                    oob.failover_replicas.replica_online if r in online else oob.failover_replicas.replica_offline
                )
            if p.topic.deleting:
                continue
            if not p.has_leadership_info:
                p.state = NEW_P
            else:
                p.state = ONLINE_P if p.leader in online else OFFLINE_P
        live_items = [(p, r) for p in parts if not p.topic.deleting for r in p.replicas if r in online]
        dead_items = [(p, r) for p in parts if not p.topic.deleting for r in p.replicas if r not in online]
        self.r_change(c, live_items, ONLINE_R)
        if oob.startup_replica_transitions.replica_offline is not None:
            T.ctl_offline_replicas_start(c)
            if not self.suppress_failover_offline:
                self.r_change(c, dead_items, OFFLINE_R)
            else:
                self.sim.note("failover_offline_suppressed", controller=c, items=dead_items)
        T.ctl_partition_sm_start(c)
        self.trigger_online(c)
        T.ctl_state_machines_started(c, [p for p in parts if not p.topic.deleting])
        T.ctl_failover_tail(c)
        return c

    def trigger_online(self, c: Controller, unclean: Optional[bool] = None) -> list[Partition]:
        """``triggerOnlinePartitionStateChange``: every New/Offline partition not being deleted."""
        parts = [p for p in self.cl.partitions() if p.state in (NEW_P, OFFLINE_P) and not p.topic.deleting]
        return self.p_change(c, parts, ONLINE_P, "offline", unclean)

    def resign(self, bid: int, session_expired: bool) -> Optional[tuple]:
        """``onControllerResignation`` on broker ``bid`` (it may already have been replaced)."""
        self.clock.tick(1, 5)
        ref = self.T.ctl_resign(bid, session_expired)
        if self.cl.controller is not None and self.cl.controller.id == bid:
            self.cl.controller = None
        return ref

    # ---- brokers (§2.2, §2.3) ---------------------------------------------------------------------
    def broker_crash(self, b: int) -> None:
        """A hard kill: the broker writes nothing more; ZooKeeper drops its ephemeral node later."""
        br = self.cl.brokers[b]
        br.alive = False
        br.forget()
        if self.cl.controller is not None and self.cl.controller.id == b:
            self.cl.controller = None

    def broker_change(
        self, c: Controller, added: Iterable[int] = (), deleted: Iterable[int] = (), bounced: Iterable[int] = ()
    ) -> None:
        """The controller's BrokerChange event."""
        added, deleted, bounced = sorted(added), sorted(deleted), sorted(bounced)
        self.clock.tick(2, 20)
        self.T.ctl_broker_change(c, added, deleted, bounced, sorted(self.live()))
        if deleted:
            self.on_broker_failure(c, deleted)
        if bounced:
            self.on_broker_failure(c, bounced)
            self.on_broker_startup(c, bounced)
        if added:
            self.on_broker_startup(c, added)

    def on_broker_failure(self, c: Controller, dead: Sequence[int]) -> None:
        """``onBrokerFailure`` / ``onReplicasBecomeOffline`` (§2.2)."""
        T, cl = self.T, self.cl
        T.ctl_broker_failure(c, dead)
        dead_set = set(dead)
        online = self.live() - cl.shutting_down()
        parts = [p for p in cl.partitions() if not p.topic.deleting]
        if self.L.has("election_algorithms"):
            # 1.1+: every partition whose leader is not online (incl. -1) is (re-)marked Offline.
            without_leader = [
                p
                for p in parts
                if p.has_leadership_info and p.leader not in online and p.state in (ONLINE_P, OFFLINE_P, NEW_P)
            ]
        else:
            without_leader = [p for p in parts if p.has_leadership_info and p.leader in dead_set]
        self.p_change(c, without_leader, OFFLINE_P)
        self.trigger_online(c)
        on_dead = [(p, r) for p in parts for r in p.replicas if r in dead_set]
        self.r_change(c, on_dead, OFFLINE_R)
        deleting = [
            (p, r)
            for p in cl.partitions()
            if p.topic.deleting
            for r in p.replicas
            if r in dead_set and p.rstates.get(r) not in (DEL_OK, None)
        ]
        if deleting:
            self.r_change(c, deleting, DEL_INELIGIBLE)
        if not without_leader:
            batch = Batch()
            batch.add_um(self.reachable(), None)
            self.send(c, batch)

    def broker_start(self, b: int) -> None:
        """The broker process starts and registers in ZooKeeper (server.log)."""
        br = self.cl.brokers[b]
        self.clock.tick(200, 900)
        br.alive = True
        br.forget()
        br.broker_epoch = self.cl.next_czxid()
        self.T.server_started(b, br.broker_epoch)

    def on_broker_startup(self, c: Controller, new: Sequence[int]) -> None:
        """``onBrokerStartup`` (§2.3)."""
        T, cl = self.T, self.cl
        T.ctl_broker_startup(c, new)
        new_set = set(new)
        for b in new_set:
            self.sim.broker_returned(b)
        batch = Batch()
        parts = [p for p in cl.partitions() if p.has_leadership_info]
        targets = new_set if self.sim.prof.at_least("2.2") else self.reachable()
        batch.add_um(targets, None)
        for p in parts:
            batch.add_um((), p)
        self.send(c, batch)
        items = [
            (p, r)
            for p in cl.partitions()
            for r in p.replicas
            if r in new_set and p.rstates.get(r) not in (DEL_OK, None)
        ]
        self.r_change(c, items, ONLINE_R)
        self.trigger_online(c)
        deleting = sorted({p.topic.name for p, r in items if p.topic.deleting})
        if deleting:
            self.resume_deletion(c, deleting)

    # ---- leader-driven ISR changes (§2.10) -------------------------------------------------------
    def isr_change(self, p: Partition, new_isr: Sequence[int]) -> None:
        """The leader shrinks/expands the ISR itself (no leader-epoch bump), the controller then
        sends UpdateMetadata (ISR-change notification before 2.7, AlterIsr from 2.7)."""
        old = list(p.isr)
        if list(new_isr) == old or p.leader < 0 or not self.cl.brokers[p.leader].alive:
            return
        self.clock.tick(5, 60)
        leader = p.leader
        p.leo += self.sim.rng.randint(200, 5000)
        p.isr = list(new_isr)
        p.zk_version += 1
        if len(new_isr) < len(old):
            ref = self.T.isr_shrink(leader, p, old, new_isr)
        else:
            ref = self.T.isr_expand(leader, p, old, new_isr)
        ref = self.T.isr_updated(leader, p) or ref
        p.hw = p.leo
        self.sim.note("isr_change", ref=ref, partition=p, old=old, new=list(new_isr))
        c = self.cl.controller
        if c is not None:
            self.clock.tick(10, 200)
            batch = Batch()
            batch.add_um(self.reachable(), p)
            self.send(c, batch)

    def catch_up(self, b: int) -> None:
        """Broker ``b`` has caught up everywhere: each live leader adds it back to the ISR."""
        for p in list(self.cl.partitions()):
            if (
                b in p.replicas
                and b not in p.isr
                and p.leader >= 0
                and p.leader != b
                and not p.topic.deleting
                and self.cl.brokers[p.leader].alive
                and p.rstates.get(b) in (ONLINE_R, NEW_R)
            ):
                self.isr_change(p, p.isr + [b])

    def lag_out(self, p: Partition, replicas: Sequence[int]) -> None:
        """Followers fall behind ``replica.lag.time.max.ms``: the leader drops them from the ISR."""
        self.isr_change(p, [r for r in p.isr if r not in set(replicas)])

    # ---- topics (§2.4, §2.8) -------------------------------------------------------------------
    def create_topic(
        self, name: str, assignment: Sequence[Sequence[int]], unclean: Optional[bool] = None, wrap_online=None
    ) -> Topic:
        """``onNewPartitionCreation``: New, replicas New, partitions Online, replicas Online.

        ``wrap_online(step)`` runs the New -> Online step (the lost-segment fault wraps it)."""
        c = self.cl.controller
        t = Topic(name, self.sim.new_uuid(), unclean)
        t.partitions = [Partition(t, i, list(reps)) for i, reps in enumerate(assignment)]
        self.cl.topics[name] = t
        self.clock.tick(50, 300)
        self.T.ctl_new_topic(c, name, t.partitions)
        self.p_change(c, t.partitions, NEW_P)
        self.r_change(c, [(p, r) for p in t.partitions for r in p.replicas], NEW_R)
        step = lambda: self.p_change(c, t.partitions, ONLINE_P, "offline")  # noqa: E731
        if wrap_online is None:
            step()
        else:
            wrap_online(step)
        self.r_change(c, [(p, r) for p in t.partitions for r in p.replicas], ONLINE_R)
        return t

    def delete_topic(self, name: str) -> None:
        """``TopicDeletionManager``: start, park dead replicas as ineligible, delete the live ones."""
        c, T = self.cl.controller, self.T
        t = self.cl.topics[name]
        self.clock.tick(50, 300)
        T.ctl_delete_start(c, [name])
        t.deleting = True
        if self.L.has("election_algorithms") and self.sim.prof.at_least("2.1"):
            # KAFKA-6753 (2.1.0): partitions Offline -> NonExistent at the start.
            self.p_change(c, t.partitions, OFFLINE_P)
            self.p_change(c, t.partitions, NON_EXISTENT_P)
        batch = Batch()
        for p in t.partitions:
            batch.add_um(self.reachable(), p)
        self.send(c, batch)
        self.resume_deletion(c, [name])

    def resume_deletion(self, c: Controller, names: Sequence[str]) -> None:
        """``resumeDeletions`` / ``onPartitionDeletion``: retry every replica not yet deleted."""
        T = self.T
        T.ctl_delete_handling(c, list(names))
        online = self.live() - self.cl.shutting_down()
        for name in names:
            t = self.cl.topics.get(name)
            if t is None:
                continue
            dead, retry = [], []
            for p in t.partitions:
                for r in list(p.rstates):
                    st = p.rstates[r]
                    if st == DEL_OK:
                        continue
                    (retry if r in online else dead).append((p, r))
            # "move dead replicas directly to failed state" - refused from OfflineReplica before 2.3 (KAFKA-8237).
            self.r_change(c, [(p, r) for p, r in dead if p.rstates.get(r) != DEL_INELIGIBLE], DEL_INELIGIBLE)
            self.r_change(c, retry, OFFLINE_R)
            self.r_change(c, retry, DEL_STARTED)
            # StopReplica(delete=true) answered without error: the replica is deleted.
            self.r_change(c, [(p, r) for p, r in retry if p.rstates.get(r) == DEL_STARTED], DEL_OK, send=False)
            if all(st == DEL_OK for p in t.partitions for st in p.rstates.values()):
                self._complete_deletion(c, t)
            else:
                self.sim.note(
                    "deletion_stuck",
                    topic=t.name,
                    replicas=[(p.name, r) for p in t.partitions for r, st in p.rstates.items() if st != DEL_OK],
                )

    def _complete_deletion(self, c: Controller, t: Topic) -> None:
        self.r_change(c, [(p, r) for p in t.partitions for r in list(p.rstates)], NON_EXISTENT_R, send=False)
        if not self.sim.prof.at_least("2.1"):
            self.p_change(c, t.partitions, OFFLINE_P)
            self.p_change(c, t.partitions, NON_EXISTENT_P)
        self.T.ctl_delete_done(c, t.name)
        del self.cl.topics[t.name]

    # ---- controlled shutdown (§2.7) ----------------------------------------------------------------
    def controlled_shutdown(self, b: int) -> None:
        """The broker asks the controller to move leadership away, then stops."""
        c, T, cl = self.cl.controller, self.T, self.cl
        self.clock.tick(100, 400)
        T.server_stopping_begin(b)
        br = cl.brokers[b]
        br.shutting_down = True
        T.ctl_controlled_shutdown(c, b, sorted(cl.shutting_down()), sorted(self.live() - cl.shutting_down()))
        acting = [
            p
            for p in cl.partitions()
            if b in p.replicas and len(p.replicas) > 1 and p.has_leadership_info and not p.topic.deleting
        ]
        led = [p for p in acting if p.leader == b]
        followed = [p for p in acting if p.leader != b]
        self.p_change(c, led, ONLINE_P, "controlled_shutdown")
        batch = Batch()
        for p in followed:
            batch.add_stop(b, p, False, self.reachable())
        self.send(c, batch)
        self.r_change(c, [(p, b) for p in followed], OFFLINE_R)
        self.clock.tick(200, 800)
        T.server_stopping_end(b, True)
        self.broker_crash(b)

    # ---- preferred replica election (§2.6) ---------------------------------------------------------
    def preferred_election(self, parts: Sequence[Partition], trigger: str = "AdminClientTriggered") -> None:
        c = self.cl.controller
        self.clock.tick(20, 200)
        parts = [p for p in parts if not self.L.preferred_skipped(p.replicas, p.leader)]
        self.T.ctl_preferred_start(c, parts, trigger)
        self.p_change(c, parts, ONLINE_P, "preferred")
        for p in parts:
            self.T.ctl_preferred_result(c, p, p.replicas[0], p.leader == p.replicas[0])

    def unclean_election(self, parts: Sequence[Partition]) -> None:
        """2.4+ admin ``ElectLeaders(UNCLEAN)`` (KIP-460): offline election allowing unclean."""
        c = self.cl.controller
        self.clock.tick(20, 200)
        self.T.ctl_unclean_election_start(c, parts)
        self.p_change(c, parts, ONLINE_P, "offline", unclean=True)

    # ---- partition reassignment (§2.5) ---------------------------------------------------------------
    def reassign_start(self, p: Partition, target: Sequence[int]) -> None:
        """Phase A / steps 1-4: widen the assignment, bump the leader epoch, add new replicas."""
        c, T = self.cl.controller, self.T
        target = list(target)
        ors = list(p.replicas)
        adding = [r for r in target if r not in ors]
        removing = [r for r in ors if r not in target]
        self.clock.tick(50, 300)
        T.ctl_reassign_start(c, p, target)
        era_b = self.sim.prof.at_least("2.4")
        if era_b:
            p.replicas = target + removing
            p.adding, p.removing = adding, removing
        else:
            p.replicas = ors + adding
        self._bump_and_send(c, p, is_new_for=adding)
        self.r_change(c, [(p, r) for r in adding], NEW_R)
        self.pending_reassign[p.name] = (target, ors)

    def _bump_and_send(self, c: Controller, p: Partition, is_new_for: Sequence[int] = ()) -> None:
        """``updateLeaderEpoch(AndSendRequest)``: same leader and ISR, leaderEpoch+1, LeaderAndIsr."""
        p.leader_epoch += 1
        p.zk_version += 1
        p.ctrl_epoch = c.epoch
        batch = Batch()
        reach = self.reachable()
        batch.add_lai([r for r in p.replicas if r not in is_new_for], p, False, reach)
        batch.add_lai(list(is_new_for), p, True, reach)
        self.send(c, batch)
        if self.sim.prof.at_least("2.4"):
            text = self.T.r.assignment(p.replicas, p.adding, p.removing)
        else:
            text = ",".join(map(str, p.replicas))
        self.T.sc_reassign_sent(c, p.snap(), p.leader, text)

    def reassign_complete(self, p: Partition) -> None:
        """Phase B / steps 5-12, once the target replicas are all in the ISR."""
        c = self.cl.controller
        target, ors = self.pending_reassign.pop(p.name)
        adding = [r for r in target if r not in ors]
        removing = [r for r in ors if r not in target]
        self.clock.tick(20, 200)
        self.r_change(c, [(p, r) for r in adding], ONLINE_R)
        p.replicas = list(target)
        p.adding, p.removing = [], []
        online = self.live() - self.cl.shutting_down()
        if p.leader not in target or p.leader not in online:
            self.T.ctl_reassign_leader(c, p, target, moves=True)
            self.p_change(c, [p], ONLINE_P, "reassign", target={p.name: list(target)})
        else:
            self.T.ctl_reassign_leader(c, p, target, moves=False)
            self._bump_and_send(c, p)
        self.r_change(c, [(p, r) for r in removing], OFFLINE_R)
        self.r_change(c, [(p, r) for r in removing], DEL_STARTED)
        self.r_change(c, [(p, r) for r in removing], DEL_OK, send=False)
        self.r_change(c, [(p, r) for r in removing], NON_EXISTENT_R, send=False)
        p.replicas = list(target)
        self.T.ctl_reassign_done(c, p)
        batch = Batch()
        batch.add_um(self.reachable(), p)
        self.send(c, batch)


# entity keys for Legality.previous_states
from kafka_forensics.statemachines.states import Entity as _Entity  # noqa: E402

_P, _R = _Entity.PARTITION, _Entity.REPLICA
__all__ = ["NO_LEADER", "STRATEGIES", "ZkOps"]
