"""What the simulated controller may do, asked of ``kafka_forensics.statemachines`` - never re-coded here.

Valid previous states, elections, the controller's ISR shrink and the failover out-of-band states
all come from the project's embedded copy of Kafka's state machines, so the simulator and the
replay check each other: if the statemachines package were wrong, simulated logs of correct
behaviour would be flagged by the replay.
"""

from __future__ import annotations

import functools
from typing import Iterable, Optional, Sequence

from kafka_forensics.core.eras import VersionRange
from kafka_forensics.core.rule_changes import has_rule
from kafka_forensics.statemachines import elections, isr_shrink
from kafka_forensics.statemachines.legality import is_forbidden
from kafka_forensics.statemachines.machine import rules_for
from kafka_forensics.statemachines.states import Entity

from .profile import Profile


class Legality:
    """The rules of one release, with answers cached (the scale mode asks millions of times)."""

    def __init__(self, prof: Profile) -> None:
        self.version = prof.version
        self._release = VersionRange(self.version, self.version)
        self._valid: dict[tuple, bool] = {}

    @functools.cached_property
    def rules(self):
        """The ZooKeeper-mode state machines; asked for only by ZooKeeper-mode operations (4.x, KRaft
        only, has none: ``NoZooKeeperControllerError``)."""
        return rules_for(self.version)

    @property
    def oob(self):
        return self.rules.out_of_band

    def valid(self, entity: Entity, frm: str, to: str) -> bool:
        key = (entity, frm, to)
        ok = self._valid.get(key)
        if ok is None:
            ok = self._valid[key] = not is_forbidden(entity, frm, to, self._release)
        return ok

    def valid_partition(self, frm: str, to: str) -> bool:
        return self.valid(Entity.PARTITION, frm, to)

    def valid_replica(self, frm: str, to: str) -> bool:
        return self.valid(Entity.REPLICA, frm, to)

    def previous_states(self, entity: Entity, to: str) -> tuple[str, ...]:
        """Valid previous states of ``to``, as names (for Kafka's own rejection message)."""
        return tuple(s.value for s in self.rules.valid_previous_states(entity, to))

    def has(self, key: str) -> bool:
        return has_rule(self.version, key)

    # ---- elections (kafka_forensics.statemachines.elections) ---------------------------------
    def new_partition(self, assignment: Sequence[int], live: Iterable[int], sd: Iterable[int] = ()):
        return elections.new_partition_election(self.version, assignment, live, shutting_down=sd)

    def offline(self, assignment, isr, live, sd=(), unclean: Optional[bool] = None):
        return elections.offline_election(
            self.version, assignment, isr, live, shutting_down=sd, unclean_allowed=unclean
        )

    def reassign(self, target, isr, live, sd=()):
        return elections.reassign_election(self.version, target, isr, live, shutting_down=sd)

    def preferred(self, assignment, isr, live, current_leader, sd=()):
        return elections.preferred_election(
            self.version, assignment, isr, live, current_leader=current_leader, shutting_down=sd
        )

    def preferred_skipped(self, assignment, current_leader) -> bool:
        return elections.preferred_election_skipped(self.version, assignment, current_leader)

    def controlled_shutdown(self, assignment, isr, live, sd, current_leader):
        return elections.controlled_shutdown_election(
            self.version, assignment, isr, live, sd, current_leader=current_leader
        )

    def remove_from_isr(self, leader: int, isr: Sequence[int], replica: int, unclean: Optional[bool] = None):
        return isr_shrink.remove_replica_from_isr(self.version, leader, isr, replica, unclean_allowed=unclean)

    def default_unclean(self) -> bool:
        return elections.default_unclean_leader_election(self.version)
