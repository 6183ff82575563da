"""The state machines of a version as data (JSON-ready) and as text tables for people.

Both renderings are deterministic: states appear in Kafka's declaration order, so the same
version always prints byte-identical output (reports and tests can diff it).
"""

from __future__ import annotations

from kafka_forensics.core.eras import ERAS
from kafka_forensics.core.versions import VersionLike

from .machine import StateMachineRules, rules_for
from .states import Entity, state_codes


def rules_as_dict(version: VersionLike) -> dict:
    """``{"kafka_version": V, "partition": {target: [previous…]}, "replica": {…}}``."""
    rules = rules_for(version)
    return {
        "kafka_version": str(rules.kafka_version),
        "partition": {t.value: [p.value for p in prev] for t, prev in rules.partition.items()},
        "replica": {t.value: [p.value for p in prev] for t, prev in rules.replica.items()},
    }


def _table(rules: StateMachineRules, entity: Entity) -> list[str]:
    table = rules.table(entity)
    codes = state_codes(entity, rules.kafka_version)
    width = max(len(s.value) for s in table)
    lines = [f"{entity.value.capitalize()} states (target state <- valid previous states)"]
    for target, previous in table.items():
        sources = ", ".join(p.value for p in previous) if previous else "(none)"
        lines.append(f"  {codes[target]}  {target.value:<{width}}  <- {sources}")
    return lines


def rules_as_text(version: VersionLike) -> str:
    """A table per entity, then the out-of-band assignments a replayer must apply unlogged."""
    rules = rules_for(version)
    era = rules.era
    oob = rules.out_of_band
    offline_target = oob.startup_replica_transitions.replica_offline or (
        f"stay {oob.failover_replicas.replica_offline}"
    )
    lines = [
        f"Kafka {rules.kafka_version}: ZooKeeper controller state machines (rules of {era.label})",
        "",
        *_table(rules, Entity.PARTITION),
        "",
        *_table(rules, Entity.REPLICA),
        "",
        "Out-of-band assignments (no transition is logged)",
        f"  unknown partition / replica           = {oob.initial_partition_state} / {oob.initial_replica_state}",
        f"  failover, leader online               = {oob.failover_partitions.leader_online}",
        f"  failover, leader not online (or -1)   = {oob.failover_partitions.leader_not_online}",
        f"  failover, no leader/ISR znode         = {oob.failover_partitions.no_leader_and_isr}",
        f"  failover, replica online / offline    = {oob.failover_replicas.replica_online}"
        f" / {oob.failover_replicas.replica_offline}",
        f"  removed from the state map on         = {oob.replica_removed_from_map_on}",
        "Forced transitions right after failover",
        f"  partitions {' / '.join(s.value for s in oob.startup_partition_sources)} -> {oob.startup_partition_target}",
        f"  replicas online -> {oob.startup_replica_transitions.replica_online}; offline -> {offline_target}",
    ]
    if era.changes:
        lines += ["", f"What changed in {era.first.line}:"]
        lines += [f"  - {c.summary} [{c.jira}; {c.evidence}]" for c in era.changes]
    return "\n".join(lines) + "\n"


def eras_as_text() -> str:
    """The era table: version range -> what changed at its start (for ``--help`` and docs)."""
    lines = []
    for era in ERAS:
        baseline = "baseline: 0.8.0, the first release with replication and a controller"
        what = "; ".join(c.summary for c in era.changes) or baseline
        lines.append(f"{era.label}: {what}")
    return "\n".join(lines) + "\n"
