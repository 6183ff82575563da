"""KRaft-mode operations (3.9.0, combined broker+controller nodes), deliberately simpler than ZK.

There are no partition/replica state machines in KRaft (kafka-state-machines.md §7): a partition is
a ``PartitionRegistration`` changed by ``PartitionChangeRecord``s (partitionEpoch+1 per record,
leaderEpoch+1 when the leader changes); brokers are fenced/unfenced by the active QuorumController
and apply metadata deltas (``Transitioning N partition(s) ..``). Elections follow
``PartitionChangeBuilder`` (ONLINE / PREFERRED / UNCLEAN, §7.2); 3.9 honours the unclean config
through the periodic ``maybeElectUncleanLeaders`` task (KAFKA-12670).
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

from kafka_forensics.core.errors import UsageError

from .metadata_log import MetadataLog
from .model import NO_LEADER, OFFLINE_P, ONLINE_P, Controller, Partition, Topic

METADATA_VERSION = 21  # 3.9-IV0, the default of 3.9.0 (SC:MetadataVersion.java@3.9.0-rc3)


class KraftOps:
    """Operations of the KRaft quorum for one simulation."""

    def __init__(self, sim) -> None:
        self.sim = sim
        self.T = sim.T
        self.cl = sim.cluster
        self.clock = sim.clock
        self.suppress_failover_offline = False
        self.registered: dict[int, bool] = {}  # broker -> fenced?
        self.incarnations: dict[int, str] = {}
        self.mlog = MetadataLog()  # the __cluster_metadata records (written when a scenario asks)
        self.last_isr_record = None  # the last AlterPartition record (a fault may drop it from the dump)

    # ---- helpers ------------------------------------------------------------------------------
    def _offset(self, n: int = 1) -> int:
        self.cl.metadata_offset += n
        return self.cl.metadata_offset

    def _rec(
        self, offset: int, rtype: Optional[str], data: Optional[dict] = None, version: int = 0, solo: bool = False
    ):
        """Keep the metadata record written at ``offset`` (no RNG, no clock: the logs stay the same)."""
        return self.mlog.add(offset, self.clock.now, self.cl.epoch, rtype, data, version, solo)

    def _nodes(self) -> list[int]:
        """Controller nodes that replay the metadata log (combined mode: every live node)."""
        return sorted(self.cl.live())

    def active_brokers(self) -> set[int]:
        return {
            b
            for b, fenced in self.registered.items()
            if not fenced and self.cl.brokers[b].alive and not self.cl.brokers[b].shutting_down
        }

    def _set(
        self, p: Partition, leader: int, isr: Sequence[int], recovery: Optional[int] = None, solo: bool = False
    ) -> bool:
        """Apply one PartitionChangeRecord (no record for a no-op, §7.2)."""
        isr = list(isr)
        if leader == p.leader and isr == p.isr:
            return False
        change = MetadataLog.partition_change(
            p, isr if isr != p.isr else None, leader if leader != p.leader else None, recovery
        )
        if leader != p.leader:
            p.leader_epoch += 1
        p.leader = leader
        p.isr = isr
        p.zk_version += 1
        p.state = ONLINE_P if leader >= 0 else OFFLINE_P
        self._rec(self._offset(), "PARTITION_CHANGE_RECORD", change, 1, solo)
        return True

    def apply(self, parts: Sequence[Partition]) -> None:
        """Every running broker applies the metadata delta (ReplicaManager.applyDelta): every changed
        partition it hosts is a local leader or follower change (``LocalReplicaChanges``), and
        Partition.makeLeader/makeFollower skip one whose leader epoch is not new with a "Skipped the
        become-leader/-follower" line (Partition.scala@3.9.0-rc3:803, :880) - an ISR change or a
        fenced replica leaves the leader epoch alone. Fetchers restart only for a new leader epoch
        (ReplicaManager.applyLocalFollowersDelta@3.9.0-rc3:2843, :2868)."""
        T = self.T
        for b in sorted(self.cl.live()):
            br = self.cl.brokers[b]
            leaders, followers = [], []
            for p in parts:
                if b not in p.replicas:
                    continue
                known = br.leader_epochs.get(p.name)
                item = (p, known is None, br.leaders.get(p.name), -1 if known is None else known)
                (leaders if p.leader == b else followers).append(item)
            if not leaders and not followers:
                continue
            self.clock.tick(1, 5)
            if leaders:
                T.sc_transitioning(b, len(leaders), "leaders")
                for p, new, prev_leader, prev_epoch in leaders:
                    if new:
                        T.sc_creating(b, p)
                    if prev_epoch == p.leader_epoch:
                        T.sc_leader_skipped(b, p, prev_epoch)
                    else:
                        T.sc_leader(b, p, prev_leader, prev_epoch)
            if followers:
                T.sc_transitioning(b, len(followers), "followers")
                restarted = 0
                for p, new, prev_leader, prev_epoch in followers:
                    if new:
                        T.sc_creating(b, p)
                    if prev_epoch == p.leader_epoch:
                        T.sc_follower_skipped(b, p, prev_epoch)
                    else:
                        T.sc_follower(b, p, prev_leader, prev_epoch)
                        restarted += 1
                if restarted:
                    T.sc_fetchers(b, restarted, False)
                    T.sc_fetchers(b, restarted, True)
            for p, *_ in leaders + followers:
                br.leader_epochs[p.name] = p.leader_epoch
                br.leaders[p.name] = p.leader
            for p, *_ in leaders:
                if p.recovering:
                    self.clock.tick(5, 40)
                    T.sc_b_recovered(b, p)
                    p.recovering = False
                    p.zk_version += 1
                    self._rec(self._offset(), "PARTITION_CHANGE_RECORD", MetadataLog.partition_change(p, recovery=0), 1)

    @staticmethod
    def _elect_any(p: Partition, isr: Sequence[int], acceptable: set[int]) -> tuple[int, bool]:
        """PartitionChangeBuilder.electAnyLeader@3.9.0-rc3: keep a valid leader, else the first
        replica (in replica order) in the target ISR that is acceptable; else, for a topic with
        unclean.leader.election.enable, the first acceptable replica (an unclean election).
        Returns (leader, unclean)."""
        if p.leader in acceptable and p.leader in isr:
            return p.leader, False
        clean = next((r for r in p.replicas if r in isr and r in acceptable), NO_LEADER)
        if clean >= 0 or not p.topic.unclean:
            return clean, False
        unclean = next((r for r in p.replicas if r in acceptable), NO_LEADER)
        return unclean, unclean >= 0

    def _generate(
        self, c: Controller, handler: str, parts: Sequence[Partition], remove: int = NO_LEADER, add: int = NO_LEADER
    ) -> list[tuple]:
        """ReplicationControlManager.generateLeaderAndIsrUpdates@3.9.0-rc3:1891: ``remove`` leaves the
        target ISR and is never an acceptable leader, ``add`` is acceptable though still fenced; every
        partition of a topic with unclean.leader.election.enable is built with Election.UNCLEAN, so a
        leaderless one takes any acceptable replica right here - with PartitionChangeBuilder's
        "Setting new leader ... using an unclean election" (INFO), and no periodic-task line. The last
        ISR member stays in the ISR. Returns the planned changes; "{handler}: changing N partition(s)"
        counts them."""
        acceptable = (self.active_brokers() | ({add} if add >= 0 else set())) - {remove}
        plans = []
        for p in parts:
            isr = [r for r in p.isr if r != remove] or list(p.isr)
            leader, unclean = self._elect_any(p, isr, acceptable)
            builder = None
            if unclean:
                isr = [leader]
                builder = self.T.ctl_unclean_builder(c.id, p, leader)
            if leader != p.leader or isr != p.isr:
                plans.append((p, leader, isr, unclean, builder))
        if plans:
            self.T.ctl_changing(c.id, handler, len(plans))
        return plans

    def _commit(self, c: Controller, plans: list[tuple], trigger=None) -> list[Partition]:
        """Replay the planned PartitionChangeRecords (an unclean one logs "UNCLEAN partition change",
        PartitionRegistration.maybeLogPartitionChange@3.9.0-rc3); returns the changed partitions."""
        changed = []
        for p, leader, isr, unclean, builder in plans:
            if not unclean:
                if self._set(p, leader, isr):
                    changed.append(p)
                continue
            old_isr, old_leader, old_le, old_pe = list(p.isr), p.leader, p.leader_epoch, p.zk_version
            self._set(p, leader, isr, recovery=1)
            p.recovering = True
            ref = self.T.ctl_unclean_change(c.id, p, old_isr, old_leader, old_le, old_pe)
            self.sim.note(
                "unclean",
                ref=ref,
                ctl_ref=trigger or builder,
                extra=builder,
                partition=p,
                controller=c,
                old_isr=old_isr,
            )
            changed.append(p)
        return changed

    # ---- quorum -------------------------------------------------------------------------------
    def elect(self, bid: int) -> Controller:
        """Node ``bid`` wins the Raft election: it becomes the active controller."""
        cl, T = self.cl, self.T
        self.clock.tick(100, 400)
        old = cl.controller
        cl.epoch += 1
        offset = self._offset()
        if old is None:  # bootstrap: metadata.version is the first record of a new cluster
            self.mlog.add(
                offset - 1,
                self.clock.now,
                cl.epoch,
                "FEATURE_LEVEL_RECORD",
                {"name": "metadata.version", "featureLevel": METADATA_VERSION},
            )
        self._rec(offset, None)  # the new Raft leader's LEADER_CHANGE control record
        c = Controller(bid, cl.epoch, cl.epoch)
        for n in self._nodes():
            if old is not None and n == old.id and n != bid:
                T.ctl_renounce(n, old.epoch, c.epoch, bid, offset - 1)
            elif n != bid:
                T.ctl_new_epoch(n, c.epoch, bid)
        ref = T.ctl_active(bid, c.epoch, offset)
        cl.controller = c
        self.sim.note("controller_elected", ref=ref, controller=c)
        dead = [b for b, fenced in sorted(self.registered.items()) if not fenced and not cl.brokers[b].alive]
        for b in dead:
            self._fence(c, b)
        for b in sorted(cl.live()):
            if b not in self.registered:
                self._register(c, b)
        return c

    def resign(self, bid: int, session_expired: bool) -> None:
        """The active controller steps down; the renunciation is logged when the new epoch arrives."""
        self.clock.tick(1, 5)

    # ---- brokers --------------------------------------------------------------------------------
    def broker_start(self, b: int) -> None:
        br = self.cl.brokers[b]
        self.clock.tick(200, 900)
        br.alive = True
        br.forget()
        self.registered.pop(b, None)
        self.T.server_started(b, 0)

    def broker_crash(self, b: int) -> None:
        br = self.cl.brokers[b]
        br.alive = False
        br.forget()
        if self.cl.controller is not None and self.cl.controller.id == b:
            self.cl.controller = None

    def _register(self, c: Controller, b: int) -> None:
        T = self.T
        br = self.cl.brokers[b]
        self.clock.tick(5, 50)
        br.broker_epoch = self._offset()
        incarnation = self.sim.new_uuid()
        previous = self.incarnations.get(b)
        self.incarnations[b] = incarnation
        self._rec(
            br.broker_epoch, "REGISTER_BROKER_RECORD", MetadataLog.register_broker(b, incarnation, br.broker_epoch), 3
        )
        T.ctl_register(c.id, b, incarnation, br.broker_epoch, True, previous)
        for n in self._nodes():
            if n != c.id:
                T.ctl_register(n, b, incarnation, br.broker_epoch, False, previous)
        self.registered[b] = True
        self._unfence(c, b)

    def _unfence(self, c: Controller, b: int) -> None:
        T, br = self.T, self.cl.brokers[b]
        self.clock.tick(200, 900)
        T.ctl_unfence_granted(c.id, b, br.broker_epoch)
        # handleBrokerUnfenced@3.9.0-rc3:1339: every leaderless partition, ``b`` acceptable already.
        leaderless = [p for p in self.cl.partitions() if p.leader < 0 and not p.topic.deleting]
        plans = self._generate(c, "handleBrokerUnfenced", leaderless, add=b)
        self.registered[b] = False
        self._rec(
            self._offset(),
            "BROKER_REGISTRATION_CHANGE_RECORD",
            MetadataLog.registration_change(b, br.broker_epoch, -1, 0),
            2,
        )
        for n in self._nodes():
            T.ctl_registration_change(n, b, br.broker_epoch, -1, 0)
        self.apply(self._commit(c, plans))

    def _fence(self, c: Controller, b: int) -> None:
        T = self.T
        self.clock.tick(1, 10)
        T.ctl_fencing(c.id, b)
        self.registered[b] = True
        affected = [p for p in self.cl.partitions() if (b in p.isr or p.leader == b) and not p.topic.deleting]
        plans = self._generate(c, "handleBrokerFenced", affected, remove=b)
        self._rec(
            self._offset(),
            "BROKER_REGISTRATION_CHANGE_RECORD",
            MetadataLog.registration_change(b, self.cl.brokers[b].broker_epoch, 1, 0),
            2,
        )
        for n in self._nodes():
            T.ctl_registration_change(n, b, self.cl.brokers[b].broker_epoch, 1, 0)
        self.apply(self._commit(c, plans))

    def broker_change(
        self, c: Controller, added: Iterable[int] = (), deleted: Iterable[int] = (), bounced: Iterable[int] = ()
    ) -> None:
        """Heartbeat timeouts fence ``deleted``; ``added`` brokers register and are unfenced."""
        for b in sorted(deleted):
            if not self.registered.get(b, True):
                self._fence(c, b)
        for b in sorted(added):
            if b not in self.registered:
                self._register(c, b)
            elif self.registered[b]:
                self._unfence(c, b)
        self._maybe_unclean(c)

    def _maybe_unclean(self, c: Controller) -> None:
        """The periodic ``maybeElectUncleanLeaders`` (ReplicationControlManager.java@3.9.0-rc3:1684-1718,
        KAFKA-12670): each leaderless partition of a topic with unclean.leader.election.enable gets
        an UNCLEAN election - "Triggering unclean leader election" (ERROR) when a replica is
        acceptable, else "Cannot trigger ...: ELIGIBLE_LEADERS_NOT_AVAILABLE" (WARN). Fencing and
        unfencing elect unclean leaders themselves (``_generate``), so a leaderless partition left
        here usually has every replica down, as in the recorded real 3.9/4.1 incidents."""
        T = self.T
        chosen = [p for p in self.cl.partitions() if p.leader < 0 and p.topic.unclean and not p.topic.deleting]
        if not chosen:
            return
        self.clock.sleep(self.sim.rng.randint(1000, 5000))
        changed = []
        for p in chosen:
            leader, unclean = self._elect_any(p, p.isr, self.active_brokers())
            if leader < 0:
                T.ctl_unclean_failed(c.id, p, "ELIGIBLE_LEADERS_NOT_AVAILABLE")
                continue
            builder = T.ctl_unclean_builder(c.id, p, leader) if unclean else None
            trigger = T.ctl_unclean_trigger(c.id, p)
            changed += self._commit(c, [(p, leader, [leader] if unclean else p.isr, unclean, builder)], trigger)
        T.ctl_periodic(c.id, "maybeElectUncleanLeaders", len(changed), self.sim.rng.randint(50, 900))
        self.apply(changed)

    def fault_elect_fenced(self, p: Partition, b: int) -> None:
        """Fault: a controller bug writes fenced broker ``b`` as leader (LeaderAcceptor bypassed)."""
        self.clock.tick(5, 50)
        if self._set(p, b, p.isr if b in p.isr else p.isr + [b]):
            self.apply([p])

    # ---- ISR changes through AlterPartition ------------------------------------------------------
    def isr_change(self, p: Partition, new_isr: Sequence[int]) -> None:
        old = list(p.isr)
        if list(new_isr) == old or p.leader < 0 or not self.cl.brokers[p.leader].alive:
            return
        self.clock.tick(5, 60)
        p.leo += self.sim.rng.randint(200, 5000)
        if len(new_isr) < len(old):
            self.T.isr_shrink(p.leader, p, old, new_isr)
        change = MetadataLog.partition_change(p, isr=new_isr)
        p.isr = list(new_isr)
        p.zk_version += 1
        self.last_isr_record = self._rec(self._offset(), "PARTITION_CHANGE_RECORD", change, 1, solo=True)
        ref = self.T.isr_updated(p.leader, p)
        p.hw = p.leo
        self.sim.note("isr_change", ref=ref, partition=p, old=old, new=list(new_isr))
        self.apply([p])  # the replicas apply the PartitionChangeRecord too (skip lines: same leader epoch)

    def lag_out(self, p: Partition, replicas: Sequence[int]) -> None:
        self.isr_change(p, [r for r in p.isr if r not in set(replicas)])

    def catch_up(self, b: int) -> None:
        for p in list(self.cl.partitions()):
            if b in p.replicas and b not in p.isr and p.leader >= 0 and p.leader != b and self.cl.brokers[b].alive:
                self.isr_change(p, p.isr + [b])

    # ---- topics -----------------------------------------------------------------------------------
    def create_topic(
        self, name: str, assignment: Sequence[Sequence[int]], unclean: Optional[bool] = None, wrap_online=None
    ) -> Topic:
        c, T = self.cl.controller, self.T
        t = Topic(name, self.sim.new_uuid(), unclean)
        t.partitions = [Partition(t, i, list(reps)) for i, reps in enumerate(assignment)]
        ok = self.active_brokers()
        for p in t.partitions:
            if not any(r in ok for r in p.replicas):
                raise UsageError(f"KRaft rejects {p.name}: no replica of {p.replicas} is active")
        self.cl.topics[name] = t
        self.clock.tick(50, 300)
        T.ctl_topic_created(c.id, name, len(assignment), len(assignment[0]))
        last = self._offset(1 + len(t.partitions))
        for p in t.partitions:
            p.isr = [r for r in p.replicas if r in ok]
            p.leader, p.leader_epoch, p.zk_version, p.state = p.isr[0], 0, 0, ONLINE_P
        first = last - len(t.partitions)
        self._rec(first, "TOPIC_RECORD", {"name": name, "topicId": t.topic_id})
        for p in t.partitions:
            self._rec(first + 1 + p.index, "PARTITION_RECORD", MetadataLog.partition_record(p), 1)
        for n in self._nodes():
            T.ctl_topic_replayed(n, name, t.topic_id)
            for p in t.partitions:
                T.ctl_partition_replayed(n, p)
        self.apply(t.partitions)
        return t

    def delete_topic(self, name: str) -> None:
        T, t = self.T, self.cl.topics[name]
        self.clock.tick(50, 300)
        self._rec(self._offset(), "REMOVE_TOPIC_RECORD", {"topicId": t.topic_id})
        for n in self._nodes():
            T.ctl_remove_topic(n, name, t.topic_id)
        for b in sorted(self.cl.live()):
            hosted = [p for p in t.partitions if b in p.replicas]
            if hosted:
                T.sc_deleting(b, len(hosted))
                br = self.cl.brokers[b]
                for p in hosted:
                    br.leader_epochs.pop(p.name, None)
                    br.leaders.pop(p.name, None)
        del self.cl.topics[name]

    # ---- controlled shutdown, preferred election -----------------------------------------------------
    def controlled_shutdown(self, b: int) -> None:
        c, T, br = self.cl.controller, self.T, self.cl.brokers[b]
        self.clock.tick(100, 400)
        T.server_stopping_begin(b)
        T.ctl_cs_granted(c.id, b)
        br.shutting_down = True
        affected = [p for p in self.cl.partitions() if (b in p.isr or p.leader == b) and not p.topic.deleting]
        plans = self._generate(c, f"enterControlledShutdown[{b}]", affected, remove=b)
        self._rec(
            self._offset(),
            "BROKER_REGISTRATION_CHANGE_RECORD",
            MetadataLog.registration_change(b, br.broker_epoch, 0, 1),
            2,
        )
        for n in self._nodes():
            T.ctl_registration_change(n, b, br.broker_epoch, 0, 1)
        self.apply(self._commit(c, plans))
        self.clock.tick(500, 3000)
        cs_offset = self.cl.metadata_offset
        noop = self._offset()
        T.ctl_cs_done(c.id, b, noop, cs_offset)
        self._rec(noop, "NO_OP_RECORD")
        self._rec(
            self._offset(),
            "BROKER_REGISTRATION_CHANGE_RECORD",
            MetadataLog.registration_change(b, br.broker_epoch, 1, 0),
            2,
        )
        for n in self._nodes():
            T.ctl_registration_change(n, b, br.broker_epoch, 1, -1)
        self.registered[b] = True
        T.server_stopping_end(b)
        self.broker_crash(b)

    def preferred_election(self, parts: Sequence[Partition], trigger: str = "AutoTriggered") -> None:
        """``maybeBalancePartitionLeaders``: PREFERRED election where the preferred replica is valid."""
        c = self.cl.controller
        self.clock.tick(20, 200)
        ok = self.active_brokers()
        changed = [
            p
            for p in parts
            if p.replicas
            and p.leader != p.replicas[0]
            and p.replicas[0] in ok
            and p.replicas[0] in p.isr
            and self._set(p, p.replicas[0], p.isr)
        ]
        self.T.ctl_periodic(c.id, "maybeBalancePartitionLeaders", len(changed), self.sim.rng.randint(100, 9000))
        self.apply(changed)

    def reassign_start(self, p: Partition, target: Sequence[int]) -> None:
        raise UsageError("the KRaft simulation does not model partition reassignment")

    reassign_complete = reassign_start
