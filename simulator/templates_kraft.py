"""Kafka 3.9.0 KRaft templates (combined broker+controller nodes): QuorumController lines in
controller.log, ``[Broker id=N] Transitioning ..`` / ``Leader t-0 with topic id ..`` in
state-change.log (ReplicaManager.applyDelta, Partition.scala@3.6.2+).

Sources: kafka-log-formats.md §6 (``[QuorumController id=N] `` prefix from 3.5.2), §5 (broker
rows ``3.0.2-HEAD``, ``3.6.2-HEAD``) and kafka-state-machines.md §7.5 (INFO lines of
ReplicationControlManager / ClusterControlManager / PartitionChangeBuilder at 3.9.0-rc3).
"""

from __future__ import annotations

from .model import Partition, Snap
from .render import bracket_csv, csv, jlist
from .templates_base import ERROR, INFO, PARTITION_LOGGER, WARN, TemplatesBase

QC = "org.apache.kafka.controller.QuorumController"
RCM = "org.apache.kafka.controller.ReplicationControlManager"
CCM = "org.apache.kafka.controller.ClusterControlManager"
BHM = "org.apache.kafka.controller.BrokerHeartbeatManager"
PCB = "org.apache.kafka.controller.PartitionChangeBuilder"
UNASSIGNED_DIR = "AAAAAAAAAAAAAAAAAAAAAA"  # DirectoryId.UNASSIGNED = Uuid(0, 0)


class KraftTemplates(TemplatesBase):
    """Kafka 3.9.0 in KRaft combined mode."""

    @staticmethod
    def q(n: int) -> str:
        return f"[QuorumController id={n}] "

    @staticmethod
    def bp(b: int) -> str:
        return f"[Broker id={b}] "

    # ---- server.log (KafkaRaftServer) -------------------------------------------------------
    def server_started(self, b, epoch):
        o = self.o
        # BrokerServer / KafkaRaftServer lifecycle lines (untyped by the grammar: "other").
        o.srv(
            b, INFO, "kafka.server.BrokerServer", f"[BrokerServer id={b}] Transition from SHUTDOWN to STARTING", "other"
        )
        self.server_version(b)
        o.srv(
            b, INFO, "kafka.server.BrokerServer", f"[BrokerServer id={b}] Transition from STARTING to STARTED", "other"
        )
        o.srv(b, INFO, "kafka.server.KafkaRaftServer", f"[KafkaRaftServer nodeId={b}] Kafka Server started", "other")

    def server_stopping_begin(self, b, controlled=True):
        self.o.srv(
            b,
            INFO,
            "kafka.server.BrokerServer",
            f"[BrokerServer id={b}] Transition from STARTED to SHUTTING_DOWN",
            "other",
        )

    def server_stopping_end(self, b, controlled=True):
        self.o.srv(
            b,
            INFO,
            "kafka.server.BrokerServer",
            f"[BrokerServer id={b}] Transition from SHUTTING_DOWN to SHUTDOWN",
            "other",
        )

    def isr_updated(self, b, p):
        # after an AlterPartition round trip
        return self._isr_updated_v35(b, p)

    def isr_shrink(self, b, p, old, new):
        # Partition.scala@2.2.2-HEAD (isr_shrink__v22).
        lag = " ".join(f"(brokerId: {r}, endOffset: {p.hw})" for r in old if r not in new)
        return self.o.srv(
            b,
            INFO,
            PARTITION_LOGGER,
            f"[Partition {p.name} broker={b}] Shrinking ISR from {csv(old)} to {csv(new)}. Leader: "
            f"(highWatermark: {p.hw}, endOffset: {p.leo}). Out of sync replicas: {lag}.",
            "isr_shrink",
            {"topic": p.topic.name, "partition": p.index, "isr": list(new)},
        )

    def isr_expand(self, b, p, old, new):
        return None

    # ---- controller.log ---------------------------------------------------------------------
    def ctl_active(self, n, epoch, offset):
        # QuorumController@3.6.2-HEAD.
        return self.o.ctl(
            n,
            INFO,
            QC,
            f"{self.q(n)}Becoming the active controller at epoch {epoch}, next write offset {offset}.",
            "kraft_controller_activated",
            {"controller_epoch": epoch},
        )

    def ctl_new_epoch(self, n, epoch, leader):
        # QuorumController@3.3.2-HEAD.
        return self.o.ctl(
            n,
            INFO,
            QC,
            f"{self.q(n)}In the new epoch {epoch}, the leader is {leader}.",
            "kraft_new_epoch",
            {"controller_epoch": epoch},
        )

    def ctl_renounce(self, n, old_epoch, new_epoch, leader, offset):
        # QuorumController@3.6.2-HEAD WARN.
        return self.o.ctl(
            n,
            WARN,
            QC,
            f"{self.q(n)}Renouncing the leadership due to a metadata log event. We were the "
            f"leader at epoch {old_epoch}, but in the new epoch {new_epoch}, the leader is {leader}. "
            f"Reverting to last stable offset {offset}.",
            "kraft_leadership_renounced",
            {"controller_epoch": old_epoch},
        )

    def ctl_register(self, n, b, incarnation, epoch, active: bool, previous=None):
        if active and previous is not None:
            # ClusterControlManager@3.9.0-rc3: only when an older incarnation is registered.
            self.o.ctl(
                n,
                INFO,
                CCM,
                f"{self.q(n)}Registering a new incarnation of broker {b}. Previous incarnation ID was "
                f"{previous}; new incarnation ID is {incarnation}. Generated 0 record(s) to clean up previous "
                f"incarnations. Broker epoch will become {epoch}.",
                "kraft_broker_registered",
            )
        record = (
            f"RegisterBrokerRecord(brokerId={b}, isMigratingZkBroker=false, incarnationId={incarnation}, "
            f"brokerEpoch={epoch}, endPoints=[BrokerEndpoint(name='PLAINTEXT', host='kafka{b}', port=9092, "
            f"securityProtocol=0)], features=[BrokerFeature(name='kraft.version', minSupportedVersion=0, "
            f"maxSupportedVersion=1), BrokerFeature(name='metadata.version', minSupportedVersion=1, "
            f"maxSupportedVersion=21)], rack=null, fenced=true, inControlledShutdown=false, "
            f"logDirs=[{UNASSIGNED_DIR}])"
        )
        if previous is None:
            # ClusterControlManager.replay@3.6+: the first registration of a broker id.
            self.o.ctl(
                n, INFO, CCM, f"{self.q(n)}Replayed initial RegisterBrokerRecord for broker {b}: {record}", "other"
            )
        else:
            self.o.ctl(
                n,
                INFO,
                CCM,
                f"{self.q(n)}Replayed RegisterBrokerRecord establishing a new incarnation of broker {b}: {record}",
                "kraft_broker_registered",
            )

    def ctl_unfence_granted(self, n, b, offset):
        # BrokerHeartbeatManager@3.5.2-HEAD.
        self.o.ctl(
            n,
            INFO,
            BHM,
            f"{self.q(n)}The request from broker {b} to unfence has been granted because it has "
            f"caught up with the offset of its register broker record {offset}.",
            "kraft_broker_unfenced",
        )

    def ctl_fencing(self, n, b):
        # ReplicationControlManager.java@3.9.0-rc3:1609 (unchanged on trunk of 2024-10, :1607); 4.x
        # adds the broker epoch (kraft_broker_fenced__v40_session), as real 4.1.1 prints it:
        # sample_logs/real-4.1-kraft-broker-fencing/broker-1/controller.log:52.
        at_epoch = f" at epoch {self.cluster.brokers[b].broker_epoch}" if self.p.at_least("4.0") else ""
        return self.o.ctl(
            n,
            INFO,
            RCM,
            f"{self.q(n)}Fencing broker {b}{at_epoch} because its session has timed out.",
            "kraft_broker_fenced",
        )

    def ctl_changing(self, n, handler, count):
        # ReplicationControlManager.generateLeaderAndIsrUpdates@3.9.0-rc3.
        self.o.ctl(
            n, INFO, RCM, f"{self.q(n)}{handler}: changing {count} partition(s)", "kraft_broker_partitions_changed"
        )

    def ctl_registration_change(self, n, b, epoch, fenced: int, cs: int):
        self.o.ctl(
            n,
            INFO,
            CCM,
            f"{self.q(n)}Replayed BrokerRegistrationChangeRecord modifying the registration for "
            f"broker {b}: BrokerRegistrationChangeRecord(brokerId={b}, brokerEpoch={epoch}, fenced={fenced}, "
            f"inControlledShutdown={cs}, logDirs=[])",
            "kraft_broker_registration_changed",
        )

    def ctl_cs_granted(self, n, b):
        self.o.ctl(
            n,
            INFO,
            BHM,
            f"{self.q(n)}Unfenced broker {b} has requested and been granted a controlled shutdown.",
            "kraft_controlled_shutdown",
        )

    def ctl_cs_done(self, n, b, lowest, cs_offset):
        self.o.ctl(
            n,
            INFO,
            BHM,
            f"{self.q(n)}The request from broker {b} to shut down has been granted since the lowest "
            f"active offset {lowest} is now greater than the broker's controlled shutdown offset {cs_offset}.",
            "kraft_controlled_shutdown",
        )

    def ctl_topic_created(self, n, topic: str, parts: int, rf: int):
        # ReplicationControlManager.createTopics@3.1.2-HEAD (kraft_topics_created__v31).
        self.o.ctl(
            n,
            INFO,
            RCM,
            f"{self.q(n)}CreateTopics result(s): CreatableTopic(name='{topic}', numPartitions="
            f"{parts}, replicationFactor={rf}, assignments=[], configs=[]): SUCCESS",
            "kraft_topics_created",
        )

    def ctl_topic_replayed(self, n, topic: str, topic_id: str):
        self.o.ctl(
            n, INFO, RCM, f"{self.q(n)}Replayed TopicRecord for topic {topic} with topic ID {topic_id}.", "other"
        )

    def registration(self, p: Partition) -> str:
        # PartitionRegistration.toString@3.9.0-rc3 (kafka-state-machines.md §7.5).
        dirs = ", ".join(UNASSIGNED_DIR for _ in p.replicas)
        return (
            f"PartitionRegistration(replicas={jlist(p.replicas)}, directories=[{dirs}], isr={jlist(p.isr)}, "
            f"removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader={p.leader}, "
            f"leaderRecoveryState={'RECOVERING' if p.recovering else 'RECOVERED'}, leaderEpoch={p.leader_epoch}, "
            f"partitionEpoch={p.zk_version})"
        )

    def ctl_partition_replayed(self, n, p: Partition):
        return self.o.ctl(
            n,
            INFO,
            RCM,
            f"{self.q(n)}Replayed PartitionRecord for new partition {p.name} with topic ID "
            f"{p.topic_id} and {self.registration(p)}.",
            "other",
        )

    def ctl_remove_topic(self, n, topic: str, topic_id: str):
        self.o.ctl(
            n, INFO, RCM, f"{self.q(n)}Replayed RemoveTopicRecord for topic {topic} with topic ID {topic_id}.", "other"
        )

    def ctl_unclean_trigger(self, n, p: Partition):
        # ReplicationControlManager@3.9.0-rc3 ERROR (KAFKA-12670).
        return self.o.ctl(
            n,
            ERROR,
            RCM,
            f"{self.q(n)}Triggering unclean leader election for offline partition {p.name}.",
            "unclean_leader_election",
            {"topic": p.topic.name, "partition": p.index},
        )

    def ctl_unclean_failed(self, n, p: Partition, error: str):
        # ReplicationControlManager.java@3.9.0-rc3:1711 WARN (unclean_leader_election_failed__v39).
        return self.o.ctl(
            n,
            WARN,
            RCM,
            f"{self.q(n)}Cannot trigger unclean leader election for offline partition {p.name}: {error}",
            "unclean_leader_election_failed",
            {"topic": p.topic.name, "partition": p.index},
        )

    def ctl_unclean_builder(self, n, p: Partition, leader: int):
        # PartitionChangeBuilder@3.6.2-HEAD: static logger, no prefix.
        return self.o.ctl(
            n,
            INFO,
            PCB,
            f"Setting new leader for topicId {p.topic_id}, partition {p.index} to {leader} using an unclean election",
            "unclean_leader_election",
            {"partition": p.index, "leader": leader},
        )

    def ctl_unclean_change(self, n, p: Partition, old_isr, old_leader, old_le, old_pe):
        # PartitionRegistration.maybeLogPartitionChange with ReplicationControlManager's logger@3.9.0-rc3
        # INFO "UNCLEAN partition change for ..." (§7.5; kraft.lark kraft_unclean_partition_change).
        return self.o.ctl(
            n,
            INFO,
            RCM,
            f"{self.q(n)}UNCLEAN partition change for {p.name} with topic ID {p.topic_id}: "
            f"isr: {jlist(old_isr)} -> {jlist(p.isr)}, leader: {old_leader} -> {p.leader}, "
            f"leaderRecoveryState: RECOVERED -> RECOVERING, leaderEpoch: {old_le} -> {p.leader_epoch}, "
            f"partitionEpoch: {old_pe} -> {p.zk_version}",
            "kraft_unclean_partition_change",
            {"topic": p.topic.name, "partition": p.index},
        )

    def ctl_periodic(self, n, task: str, records: int, micros: int):
        # QuorumController@3.9.0-rc3 (kraft_periodic_task__v39).
        self.o.ctl(
            n,
            INFO,
            QC,
            f"{self.q(n)}{task}: generated {records} records in {micros} microseconds.",
            "kraft_periodic_task",
        )

    # ---- state-change.log (broker) ------------------------------------------------------------
    def sc_transitioning(self, b, n, role):
        # ReplicaManager.applyDelta@3.0.2-HEAD.
        self.o.sc(
            b, INFO, f"{self.bp(b)}Transitioning {n} partition(s) to local {role}.", "kraft_partitions_transitioning"
        )

    def sc_creating(self, b, p: Partition):
        self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}Creating new partition {p.name} with topic id {p.topic_id}.",
            "partition_created",
            {"topic": p.topic.name, "partition": p.index},
        )

    @staticmethod
    def _opt(v) -> str:
        return "None" if v is None or v < 0 else f"Some({v})"

    def sc_leader(self, b, p: Partition, prev_leader, prev_epoch):
        # Partition.makeLeader@3.6.2-HEAD ("{underMinIsr}" empty: "[] . Previous").
        return self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}Leader {p.name} with topic id Some({p.topic_id}) starts at leader epoch "
            f"{p.leader_epoch} from offset {p.leo} with partition epoch {p.zk_version}, high watermark "
            f"{p.hw}, ISR {bracket_csv(p.isr)}, adding replicas [] and removing replicas [] . Previous "
            f"leader {self._opt(prev_leader)} and previous leader epoch was {prev_epoch}.",
            "leader_starts",
            {
                "topic": p.topic.name,
                "partition": p.index,
                "leader_epoch": p.leader_epoch,
                "isr": list(p.isr),
                "partition_epoch": p.zk_version,
            },
        )

    def sc_follower(self, b, p: Partition, prev_leader, prev_epoch):
        return self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}Follower {p.name} starts at leader epoch {p.leader_epoch} from offset "
            f"{p.hw} with partition epoch {p.zk_version} and high watermark {p.hw}. Current leader is "
            f"{p.leader}. Previous leader {self._opt(prev_leader)} and previous leader epoch was "
            f"{prev_epoch}.",
            "follower_starts",
            {"topic": p.topic.name, "partition": p.index, "leader_epoch": p.leader_epoch, "leader": p.leader},
        )

    def _delta_state(self, p: Partition) -> str:
        """``PartitionRegistration.toLeaderAndIsrPartitionState`` (metadata@3.9.0-rc3): controllerEpoch -1."""
        s = p.snap()
        return self.r.lai_request_state(Snap(s[:6] + (-1,) + s[7:]), False)

    def sc_leader_skipped(self, b, p: Partition, prev_epoch):
        # Partition.makeLeader@3.9.0-rc3:803 INFO: a delta that does not bump the leader epoch (an ISR
        # change, another replica fenced) reaches the leader too (broker_become_leader_skipped__v33).
        return self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}Skipped the become-leader state change for {p.name} with topic id Some({p.topic_id}) "
            f"and partition state {self._delta_state(p)} since it is already the leader with leader epoch "
            f"{prev_epoch}. Current high watermark {p.hw}, ISR {bracket_csv(p.isr)}, adding replicas [] and "
            f"removing replicas [].",
            "broker_become_leader_skipped",
        )

    def sc_follower_skipped(self, b, p: Partition, prev_epoch):
        # Partition.makeFollower@3.9.0-rc3:880 INFO (broker_become_follower_skipped__v33).
        return self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}Skipped the become-follower state change for {p.name} with topic id "
            f"Some({p.topic_id}) and partition state {self._delta_state(p)} since it is already a follower "
            f"with leader epoch {prev_epoch}.",
            "broker_become_follower_skipped",
        )

    def sc_fetchers(self, b, n, started: bool):
        verb = "Started" if started else "Stopped"
        self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}{verb} fetchers as part of become-follower for {n} partitions",
            "broker_fetchers_started" if started else "broker_fetchers_stopped",
        )

    def sc_deleting(self, b, n):
        self.o.sc(b, INFO, f"{self.bp(b)}Deleting {n} partition(s).", "kraft_partitions_deleting")

    def sc_b_recovered(self, b, p):
        self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}The topic partition {p.name} was marked as RECOVERING. Marking the topic "
            f"partition as RECOVERED.",
            "leader_recovery",
            {"topic": p.topic.name, "partition": p.index},
        )
