"""Kafka 1.1.x (1.1.1) ZooKeeper-mode templates: the rewritten single-threaded controller.

``[Controller id=C epoch=E] `` / ``[Broker id=B] `` prefixes (StateChangeLogger.scala@1.0.2),
``t-0`` partitions, ``LeaderAndIsr(leader=.., zkVersion=..)``, ``PartitionState(...)`` request
states, and failure lines that repeat the identity (logFailedStateChange, PartitionStateMachine.scala@1.1.1).
Later eras subclass this class (templates_zk_2_4 -> 2_6 -> 3_x).
"""

from __future__ import annotations

from typing import Optional

from .model import NEW_P, ONLINE_P
from .render import csv
from .templates_base import DEBUG, ERROR, INFO, KAFKA_CONTROLLER, PARTITION_LOGGER, TRACE, WARN
from .templates_zk import ZkTemplates


class Zk11Templates(ZkTemplates):
    """Kafka 1.1.1."""

    PSM_LOGGER = "kafka.controller.PartitionStateMachine"  # ZkPartitionStateMachine from 2.3

    RSM_LOGGER = "kafka.controller.ReplicaStateMachine"

    @staticmethod
    def kc(c_id: int) -> str:
        return f"[Controller id={c_id}] "

    # ---- server.log -------------------------------------------------------------------------
    def server_started(self, b: int, epoch: int) -> None:
        # KafkaServer logIdent "[KafkaServer id=N] " (KafkaServer.scala@1.0.2+).
        o = self.o
        o.srv(b, INFO, "kafka.server.KafkaServer", f"[KafkaServer id={b}] starting", "other")
        self.server_registered(b, epoch)
        self.server_version(b)
        o.srv(b, INFO, "kafka.server.KafkaServer", f"[KafkaServer id={b}] started", "other")

    def server_registered(self, b: int, epoch: int) -> None:
        # KafkaZkClient.registerBrokerInZk@1.1.1 (broker_zk_registered, 0.9.0.1..1.1.1).
        self.o.srv(
            b,
            INFO,
            "kafka.zk.KafkaZkClient",
            f"Registered broker {b} at path /brokers/ids/{b} with addresses: "
            f"ArrayBuffer(EndPoint(kafka{b},9092,ListenerName(PLAINTEXT),PLAINTEXT))",
            "broker_zk_registered",
        )

    def server_stopping_begin(self, b, controlled=True):
        o = self.o
        o.srv(b, INFO, "kafka.server.KafkaServer", f"[KafkaServer id={b}] shutting down", "other")
        if controlled:
            o.srv(b, INFO, "kafka.server.KafkaServer", f"[KafkaServer id={b}] Starting controlled shutdown", "other")

    def server_stopping_end(self, b, controlled=True):
        o = self.o
        if controlled:
            o.srv(b, INFO, "kafka.server.KafkaServer", f"[KafkaServer id={b}] Controlled shutdown succeeded", "other")
        o.srv(b, INFO, "kafka.server.KafkaServer", f"[KafkaServer id={b}] shut down completed", "other")

    def zk_session_expired(self, b: int) -> Optional[tuple]:
        # ZooKeeperClient@1.1.1 "[ZooKeeperClient] Session expired." (zk_session_expired, 1.1.1..HEAD).
        return self.o.srv(
            b, INFO, "kafka.zookeeper.ZooKeeperClient", "[ZooKeeperClient] Session expired.", "zk_session_expired"
        )

    def isr_shrink(self, b, p, old, new):
        # Partition.scala@1.0.2-2.1.1 (isr_shrink__v10).
        return self.o.srv(
            b,
            INFO,
            PARTITION_LOGGER,
            f"[Partition {p.name} broker={b}] Shrinking ISR from {csv(old)} to {csv(new)}",
            "isr_shrink",
            {"topic": p.topic.name, "partition": p.index, "isr": list(new)},
        )

    def isr_expand(self, b, p, old, new):
        # Partition.scala@1.0.2-2.7.2 (isr_expand__v10).
        return self.o.srv(
            b,
            INFO,
            PARTITION_LOGGER,
            f"[Partition {p.name} broker={b}] Expanding ISR from {csv(old)} to {csv(new)}",
            "isr_expand",
            {"topic": p.topic.name, "partition": p.index, "isr": list(new)},
        )

    # ---- controller.log ---------------------------------------------------------------------
    def ctl_failover(self, c, live, topics):
        """KafkaController.elect/onControllerFailover@1.1.1 (controller_init_step rows, §6)."""
        o, k = self.o, self.kc(c.id)
        ref = self.ctl_elected(c)
        for step in (
            "Registering handlers",
            "Deleting log dir event notifications",
            "Deleting isr change notifications",
            "Initializing controller context",
        ):
            o.ctl(c.id, INFO, KAFKA_CONTROLLER, k + step, "controller_init_step")
        self.ctl_context(c, live, topics)
        o.ctl(
            c.id,
            INFO,
            self.RSM_LOGGER,
            f"[ReplicaStateMachine controllerId={c.id}] Initializing replica state",
            "controller_init_step",
        )
        o.ctl(
            c.id,
            INFO,
            self.RSM_LOGGER,
            f"[ReplicaStateMachine controllerId={c.id}] Triggering online replica state changes",
            "controller_init_step",
        )
        return ref

    def ctl_partition_sm_start(self, c):
        o = self.o
        o.ctl(
            c.id,
            INFO,
            self.PSM_LOGGER,
            f"[PartitionStateMachine controllerId={c.id}] Initializing partition state",
            "controller_init_step",
        )
        o.ctl(
            c.id,
            INFO,
            self.PSM_LOGGER,
            f"[PartitionStateMachine controllerId={c.id}] Triggering online partition state changes",
            "controller_init_step",
        )

    def ctl_state_machines_started(self, c, parts):
        """<= 0.11 logs the initial state maps at INFO."""

    def ctl_offline_selected(self, c, p, leader, isr):
        """<= 1.0 OfflinePartitionLeaderSelector lines."""

    def ctl_failover_tail(self, c):
        o, k = self.o, self.kc(c.id)
        o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{k}Ready to serve as the new controller with epoch {c.epoch}",
            "controller_ready",
            {"controller_epoch": c.epoch},
        )
        o.ctl(
            c.id, INFO, KAFKA_CONTROLLER, f"{k}Partitions undergoing preferred replica election: ", "controller_context"
        )
        o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{k}Partitions that completed preferred replica election: ",
            "controller_context",
        )
        o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{k}Skipping preferred replica election for partitions due to topic deletion: ",
            "controller_context",
        )
        o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{k}Resuming preferred replica election for partitions: ",
            "controller_context",
        )
        self.ctl_preferred_start(c, (), "ZkTriggered")
        o.ctl(c.id, INFO, KAFKA_CONTROLLER, f"{k}Starting the controller scheduler", "controller_init_step")

    def ctl_elected_elsewhere(self, b, winner):
        # KafkaController.elect@0.11.0.2+: DEBUG (kafka.controller logger is TRACE by default).
        self.o.ctl(
            b,
            DEBUG,
            KAFKA_CONTROLLER,
            f"{self.kc(b)}Broker {winner} has been elected as the controller, so stopping the election process.",
            "controller_elected_elsewhere",
        )

    def ctl_resign(self, b, session_expired):
        # onControllerResignation@1.0.2+: DEBUG "Resigning", INFO "Resigned".
        self.o.ctl(b, DEBUG, KAFKA_CONTROLLER, f"{self.kc(b)}Resigning", "controller_resigning")
        return self.o.ctl(b, INFO, KAFKA_CONTROLLER, f"{self.kc(b)}Resigned", "controller_resigned")

    def ctl_broker_change(self, c, added, deleted, bounced, live):
        # "Newly added brokers: .., deleted brokers: .., all live brokers: .." (1.0.2-2.1.1).
        self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}Newly added brokers: {csv(sorted(added))}, deleted brokers: "
            f"{csv(sorted(deleted))}, all live brokers: {csv(sorted(live))}",
            "broker_change",
            {"live_brokers": sorted(live)},
        )

    def ctl_cs_leader(self, c, p, old, new):
        """Only the <= 1.0 ControlledShutdownLeaderSelector logs the move."""

    def ctl_new_topic(self, c, topic, parts):
        o, k = self.o, self.kc(c.id)
        o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{k}New topics: [{self.r.topic_set([topic])}], deleted topics: [{self.r.topic_set([])}], "
            f"new partition replica assignment [{self._assignment_map(parts)}]",
            "topic_change",
        )
        o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{k}New partition creation callback for {','.join(p.name for p in parts)}",
            "partition_creation",
        )

    def ctl_reassign_done(self, c, p):
        # "Removing partition t-0 from the list of reassigned partitions in zookeeper" (1.1.1 only).
        self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}Removing partition {p.name} from the list of reassigned partitions in zookeeper",
            "reassignment_removed",
        )

    def ctl_delete_start(self, c, topics):
        # KafkaController "Starting topic deletion for topics .." (1.0.2-HEAD), then the manager's callback.
        self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}Starting topic deletion for topics {','.join(topics)}",
            "topic_deletion_started",
        )
        self.o.ctl(
            c.id,
            INFO,
            "kafka.controller.TopicDeletionManager",
            f"{self.TDM_PREFIX.format(c=c.id)}Topic deletion callback for {','.join(topics)}",
            "topic_deletion_callback",
        )

    def ctl_delete_handling(self, c, topics):
        self.o.ctl(
            c.id,
            INFO,
            "kafka.controller.TopicDeletionManager",
            f"{self.TDM_PREFIX.format(c=c.id)}Handling deletion for topics {','.join(topics)}",
            "topic_deletion_handling",
        )

    def ctl_delete_done(self, c, topic):
        self.o.ctl(
            c.id,
            INFO,
            "kafka.controller.TopicDeletionManager",
            f"{self.TDM_PREFIX.format(c=c.id)}Deletion of topic {topic} successfully completed",
            "topic_deletion_completed",
            {"topic": topic},
        )

    def ctl_unclean(self, c, p, leader, live_assigned):
        """1.1-2.3: no log line for an unclean election (only a metric), kafka-state-machines.md §2.9."""
        return None

    def ctl_invoking(self, c, entity, to, names):
        """Only <= 1.0 logs "Invoking state change to ..." at INFO."""

    def ctl_isr_removal(self, c, p, replica, old_isr, retained):
        """Only <= 1.0 logs the controller's ISR removal in controller.log."""

    def ctl_isr_not_member(self, c, p, replica):
        """Only <= 1.0 logs the ISR removal of a replica that is not in the ISR."""

    def sc_partition(self, c, p, frm, to):
        # PartitionStateMachine.scala@1.1.1 (TRACE): three shapes (§5 rows 1.1.1-2.5.1 / 1.1.1-HEAD).
        if self.LVL_CHANGED == TRACE and not self.sc_trace:
            return None
        if to == NEW_P:
            return self.o.sc(
                c.id,
                self.LVL_CHANGED,
                f"{self.ce(c)}Changed partition {p.name} state from {frm} to {to} "
                f"with assigned replicas {csv(p.replicas)}",
                "partition_state_change",
                self._pfields(c, p, frm, to),
            )
        if to == ONLINE_P:
            return self.o.sc(
                c.id,
                self.LVL_CHANGED,
                f"{self.ce(c)}Changed partition {p.name} from {frm} to {to} with state {self.r.lai(p.snap())}",
                "partition_state_change",
                {
                    **self._pfields(c, p, frm, to),
                    "leader": p.leader,
                    "leader_epoch": p.leader_epoch,
                    "isr": list(p.isr),
                },
            )
        if not self.sc_trace:
            return None
        return self.o.sc(
            c.id,
            TRACE,
            f"{self.ce(c)}Changed partition {p.name} state from {frm} to {to}",
            "partition_state_change",
            self._pfields(c, p, frm, to),
        )

    def sc_election_started(self, c, p):
        """<= 1.0 only."""

    def sc_elected(self, c, p):
        """<= 1.0 only."""

    def sc_partition_failed(self, c, p, frm, to, exc):
        # logFailedStateChange@1.1.1: "Controller C epoch E failed to change state for partition ..".
        return self.o.sc(
            c.id,
            ERROR,
            f"{self.ce(c)}Controller {c.id} epoch {c.epoch} failed to change state for "
            f"partition {p.name} from {frm} to {to}",
            "partition_state_change_failed",
            self._pfields(c, p, frm, to),
            exc,
        )

    def sc_replica(self, c, p, r, frm, to):
        # ReplicaStateMachine.scala@1.1.1 logSuccessfulTransition (TRACE, 1.1.1-HEAD).
        if not self.sc_trace:
            return None
        return self.o.sc(
            c.id,
            TRACE,
            f"{self.ce(c)}Changed state of replica {r} for partition {p.name} from {frm} to {to}",
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
        # logInvalidTransition@1.1.1: IllegalStateException (kafka-state-machines.md §1.4).
        exc = [
            f"java.lang.IllegalStateException: Replica [Topic={p.topic.name},Partition={p.index},Replica={r}] "
            f"should be in the {','.join(valid)} states before moving to {to} state. Instead it is in {frm} state",
            *self.frames(
                f"{self.RSM_LOGGER}.logInvalidTransition(ReplicaStateMachine.scala:356)",
                f"{self.RSM_LOGGER}.$anonfun$doHandleStateChanges$1(ReplicaStateMachine.scala:168)",
                "scala.collection.mutable.ResizableArray.foreach(ResizableArray.scala:59)",
                f"{self.RSM_LOGGER}.doHandleStateChanges(ReplicaStateMachine.scala:168)",
                f"{self.RSM_LOGGER}.handleStateChanges(ReplicaStateMachine.scala:101)",
                "kafka.controller.ControllerEventManager$ControllerEventThread.doWork(ControllerEventManager.scala:69)",
                "kafka.utils.ShutdownableThread.run(ShutdownableThread.scala:82)",
            ),
        ]
        return self.o.sc(
            c.id,
            ERROR,
            f"{self.ce(c)}Controller {c.id} epoch {c.epoch} initiated state change of replica "
            f"{r} for partition {p.name} from {frm} to {to} failed",
            "replica_state_change_failed",
            {"topic": p.topic.name, "partition": p.index, "replica": r, "from_state": frm, "to_state": to},
            exc,
        )

    def sc_reassign_sent(self, c, s, leader, assignment):
        # KafkaController.updateLeaderEpochAndSendRequest@1.1.1 (TRACE, 1.1.1-2.3.1).
        if not self.sc_trace:
            return None
        return self.o.sc(
            c.id,
            TRACE,
            f"{self.ce(c)}Sent LeaderAndIsr request {self.r.lice(s)} with new assigned replica "
            f"list {assignment} to leader {leader} for partition being reassigned {s.name}",
            "reassignment_leader_and_isr_sent",
        )

    def sc_send_lai(self, c, b, s, is_new):
        # ControllerChannelManager@1.0.2-HEAD (TRACE).
        if not self.sc_trace:
            return None
        role = "become-leader" if s[2] == b else "become-follower"
        return self.o.sc(
            c.id,
            TRACE,
            f"{self.ce(c)}Sending {role} LeaderAndIsr request "
            f"{self.r.lai_request_state(s, is_new)} to broker {b} for partition {s.name}",
            "send_leader_and_isr",
            {"topic": s[0], "partition": s[1], "target_broker": b, "leader": s[2], "leader_epoch": s[3]},
        )

    def sc_send_um(self, c, brokers, s):
        # ControllerChannelManager@1.0.2-2.5.1 (TRACE).
        if not self.sc_trace:
            return
        self.o.sc(
            c.id,
            TRACE,
            f"{self.ce(c)}Sending UpdateMetadata request {self.r.um_request_state(s)} to brokers "
            f"{self.r.iset(brokers)} for partition {s.name}",
            "send_update_metadata",
            {"topic": s[0], "partition": s[1], "leader": s[2]},
        )

    def sc_response(self, c, b, api, corr, snaps, error):
        # ControllerChannelManager@1.1.1-HEAD (TRACE).
        if error and api == "LEADER_AND_ISR" and not self.sc_trace:
            self.sc_lai_error(c, b)
        if not self.sc_trace:
            return
        resp = self.stale_response(api) if error else self.r.response(api, snaps)
        self.o.sc(
            c.id,
            TRACE,
            f"{self.ce(c)}Received response {resp} for request {api} with correlation id {corr} "
            f"sent to broker {self.r.node(b)}",
            "controller_response",
        )
        if error and api == "LEADER_AND_ISR":
            self.sc_lai_error(c, b)

    def sc_b_lai_begin(self, b, c, corr, items):
        # ReplicaManager.becomeLeaderOrFollower@1.1.1: one TRACE per partition (1.0.2-2.3.1 text).
        if not self.sc_trace:
            return
        for it in items:
            s = it[0]
            self.o.sc(
                b,
                TRACE,
                f"{self.bp(b)}Received LeaderAndIsr request {self.r.lai_request_state(s, it[1])} "
                f"correlation id {corr} from controller {c.id} epoch {c.epoch} for partition {s.name}",
                "broker_leader_and_isr_received",
                {"topic": s[0], "partition": s[1], "leader": s[2], "leader_epoch": s[3], "controller_epoch": c.epoch},
            )

    def sc_b_stale_controller(self, b, c, corr, latest, api):
        if api == "LEADER_AND_ISR":
            # ReplicaManager@1.0.2-HEAD WARN.
            return self.o.sc(
                b,
                WARN,
                f"{self.bp(b)}Ignoring LeaderAndIsr request from controller {c.id} with correlation "
                f"id {corr} since its controller epoch {c.epoch} is old. Latest known controller epoch is "
                f"{latest}",
                "stale_controller_epoch_rejected",
                {"controller_id": c.id, "controller_epoch": c.epoch},
            )
        if api == "UPDATE_METADATA":
            return self.o.sc(
                b,
                WARN,
                f"{self.bp(b)}Received update metadata request with correlation id {corr} from an "
                f"old controller {c.id} with epoch {c.epoch}. Latest known controller epoch is {latest}",
                "stale_controller_epoch_rejected",
                {"controller_id": c.id, "controller_epoch": c.epoch},
            )
        # ReplicaManager@1.0.2-2.5.1 WARN.
        return self.o.sc(
            b,
            WARN,
            f"{self.bp(b)}Received stop replica request from an old controller epoch {c.epoch}. "
            f"Latest known controller epoch is {latest}",
            "stale_controller_epoch_rejected",
        )

    def sc_b_stale_leader_epoch(self, b, c, corr, s, current):
        # ReplicaManager@1.0.2-2.2.2 WARN "... is not higher than the current leader epoch ..".
        return self.o.sc(
            b,
            WARN,
            f"{self.bp(b)}Ignoring LeaderAndIsr request from controller {c.id} with correlation id "
            f"{corr} epoch {c.epoch} for partition {s.name} since its associated leader epoch {s[3]} is not "
            f"higher than the current leader epoch {current}",
            "stale_leader_epoch_rejected",
            {"topic": s[0], "partition": s[1], "leader_epoch": s[3]},
        )

    def sc_b_become_leader(self, b, c, corr, items):
        # ReplicaManager.makeLeaders@1.1.1 (TRACE).
        o, pre = self.o, self.bp(b)
        for it in items:
            o.sc(
                b,
                TRACE,
                f"{pre}Handling LeaderAndIsr request correlationId {corr} from controller {c.id} epoch "
                f"{c.epoch} starting the become-leader transition for partition {it[0].name}",
                "broker_leader_and_isr_step",
            )
        # ReplicaManager.makeLeaders@1.1.1:1158-1170 (@2.4.1:1367-1379): per partition, "Stopped
        # fetchers" (TRACE) when it becomes leader here, else the skip line (INFO).
        for it in items:
            if self.already_leader(b, it):
                self.sc_b_leader_skipped(b, c, corr, it[0])
                continue
            o.sc(
                b,
                TRACE,
                f"{pre}Stopped fetchers as part of become-leader request from controller {c.id} epoch "
                f"{c.epoch} with correlation id {corr} for partition {it[0].name} (last update controller epoch "
                f"{it[0][6]})",
                "broker_leader_and_isr_step",
            )
        for it in items:
            o.sc(
                b,
                TRACE,
                f"{pre}Completed LeaderAndIsr request correlationId {corr} from controller {c.id} epoch "
                f"{c.epoch} for the become-leader transition for partition {it[0].name}",
                "broker_leader_and_isr_step",
            )

    def sc_b_become_follower(self, b, c, corr, items):
        # ReplicaManager.makeFollowers@1.1.1 (TRACE); later eras only change the suffixes above.
        o, pre = self.o, self.bp(b)
        for it in items:
            o.sc(
                b,
                TRACE,
                f"{pre}Handling LeaderAndIsr request correlationId {corr} from controller {c.id} epoch "
                f"{c.epoch} starting the become-follower transition for partition {it[0].name}"
                f"{self._with_leader(it[0][2])}",
                "broker_leader_and_isr_step",
            )
        moving = [it for it in items if not self.follower_unchanged(it) and it[0][2] >= 0]
        for it in items:
            if it[0][2] < 0:
                self.sc_b_leader_unavailable(b, c, corr, it[0])
            elif self.follower_unchanged(it):
                self.sc_b_follower_skipped(b, c, corr, it[0])
        for it in moving:
            o.sc(
                b,
                TRACE,
                f"{pre}Stopped fetchers as part of become-follower request from controller {c.id} epoch "
                f"{c.epoch} with correlation id {corr} for partition {it[0].name}{self._with_leader(it[0][2])}",
                "broker_leader_and_isr_step",
            )
        for it in moving:
            o.sc(
                b,
                TRACE,
                f"{pre}Truncated logs and checkpointed recovery boundaries for partition {it[0].name} as part "
                f"of become-follower request with correlation id {corr} from controller {c.id} epoch {c.epoch}"
                f"{self._with_leader(it[0][2])}",
                "broker_leader_and_isr_step",
            )
        for it in moving:
            o.sc(
                b,
                TRACE,
                f"{pre}Started fetcher to new leader as part of become-follower request from controller "
                f"{c.id} epoch {c.epoch} with correlation id {corr} for partition {it[0].name}"
                f"{self._fetcher_leader(it[0][2])}",
                "broker_leader_and_isr_step",
            )
        for it in items:
            o.sc(
                b,
                TRACE,
                f"{pre}Completed LeaderAndIsr request correlationId {corr} from controller {c.id} epoch "
                f"{c.epoch} for the become-follower transition for partition {it[0].name}"
                f"{self._with_leader(it[0][2])}",
                "broker_leader_and_isr_step",
            )

    def sc_b_um(self, b, c, corr, snaps, deleted):
        # MetadataCache@1.0.2-HEAD (TRACE).
        if not self.sc_trace:
            return
        o, pre = self.o, self.bp(b)
        for s in snaps:
            o.sc(
                b,
                TRACE,
                f"{pre}Cached leader info {self.r.um_request_state(s)} for partition {s.name} in response to "
                f"UpdateMetadata request sent by controller {c.id} epoch {c.epoch} with correlation id {corr}",
                "broker_metadata_cached",
                {"topic": s[0], "partition": s[1], "leader": s[2]},
            )
        for s in deleted:
            o.sc(
                b,
                TRACE,
                f"{pre}Deleted partition {s.name} from metadata cache in response to UpdateMetadata request "
                f"sent by controller {c.id} epoch {c.epoch} with correlation id {corr}",
                "broker_metadata_deleted",
            )

    def sc_b_stop(self, b, c, corr, items):
        # ReplicaManager.stopReplicas@1.0.2-2.5.1 (TRACE).
        o, pre = self.o, self.bp(b)
        for s, delete in items:
            o.sc(
                b,
                TRACE,
                f"{pre}Handling stop replica (delete={'true' if delete else 'false'}) for partition {s.name}",
                "broker_stop_replica",
            )
        for s, delete in items:
            o.sc(
                b,
                TRACE,
                f"{pre}Finished handling stop replica (delete={'true' if delete else 'false'}) for partition {s.name}",
                "broker_stop_replica",
            )

    # ---- exceptions ----------------------------------------------------------------------------
    def _psm_frames(self) -> list[str]:
        m = self.PSM_LOGGER.rsplit(".", 1)[1]
        return self.frames(
            f"kafka.controller.{m}.$anonfun$doElectLeaderForPartitions$3(PartitionStateMachine.scala:328)",
            "scala.collection.mutable.ResizableArray.foreach(ResizableArray.scala:59)",
            f"kafka.controller.{m}.doElectLeaderForPartitions(PartitionStateMachine.scala:326)",
            f"kafka.controller.{m}.electLeaderForPartitions(PartitionStateMachine.scala:254)",
            f"kafka.controller.{m}.doHandleStateChanges(PartitionStateMachine.scala:175)",
            f"kafka.controller.{m}.handleStateChanges(PartitionStateMachine.scala:116)",
            "kafka.controller.ControllerEventManager$ControllerEventThread.doWork(ControllerEventManager.scala:69)",
            "kafka.utils.ShutdownableThread.run(ShutdownableThread.scala:82)",
        )

    def exc_election_failed(self, c, p, strategy, live, kind):
        # "Failed to elect leader for partition t-0 under strategy S" (PartitionStateMachine.scala@1.1.1;
        # strategies are case objects before 2.4, §8).
        return [
            f"kafka.common.StateChangeFailedException: Failed to elect leader for partition {p.name} under "
            f"strategy {strategy}{self.STRATEGY_ARGS if strategy.startswith('Offline') else ''}",
            *self._psm_frames(),
        ]

    def exc_new_partition_failed(self, c, p, live):
        return [
            f"kafka.common.StateChangeFailedException: Controller {c.id} epoch {c.epoch} encountered error during "
            f"state change of partition {p.name} from New to Online, assigned replicas are [{csv(p.replicas)}], "
            f"live brokers are [{self.r.iset(live)}]. No assigned replica is alive.",
            *self._psm_frames(),
        ]

    def exc_invalid_partition(self, p, frm, to, valid):
        return [
            f"java.lang.IllegalStateException: Partition {p.name} should be in one of {','.join(valid)} states "
            f"before moving to {to} state. Instead it is in {frm} state",
            *self._psm_frames(),
        ]
