"""Kafka 2.4.x (2.4.1) ZooKeeper-mode templates: what changed since 1.1.1.

Generated request/response ``toString``s (LeaderAndIsrPartitionState, tagged fields), epoch-fenced
election line (2.1.1+), broker epochs and bounced brokers (2.2+), ``Zk*StateMachine`` loggers and
``Triggering offline replica state changes`` (2.3+), KIP-455 reassignment and KIP-460 elections (2.4).
"""

from __future__ import annotations

from .render import csv
from .templates_base import DEBUG, ERROR, INFO, KAFKA_CONTROLLER, PARTITION_LOGGER, TRACE, WARN
from .templates_zk_1_1 import Zk11Templates


class Zk24Templates(Zk11Templates):
    """Kafka 2.4.1."""

    PSM_LOGGER = "kafka.controller.ZkPartitionStateMachine"
    RSM_LOGGER = "kafka.controller.ZkReplicaStateMachine"
    TDM_PREFIX = "[Topic Deletion Manager {c}] "
    STRATEGY_ARGS = "(false)"
    ZK_CLIENT_PREFIX = "[ZooKeeperClient Kafka server] "

    # ---- server.log -------------------------------------------------------------------------
    @staticmethod
    def follower_unchanged(it) -> bool:
        """Partition.makeFollower@2.4.1:582 returns false only if the leader AND the leader epoch are
        unchanged; ReplicaManager only passes it partitions whose leader epoch is higher
        (ReplicaManager.scala@2.4.1:1221), so every follower restarts its fetcher and the
        "Skipped the become-follower" line is never printed."""
        return it[3] == it[0][2] and it[2] == it[0][3]

    def server_registered(self, b, epoch):
        # KafkaZkClient.registerBroker@2.2+ (adds the broker epoch).
        self.o.srv(
            b,
            INFO,
            "kafka.zk.KafkaZkClient",
            f"Registered broker {b} at path /brokers/ids/{b} with addresses: "
            f"ArrayBuffer(EndPoint(kafka{b},9092,ListenerName(PLAINTEXT),PLAINTEXT)), czxid (broker epoch): {epoch}",
            "broker_zk_registered",
        )

    def zk_session_expired(self, b):
        return self.o.srv(
            b, INFO, "kafka.zookeeper.ZooKeeperClient", f"{self.ZK_CLIENT_PREFIX}Session expired.", "zk_session_expired"
        )

    def isr_shrink(self, b, p, old, new):
        # Partition.scala@2.2.2+ (isr_shrink__v22).
        dropped = [r for r in old if r not in new]
        lag = " ".join(f"(brokerId: {r}, endOffset: {p.hw})" for r in dropped)
        return self.o.srv(
            b,
            INFO,
            PARTITION_LOGGER,
            f"[Partition {p.name} broker={b}] Shrinking ISR from {csv(old)} to {csv(new)}. Leader: "
            f"(highWatermark: {p.hw}, endOffset: {p.leo}). Out of sync replicas: {lag}.",
            "isr_shrink",
            {"topic": p.topic.name, "partition": p.index, "isr": list(new)},
        )

    def isr_updated(self, b, p):
        # Partition.scala@2.4.1 INFO (TRACE before 2.4), isr_updated__v08.
        return self._isr_updated(b, p, f"[{csv(p.isr)}] and zkVersion updated to [{p.zk_version}]")

    # ---- controller.log ---------------------------------------------------------------------
    def ctl_elected(self, c):
        # KafkaController.elect@2.1.1-HEAD: one line with the epoch and its zk version (KAFKA-6082).
        return self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}{c.id} successfully elected as the controller. Epoch incremented to "
            f"{c.epoch} and epoch zk version is now {c.epoch_zk_version}",
            "controller_elected",
            {"controller_id": c.id, "controller_epoch": c.epoch},
        )

    def ctl_context(self, c, live, topics):
        o, k = self.o, self.kc(c.id)
        epochs = ", ".join(f"{b} -> {self.cluster.brokers[b].broker_epoch}" for b in sorted(live))
        epochs_map = f"HashMap({epochs})" if self.r.scala213 else f"Map({epochs})"
        # initializeControllerContext@2.2+ (broker epochs, KIP-380).
        o.ctl(c.id, INFO, KAFKA_CONTROLLER, f"{k}Initialized broker epochs cache: {epochs_map}", "broker_epochs")
        o.ctl(
            c.id,
            DEBUG,
            KAFKA_CONTROLLER,
            f"{k}Register BrokerModifications handler for {self.r.iset(live)}",
            "broker_modifications_handler",
        )
        super().ctl_context(c, live, topics)

    def ctl_offline_replicas_start(self, c):
        # ZkReplicaStateMachine.startup@2.3+ (KAFKA-3143).
        self.o.ctl(
            c.id,
            INFO,
            self.RSM_LOGGER,
            f"[ReplicaStateMachine controllerId={c.id}] Triggering offline replica state changes",
            "controller_init_step",
        )

    def ctl_broker_change(self, c, added, deleted, bounced, live):
        # 2.2.2+ adds "bounced brokers" (KIP-380).
        self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}Newly added brokers: {csv(sorted(added))}, deleted brokers: {csv(sorted(deleted))}, "
            f"bounced brokers: {csv(sorted(bounced))}, all live brokers: {csv(sorted(live))}",
            "broker_change",
            {"live_brokers": sorted(live)},
        )

    def _assignment_map(self, parts):
        return "Map(" + ", ".join(f"{p.name} -> {self.r.assignment(p.replicas, (), ())}" for p in parts) + ")"

    def ctl_reassign_start(self, c, p, target):
        """2.4+ logs no INFO line when a (ZooKeeper-triggered) reassignment starts."""

    def ctl_reassign_done(self, c, p):
        # "Removing partitions .. from the list of reassigned partitions in zookeeper" (2.0.1-HEAD).
        self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}Removing partitions {self.r.topic_set([p.name])} from the list of reassigned "
            f"partitions in zookeeper",
            "reassignment_removed",
        )

    def ctl_preferred_start(self, c, parts, trigger):
        # onReplicaElection@2.4.1-HEAD.
        self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}Starting replica leader election (PREFERRED) for partitions "
            f"{','.join(p.name for p in parts)} triggered by {trigger}",
            "replica_election_started",
        )

    def ctl_unclean_election_start(self, c, parts):
        # onReplicaElection@2.4.1-HEAD with ElectionType.UNCLEAN.
        self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}Starting replica leader election (UNCLEAN) for partitions "
            f"{','.join(p.name for p in parts)} triggered by AdminClientTriggered",
            "replica_election_started",
        )

    def ctl_preferred_result(self, c, p, preferred, ok):
        if ok:
            super().ctl_preferred_result(c, p, preferred, ok)
        else:
            # 2.0.1-HEAD WARN.
            self.o.ctl(
                c.id,
                WARN,
                KAFKA_CONTROLLER,
                f"{self.kc(c.id)}Partition {p.name} failed to complete preferred replica leader election to "
                f"{preferred}. Leader is still {p.leader}",
                "preferred_election_failed",
            )

    def ctl_moved(self, c, event):
        # KafkaController@2.3.1-HEAD: INFO with the ControllerMovedException stack (KAFKA-6082 fencing).
        exc = [
            "org.apache.kafka.common.errors.ControllerMovedException: Controller epoch zkVersion check fails. "
            f"Expected zkVersion = {c.epoch_zk_version}",
            *self.frames(
                "kafka.zk.KafkaZkClient$CheckedEphemeral.getAfterNodeExists(KafkaZkClient.scala:1880)",
                "kafka.zk.KafkaZkClient.updateLeaderAndIsr(KafkaZkClient.scala:308)",
                "kafka.controller.KafkaController.process(KafkaController.scala:1888)",
                "kafka.controller.ControllerEventManager$ControllerEventThread.doWork(ControllerEventManager.scala:130)",
                "kafka.utils.ShutdownableThread.run(ShutdownableThread.scala:96)",
            ),
        ]
        return self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}Controller moved to another broker when processing {event}.",
            "controller_moved",
            None,
            exc,
        )

    # ---- state-change.log, controller side ----------------------------------------------------
    def sc_reassign_sent(self, c, s, leader, assignment):
        # KafkaController@2.4.1-2.5.1 TRACE (INFO from 2.6.3): "with new replica assignment".
        return self.o.sc(
            c.id,
            self.LVL_REASSIGN,
            f"{self.ce(c)}Sent LeaderAndIsr request {self.r.lice(s)} with new "
            f"replica assignment {assignment} to leader {leader} for partition being reassigned {s.name}",
            "reassignment_leader_and_isr_sent",
        )

    LVL_REASSIGN = TRACE

    def stale_response(self, api):
        if api == "UPDATE_METADATA":
            return "{error_code=11,_tagged_fields={}}"
        return "{error_code=11,partition_errors=[],_tagged_fields={}}"

    def sc_lai_error(self, c, b):
        # KafkaController@1.0.2-2.4.1 template with 2.4's generated response data.
        self.o.sc(
            c.id,
            ERROR,
            f"{self.kc(c.id)}Received error in LeaderAndIsr response "
            f"LeaderAndIsrResponseData(errorCode=11, partitionErrors=[]) from broker {b}",
            "controller_response_error",
        )

    # ---- state-change.log, broker side ------------------------------------------------------
    def sc_b_lai_begin(self, b, c, corr, items):
        # ReplicaManager@2.4.1-HEAD: no "for partition" suffix.
        if not self.sc_trace:
            return
        for it in items:
            s = it[0]
            self.o.sc(
                b,
                TRACE,
                f"{self.bp(b)}Received LeaderAndIsr request {self.r.lai_request_state(s, it[1])} "
                f"correlation id {corr} from controller {c.id} epoch {c.epoch}",
                "broker_leader_and_isr_received",
                {"topic": s[0], "partition": s[1], "leader": s[2], "leader_epoch": s[3], "controller_epoch": c.epoch},
            )

    LVL_LEADER_EPOCH_MATCH = DEBUG  # 2.3.1-2.5.1 DEBUG, INFO from 2.6.3

    def sc_b_stale_leader_epoch(self, b, c, corr, s, current):
        if s[3] == current:
            return self.o.sc(
                b,
                self.LVL_LEADER_EPOCH_MATCH,
                f"{self.bp(b)}Ignoring LeaderAndIsr request from controller {c.id} with correlation id "
                f"{corr} epoch {c.epoch} for partition {s.name} since its associated leader epoch {s[3]} "
                f"matches the current leader epoch",
                "stale_leader_epoch_rejected",
                {"topic": s[0], "partition": s[1], "leader_epoch": s[3]},
            )
        return self.o.sc(
            b,
            WARN,
            f"{self.bp(b)}Ignoring LeaderAndIsr request from controller {c.id} with correlation id "
            f"{corr} epoch {c.epoch} for partition {s.name} since its associated leader epoch {s[3]} is "
            f"smaller than the current leader epoch {current}",
            "stale_leader_epoch_rejected",
            {"topic": s[0], "partition": s[1], "leader_epoch": s[3]},
        )

    def _with_leader(self, leader: int) -> str:
        # ReplicaManager.makeFollowers@2.0.1+: "... with leader N".
        return f" with leader {leader}"

    def _fetcher_leader(self, leader: int) -> str:
        # 2.4.1-2.5.1 print the leader's endpoint in the "Started fetcher" line.
        return f" with leader {self.r.endpoint(leader)}"
