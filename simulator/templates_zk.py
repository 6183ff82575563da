"""ZooKeeper-mode templates every era writes the same way, from 0.10.2 on: the base of each era's class.

``Zk010Templates`` (0.10.2) and ``Zk11Templates`` (1.1, subclassed by 2.4 -> 2.6 -> 3.x) both build on
``ZkTemplates``, which builds on ``TemplatesBase``; an era overrides only what its Kafka prints
differently (each override cites the source it was read from).
"""

from __future__ import annotations

from typing import Sequence

from .model import Controller, Partition
from .render import bracket_csv, csv
from .templates_base import DEBUG, ERROR, INFO, KAFKA_CONTROLLER, TRACE, WARN, TemplatesBase


class BrokerItem(tuple):
    """One partition of a request as a broker handles it: (snap, is_new, prev_epoch, prev_leader)."""

    __slots__ = ()
    snap = property(lambda s: s[0])
    is_new = property(lambda s: s[1])
    prev_epoch = property(lambda s: s[2])
    prev_leader = property(lambda s: s[3])


class ZkTemplates(TemplatesBase):
    """Lines a ZooKeeper controller and its brokers print alike in every era written here."""

    @staticmethod
    def kc(c_id: int) -> str:
        """The controller's controller.log prefix: each era has its own."""
        raise NotImplementedError

    TDM_PREFIX = "[Topic Deletion Manager {c}], "  # comma until 2.2.2, none from 2.3.1

    STRATEGY_ARGS = ""  # "(false)" from 2.4 (OfflinePartitionLeaderElectionStrategy(allowUnclean))

    # ---- prefixes --------------------------------------------------------------------------
    @staticmethod
    def ce(c: Controller) -> str:
        return f"[Controller id={c.id} epoch={c.epoch}] "

    def ctl_elected(self, c):
        # "C successfully elected as the controller" (1.0.2-2.0.1) then "Epoch incremented to E"
        # (KafkaController.incrementControllerEpoch@1.1.1, kafka-state-machines.md §2.1).
        ref = self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}{c.id} successfully elected as the controller",
            "controller_elected",
            {"controller_id": c.id},
        )
        self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}Epoch incremented to {c.epoch}",
            "controller_epoch_incremented",
            {"controller_epoch": c.epoch},
        )
        return ref

    def ctl_context(self, c, live, topics):
        o, k = self.o, self.kc(c.id)
        o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{k}Currently active brokers in the cluster: {self.r.iset(live)}",
            "live_brokers",
            {"live_brokers": sorted(live)},
        )
        o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{k}Currently shutting brokers in the cluster: {self.r.mset(())}",
            "shutting_down_brokers",
        )
        o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{k}Current list of topics in the cluster: {self.r.topic_set(topics)}",
            "controller_topics",
        )
        o.ctl(c.id, INFO, KAFKA_CONTROLLER, f"{k}Fetching topic deletions in progress", "controller_init_step")
        o.ctl(c.id, INFO, KAFKA_CONTROLLER, f"{k}List of topics to be deleted: ", "controller_context")
        o.ctl(c.id, INFO, KAFKA_CONTROLLER, f"{k}List of topics ineligible for deletion: ", "controller_context")
        o.ctl(c.id, INFO, KAFKA_CONTROLLER, f"{k}Initializing topic deletion manager", "controller_init_step")
        o.ctl(c.id, INFO, KAFKA_CONTROLLER, f"{k}Sending update metadata request", "controller_init_step")

    def ctl_offline_replicas_start(self, c):
        """2.3+: "Triggering offline replica state changes" (KAFKA-3143)."""

    def ctl_broker_failure(self, c, dead):
        self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}Broker failure callback for {csv(sorted(dead))}",
            "broker_failure",
            {"deleted_brokers": sorted(dead)},
        )

    def ctl_broker_startup(self, c, new):
        self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}New broker startup callback for {csv(sorted(new))}",
            "broker_startup",
            {"added_brokers": sorted(new)},
        )

    def ctl_controlled_shutdown(self, c, b, sd, live):
        o, k = self.o, self.kc(c.id)
        o.ctl(c.id, INFO, KAFKA_CONTROLLER, f"{k}Shutting down broker {b}", "controlled_shutdown", {"target_broker": b})
        o.ctl(
            c.id, DEBUG, KAFKA_CONTROLLER, f"{k}All shutting down brokers: {csv(sorted(sd))}", "shutting_down_brokers"
        )
        o.ctl(c.id, DEBUG, KAFKA_CONTROLLER, f"{k}Live brokers: {csv(sorted(live))}", "live_brokers")

    def _assignment_map(self, parts: Sequence[Partition]) -> str:
        # TopicChangeHandler@1.1.1: partition -> Seq[Int] (a Vector in 2.12 builds).
        return "Map(" + ", ".join(f"{p.name} -> Vector({', '.join(map(str, p.replicas))})" for p in parts) + ")"

    def ctl_reassign_start(self, c, p, target):
        # "Handling reassignment of partition .. to new replicas .." (0.8.2.2-2.3.1).
        self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}Handling reassignment of partition {self.r.tap(p.topic.name, p.index)} "
            f"to new replicas {csv(target)}",
            "reassignment_started",
            {"topic": p.topic.name, "partition": p.index},
        )

    def ctl_reassign_leader(self, c, p, target, moves: bool, alive: bool = True):
        # KafkaController.moveReassignedPartitionLeaderIfRequired (INFO, 0.8.2-HEAD).
        name = self.r.tap(p.topic.name, p.index)
        if moves:
            text = (
                f"Leader {p.leader} for partition {name} being reassigned, is not in the new list of replicas "
                f"{csv(target)}. Re-electing leader"
            )
        else:
            text = (
                f"Leader {p.leader} for partition {name} being reassigned, is already in the new list of replicas "
                f"{csv(target)} and is alive"
            )
        self.o.ctl(c.id, INFO, KAFKA_CONTROLLER, f"{self.kc(c.id)}{text}", "reassignment_progress")

    def ctl_preferred_start(self, c, parts, trigger):
        # "Starting preferred replica leader election for partitions .." (0.8.2.2-2.3.1).
        self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}Starting preferred replica leader election for partitions "
            f"{','.join(self.r.tap(p.topic.name, p.index) for p in parts)}",
            "preferred_election_started",
        )

    def ctl_preferred_result(self, c, p, preferred, ok):
        if ok:
            self.o.ctl(
                c.id,
                INFO,
                KAFKA_CONTROLLER,
                f"{self.kc(c.id)}Partition {self.r.tap(p.topic.name, p.index)} completed preferred replica "
                f"leader election. New leader is {preferred}",
                "preferred_election_completed",
                {"topic": p.topic.name, "partition": p.index, "leader": preferred},
            )
        else:
            # 1.1.1 only: "... failed to complete preferred replica leader election. Leader is L".
            self.o.ctl(
                c.id,
                WARN,
                KAFKA_CONTROLLER,
                f"{self.kc(c.id)}Partition {p.name} failed to complete preferred replica leader election. "
                f"Leader is {p.leader}",
                "preferred_election_failed",
            )

    def ctl_unclean_election_start(self, c, parts):
        """Admin unclean elections exist from 2.4 (KIP-460)."""
        from kafka_forensics.core.errors import UsageError

        raise UsageError(f"Kafka {self.p.tag} has no admin unclean leader election (KIP-460 is 2.4+)")

    def ctl_stop_replica_batch(self, c, b, delete, snaps):
        # ControllerBrokerRequestBatch (no prefix), DEBUG, 0.8.1-2.5.1.
        text = ",".join(f"[Topic={s[0]},Partition={s[1]},Replica={b}]" for s in snaps)
        self.o.ctl(
            c.id,
            DEBUG,
            "kafka.controller.ControllerBrokerRequestBatch",
            f"The stop replica request (delete = {'true' if delete else 'false'}) sent to broker {b} is {text}",
            "send_stop_replica",
        )

    def ctl_moved(self, c, event):
        """2.1+ only (epoch zkVersion fencing, KAFKA-6082)."""
        return None

    # ---- state-change.log, controller side ----------------------------------------------------
    def _pfields(self, c, p, frm, to):
        return {
            "topic": p.topic.name,
            "partition": p.index,
            "from_state": frm,
            "to_state": to,
            "controller_epoch": c.epoch,
        }

    LVL_CHANGED = TRACE  # INFO from 2.6.3 for the New and Online shapes

    def sc_isr_removed(self, c, p, r):
        """2.6.3+ INFO only."""
        return None

    def sc_send_lai_summary(self, c, b, n_lead, n_follow):
        """2.6.3+ INFO only."""

    def sc_send_um_summary(self, c, brokers, n):
        """2.6.3+ INFO only."""

    def sc_send_stop(self, c, b, s, delete):
        """2.6.3+ only (controller.log DEBUG before)."""

    def sc_send_stop_summary(self, c, b, n):
        """2.6.3+ only."""

    def stale_response(self, api):
        return "{error_code=11,partitions=[]}" if api != "UPDATE_METADATA" else "{error_code=11}"

    def sc_lai_error(self, c, b):
        # KafkaController@1.0.2-2.4.1 "[Controller id=C] Received error in LeaderAndIsr response .." (ERROR).
        self.o.sc(
            c.id,
            ERROR,
            f"{self.kc(c.id)}Received error in LeaderAndIsr response "
            f"LeaderAndIsrResponse(responses={{}}, error=STALE_CONTROLLER_EPOCH) from broker {b}",
            "controller_response_error",
        )

    # ---- state-change.log, broker side ------------------------------------------------------
    @staticmethod
    def bp(b: int) -> str:
        return f"[Broker id={b}] "

    def sc_b_follower_skipped(self, b, c, corr, s):
        # ReplicaManager@1.0.2-3.2.3 INFO.
        self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}Skipped the become-follower state change after marking its partition as "
            f"follower with correlation id {corr} from controller {c.id} epoch {c.epoch} for partition {s.name} "
            f"(last update controller epoch {s[6]}) since the new leader {s[2]} is the same as the old leader",
            "broker_become_follower_skipped",
        )

    def sc_b_leader_skipped(self, b, c, corr, s):
        # ReplicaManager.makeLeaders@1.1.1:1166, @2.4.1:1375, @2.8.2:1571 INFO: Partition.makeLeader
        # returned false because this broker already leads the partition (a request that only bumps the
        # leader epoch, e.g. a dead replica removed from the ISR or a new controller's full LeaderAndIsr).
        self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}Skipped the become-leader state change after marking its partition as leader with "
            f"correlation id {corr} from controller {c.id} epoch {c.epoch} for partition {s.name} (last update "
            f"controller epoch {s[6]}) since it is already the leader for the partition.",
            "broker_become_leader_skipped",
        )

    @staticmethod
    def already_leader(b, it) -> bool:
        """Partition.makeLeader returns false (no new leader) when the broker already leads the
        partition (Partition.scala@0.10.2.2 ``leaderReplicaIdOpt.get == localBrokerId``, @2.8.2 ``!isLeader``)."""
        return it[3] == b

    @staticmethod
    def follower_unchanged(it) -> bool:
        """Partition.makeFollower returns false when the leader is unchanged
        (Partition.scala@1.1.1:323); 2.4+ also needs an unchanged leader epoch (overridden there)."""
        return it[3] == it[0][2]

    def sc_b_leader_unavailable(self, b, c, corr, s):
        # ReplicaManager@1.0.2-HEAD ERROR.
        self.o.sc(
            b,
            ERROR,
            f"{self.bp(b)}Received LeaderAndIsrRequest with correlation id {corr} from controller "
            f"{c.id} epoch {c.epoch} for partition {s.name} (last update controller epoch {s[6]}) but cannot "
            f"become follower since the new leader {s[2]} is unavailable.",
            "broker_leader_unavailable",
        )

    # ReplicaManager.makeFollowers: 1.0.2-1.1.1 texts end at the partition; from 2.0.1 they add
    # " with leader N" (and 2.4.1-2.5.1 print the leader's endpoint for the fetcher line).
    def _with_leader(self, leader: int) -> str:
        return ""

    def _fetcher_leader(self, leader: int) -> str:
        return ""

    def sc_b_lai_end(self, b, c, corr, n):
        """2.7.2+ INFO "Finished LeaderAndIsr request in .." only."""

    def sc_b_recovered(self, b, p):
        """3.2+ only (leader recovery, KIP-704)."""

    # used by KRaft/ZK 2.6+ broker lines; defined here so subclasses share the rendering
    @staticmethod
    def isr_list(isr) -> str:
        return bracket_csv(isr)
