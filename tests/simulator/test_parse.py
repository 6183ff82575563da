"""The simulator and the parser agree: every simulated line parses into the event type (and fields)
the simulator meant, nothing is quarantined, and the reconciliation holds - on every scenario of
every supported release, at the release's default level and at TRACE.

The simulator renders from its own templates (simulator/templates_*.py) and never imports
kafka_forensics.parsers (except its errors), so a disagreement is a bug in one of the two.
"""

from __future__ import annotations

import ast
from collections import Counter

import pytest

from tests.support.paths import REPO
from tests.support.simulator import CASES, KNOWN_GRAMMAR_GAPS, case_id, parse_dir, simulated

SIMULATOR_DIR = REPO / "simulator"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_line_parses_as_the_simulator_meant(case):
    scenario, version, trace = case
    res = simulated(scenario, version, trace)
    expected = {m[0]: m for m in res.manifest}
    parsed = parse_dir(res.out_dir, res.files)
    counts = Counter()
    wrong = []
    for name, result in parsed.items():
        s = result.summary
        assert result.quarantine == [], f"{name}: {result.quarantine[:3]}"
        assert s["lines_read"] == s["records"] + s["continuation_lines"] + s["quarantined"]
        for ev in result.events:
            ref = f"{name}:{ev['line_no']}"
            want = expected.get(ref)
            assert want is not None, f"{ref} parsed as a record the simulator did not write"
            _, want_type, fields, _kind, _broker = want
            counts["typed" if ev["event_type"] != "other" else "other"] += 1
            if want_type and want_type != ev["event_type"] and (want_type, ev["event_type"]) not in KNOWN_GRAMMAR_GAPS:
                wrong.append((ref, want_type, ev["event_type"], ev["message"][:160]))
            for key, value in (fields or {}).items():
                if (
                    not key.startswith("attrs.")
                    and ev.get(key) != value
                    and (want_type, ev["event_type"]) not in KNOWN_GRAMMAR_GAPS
                ):
                    wrong.append((ref, f"{want_type}.{key}", value, ev.get(key)))
    assert not wrong, wrong[:10]
    assert counts["typed"] + counts["other"] == res.records
    # Every line the simulator writes says what it expects; "other" only where it means it (server
    # lifecycle lines, KRaft record dumps the grammar leaves untyped).
    assert all(m[1] for m in res.manifest), [m for m in res.manifest if not m[1]][:5]


@pytest.mark.parametrize(
    "scenario,version,event_types",
    [
        # Before 2.7 the zombie has nothing queued: it resigns without a request (recorded real 1.1.1).
        ("zombie-controller", "1.1", {"zk_session_expired", "controller_resigning", "controller_resigned"}),
        # 2.7+: a queued AlterIsr, the failed ZooKeeper write, UpdateMetadata refused (recorded real 2.8.2).
        (
            "zombie-controller",
            "2.8",
            {"controller_isr_updating", "controller_isr_update_failed", "stale_controller_epoch_rejected"},
        ),
        ("unclean-election", "0.10.2", {"unclean_leader_election", "isr_shrink", "partition_state_change"}),
        ("unclean-election", "3.6", {"leader_recovery", "leader_starts", "partition_isr_removed"}),
        ("unclean-election", "3.9-kraft", {"unclean_leader_election", "kraft_broker_fenced", "leader_starts"}),
        ("unclean-election", "4.1-kraft", {"unclean_leader_election", "kraft_broker_fenced", "leader_starts"}),
        ("kafka-3143", "1.1", {"partition_state_change_failed", "send_update_metadata"}),
        ("topic-deletion-stuck", "1.1", {"replica_state_change_failed", "topic_deletion_completed"}),
        ("topic-deletion-stuck", "2.4", {"topic_deletion_completed", "broker_metadata_deleted"}),
        ("reassignment", "2.4", {"reassignment_leader_and_isr_sent", "reassignment_progress", "reassignment_removed"}),
        ("lifecycle", "2.8", {"controlled_shutdown", "preferred_election_completed", "send_stop_replica_summary"}),
        (
            "clean-failover",
            "3.9-kraft",
            {"kraft_controller_activated", "kraft_new_epoch", "kraft_partitions_transitioning"},
        ),
    ],
)
def test_scenarios_produce_their_characteristic_events(scenario, version, event_types):
    res = simulated(scenario, version)
    seen = {ev["event_type"] for r in parse_dir(res.out_dir, res.files).values() for ev in r.events}
    assert event_types <= seen, event_types - seen


def test_the_simulator_never_imports_the_parser_grammar():
    """No parser module is imported: templates and grammar stay independent."""
    for path in SIMULATOR_DIR.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and "parsers" in node.module:
                raise AssertionError(f"{path.name} imports {node.module}")
            if isinstance(node, ast.Import):
                assert not any("parsers" in a.name for a in node.names), f"{path.name}"


@pytest.mark.parametrize("version", ["0.10.2", "1.1", "2.4", "2.8", "3.6"])
def test_zombie_refusals_follow_the_release(version):
    """What a deposed controller sends depends on what its event queue holds: nothing before 2.7
    (ISR changes went to ZooKeeper), a queued AlterIsr from 2.7 - so brokers refuse UpdateMetadata
    only, never LeaderAndIsr, as in the recorded real zombies (0.10.2.2, 1.1.1, 2.4.1: none; 2.8.2,
    3.9.1: UpdateMetadata)."""
    res = simulated("zombie-controller", version)
    refused = {
        ev["template"].rsplit("_", 1)[-1]
        for r in parse_dir(res.out_dir, res.files).values()
        for ev in r.events
        if ev["event_type"] == "stale_controller_epoch_rejected"
    }
    assert refused == (set() if version in ("0.10.2", "1.1", "2.4") else {"um"})
    rules = {f["rule"] for f in res.truth["findings"]}
    assert rules == (set() if not refused else {"concurrent_controllers", "stale_epoch_rejected"})
