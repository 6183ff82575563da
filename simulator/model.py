"""The simulated cluster: brokers, topics, partitions with their ZooKeeper/metadata state, the
controller's state-machine states, and what each broker believes.

The model holds the *truth* the logs are rendered from; operations change it only through the
rules in ``kafka_forensics.statemachines`` (see ``legality.py``), and faults are the only code
allowed to make logs and model disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from kafka_forensics.statemachines.states import PartitionState as P
from kafka_forensics.statemachines.states import ReplicaState as R

# State names exactly as Kafka logs them: the plain text of the statemachines enums.
NON_EXISTENT_P, NEW_P, ONLINE_P, OFFLINE_P = (
    P.NonExistentPartition.value,
    P.NewPartition.value,
    P.OnlinePartition.value,
    P.OfflinePartition.value,
)
NON_EXISTENT_R, NEW_R, ONLINE_R, OFFLINE_R = (
    R.NonExistentReplica.value,
    R.NewReplica.value,
    R.OnlineReplica.value,
    R.OfflineReplica.value,
)
DEL_STARTED, DEL_OK, DEL_INELIGIBLE = (
    R.ReplicaDeletionStarted.value,
    R.ReplicaDeletionSuccessful.value,
    R.ReplicaDeletionIneligible.value,
)
NO_LEADER = -1  # LeaderAndIsr.NoLeader
LEADER_DURING_DELETE = -2  # LeaderAndIsr.LeaderDuringDelete (UpdateMetadata of topics being deleted)


class Snap(tuple):
    """An immutable picture of a partition as a request carries it (taken when the request is
    queued, as ControllerBrokerRequestBatch does)."""

    __slots__ = ()
    topic = property(lambda s: s[0])
    index = property(lambda s: s[1])
    leader = property(lambda s: s[2])
    leader_epoch = property(lambda s: s[3])
    isr = property(lambda s: s[4])
    zk_version = property(lambda s: s[5])
    ctrl_epoch = property(lambda s: s[6])
    replicas = property(lambda s: s[7])
    adding = property(lambda s: s[8])
    removing = property(lambda s: s[9])
    recovering = property(lambda s: s[10])
    topic_id = property(lambda s: s[11])
    offset = property(lambda s: s[12])  # log end offset = high watermark when the request was built
    name = property(lambda s: f"{s[0]}-{s[1]}")


class Partition:
    """One partition: the leader/ISR znode (or KRaft PartitionRegistration) and the controller's
    in-memory partition and replica states."""

    __slots__ = (
        "adding",
        "ctrl_epoch",
        "hw",
        "index",
        "isr",
        "leader",
        "leader_epoch",
        "leo",
        "name",
        "recovering",
        "removing",
        "replicas",
        "rstates",
        "state",
        "topic",
        "topic_id",
        "zk_version",
    )

    def __init__(self, topic: "Topic", index: int, replicas: list[int]) -> None:
        self.topic = topic
        self.index = index
        self.name = f"{topic.name}-{index}"
        self.replicas = list(replicas)
        self.leader = NO_LEADER
        self.leader_epoch = -1
        self.isr: list[int] = []
        self.zk_version = -1
        self.ctrl_epoch = 0
        self.state = NON_EXISTENT_P
        self.rstates: dict[int, str] = {}
        self.recovering = False
        self.adding: list[int] = []
        self.removing: list[int] = []
        self.topic_id = topic.topic_id
        self.hw = 0
        self.leo = 0

    @property
    def has_leadership_info(self) -> bool:
        return self.zk_version >= 0

    def snap(self, leader: Optional[int] = None) -> Snap:
        return Snap(
            (
                self.topic.name,
                self.index,
                self.leader if leader is None else leader,
                self.leader_epoch,
                tuple(self.isr),
                self.zk_version,
                self.ctrl_epoch,
                tuple(self.replicas),
                tuple(self.adding),
                tuple(self.removing),
                self.recovering,
                self.topic_id,
                self.leo,
            )
        )


@dataclass
class Topic:
    name: str
    topic_id: str
    unclean: Optional[bool] = None  # topic-level unclean.leader.election.enable; None = broker default
    deleting: bool = False
    partitions: list[Partition] = field(default_factory=list)


@dataclass
class Broker:
    """A broker (and, in KRaft combined mode, the controller node with the same id)."""

    id: int
    alive: bool = False
    shutting_down: bool = False
    broker_epoch: int = 0  # ZK registration czxid (2.2+) / KRaft broker epoch
    known_ctrl_epoch: int = 0  # highest controller epoch this broker accepted
    leader_epochs: dict[str, int] = field(default_factory=dict)  # partition -> leader epoch it applied
    leaders: dict[str, int] = field(default_factory=dict)  # partition -> leader it follows (or itself)

    def forget(self) -> None:
        """A restarted broker process remembers nothing of the previous one."""
        self.leader_epochs.clear()
        self.leaders.clear()
        self.known_ctrl_epoch = 0
        self.shutting_down = False

    @property
    def host(self) -> str:
        return f"kafka{self.id}"


@dataclass
class Controller:
    """The active (or zombie) controller: its broker id, epoch and per-destination correlation ids."""

    id: int
    epoch: int
    epoch_zk_version: int
    corr: dict[int, int] = field(default_factory=dict)

    def next_corr(self, broker: int) -> int:
        """RequestSendThread/NetworkClient ids count per destination from 0 for each new controller."""
        n = self.corr.get(broker, -1) + 1
        self.corr[broker] = n
        return n


class Cluster:
    """All brokers and topics, the active controller, and the ZooKeeper counters that outlive it."""

    def __init__(self, broker_ids: list[int]) -> None:
        self.brokers: dict[int, Broker] = {b: Broker(b) for b in broker_ids}
        self.topics: dict[str, Topic] = {}
        self.controller: Optional[Controller] = None
        self.epoch = 0  # /controller_epoch
        self.epoch_zk_version = -1
        self.czxid = 4294967296 + 20  # ZooKeeper zxid counter for broker epochs
        self.metadata_offset = 100  # KRaft: next write offset of __cluster_metadata

    # liveness as the controller sees it
    def live(self) -> set[int]:
        return {b.id for b in self.brokers.values() if b.alive}

    def shutting_down(self) -> set[int]:
        return {b.id for b in self.brokers.values() if b.alive and b.shutting_down}

    def partitions(self):
        for t in self.topics.values():
            yield from t.partitions

    def next_czxid(self) -> int:
        self.czxid += 3
        return self.czxid
