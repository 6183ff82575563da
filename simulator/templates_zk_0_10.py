"""Kafka 0.10.2.x (0.10.2.2) ZooKeeper-mode templates: the multi-threaded listener controller.

No logIdent on state.change.logger: the identity is inline (``Controller 1 epoch 5 changed ...``,
``Broker 2 received ...``); ``TopicAndPartition`` prints ``[t,0]`` while ``TopicPartition`` (the
UpdateMetadata and most ReplicaManager lines of 0.10.2) prints ``t-0`` (kafka-log-formats.md §3,
§10.3); ``LeaderAndIsr`` is JSON; listener classes have their own prefixes. Rows of §5/§6 with
ranges ``0.8.2.2-0.11.0.2``, ``0.10.1.1-..``, ``0.10.2.2-..``.
"""

from __future__ import annotations

from .model import NEW_P, ONLINE_P, Partition
from .render import csv, slist
from .templates_base import DEBUG, ERROR, INFO, KAFKA_CONTROLLER, PARTITION_LOGGER, TRACE, WARN
from .templates_zk import ZkTemplates


class Zk010Templates(ZkTemplates):
    """Kafka 0.10.2.2."""

    PSM_LOGGER = "kafka.controller.PartitionStateMachine"
    RSM_LOGGER = "kafka.controller.ReplicaStateMachine"

    @staticmethod
    def kc(c_id):
        return f"[Controller {c_id}]: "

    def tap(self, p) -> str:
        return f"[{p.topic.name},{p.index}]" if isinstance(p, Partition) else f"[{p[0]},{p[1]}]"

    @staticmethod
    def ic(c):
        """The inline identity of 0.8-0.11 state-change lines."""
        return f"Controller {c.id} epoch {c.epoch} "

    # ---- server.log -------------------------------------------------------------------------
    def server_started(self, b, epoch):
        # KafkaServer logIdent "[Kafka Server N], " before 1.0.
        o = self.o
        o.srv(b, INFO, "kafka.server.KafkaServer", f"[Kafka Server {b}], starting", "other")
        self.server_registered(b, epoch)
        self.server_version(b)
        o.srv(b, INFO, "kafka.server.KafkaServer", f"[Kafka Server {b}], started", "other")

    def server_registered(self, b, epoch):
        # ZkUtils.registerBrokerInZk@0.10.2 (broker_zk_registered__v09).
        self.o.srv(
            b,
            INFO,
            "kafka.utils.ZkUtils",
            f"Registered broker {b} at path /brokers/ids/{b} with addresses: "
            f"EndPoint(kafka{b},9092,ListenerName(PLAINTEXT),PLAINTEXT)",
            "broker_zk_registered",
        )

    def server_stopping_begin(self, b, controlled=True):
        o = self.o
        o.srv(b, INFO, "kafka.server.KafkaServer", f"[Kafka Server {b}], shutting down", "other")
        if controlled:
            o.srv(b, INFO, "kafka.server.KafkaServer", f"[Kafka Server {b}], Starting controlled shutdown", "other")

    def server_stopping_end(self, b, controlled=True):
        o = self.o
        if controlled:
            o.srv(b, INFO, "kafka.server.KafkaServer", f"[Kafka Server {b}], Controlled shutdown succeeded", "other")
        o.srv(b, INFO, "kafka.server.KafkaServer", f"[Kafka Server {b}], shut down completed", "other")

    def zk_session_expired(self, b):
        # org.I0Itec.zkclient.ZkClient (zk_session_expired__zkclient, 0.8.1..1.1.1).
        return self.o.srv(
            b, INFO, "org.I0Itec.zkclient.ZkClient", "zookeeper state changed (Expired)", "zk_session_expired"
        )

    def isr_shrink(self, b, p, old, new):
        # Partition.scala@0.10.2.2 (isr_shrink__v08), logIdent "Partition [t,0] on broker 1: ".
        return self.o.srv(
            b,
            INFO,
            PARTITION_LOGGER,
            f"Partition {self.tap(p)} on broker {b}: Shrinking ISR for partition {self.tap(p)} from "
            f"{csv(old)} to {csv(new)}",
            "isr_shrink",
            {"topic": p.topic.name, "partition": p.index, "isr": list(new)},
        )

    def isr_expand(self, b, p, old, new):
        return self.o.srv(
            b,
            INFO,
            PARTITION_LOGGER,
            f"Partition {self.tap(p)} on broker {b}: Expanding ISR for partition {self.tap(p)} from "
            f"{csv(old)} to {csv(new)}",
            "isr_expand",
            {"topic": p.topic.name, "partition": p.index, "isr": list(new)},
        )

    # ---- controller.log ---------------------------------------------------------------------
    def ctl_failover(self, c, live, topics):
        """KafkaController.onControllerFailover@0.10.2.2."""
        o, k = self.o, self.kc(c.id)
        ref = o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{k}Broker {c.id} starting become controller state transition",
            "controller_failover_started",
            {"controller_id": c.id},
        )
        o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{k}Controller {c.id} incremented epoch to {c.epoch}",
            "controller_epoch_incremented",
            {"controller_epoch": c.epoch},
        )
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
        return ref

    def ctl_elected_elsewhere(self, b, winner):
        """0.10.2's ZookeeperLeaderElector logs nothing on the losers at INFO."""

    def ctl_partition_sm_start(self, c):
        """Logged with the initial state map (``ctl_state_machines_started``)."""

    def ctl_state_machines_started(self, c, parts):
        # ReplicaStateMachine/PartitionStateMachine.startup@0.10.2.2 INFO.
        rs = ", ".join(
            f"[Topic={p.topic.name},Partition={p.index},Replica={r}] -> {st}"
            for p in parts
            for r, st in p.rstates.items()
        )
        ps = ", ".join(f"{self.tap(p)} -> {p.state}" for p in parts)
        self.o.ctl(
            c.id,
            INFO,
            self.RSM_LOGGER,
            f"[Replica state machine on controller {c.id}]: Started replica state "
            f"machine with initial state -> Map({rs})",
            "replica_state_machine_started",
        )
        self.o.ctl(
            c.id,
            INFO,
            self.PSM_LOGGER,
            f"[Partition state machine on Controller {c.id}]: Started partition state "
            f"machine with initial state -> Map({ps})",
            "partition_state_machine_started",
        )

    def ctl_failover_tail(self, c):
        o, k = self.o, self.kc(c.id)
        o.ctl(c.id, INFO, KAFKA_CONTROLLER, f"{k}starting the partition rebalance scheduler", "controller_init_step")
        o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{k}Broker {c.id} is ready to serve as the new controller with epoch {c.epoch}",
            "controller_ready",
            {"controller_epoch": c.epoch},
        )

    def ctl_resign(self, b, session_expired):
        if session_expired:
            self.o.ctl(
                b,
                INFO,
                "kafka.controller.KafkaController$SessionExpirationListener",
                f"[SessionExpirationListener on {b}], ZK expired; shut down all controller components and try "
                f"to re-elect",
                "zk_session_expired",
            )
        return self.o.ctl(
            b, INFO, KAFKA_CONTROLLER, f"{self.kc(b)}Broker {b} resigned as the controller", "controller_resigned"
        )

    def ctl_broker_change(self, c, added, deleted, bounced, live):
        pre = f"[BrokerChangeListener on Controller {c.id}]: "
        lg = "kafka.controller.ReplicaStateMachine$BrokerChangeListener"
        self.o.ctl(
            c.id,
            INFO,
            lg,
            f"{pre}Broker change listener fired for path /brokers/ids with children {csv(sorted(live))}",
            "broker_change",
        )
        self.o.ctl(
            c.id,
            INFO,
            lg,
            f"{pre}Newly added brokers: {csv(sorted(added))}, deleted brokers: "
            f"{csv(sorted(deleted))}, all live brokers: {csv(sorted(live))}",
            "broker_change",
            {"live_brokers": sorted(live)},
        )

    def ctl_cs_leader(self, c, p, old, new):
        # ControlledShutdownLeaderSelector@0.10.2.2 DEBUG (real log 19).
        self.o.ctl(
            c.id,
            DEBUG,
            "kafka.controller.ControlledShutdownLeaderSelector",
            f"[ControlledShutdownLeaderSelector]: Partition {self.tap(p)} : current leader = {old}, new leader = {new}",
            "leader_selected",
        )

    def ctl_new_topic(self, c, topic, parts):
        o, k = self.o, self.kc(c.id)
        amap = "Map(" + ", ".join(f"{self.tap(p)} -> {slist(p.replicas)}" for p in parts) + ")"
        o.ctl(
            c.id,
            INFO,
            "kafka.controller.PartitionStateMachine$TopicChangeListener",
            f"[TopicChangeListener on Controller {c.id}]: New topics: [{self.r.topic_set([topic])}], deleted topics: "
            f"[{self.r.topic_set([])}], new partition replica assignment [{amap}]",
            "topic_change",
        )
        names = ",".join(self.tap(p) for p in parts)
        o.ctl(c.id, INFO, KAFKA_CONTROLLER, f"{k}New topic creation callback for {names}", "partition_creation")
        o.ctl(c.id, INFO, KAFKA_CONTROLLER, f"{k}New partition creation callback for {names}", "partition_creation")

    def ctl_reassign_done(self, c, p):
        # "Removed partition [t,0] from the list of reassigned partitions in zookeeper" (0.8.1..1.0.2).
        self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}Removed partition {self.tap(p)} from the list of reassigned partitions in zookeeper",
            "reassignment_removed",
        )

    def ctl_preferred_result(self, c, p, preferred, ok):
        if ok:
            super().ctl_preferred_result(c, p, preferred, ok)
        else:
            self.o.ctl(
                c.id,
                WARN,
                KAFKA_CONTROLLER,
                f"{self.kc(c.id)}Partition {self.tap(p)} failed to complete "
                f"preferred replica leader election. Leader is {p.leader}",
                "preferred_election_failed",
            )

    def ctl_delete_start(self, c, topics):
        self.o.ctl(
            c.id,
            INFO,
            "kafka.controller.PartitionStateMachine$DeleteTopicsListener",
            f"[DeleteTopicsListener on Controller {c.id}]: Starting topic deletion for topics {','.join(topics)}",
            "topic_deletion_started",
        )
        self.o.ctl(
            c.id,
            INFO,
            "kafka.controller.TopicDeletionManager",
            f"[Topic Deletion Manager {c.id}], Topic deletion callback for {','.join(topics)}",
            "topic_deletion_callback",
        )

    def ctl_delete_handling(self, c, topics):
        self.o.ctl(
            c.id,
            INFO,
            "kafka.controller.TopicDeletionManager$DeleteTopicsThread",
            f"[delete-topics-thread-{c.id}], Handling deletion for topics {','.join(topics)}",
            "topic_deletion_handling",
        )

    def ctl_delete_done(self, c, topic):
        self.o.ctl(
            c.id,
            INFO,
            "kafka.controller.TopicDeletionManager$DeleteTopicsThread",
            f"[delete-topics-thread-{c.id}], Deletion of topic {topic} successfully completed",
            "topic_deletion_completed",
            {"topic": topic},
        )

    def ctl_unclean(self, c, p, leader, live_assigned):
        # OfflinePartitionLeaderSelector@0.8.2.2-1.0.2 WARN (the only trace of an unclean election before 1.1).
        return self.o.ctl(
            c.id,
            WARN,
            "kafka.controller.OfflinePartitionLeaderSelector",
            f"[OfflinePartitionLeaderSelector]: No broker in ISR is alive for {self.tap(p)}. Elect leader "
            f"{leader} from live brokers {csv(live_assigned)}. There's potential data loss.",
            "unclean_leader_election",
            {"topic": p.topic.name, "partition": p.index, "leader": leader},
        )

    def ctl_offline_selected(self, c, p, leader, isr):
        # OfflinePartitionLeaderSelector@0.10.2.2: DEBUG "Some broker in ISR is alive ..", INFO "Selected new leader ..".
        lg = "kafka.controller.OfflinePartitionLeaderSelector"
        self.o.ctl(
            c.id,
            DEBUG,
            lg,
            f"[OfflinePartitionLeaderSelector]: Some broker in ISR is alive for {self.tap(p)}. "
            f"Select {leader} from ISR {csv(isr)} to be the leader.",
            "leader_selected",
        )
        self.o.ctl(
            c.id,
            INFO,
            lg,
            f"[OfflinePartitionLeaderSelector]: Selected new leader and ISR "
            f"{self.r.lai(p.snap())} for offline partition {self.tap(p)}",
            "leader_selected",
        )

    def ctl_invoking(self, c, entity, to, names):
        if entity == "partition":
            self.o.ctl(
                c.id,
                INFO,
                self.PSM_LOGGER,
                f"[Partition state machine on Controller {c.id}]: Invoking state "
                f"change to {to} for partitions {','.join(names)}",
                "partition_state_change_invoked",
            )
        else:
            self.o.ctl(
                c.id,
                INFO,
                self.RSM_LOGGER,
                f"[Replica state machine on controller {c.id}]: Invoking state "
                f"change to {to} for replicas {','.join(names)}",
                "replica_state_change_invoked",
            )

    def ctl_isr_removal(self, c, p, replica, old_isr, retained):
        # KafkaController.removeReplicaFromIsr@0.10.2.2.
        k = self.kc(c.id)
        self.o.ctl(
            c.id,
            DEBUG,
            KAFKA_CONTROLLER,
            f"{k}Removing replica {replica} from ISR {csv(old_isr)} for partition {self.tap(p)}.",
            "partition_isr_removing",
        )
        if retained:
            self.o.ctl(
                c.id,
                INFO,
                KAFKA_CONTROLLER,
                f"{k}Retaining last ISR {replica} of partition {self.tap(p)} since unclean leader election is disabled",
                "last_isr_retained",
            )
        self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{k}New leader and ISR for partition {self.tap(p)} is {self.r.lai(p.snap())}",
            "partition_isr_removed",
            {"topic": p.topic.name, "partition": p.index, "leader": p.leader, "isr": list(p.isr)},
        )

    def ctl_isr_not_member(self, c, p, replica):
        # KafkaController.removeReplicaFromIsr@0.8.2.2-1.0.2: DEBUG, then WARN and no ZooKeeper write.
        k = self.kc(c.id)
        self.o.ctl(
            c.id,
            DEBUG,
            KAFKA_CONTROLLER,
            f"{k}Removing replica {replica} from ISR {csv(p.isr)} for partition {self.tap(p)}.",
            "partition_isr_removing",
        )
        # The ISR is LeaderAndIsr.isr, a Scala List (kafka/api/LeaderAndIsr.scala@0.10.2.2): "List(1, 3)".
        isr_list = "List(" + ", ".join(str(i) for i in p.isr) + ")"
        self.o.ctl(
            c.id,
            WARN,
            KAFKA_CONTROLLER,
            f"{k}Cannot remove replica {replica} from ISR of partition "
            f"{self.tap(p)} since it is not in the ISR. Leader = {p.leader} ; ISR = {isr_list}",
            "isr_remove_skipped",
            {"replica": replica, "leader": p.leader, "isr": list(p.isr)},
        )

    # ---- state-change.log, controller side ----------------------------------------------------
    def sc_partition(self, c, p, frm, to):
        f = self._pfields(c, p, frm, to)
        if to == NEW_P:
            msg = f"{self.ic(c)}changed partition {self.tap(p)} state from {frm} to {to} with assigned replicas {csv(p.replicas)}"
        elif to == ONLINE_P:
            msg = f"{self.ic(c)}changed partition {self.tap(p)} from {frm} to {to} with leader {p.leader}"
            f["leader"] = p.leader
        else:
            msg = f"{self.ic(c)}changed partition {self.tap(p)} state from {frm} to {to}"
        return self.o.sc(c.id, TRACE, msg, "partition_state_change", f)

    def sc_election_started(self, c, p):
        self.o.sc(
            c.id, TRACE, f"{self.ic(c)}started leader election for partition {self.tap(p)}", "leader_election_started"
        )

    def sc_elected(self, c, p):
        self.o.sc(
            c.id,
            TRACE,
            f"{self.ic(c)}elected leader {p.leader} for Offline partition {self.tap(p)}",
            "leader_elected",
            {"topic": p.topic.name, "partition": p.index, "leader": p.leader},
        )

    def sc_partition_failed(self, c, p, frm, to, exc):
        return self.o.sc(
            c.id,
            ERROR,
            f"{self.ic(c)}initiated state change for partition {self.tap(p)} from {frm} to {to} failed",
            "partition_state_change_failed",
            self._pfields(c, p, frm, to),
            exc,
        )

    def sc_replica(self, c, p, r, frm, to):
        return self.o.sc(
            c.id,
            TRACE,
            f"{self.ic(c)}changed state of replica {r} for partition {self.tap(p)} from {frm} to {to}",
            "replica_state_change",
            {
                "topic": p.topic.name,
                "partition": p.index,
                "replica": r,
                "from_state": frm,
                "to_state": to,
                "controller_epoch": c.epoch,
            },
        )

    def sc_replica_failed(self, c, p, r, frm, to, valid):
        # assertValidPreviousStates@0.10.2.2 uses Scala assert: java.lang.AssertionError.
        exc = [
            f"java.lang.AssertionError: assertion failed: Replica [Topic={p.topic.name},Partition={p.index},"
            f"Replica={r}] should be in the {','.join(valid)} states before moving to {to} state. Instead it is in "
            f"{frm} state",
            *self.frames(
                "scala.Predef$.assert(Predef.scala:170)",
                "kafka.controller.ReplicaStateMachine.assertValidPreviousStates(ReplicaStateMachine.scala:309)",
                "kafka.controller.ReplicaStateMachine.handleStateChange(ReplicaStateMachine.scala:190)",
                "kafka.controller.ReplicaStateMachine$$anonfun$handleStateChanges$2.apply(ReplicaStateMachine.scala:114)",
                "scala.collection.immutable.Set$Set1.foreach(Set.scala:94)",
                "kafka.controller.ReplicaStateMachine.handleStateChanges(ReplicaStateMachine.scala:114)",
                "kafka.controller.TopicDeletionManager.failReplicaDeletion(TopicDeletionManager.scala:157)",
            ),
        ]
        return self.o.sc(
            c.id,
            ERROR,
            f"{self.ic(c)}initiated state change of replica {r} for partition "
            f"[{p.topic.name},{p.index}] from {frm} to {to} failed",
            "replica_state_change_failed",
            {"topic": p.topic.name, "partition": p.index, "replica": r, "from_state": frm, "to_state": to},
            exc,
        )

    def sc_reassign_sent(self, c, s, leader, assignment):
        return self.o.sc(
            c.id,
            TRACE,
            f"{self.ic(c)}sent LeaderAndIsr request {self.r.lice(s)} with new assigned replica "
            f"list {assignment} to leader {leader} for partition being reassigned {self.tap(s)}",
            "reassignment_leader_and_isr_sent",
        )

    def sc_send_lai(self, c, b, s, is_new):
        # ControllerChannelManager@0.9.0.1-0.11.0.2: "[t,0]" spelled out, LeaderIsrAndControllerEpoch state.
        role = "become-leader" if s[2] == b else "become-follower"
        return self.o.sc(
            c.id,
            TRACE,
            f"{self.ic(c)}sending {role} LeaderAndIsr request {self.r.lice(s)} to broker {b} "
            f"for partition [{s[0]},{s[1]}]",
            "send_leader_and_isr",
            {"topic": s[0], "partition": s[1], "target_broker": b, "leader": s[2], "leader_epoch": s[3]},
        )

    def sc_send_um(self, c, brokers, s):
        # ControllerChannelManager@0.10.2.2-0.11.0.2: TopicPartition "t-0".
        self.o.sc(
            c.id,
            TRACE,
            f"{self.ic(c)}sending UpdateMetadata request {self.r.lice(s)} to brokers "
            f"{self.r.iset(brokers)} for partition {s.name}",
            "send_update_metadata",
            {"topic": s[0], "partition": s[1], "leader": s[2]},
        )

    def sc_response(self, c, b, api, corr, snaps, error):
        resp = self.stale_response(api) if error else self.r.response(api, snaps)
        self.o.sc(
            c.id,
            TRACE,
            f"{self.ic(c)}received response {resp} for a request sent to broker {self.r.node(b)}",
            "controller_response",
        )

    # ---- state-change.log, broker side ------------------------------------------------------
    @staticmethod
    def ib(b):
        return f"Broker {b} "

    def sc_b_lai_begin(self, b, c, corr, items):
        for it in items:
            s = it[0]
            self.o.sc(
                b,
                TRACE,
                f"{self.ib(b)}received LeaderAndIsr request {self.r.lai_request_state(s, it[1])} "
                f"correlation id {corr} from controller {c.id} epoch {c.epoch} for partition [{s[0]},{s[1]}]",
                "broker_leader_and_isr_received",
                {"topic": s[0], "partition": s[1], "leader": s[2], "leader_epoch": s[3], "controller_epoch": c.epoch},
            )

    def sc_b_stale_controller(self, b, c, corr, latest, api):
        if api == "LEADER_AND_ISR":
            text = (
                f"{self.ib(b)}ignoring LeaderAndIsr request from controller {c.id} with correlation id {corr} since "
                f"its controller epoch {c.epoch} is old. Latest known controller epoch is {latest}"
            )
        elif api == "UPDATE_METADATA":
            text = (
                f"{self.ib(b)}received update metadata request with correlation id {corr} from an old controller "
                f"{c.id} with epoch {c.epoch}. Latest known controller epoch is {latest}"
            )
        else:
            text = (
                f"{self.ib(b)}received stop replica request from an old controller epoch {c.epoch}. Latest known "
                f"controller epoch is {latest}"
            )
        return self.o.sc(
            b,
            WARN,
            text,
            "stale_controller_epoch_rejected",
            {"controller_id": c.id, "controller_epoch": c.epoch} if api != "STOP_REPLICA" else None,
        )

    def sc_b_stale_leader_epoch(self, b, c, corr, s, current):
        # ReplicaManager@0.10.1.1-0.11.0.2 WARN.
        return self.o.sc(
            b,
            WARN,
            f"{self.ib(b)}ignoring LeaderAndIsr request from controller {c.id} with correlation id "
            f"{corr} epoch {c.epoch} for partition [{s[0]},{s[1]}] since its associated leader epoch {s[3]} "
            f"is not higher than the current leader epoch {current}",
            "stale_leader_epoch_rejected",
            {"topic": s[0], "partition": s[1], "leader_epoch": s[3]},
        )

    def sc_b_leader_skipped(self, b, c, corr, s):
        # ReplicaManager.makeLeaders@0.10.2.2:755 INFO (broker_become_leader_skipped__v09).
        self.o.sc(
            b,
            INFO,
            f"{self.ib(b)}skipped the become-leader state change after marking its partition as leader with "
            f"correlation id {corr} from controller {c.id} epoch {c.epoch} for partition {s.name} since it is "
            f"already the leader for the partition.",
            "broker_become_leader_skipped",
        )

    def sc_b_become_leader(self, b, c, corr, items):
        o, pre = self.o, self.ib(b)
        for it in items:
            o.sc(
                b,
                TRACE,
                f"{pre}handling LeaderAndIsr request correlationId {corr} from controller {c.id} epoch {c.epoch} "
                f"starting the become-leader transition for partition {it[0].name}",
                "broker_leader_and_isr_step",
            )
        # ReplicaManager.makeLeaders@0.10.2.2:751-764: the skip line per partition already led here,
        # then "stopped fetchers" for the new leaders only.
        new_leaders = [it for it in items if not self.already_leader(b, it)]
        for it in items:
            if self.already_leader(b, it):
                self.sc_b_leader_skipped(b, c, corr, it[0])
        for it in new_leaders:
            o.sc(
                b,
                TRACE,
                f"{pre}stopped fetchers as part of become-leader request from controller {c.id} epoch {c.epoch} "
                f"with correlation id {corr} for partition {it[0].name}",
                "broker_leader_and_isr_step",
            )
        for it in items:
            o.sc(
                b,
                TRACE,
                f"{pre}completed LeaderAndIsr request correlationId {corr} from controller {c.id} epoch "
                f"{c.epoch} for the become-leader transition for partition {it[0].name}",
                "broker_leader_and_isr_step",
            )

    def sc_b_become_follower(self, b, c, corr, items):
        o, pre = self.o, self.ib(b)
        for it in items:
            o.sc(
                b,
                TRACE,
                f"{pre}handling LeaderAndIsr request correlationId {corr} from controller {c.id} epoch {c.epoch} "
                f"starting the become-follower transition for partition {it[0].name}",
                "broker_leader_and_isr_step",
            )
        moving = [it for it in items if not self.follower_unchanged(it) and it[0][2] >= 0]
        for it in items:
            s = it[0]
            if s[2] < 0:
                o.sc(
                    b,
                    ERROR,
                    f"{pre}received LeaderAndIsrRequest with correlation id {corr} from controller {c.id} epoch "
                    f"{c.epoch} for partition {s.name} but cannot become follower since the new leader {s[2]} is "
                    f"unavailable.",
                    "broker_leader_unavailable",
                )
            elif self.follower_unchanged(it):
                o.sc(
                    b,
                    INFO,
                    f"{pre}skipped the become-follower state change after marking its partition as follower "
                    f"with correlation id {corr} from controller {c.id} epoch {c.epoch} for partition {s.name} since the "
                    f"new leader {s[2]} is the same as the old leader",
                    "broker_become_follower_skipped",
                )
        for it in moving:
            o.sc(
                b,
                TRACE,
                f"{pre}stopped fetchers as part of become-follower request from controller {c.id} epoch "
                f"{c.epoch} with correlation id {corr} for partition {it[0].name}",
                "broker_leader_and_isr_step",
            )
        for it in moving:
            o.sc(
                b,
                TRACE,
                f"{pre}truncated logs and checkpointed recovery boundaries for partition {it[0].name} as part of "
                f"become-follower request with correlation id {corr} from controller {c.id} epoch {c.epoch}",
                "broker_leader_and_isr_step",
            )
        for it in moving:
            o.sc(
                b,
                TRACE,
                f"{pre}started fetcher to new leader as part of become-follower request from controller "
                f"{c.id} epoch {c.epoch} with correlation id {corr} for partition {it[0].name}",
                "broker_leader_and_isr_step",
            )
        for it in items:
            o.sc(
                b,
                TRACE,
                f"{pre}completed LeaderAndIsr request correlationId {corr} from controller {c.id} epoch "
                f"{c.epoch} for the become-follower transition for partition {it[0].name}",
                "broker_leader_and_isr_step",
            )

    def sc_b_um(self, b, c, corr, snaps, deleted):
        o, pre = self.o, self.ib(b)
        for s in snaps:
            o.sc(
                b,
                TRACE,
                f"{pre}cached leader info {self.r.um_request_state(s)} for partition {s.name} in response to "
                f"UpdateMetadata request sent by controller {c.id} epoch {c.epoch} with correlation id {corr}",
                "broker_metadata_cached",
                {"topic": s[0], "partition": s[1]},
            )
        for s in deleted:
            o.sc(
                b,
                TRACE,
                f"{pre}deleted partition {s.name} from metadata cache in response to UpdateMetadata request "
                f"sent by controller {c.id} epoch {c.epoch} with correlation id {corr}",
                "broker_metadata_deleted",
            )

    def sc_b_stop(self, b, c, corr, items):
        o, pre = self.o, self.ib(b)
        for s, delete in items:
            o.sc(
                b,
                TRACE,
                f"{pre}handling stop replica (delete={'true' if delete else 'false'}) for partition {s.name}",
                "broker_stop_replica",
            )
        for s, delete in items:
            o.sc(
                b,
                TRACE,
                f"{pre}finished handling stop replica (delete={'true' if delete else 'false'}) for partition {s.name}",
                "broker_stop_replica",
            )

    # ---- exceptions ----------------------------------------------------------------------------
    def _psm_frames(self):
        return self.frames(
            "kafka.controller.OfflinePartitionLeaderSelector.selectLeader(PartitionLeaderSelector.scala:73)",
            "kafka.controller.PartitionStateMachine.electLeaderForPartition(PartitionStateMachine.scala:344)",
            "kafka.controller.PartitionStateMachine.kafka$controller$PartitionStateMachine$$handleStateChange(PartitionStateMachine.scala:205)",
            "kafka.controller.PartitionStateMachine$$anonfun$triggerOnlinePartitionStateChange$3.apply(PartitionStateMachine.scala:120)",
            "scala.collection.mutable.HashMap.foreach(HashMap.scala:98)",
            "kafka.controller.PartitionStateMachine.triggerOnlinePartitionStateChange(PartitionStateMachine.scala:117)",
            "kafka.controller.KafkaController.onBrokerFailure(KafkaController.scala:451)",
            "kafka.utils.CoreUtils$.inLock(CoreUtils.scala:234)",
        )

    def exc_election_failed(self, c, p, strategy, live, kind):
        # PartitionLeaderSelector.scala@0.10.2.2: NoReplicaOnlineException texts (§8 table).
        if kind == "no_live_replica":
            text = (
                f"kafka.common.NoReplicaOnlineException: No replica for partition {self.tap(p)} is alive. Live brokers "
                f"are: [{self.r.iset(live)}], Assigned replicas are: [{slist(p.replicas)}]"
            )
        else:
            text = (
                f"kafka.common.NoReplicaOnlineException: No broker in ISR for partition {self.tap(p)} is alive. Live "
                f"brokers are: [{self.r.iset(live)}], ISR brokers are: [{csv(p.isr)}]"
            )
        return [text, *self._psm_frames()]

    def exc_new_partition_failed(self, c, p, live):
        return [
            f"kafka.common.StateChangeFailedException: Controller {c.id} epoch {c.epoch} encountered error during "
            f"state change of partition {self.tap(p)} from New to Online, assigned replicas are [{csv(p.replicas)}], "
            f"live brokers are [{csv(sorted(live))}]. No assigned replica is alive.",
            *self._psm_frames(),
        ]

    def exc_invalid_partition(self, p, frm, to, valid):
        return [
            f"java.lang.IllegalStateException: Partition {self.tap(p)} should be in the {','.join(valid)} states "
            f"before moving to {to} state. Instead it is in {frm} state",
            *self._psm_frames(),
        ]
