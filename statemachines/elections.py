"""Kafka's leader-election rules, as coded, per era: who leads next, with which ISR, told to whom.

A replayer checks every logged leader change against these: a leader Kafka could not have
picked means lost or reordered lines, a zombie controller, or an unclean election. Up to 1.0.x
the rules live in ``PartitionLeaderSelector`` classes and differ release by release; from 1.1
they are ``PartitionLeaderElectionAlgorithms`` (KAFKA-5642) plus the ``leaderFor*`` wrappers.

Liveness inputs, the same for every function:
* ``live`` - brokers registered in ZooKeeper (``/brokers/ids``), *including* shutting-down ones
  (Kafka's ``liveOrShuttingDownBrokerIds``). From 1.0 also drop, per partition, brokers whose
  replica sits on an offline log dir (``isReplicaOnline``).
* ``shutting_down`` - brokers in controlled shutdown. Kafka's ``liveBrokerIds`` excludes them in
  every version (K:controller/KafkaController.scala@0.8.0:67, @0.8.2.2:70;
  K:controller/ControllerContext.scala@1.1.1:50, @3.9.0-rc3:218), so they never win an offline,
  reassignment or preferred election.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from kafka_forensics.core.eras import require_zookeeper_controller
from kafka_forensics.core.rule_changes import has_rule
from kafka_forensics.core.versions import VersionLike


@dataclass(frozen=True)
class ElectionResult:
    """Outcome of one election.

    ``leader`` is None when Kafka would fail the election (the partition keeps its state and
    leader/ISR). ``isr`` is the ISR written with the new leader (None on failure). ``recipients``
    are the brokers the LeaderAndIsr request goes to. ``not_needed``: up to 1.0.x a preferred
    election whose preferred replica already leads is swallowed (``LeaderElectionNotNeededException``):
    logged as Online -> Online, but no ZooKeeper write and no epoch bump.
    """

    leader: Optional[int]
    isr: Optional[tuple[int, ...]]
    unclean: bool = False
    recipients: tuple[int, ...] = ()
    leader_recovering: bool = False
    not_needed: bool = False
    creates_partition_state: bool = False  # New -> Online: znode created with leaderEpoch 0

    @property
    def elected(self) -> bool:
        return self.leader is not None

    @property
    def bumps_leader_epoch(self) -> bool:
        """Every successful election of an existing partition writes leaderEpoch+1
        (``newLeader``/``newLeaderAndIsr``, K:api/LeaderAndIsr.scala@2.4.1)."""
        return self.leader is not None and not self.not_needed and not self.creates_partition_state


_FAILED = ElectionResult(leader=None, isr=None)


def _online(live: Iterable[int], shutting_down: Iterable[int]) -> set[int]:
    return set(live) - set(shutting_down)


def default_unclean_leader_election(version: VersionLike) -> bool:
    """Whether an unclean (non-ISR) leader may be elected when nothing overrides the default.

    0.8.0 - 0.8.1.x: always (no config; K:controller/PartitionLeaderSelector.scala@0.8.1.1:45-83).
    0.8.2 - 0.10.2.x: ``unclean.leader.election.enable`` default true
    (K:server/KafkaConfig.scala@0.8.2.0:284, @0.10.2.2:132).
    0.11.0+: default false (KAFKA-4623 / KIP-106, K:server/KafkaConfig.scala@0.11.0.0:134).
    """
    return not has_rule(version, "unclean_default_false")


def _unclean_allowed(version: VersionLike, unclean_allowed: Optional[bool]) -> bool:
    if not has_rule(version, "unclean_leader_election_config"):
        return True  # the config does not exist yet: unclean election is always performed
    if unclean_allowed is None:
        return default_unclean_leader_election(version)
    return unclean_allowed


def new_partition_election(
    version: VersionLike,
    assignment: Sequence[int],
    live: Iterable[int],
    *,
    shutting_down: Iterable[int] = (),
) -> ElectionResult:
    """NewPartition -> OnlinePartition (topic/partition creation): the first leader and ISR.

    Leader = first live assigned replica, ISR = all live assigned replicas (assignment order),
    leaderEpoch 0, LeaderAndIsr to the ISR; no live replica -> "No assigned replica is alive" and
    the partition stays New. Same rule in every version: K:controller/PartitionStateMachine.scala
    @0.8.0:234-260 (initializeLeaderAndIsrForPartition), @3.9.0-rc3:274-326.
    """
    require_zookeeper_controller(version)
    online = _online(live, shutting_down)
    live_assigned = tuple(r for r in assignment if r in online)
    if not live_assigned:
        return _FAILED
    return ElectionResult(live_assigned[0], live_assigned, False, live_assigned, creates_partition_state=True)


def offline_election(
    version: VersionLike,
    assignment: Sequence[int],
    isr: Sequence[int],
    live: Iterable[int],
    *,
    shutting_down: Iterable[int] = (),
    unclean_allowed: Optional[bool] = None,
    leader_recovery_supported: Optional[bool] = None,
) -> ElectionResult:
    """OfflinePartition -> OnlinePartition election (failover, broker change, unclean-config
    change, 2.4+ admin ``ElectLeaders``); New -> Online uses ``new_partition_election`` instead.

    ``unclean_allowed``: the topic's effective ``unclean.leader.election.enable`` (or True for a
    2.4+ admin ``ElectLeaders(UNCLEAN)``); None = the version's default; ignored before 0.8.2,
    where unclean election is unconditional. ``leader_recovery_supported``: IBP >= 3.2-IV0
    (None = true from 3.2, where the IBP defaults to the release's own version,
    K:server/KafkaConfig.scala@3.2.0:175).
    """
    v = require_zookeeper_controller(version)
    online = _online(live, shutting_down)
    live_assigned = tuple(r for r in assignment if r in online)
    live_isr = tuple(r for r in isr if r in online)
    unclean_ok = _unclean_allowed(v, unclean_allowed)

    if has_rule(v, "election_algorithms"):
        # K:controller/PartitionStateMachine.scala@1.1.1:344-376,437-449; Election.scala@3.9.0-rc3:28-58;
        # PartitionStateMachine.scala@3.9.0-rc3:472-543. The topic config is only consulted for
        # partitions without a live ISR member (collectUncleanLeaderElectionState).
        unclean_ok = unclean_ok and not live_isr
        leader = next((r for r in assignment if r in online and r in isr), None)
        if leader is None and unclean_ok:
            leader = next((r for r in assignment if r in online), None)
        if leader is None:
            return _FAILED
        unclean = leader not in isr
        new_isr = live_isr if not unclean else (leader,)
        # KIP-704 (3.2+): an unclean leader is marked RECOVERING if the IBP supports it.
        recovering = unclean and has_rule(v, "leader_recovery_on_unclean") and (leader_recovery_supported is not False)
        return ElectionResult(leader, new_isr, unclean, live_assigned, leader_recovering=recovering)

    if live_isr:
        if has_rule(v, "offline_leader_assignment_order"):
            # KAFKA-1503: first live assigned replica that is in the live ISR; `.head` of an empty
            # list throws -> failed election. K:controller/PartitionLeaderSelector.scala@0.8.2.2:85-90.
            in_isr = [r for r in live_assigned if r in live_isr]
            if not in_isr:
                return _FAILED
            leader = in_isr[0]
        else:
            # First live ISR member in ISR order. K:controller/PartitionLeaderSelector.scala@0.8.0:70-74.
            leader = live_isr[0]
        return ElectionResult(leader, live_isr, False, live_assigned)
    # No live ISR member. K:controller/PartitionLeaderSelector.scala@0.8.0:54-69, @0.8.2.2:60-84.
    if not unclean_ok or not live_assigned:
        return _FAILED
    leader = live_assigned[0]
    return ElectionResult(leader, (leader,), True, live_assigned)


def reassign_election(
    version: VersionLike,
    reassigned_replicas: Sequence[int],
    isr: Sequence[int],
    live: Iterable[int],
    *,
    shutting_down: Iterable[int] = (),
) -> ElectionResult:
    """Leader move at reassignment completion (current leader not in the target set, or dead).

    ``reassigned_replicas``: RAR (<= 2.3) / target replicas TRS (2.4+), in their order.
    ISR unchanged; LeaderAndIsr to all of them.
    """
    v = require_zookeeper_controller(version)
    online = _online(live, shutting_down)
    if has_rule(v, "reassign_leader_from_isr"):
        # K:controller/PartitionLeaderSelector.scala@0.8.1.1:90-117, @1.0.2:103-129;
        # PartitionStateMachine.scala@1.1.1:378-388,451-453; Election.scala@3.9.0-rc3:82-91.
        leader = next((r for r in reassigned_replicas if r in online and r in isr), None)
    else:
        # 0.8.0 checks liveness only ("The reassigned replicas are already in the ISR when
        # selectLeader is called"). K:controller/PartitionLeaderSelector.scala@0.8.0:87-113.
        leader = next((r for r in reassigned_replicas if r in online), None)
    if leader is None:
        return _FAILED
    return ElectionResult(leader, tuple(isr), leader not in isr, tuple(reassigned_replicas))


def preferred_election(
    version: VersionLike,
    assignment: Sequence[int],
    isr: Sequence[int],
    live: Iterable[int],
    *,
    current_leader: Optional[int] = None,
    shutting_down: Iterable[int] = (),
) -> ElectionResult:
    """Preferred-replica election (manual, admin, auto-rebalance): the first assigned replica.

    ``current_leader`` is required before 1.1, where the selector itself short-cuts when the
    preferred replica already leads. From 1.1 the algorithm re-elects it (leaderEpoch+1); from
    2.2 the controller skips such partitions before electing, see ``preferred_election_skipped``.
    """
    v = require_zookeeper_controller(version)
    online = _online(live, shutting_down)
    if not assignment:
        return _FAILED
    preferred = assignment[0]
    if has_rule(v, "election_algorithms"):
        # K:controller/PartitionStateMachine.scala@1.1.1:390-400,455-457; Election.scala@3.9.0-rc3:109-118.
        if preferred in online and preferred in isr:
            return ElectionResult(preferred, tuple(isr), False, tuple(assignment))
        return _FAILED
    # K:controller/PartitionLeaderSelector.scala@0.8.0:120-145, @0.8.2.2:139-164, @1.0.2:136-162.
    if current_leader is None:
        raise ValueError(f"preferred_election for Kafka {v} needs current_leader (pre-1.1 short-cut)")
    if current_leader == preferred:
        return ElectionResult(preferred, tuple(isr), False, (), not_needed=True)
    if preferred in online and preferred in isr:
        return ElectionResult(preferred, tuple(isr), False, tuple(assignment))
    return _FAILED


def preferred_election_skipped(version: VersionLike, assignment: Sequence[int], current_leader: int) -> bool:
    """True when the controller does not even start a preferred election for the partition.

    From 2.2.0 partitions already led by their preferred replica are filtered out (answered
    NONE, from 2.4 ELECTION_NOT_NEEDED): no state change, no epoch bump
    (K:controller/KafkaController.scala@2.2.0:1589-1594, @3.9.0-rc3:2234-2262).
    """
    v = require_zookeeper_controller(version)
    return (
        bool(assignment)
        and has_rule(v, "preferred_election_skips_preferred_leader")
        and (current_leader == assignment[0])
    )


def controlled_shutdown_election(
    version: VersionLike,
    assignment: Sequence[int],
    isr: Sequence[int],
    live: Iterable[int],
    shutting_down: Iterable[int],
    *,
    current_leader: Optional[int] = None,
) -> ElectionResult:
    """Moving leadership off brokers in controlled shutdown. New ISR = ISR minus shutting-down brokers.

    ``current_leader`` is required for 0.8.0, whose selector also drops it from the new ISR.
    """
    v = require_zookeeper_controller(version)
    sd = set(shutting_down)
    registered = set(live)
    online = registered - sd
    live_or_sd_assigned = tuple(r for r in assignment if r in registered)
    new_isr = tuple(r for r in isr if r not in sd)

    if has_rule(v, "election_algorithms"):
        # K:controller/PartitionStateMachine.scala@1.1.1:402-413,459-461; Election.scala@3.9.0-rc3:136-149.
        leader = next((r for r in assignment if r in online and r in isr and r not in sd), None)
        if leader is None:
            return _FAILED
        if has_rule(v, "controlled_shutdown_recipients_include_shutting_down"):
            recipients = live_or_sd_assigned  # KAFKA-7482, @2.1.0:440-449
        else:
            recipients = tuple(r for r in assignment if r in online)  # 1.1.0 - 2.0.x regression
        return ElectionResult(leader, new_isr, False, recipients)

    if has_rule(v, "controlled_shutdown_assignment_order"):
        # KAFKA-3670: K:controller/PartitionLeaderSelector.scala@0.10.0.0:171-197, @1.0.2:169-190.
        leader = next((r for r in live_or_sd_assigned if r in new_isr), None)
    elif has_rule(v, "controlled_shutdown_isr_minus_shutting_down"):
        # Head of ISR - SD, no liveness check. K:controller/PartitionLeaderSelector.scala@0.8.1.1:156-185.
        leader = new_isr[0] if new_isr else None
    else:
        # 0.8.0 also removes the current leader. K:controller/PartitionLeaderSelector.scala@0.8.0:151-181.
        if current_leader is None:
            raise ValueError(f"controlled_shutdown_election for Kafka {v} needs current_leader")
        new_isr = tuple(r for r in new_isr if r != current_leader)
        leader = new_isr[0] if new_isr else None
    if leader is None:
        return _FAILED
    return ElectionResult(leader, new_isr, False, live_or_sd_assigned)


def is_unclean_leader_change(previous_isr: Sequence[int], new_leader: int) -> bool:
    """A new leader outside the previous ISR can only come from an unclean election (§3, I11)."""
    return new_leader >= 0 and new_leader not in previous_isr


def written_by_clean_election(new_leader: int, new_isr: Sequence[int]) -> bool:
    """Does the state an election wrote prove by itself that the election was clean?

    Every unclean election writes ISR = [leader]: 0.8.x ``OfflinePartitionLeaderSelector``
    (``newIsr = List(newLeader)``, K:controller/PartitionLeaderSelector.scala@0.8.2.2:79-83), 1.1+
    ``leaderForOffline`` (``if (isr.contains(leader)) isr.filter(live) else List(leader)``,
    K:controller/Election.scala@3.9.0-rc3:40-43; PartitionStateMachine.scala@1.1.1:438-449). The
    PREFERRED, REASSIGN and CONTROLLED_SHUTDOWN elections pick the leader from the ISR and keep it (less
    the shutting-down brokers, Election.scala@3.9.0-rc3:82-91,109-118,136-149). So a new ISR that holds its
    leader and another replica was written by a clean election, whatever ISR the logs showed before (2.6+
    logs ISR expansions in no state-change.log). ``[leader]`` alone is ambiguous: also what a clean
    election writes when the other ISR members are dead."""
    return new_leader >= 0 and new_leader in new_isr and len(set(new_isr)) >= 2


__all__ = [
    "ElectionResult",
    "controlled_shutdown_election",
    "default_unclean_leader_election",
    "is_unclean_leader_change",
    "new_partition_election",
    "offline_election",
    "preferred_election",
    "preferred_election_skipped",
    "reassign_election",
    "written_by_clean_election",
]
