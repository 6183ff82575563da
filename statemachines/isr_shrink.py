"""The controller's own ISR shrink when a replica goes ``OfflineReplica``, per era.

This is the write behind ``… after removing replica R from the ISR …`` and the only way the
ZooKeeper controller can empty an ISR, so it decides whether an empty ISR in a log is legal
(see ``invariants.empty_isr_allowed``). Leader-driven shrinks (``Shrinking ISR from …``) are a
different path and never touch the leader or its epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from kafka_forensics.core.eras import require_zookeeper_controller
from kafka_forensics.core.rule_changes import has_rule
from kafka_forensics.core.versions import VersionLike

from .elections import default_unclean_leader_election

NO_LEADER = -1  # LeaderAndIsr.NoLeader (K:api/LeaderAndIsr.scala@1.0.2:25; literal -1 in 0.8.0)


@dataclass(frozen=True)
class IsrRemoval:
    """Leader and ISR after the removal; ``written`` = a ZooKeeper write with leaderEpoch+1 happened."""

    leader: int
    isr: tuple[int, ...]
    written: bool


def remove_replica_from_isr(
    version: VersionLike,
    leader: int,
    isr: Sequence[int],
    replica: int,
    *,
    unclean_allowed: Optional[bool] = None,
) -> IsrRemoval:
    """What the controller writes when ``replica`` goes offline.

    No write if ``replica`` is not in the ISR. Otherwise leader -> -1 if it was the leader, and:
    0.8.0 - 0.8.1.x: removed unconditionally, the ISR may become empty
    (K:controller/KafkaController.scala@0.8.0:746-790);
    0.8.2 - 1.0.x: the last member is kept when unclean election is disabled for the topic,
    KAFKA-1028 ("Retaining last ISR …", K:controller/KafkaController.scala@0.8.2.2:1005-1017,
    @1.0.2:1057-1086); ``unclean_allowed`` None = the version's default;
    1.1+: an ISR of size 1 is never shrunk (K:controller/ReplicaStateMachine.scala@1.1.1:290,
    @3.9.0-rc3:345), whatever the unclean setting.
    """
    v = require_zookeeper_controller(version)
    current = tuple(isr)
    if replica not in current:
        return IsrRemoval(leader, current, written=False)
    new_leader = NO_LEADER if replica == leader else leader
    if has_rule(v, "election_algorithms"):
        new_isr = current if len(current) == 1 else tuple(r for r in current if r != replica)
    else:
        new_isr = tuple(r for r in current if r != replica)
        if not new_isr and has_rule(v, "unclean_leader_election_config"):
            unclean = default_unclean_leader_election(v) if unclean_allowed is None else unclean_allowed
            if not unclean:
                new_isr = current
    return IsrRemoval(new_leader, new_isr, written=True)
