"""Kafka 3.x ZooKeeper-mode templates (rendered as 3.6.2).

Renderings carry ``leaderRecoveryState`` (3.2, KIP-704), ``partitionEpoch`` (3.3) and
``isrWithBrokerEpoch`` (3.5); the broker's ``Leader/Follower .. starts at ..`` lines gain the topic
id, partition epoch and previous leader (Partition.scala@3.6.2); ``ISR updated to 1,2  and version
updated to N`` has its double space (3.5.2+, the empty ``(under-min-isr)`` slot).
"""

from __future__ import annotations

from .render import bracket_csv
from .templates_base import INFO
from .templates_zk_2_6 import Zk26Templates


class Zk3xTemplates(Zk26Templates):
    """Kafka 3.6.2 in ZooKeeper mode."""

    def isr_updated(self, b, p):
        return self._isr_updated_v35(b, p)

    @staticmethod
    def _opt(v) -> str:
        return "None" if v is None or v < 0 else f"Some({v})"

    def leader_starts(self, b, it):
        # Partition.makeLeader@3.6.2-HEAD INFO; "{underMinIsr}" is empty here, hence "[] . Previous".
        s = it[0]
        self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}Leader {s.name} with topic id Some({s[11]}) starts at leader epoch {s[3]} from "
            f"offset {s[12]} with partition epoch {s[5]}, high watermark {s[12]}, ISR {bracket_csv(s[4])}, "
            f"adding replicas {bracket_csv(s[8])} and removing replicas {bracket_csv(s[9])} . Previous leader "
            f"{self._opt(it[3])} and previous leader epoch was {it[2]}.",
            "leader_starts",
            {"topic": s[0], "partition": s[1], "leader_epoch": s[3], "isr": list(s[4]), "partition_epoch": s[5]},
        )

    def follower_starts(self, b, it):
        # Partition.makeFollower@3.6.2-HEAD INFO.
        s = it[0]
        self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}Follower {s.name} starts at leader epoch {s[3]} from offset {s[12]} with "
            f"partition epoch {s[5]} and high watermark {s[12]}. Current leader is {s[2]}. Previous leader "
            f"{self._opt(it[3])} and previous leader epoch was {it[2]}.",
            "follower_starts",
            {"topic": s[0], "partition": s[1], "leader_epoch": s[3], "leader": s[2]},
        )

    def sc_b_leader_skipped(self, b, c, corr, s):
        """ReplicaManager.makeLeaders@3.6.2:2058 has no "Skipped the become-leader" branch any more
        (and Partition.makeLeader only skips a leader epoch that is not new, which ZooKeeper-mode
        requests never carry past ReplicaManager's epoch check)."""

    def sc_b_follower_skipped(self, b, c, corr, s):
        """The 1.0.2-3.2.3 "Skipped the become-follower state change .." line is gone in 3.3+."""

    def sc_b_recovered(self, b, p):
        # Partition.scala@3.3.2-HEAD INFO: the leader of an unclean election finishes log recovery.
        self.o.sc(
            b,
            INFO,
            f"{self.bp(b)}The topic partition {p.name} was marked as RECOVERING. Marking the topic "
            f"partition as RECOVERED.",
            "leader_recovery",
            {"topic": p.topic.name, "partition": p.index},
        )
