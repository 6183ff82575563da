"""The legal state names and transitions per log dialect, as small tables the suites join against.

Everything here is *derived* from ``statemachines.legality`` (the one legality answer, over the
dialect's release range from ``core.eras``): the suites hold no second copy of Kafka's rules. A
line is judged against every release its dialect may have come from, and a name or a transition
is legal if *some* release in that range accepts it (the same "illegal only if every release
forbids it" stance the replay takes). KRaft lines are not judged: a KRaft controller has no
partition/replica state machines.
"""

from __future__ import annotations

from functools import lru_cache

from kafka_forensics.core.eras import AUTO, DIALECTS, KRAFT_DIALECT, range_for_dialect
from kafka_forensics.statemachines.legality import legal_transitions, states_in
from kafka_forensics.statemachines.states import Entity

# event types whose from_state/to_state belong to one state machine
STATE_CHANGE_EVENT_TYPES: dict[str, str] = {
    "partition_state_change": Entity.PARTITION.value,
    "replica_state_change": Entity.REPLICA.value,
}


def judged_dialects() -> tuple[str, ...]:
    """The ZooKeeper dialects plus ``auto`` (any unknown dialect is judged as ``auto``)."""
    return tuple(d.name for d in DIALECTS if not d.kraft) + (AUTO,)


@lru_cache(maxsize=1)
def legal_transition_rows() -> tuple[tuple[str, str, str, str], ...]:
    """``(dialect, entity, from_state, to_state)`` for every transition some release of the dialect allows."""
    rows = {
        (dialect, entity.value, src.value, dst.value)
        for dialect in judged_dialects()
        for entity, src, dst in legal_transitions(range_for_dialect(dialect))
    }
    return tuple(sorted(rows))


@lru_cache(maxsize=1)
def era_state_rows() -> tuple[tuple[str, str, str], ...]:
    """``(dialect, entity, state)`` for every state name that exists in some release of the dialect."""
    rows = {
        (dialect, entity.value, state.value)
        for dialect in judged_dialects()
        for entity, state in states_in(range_for_dialect(dialect))
    }
    return tuple(sorted(rows))


def dialect_sql(column: str) -> str:
    """SQL mapping a line's dialect to the key of the tables above (unknown/null -> ``auto``)."""
    known = ", ".join(f"'{d}'" for d in judged_dialects() if d != AUTO)
    return f"CASE WHEN {column} IN ({known}) THEN {column} ELSE '{AUTO}' END"


def entity_sql(column: str) -> str:
    """SQL mapping an event type to the state machine its states belong to (null = none)."""
    cases = " ".join(f"WHEN '{t}' THEN '{e}'" for t, e in STATE_CHANGE_EVENT_TYPES.items())
    return f"CASE {column} {cases} END"


__all__ = [
    "KRAFT_DIALECT",
    "STATE_CHANGE_EVENT_TYPES",
    "dialect_sql",
    "entity_sql",
    "era_state_rows",
    "judged_dialects",
    "legal_transition_rows",
]
