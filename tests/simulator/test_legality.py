"""The simulator only does what kafka_forensics.statemachines allows: every logged transition is valid
for the release, every leader it elects is the one the era's election rule picks, and Kafka's own
refusals appear exactly where the rules say (KAFKA-8237 before 2.3) - faults excepted."""

from __future__ import annotations

import pytest

from kafka_forensics.simulator.engine import Simulation
from kafka_forensics.simulator.profile import PROFILES
from kafka_forensics.statemachines import is_valid_transition
from kafka_forensics.statemachines.states import Entity
from tests.support.simulator import CASES, case_id, parse_dir, simulated

TRACE_ZK = [
    c
    for c in CASES
    if not PROFILES["3.9-kraft" if c[1].startswith("3.9") else c[1]].kraft
    and (c[1] in ("0.10.2", "1.1", "2.4") or c[2])
]


@pytest.mark.parametrize("case", TRACE_ZK, ids=case_id)
def test_logged_transitions_are_legal(case):
    res = simulated(*case)
    version = res.truth["kafka_version"]
    injected = {e for f in res.truth["findings"] if f["rule"] == "illegal_transition" for e in f["evidence"]}
    for name, result in parse_dir(res.out_dir, res.files).items():
        for ev in result.events:
            if ev["event_type"] not in ("partition_state_change", "replica_state_change"):
                continue
            if f"{name}:{ev['line_no']}" in injected:
                continue
            entity = Entity.PARTITION if ev["event_type"] == "partition_state_change" else Entity.REPLICA
            assert is_valid_transition(entity, ev["from_state"], ev["to_state"], version), (
                name,
                ev["line_no"],
                ev["message"],
            )


@pytest.mark.parametrize("version,refusals", [("0.10.2", True), ("1.1", True), ("2.4", False), ("3.6", False)])
def test_kafka_8237_refusals_only_before_2_3(version, refusals):
    res = simulated("topic-deletion-stuck", version)
    failed = [
        ev
        for r in parse_dir(res.out_dir, res.files).values()
        for ev in r.events
        if ev["event_type"] == "replica_state_change_failed"
    ]
    if refusals:
        assert failed and all(
            ev["from_state"] == "OfflineReplica" and ev["to_state"] == "ReplicaDeletionIneligible" for ev in failed
        )
    else:
        assert failed == []


def test_unclean_default_follows_the_release(tmp_path):
    """0.10.2's broker default unclean.leader.election.enable=true elects an out-of-ISR leader; 1.1's
    default false leaves the partition leaderless (statemachines.elections)."""
    for version, elected in (("0.10.2", True), ("1.1", False)):
        sim = Simulation(tmp_path / version, version, seed=1)
        sim.boot(controller=3)
        t = sim.ops.create_topic("t", [[1, 2, 3]])
        sim.ops.lag_out(t.partitions[0], [2, 3])
        sim.ops.broker_crash(1)
        sim.ops.broker_change(sim.cluster.controller, deleted=[1])
        p = t.partitions[0]
        assert (p.leader == 2 and p.isr == [2]) if elected else (p.leader == -1 and p.isr == [1])
        sim.finish("unit")


def test_failover_replica_states_follow_kafka_3143(tmp_path):
    """<= 2.2 dead replicas stay ReplicaDeletionIneligible at failover; 2.3+ go OfflineReplica."""
    for version, dead_state in (("1.1", "ReplicaDeletionIneligible"), ("2.4", "OfflineReplica")):
        sim = Simulation(tmp_path / version, version, seed=1)
        sim.boot(controller=1)
        t = sim.ops.create_topic("t", [[2, 1, 3]])
        sim.ops.broker_crash(1)
        sim.ops.elect(2)
        assert t.partitions[0].rstates[1] == dead_state
        sim.finish("unit")
