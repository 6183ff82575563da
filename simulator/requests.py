"""Controller-to-broker requests: the controller's batch, its send, and how each broker handles it.

Mirrors ``ControllerBrokerRequestBatch`` (partition states are captured when queued, every
LeaderAndIsr also queues an UpdateMetadata for all live brokers, requests go LeaderAndIsr ->
UpdateMetadata -> StopReplica per destination with a per-destination correlation id) and
``ReplicaManager``'s checks on the broker (stale controller epoch rejects the whole request, a
leader epoch that is not higher skips the partition). The broker's acceptance is what makes
stale-epoch rejections and "leader epoch matches" lines appear exactly where Kafka prints them.
"""

from __future__ import annotations

from typing import Iterable, Optional

from .model import LEADER_DURING_DELETE, Controller, Partition, Snap
from .templates_zk import BrokerItem


class Batch:
    """One ``newBatch() .. sendRequestsToBrokers()`` round."""

    __slots__ = ("lai", "stop", "um", "um_brokers")

    def __init__(self) -> None:
        self.lai: dict[int, dict[str, tuple]] = {}
        self.um: dict[str, Snap] = {}
        self.um_brokers: set[int] = set()
        self.stop: dict[int, dict[str, tuple]] = {}

    def add_lai(self, brokers: Iterable[int], p: Partition, is_new: bool, reachable: set[int]) -> None:
        s = p.snap()
        for b in brokers:
            if b in reachable:
                self.lai.setdefault(b, {})[p.name] = (s, is_new)
        self.add_um(reachable, p, s)

    def add_um(self, brokers: Iterable[int], p: Optional[Partition], s: Optional[Snap] = None) -> None:
        self.um_brokers.update(brokers)
        if p is not None:
            if p.topic.deleting:
                s = p.snap(leader=LEADER_DURING_DELETE)
            self.um[p.name] = s or p.snap()

    def add_stop(self, b: int, p: Partition, delete: bool, reachable: set[int]) -> None:
        if b in reachable:
            self.stop.setdefault(b, {})[p.name] = (p.snap(), delete)

    def empty(self) -> bool:
        return not (self.lai or self.um or self.um_brokers or self.stop)


class RequestFlow:
    """Sends a batch as controller ``c`` and lets every live broker handle what it receives."""

    def __init__(self, sim) -> None:
        self.sim = sim

    def send(self, c: Controller, batch: Batch) -> None:
        sim = self.sim
        T, cl, clock = sim.T, sim.cluster, sim.clock
        if batch.empty():
            return
        T.r.memo.clear()
        lai = [(b, list(batch.lai[b].values())) for b in sorted(batch.lai)]
        for b, entries in lai:
            n_lead = 0
            for s, is_new in entries:
                T.sc_send_lai(c, b, s, is_new)
                n_lead += s[2] == b
            T.sc_send_lai_summary(c, b, n_lead, len(entries) - n_lead)
        um_brokers = sorted(batch.um_brokers)
        um = list(batch.um.values())
        if um_brokers:
            for s in um:
                T.sc_send_um(c, um_brokers, s)
            T.sc_send_um_summary(c, um_brokers, len(um))
        stops = [(b, list(batch.stop[b].values())) for b in sorted(batch.stop)]
        for b, items in stops:
            for s, delete in items:
                T.sc_send_stop(c, b, s, delete)
            T.sc_send_stop_summary(c, b, len(items))
            for delete in (True, False):
                chosen = [s for s, d in items if d is delete]
                if chosen:
                    T.ctl_stop_replica_batch(c, b, delete, chosen)
        # Delivery: each destination handles its requests in order (LeaderAndIsr, UpdateMetadata, StopReplica).
        for b, entries in lai:
            clock.tick(1, 4)
            self.broker_lai(b, c, c.next_corr(b), entries)
        for b in um_brokers:
            if cl.brokers[b].alive:
                clock.tick(0, 2)
                self.broker_um(b, c, c.next_corr(b), um)
        for b, items in stops:
            clock.tick(0, 2)
            self.broker_stop(b, c, c.next_corr(b), items)
        T.r.memo.clear()

    # ---- broker side --------------------------------------------------------------------------
    def _stale(self, b: int, c: Controller, corr: int, api: str) -> bool:
        br = self.sim.cluster.brokers[b]
        if c.epoch < br.known_ctrl_epoch:
            ref = self.sim.T.sc_b_stale_controller(b, c, corr, br.known_ctrl_epoch, api)
            self.sim.note("stale_controller", ref=ref, broker=b, controller=c.id, epoch=c.epoch, api=api)
            self.sim.T.sc_response(c, b, api, corr, (), True)
            return True
        br.known_ctrl_epoch = c.epoch
        return False

    def broker_lai(self, b: int, c: Controller, corr: int, entries: list[tuple]) -> None:
        sim = self.sim
        T, br = sim.T, sim.cluster.brokers[b]
        if not br.alive:
            return
        T.sc_b_lai_begin(b, c, corr, [BrokerItem((s, n, 0, None)) for s, n in entries])
        if self._stale(b, c, corr, "LEADER_AND_ISR"):
            return
        leaders, followers = [], []
        for s, is_new in entries:
            current = br.leader_epochs.get(s.name, -1)
            if s[3] <= current:
                T.sc_b_stale_leader_epoch(b, c, corr, s, current)
                continue
            item = BrokerItem((s, is_new, current, br.leaders.get(s.name)))
            (leaders if s[2] == b else followers).append(item)
        if leaders:
            T.sc_b_become_leader(b, c, corr, leaders)
        if followers:
            T.sc_b_become_follower(b, c, corr, followers)
        for it in leaders + followers:
            s = it[0]
            br.leader_epochs[s.name] = s[3]
            br.leaders[s.name] = s[2]
            if s[10] and s[2] == b:
                sim.after_recovering_leader(b, s)
        T.sc_b_lai_end(b, c, corr, len(entries))
        T.sc_response(c, b, "LEADER_AND_ISR", corr, [s for s, _ in entries], False)

    def broker_um(self, b: int, c: Controller, corr: int, snaps: list[Snap]) -> None:
        if self._stale(b, c, corr, "UPDATE_METADATA"):
            return
        cached = [s for s in snaps if s[2] != LEADER_DURING_DELETE]
        deleted = [s for s in snaps if s[2] == LEADER_DURING_DELETE]
        self.sim.T.sc_b_um(b, c, corr, cached, deleted)
        self.sim.T.sc_response(c, b, "UPDATE_METADATA", corr, snaps, False)

    def broker_stop(self, b: int, c: Controller, corr: int, items: list[tuple]) -> None:
        br = self.sim.cluster.brokers[b]
        if not br.alive or self._stale(b, c, corr, "STOP_REPLICA"):
            return
        self.sim.T.sc_b_stop(b, c, corr, items)
        for s, delete in items:
            if delete:
                br.leader_epochs.pop(s.name, None)
                br.leaders.pop(s.name, None)
        self.sim.T.sc_response(c, b, "STOP_REPLICA", corr, [s for s, _ in items], False)
