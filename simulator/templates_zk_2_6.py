"""Kafka 2.6-2.8 ZooKeeper-mode templates (rendered as 2.8.2): state.change.logger at INFO.

KAFKA-8470 (2.6.0) moved the shipped config to ``state.change.logger=INFO`` and added per-request
INFO summaries, ``Partition t-0 state changed to .. after removing replica ..`` and the broker's
``Leader/Follower t-0 starts at leader epoch ..`` lines; 2.7 adds ``Finished LeaderAndIsr request``
and 2.7/2.8 print ``ZkVersion`` inside ``LeaderIsrAndControllerEpoch``. Scala 2.13 collections.
"""

from __future__ import annotations

from .render import bracket_csv, csv
from .templates_base import DEBUG, ERROR, INFO, KAFKA_CONTROLLER, TRACE, WARN
from .templates_zk_2_4 import Zk24Templates


class Zk26Templates(Zk24Templates):
    """Kafka 2.8.2 (also right for 2.6/2.7 apart from the ZkVersion and ISR-update details)."""

    LVL_CHANGED = INFO
    LVL_REASSIGN = INFO
    LVL_LEADER_EPOCH_MATCH = INFO

    def isr_expand(self, b, p, old, new):
        """``Expanding ISR from ..`` is INFO up to 2.7.2 only (isr_expand__v10); 2.8+ logs the AlterIsr result."""
        return None

    def isr_updated(self, b, p):
        # Partition.scala@2.8.2-3.0.2 (isr_updated__v28), after an AlterIsr round trip (IBP 2.7-IV2+).
        return self._isr_updated(b, p, f"{csv(p.isr)} and version updated to [{p.zk_version}]")

    def ctl_delete_start(self, c, topics):
        # The manager's "Topic deletion callback" is gone after 2.4.1.
        self.o.ctl(
            c.id,
            INFO,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}Starting topic deletion for topics {','.join(topics)}",
            "topic_deletion_started",
        )

    def ctl_isr_updating(self, c, parts):
        # KafkaController.processAlterIsr@2.8.2:2336 DEBUG (@3.9.0-rc3:2455): a Scala Set of TopicPartition.
        self.o.ctl(
            c.id,
            DEBUG,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}Updating ISRs for partitions: Set({', '.join(p.name for p in parts)}).",
            "controller_isr_updating",
        )

    def ctl_isr_update_failed(self, c, p):
        # KafkaController.processAlterIsr@2.8.2:2348 ERROR (@3.9.0-rc3:2466): the write of a controller
        # whose ZooKeeper session expired (KafkaZkClient's controller-epoch check).
        return self.o.ctl(
            c.id,
            ERROR,
            KAFKA_CONTROLLER,
            f"{self.kc(c.id)}Failed to update ISR for partition {p.name}",
            "controller_isr_update_failed",
            {"topic": p.topic.name, "partition": p.index},
            stack=[
                "org.apache.zookeeper.KeeperException$SessionExpiredException: KeeperErrorCode = Session expired",
                *self.frames(
                    "org.apache.zookeeper.KeeperException.create(KeeperException.java:134)",
                    "kafka.zk.KafkaZkClient.retryRequestsUntilConnected(KafkaZkClient.scala:1770)",
                    "kafka.zk.KafkaZkClient.updateLeaderAndIsr(KafkaZkClient.scala:262)",
                    "kafka.controller.KafkaController.processAlterIsr(KafkaController.scala:2338)",
                ),
            ],
        )

    def ctl_stop_replica_batch(self, c, b, delete, snaps):
        """The DEBUG batch line ended in 2.5.1; 2.6.3+ logs StopReplica in state-change.log."""

    # ---- controller side ------------------------------------------------------------------------
    def sc_isr_removed(self, c, p, r):
        # ReplicaStateMachine.scala@2.6.3-HEAD INFO.
        return self.o.sc(
            c.id,
            INFO,
            f"{self.ce(c)}Partition {p.name} state changed to {self.r.lice(p.snap())} after "
            f"removing replica {r} from the ISR as part of transition to OfflineReplica",
            "partition_isr_removed",
            {
                "topic": p.topic.name,
                "partition": p.index,
                "replica": r,
                "leader": p.leader,
                "isr": list(p.isr),
                "leader_epoch": p.leader_epoch,
            },
        )

    def sc_send_lai_summary(self, c, b, n_lead, n_follow):
        # ControllerChannelManager@2.6.3-HEAD INFO (after the per-partition TRACE lines).
        return self.o.sc(
            c.id,
            INFO,
            f"{self.ce(c)}Sending LeaderAndIsr request to broker {b} with {n_lead} become-leader "
            f"and {n_follow} become-follower partitions",
            "send_leader_and_isr_summary",
            {"target_broker": b},
        )

    def sc_send_um(self, c, brokers, s):
        """No per-partition UpdateMetadata line after 2.5.1."""

    def sc_send_um_summary(self, c, brokers, n):
        self.o.sc(
            c.id,
            INFO,
            f"{self.ce(c)}Sending UpdateMetadata request to brokers {self.r.mset(brokers)} for {n} partitions",
            "send_update_metadata_summary",
        )

    def sc_send_stop(self, c, b, s, delete):
        if not self.sc_trace:
            return
        self.o.sc(
            c.id,
            TRACE,
            f"{self.ce(c)}Sending StopReplica request {self.r.stop_replica_state(s, delete)} to broker "
            f"{b} for partition {s.name}",
            "send_stop_replica",
        )

    def sc_send_stop_summary(self, c, b, n):
        # StopReplica v3+ (IBP 2.6-IV0+): one summary without the delete flag.
        self.o.sc(
            c.id,
            INFO,
            f"{self.ce(c)}Sending StopReplica request for {n} replicas to broker {b}",
            "send_stop_replica_summary",
        )

    def stale_response(self, api):
        if api == "UPDATE_METADATA":
            return "UpdateMetadataResponseData(errorCode=11)"
        return "LeaderAndIsrResponseData(errorCode=11, partitionErrors=[], topics=[])"

    def sc_lai_error(self, c, b):
        # KafkaController@2.5.1-HEAD: "Received error {error} in LeaderAndIsr response ..".
        self.o.sc(
            c.id,
            ERROR,
            f"{self.kc(c.id)}Received error STALE_CONTROLLER_EPOCH in LeaderAndIsr response "
            f"{self.stale_response('LEADER_AND_ISR')} from broker {b}",
            "controller_response_error",
        )

    # ---- broker side --------------------------------------------------------------------------
    def sc_b_lai_begin(self, b, c, corr, items):
        # ReplicaManager@2.6.3-HEAD: INFO summary first, then TRACE per partition.
        self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}Handling LeaderAndIsr request correlationId {corr} from controller {c.id} for "
            f"{len(items)} partitions",
            "broker_leader_and_isr_received",
            {"correlation_id": corr, "controller_id": c.id},
        )
        super().sc_b_lai_begin(b, c, corr, items)

    def sc_b_stale_controller(self, b, c, corr, latest, api):
        if api == "STOP_REPLICA":
            return self.o.sc(
                b,
                WARN,
                f"{self.bp(b)}Ignoring StopReplica request from controller {c.id} with correlation "
                f"id {corr} since its controller epoch {c.epoch} is old. Latest known controller epoch is "
                f"{latest}",
                "stale_controller_epoch_rejected",
                {"controller_id": c.id, "controller_epoch": c.epoch},
            )
        return super().sc_b_stale_controller(b, c, corr, latest, api)

    def leader_starts(self, b, it):
        # Partition.makeLeader@2.6.3-3.2.3 INFO.
        s = it[0]
        self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}Leader {s.name} starts at leader epoch {s[3]} from offset {self.offset(s)} with "
            f"high watermark {self.offset(s)} ISR {bracket_csv(s[4])} addingReplicas {bracket_csv(s[8])} "
            f"removingReplicas {bracket_csv(s[9])}. Previous leader epoch was {it[2]}.",
            "leader_starts",
            {"topic": s[0], "partition": s[1], "leader_epoch": s[3], "isr": list(s[4])},
        )

    def follower_starts(self, b, it):
        # Partition.makeFollower@2.6.3-3.2.3 INFO.
        s = it[0]
        self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}Follower {s.name} starts at leader epoch {s[3]} from offset {self.offset(s)} "
            f"with high watermark {self.offset(s)}. Previous leader epoch was {it[2]}.",
            "follower_starts",
            {"topic": s[0], "partition": s[1], "leader_epoch": s[3]},
        )

    @staticmethod
    def offset(s) -> int:
        return s[12]

    def sc_b_become_leader(self, b, c, corr, items):
        o, pre, trace = self.o, self.bp(b), self.sc_trace
        for it in items if trace else ():
            o.sc(
                b,
                TRACE,
                f"{pre}Handling LeaderAndIsr request correlationId {corr} from controller {c.id} epoch "
                f"{c.epoch} starting the become-leader transition for partition {it[0].name}",
                "broker_leader_and_isr_step",
            )
        o.sc(
            b,
            INFO,
            f"{pre}Stopped fetchers as part of LeaderAndIsr request correlationId {corr} from controller "
            f"{c.id} epoch {c.epoch} as part of the become-leader transition for {len(items)} partitions",
            "broker_leader_and_isr_step",
        )
        for it in items:
            self.leader_starts(b, it)
            # ReplicaManager.makeLeaders@2.8.2:1568-1574: Partition.makeLeader logs "Leader .. starts"
            # first, then returns false for a partition this broker already led.
            if self.already_leader(b, it):
                self.sc_b_leader_skipped(b, c, corr, it[0])
        for it in items if trace else ():
            o.sc(
                b,
                TRACE,
                f"{pre}Completed LeaderAndIsr request correlationId {corr} from controller {c.id} epoch "
                f"{c.epoch} for the become-leader transition for partition {it[0].name}",
                "broker_leader_and_isr_step",
            )

    def sc_b_become_follower(self, b, c, corr, items):
        o, pre, trace = self.o, self.bp(b), self.sc_trace
        for it in items if trace else ():
            o.sc(
                b,
                TRACE,
                f"{pre}Handling LeaderAndIsr request correlationId {corr} from controller {c.id} epoch "
                f"{c.epoch} starting the become-follower transition for partition {it[0].name} with leader {it[0][2]}",
                "broker_leader_and_isr_step",
            )
        moving = []
        for it in items:
            if it[0][2] < 0:
                self.sc_b_leader_unavailable(b, c, corr, it[0])
                continue
            self.follower_starts(b, it)
            if self.follower_unchanged(it):
                self.sc_b_follower_skipped(b, c, corr, it[0])
            else:
                moving.append(it)
        if moving:
            o.sc(
                b,
                INFO,
                f"{pre}Stopped fetchers as part of become-follower request from controller {c.id} epoch "
                f"{c.epoch} with correlation id {corr} for {len(moving)} partitions",
                "broker_leader_and_isr_step",
            )
        for it in items if trace else ():
            o.sc(
                b,
                TRACE,
                f"{pre}Completed LeaderAndIsr request correlationId {corr} from controller {c.id} epoch "
                f"{c.epoch} for the become-follower transition for partition {it[0].name} with leader {it[0][2]}",
                "broker_leader_and_isr_step",
            )

    def sc_b_lai_end(self, b, c, corr, n):
        # ReplicaManager@2.7.2-HEAD INFO.
        self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}Finished LeaderAndIsr request in {2 + n}ms correlationId {corr} from controller "
            f"{c.id} for {n} partitions",
            "broker_leader_and_isr_step",
        )

    def sc_b_um(self, b, c, corr, snaps, deleted):
        super().sc_b_um(b, c, corr, snaps, deleted)
        # MetadataCache@2.6.3-HEAD INFO summary.
        self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}Add {len(snaps)} partitions and deleted {len(deleted)} partitions from metadata "
            f"cache in response to UpdateMetadata request sent by controller {c.id} epoch {c.epoch} with "
            f"correlation id {corr}",
            "broker_metadata_cached",
        )

    def sc_b_stop(self, b, c, corr, items):
        # ReplicaManager.stopReplicas@2.6.3-HEAD.
        o, pre = self.o, self.bp(b)
        o.sc(
            b,
            INFO,
            f"{pre}Handling StopReplica request correlationId {corr} from controller {c.id} for {len(items)} "
            f"partitions",
            "broker_stop_replica",
        )
        for s, delete in items if self.sc_trace else ():
            o.sc(
                b,
                TRACE,
                f"{pre}Received StopReplica request {self.r.stop_replica_state(s, delete)} correlation id "
                f"{corr} from controller {c.id} epoch {c.epoch} for partition {s.name}",
                "broker_stop_replica",
            )
