"""The one answer to "is X -> Y legal?": the replay, the report, the expectations and the simulator ask here.

A line is judged against a ``VersionRange`` (``core.eras``: every release that may have written
it). A transition is forbidden only if *every* release of the range refuses it - Kafka's valid
previous states only ever grew, so one release per rule era (``VersionRange.checkpoints``) decides.
A KRaft controller has no partition/replica state machines: nothing is forbidden there.
"""

from __future__ import annotations

import functools
from typing import Optional, Union

from kafka_forensics.core.eras import VersionRange
from kafka_forensics.core.versions import VersionLike

from .machine import rules_for
from .states import Entity, State, as_entity, parse_state

Transition = tuple[Entity, State, State]


@functools.lru_cache(maxsize=None)
def legal_transitions(vrange: VersionRange) -> frozenset[Transition]:
    """``(entity, from, to)`` for every transition some release of ``vrange`` allows (KRaft: none)."""
    allowed: set[Transition] = set()
    for version in vrange.checkpoints():
        rules = rules_for(version)
        for entity in Entity:
            for to_state, previous in rules.table(entity).items():
                allowed.update((entity, p, to_state) for p in previous)
    return frozenset(allowed)


def _forbids_nothing(vrange: VersionRange) -> bool:
    """A KRaft controller has no partition/replica state machines, and a range without releases has no rules."""
    return vrange.kraft or not vrange.checkpoints()


@functools.lru_cache(maxsize=None)
def legal_pairs(entity: Entity, vrange: VersionRange) -> Optional[frozenset[tuple[str, str]]]:
    """``legal_transitions`` of ``entity`` as ``(from, to)`` state names, the set a logged pair is looked up in
    (a line replay asks once per line); None where nothing is forbidden (KRaft, a range without releases).
    A pair outside it is forbidden if both names are states: ``is_forbidden`` answers that, and raises
    for a name that is none."""
    if _forbids_nothing(vrange):
        return None
    return frozenset((src.value, dst.value) for kind, src, dst in legal_transitions(vrange) if kind is entity)


@functools.lru_cache(maxsize=None)
def states_in(vrange: VersionRange) -> frozenset[tuple[Entity, State]]:
    """``(entity, state)`` for every state that exists in some release of ``vrange`` (KRaft: none)."""
    return frozenset(
        (entity, s) for version in vrange.checkpoints() for entity in Entity for s in rules_for(version).states(entity)
    )


@functools.lru_cache(maxsize=4096)
def is_forbidden(
    entity: Union[str, Entity], from_state: Union[str, State], to_state: Union[str, State], vrange: VersionRange
) -> bool:
    """Would every release of ``vrange`` refuse ``from_state -> to_state``? (KRaft: never.)

    Raises ``UnknownStateError`` for a name that is no Kafka state at all (a typo is a bug, not an
    illegal transition)."""
    if _forbids_nothing(vrange):
        return False
    kind = as_entity(entity)
    return (kind, parse_state(kind, from_state), parse_state(kind, to_state)) not in legal_transitions(vrange)


def previous_states(entity: Union[str, Entity], to_state: Union[str, State], vrange: VersionRange) -> tuple[State, ...]:
    """Valid previous states of ``to_state`` in the range's most permissive release (its last): what an
    illegal-transition finding quotes. Empty for KRaft."""
    if vrange.kraft or vrange.last is None:
        return ()
    return tuple(rules_for(vrange.last).valid_previous_states(entity, to_state))


def is_valid_transition(
    entity: Union[str, Entity], from_state: Union[str, State], to_state: Union[str, State], version: VersionLike
) -> bool:
    """Would ``version``'s controller accept ``from_state -> to_state``? (One release: a range of one.)

    Raises ``UnknownKafkaVersionError`` for a version Kafka never shipped, ``NoZooKeeperControllerError``
    for 4.0+ and ``UnknownStateError`` for a name that is no Kafka state."""
    release = rules_for(version).kafka_version
    return not is_forbidden(entity, from_state, to_state, VersionRange(release, release))


__all__ = ["is_forbidden", "is_valid_transition", "legal_pairs", "legal_transitions", "previous_states", "states_in"]
