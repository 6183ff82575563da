"""Every line of the real-log corpus (../shared/real-logs) that the replay needs is typed.

Each file goes through ``parse_file`` (dialect detection, continuation lines, identity). Every
record must be typed (event_type != 'other') except the allow-listed lines below, and known lines
must carry the fields the replay reads (kafka-log-formats.md §5/§6; INDEX.md of the corpus).
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from kafka_forensics.parsers.records import parse_file
from tests.support.paths import REAL_LOGS

# Records that stay 'other' on purpose: none of them is a state-change, controller or ISR event.
ALLOWED_OTHER = {
    r"^preRegister called\. Server=com\.sun\.jmx": "log4j's JMX appender registration (HierarchyDynamicMBean), "
    "logged under the kafka.controller / state.change.logger category "
    "but not by Kafka",
    r"^Loaded member MemberMetadata\(": "group coordinator (kafka.coordinator.group) cache load, not a replay event",
    r"^\[MetadataLoader id=\d+\] ": "KRaft image loader progress (org.apache.kafka.image.loader), not a "
    "controller or partition event",
}


def _parse_all():
    out = {}
    for path in sorted(REAL_LOGS.glob("*.log")):
        out[path.name] = parse_file(path.read_bytes(), path.name)
    return out


@pytest.fixture(scope="module")
def parsed():
    files = _parse_all()
    assert len(files) >= 30, f"the shared real-log corpus is missing: {REAL_LOGS}"
    return files


def _file(parsed, prefix: str):
    names = [n for n in parsed if n.startswith(prefix)]
    assert len(names) == 1, prefix
    return parsed[names[0]]


def _line(parsed, prefix: str, line_no: int) -> dict:
    for event in _file(parsed, prefix).events:
        if event["line_no"] == line_no:
            return event
    raise AssertionError(f"{prefix}: no record at line {line_no}")


def _attr(event: dict, key: str):
    return (event.get("attrs") or {}).get(key)


def test_every_line_is_accounted_for(parsed):
    for name, result in parsed.items():
        s = result.summary
        assert s["lines_read"] == s["records"] + s["continuation_lines"] + s["quarantined"], name
        assert not result.quarantine, (name, result.quarantine[:2])


def test_every_record_is_typed_except_the_allow_list(parsed):
    untyped = []
    for name, result in parsed.items():
        for event in result.events:
            if event["event_type"] != "other":
                continue
            if any(re.search(rx, event["message"]) for rx in ALLOWED_OTHER):
                continue
            untyped.append(f"{name}:{event['line_no']}: {event['message'][:120]}")
    assert not untyped, "\n".join(untyped)


def test_every_state_change_logger_line_is_typed(parsed):
    for name, result in parsed.items():
        for event in result.events:
            if event["logger"] == "state.change.logger" and event["event_type"] == "other":
                assert re.search(r"^preRegister called\.", event["message"]), (name, event["line_no"])


def test_typed_counts_per_log_kind(parsed):
    counts = Counter()
    for result in parsed.values():
        for event in result.events:
            counts[(event["log_kind"], event["event_type"] != "other")] += 1
    # Measured on the 36 files: state-change 335 typed / 3 other, controller 605 / 4, server 35 / 2;
    # every "other" is one of ALLOWED_OTHER (the JMX preRegister lines, group and image loaders).
    assert counts[("state-change", False)] <= 3 and counts[("state-change", True)] >= 335
    assert counts[("controller", False)] <= 4 and counts[("controller", True)] >= 605
    assert counts[("server", False)] <= 2 and counts[("server", True)] >= 35


# ---- known lines -----------------------------------------------------------------------------------


def test_file_02_081_stale_leader_epoch_and_failed_transition(parsed):
    e = _line(parsed, "02-", 32)
    assert e["event_type"] == "stale_leader_epoch_rejected"
    assert (e["broker"], e["controller_id"], e["controller_epoch"], e["leader_epoch"]) == (0, 0, 4, 1)
    assert _attr(e, "current_leader_epoch") == "1" and (e["topic"], e["partition"]) == ("test", 0)
    failed = _line(parsed, "02-", 2)
    assert failed["event_type"] == "partition_state_change_failed"
    assert failed["stack"] and "NoReplicaOnlineException" in failed["stack"]
    assert _line(parsed, "02-", 25)["event_type"] == "replica_state_change"  # 0.8.1: no from-state


def test_file_10_zombie_controller_aborted_election(parsed):
    e = _line(parsed, "10-", 6)
    assert e["event_type"] == "leader_election_aborted"
    assert (e["controller_id"], e["controller_epoch"]) == (2, 39)
    assert _attr(e, "new_controller_epoch") == "40"
    assert _line(parsed, "10-", 4)["event_type"] == "controller_response"


def test_file_11_stale_controller_epoch_rejection(parsed):
    e = _line(parsed, "11-", 9)
    assert e["event_type"] == "stale_controller_epoch_rejected"
    assert e["broker"] == 2 and e["controller_id"] == 1 and e["controller_epoch"] == 45
    assert _attr(e, "latest_controller_epoch") == "46"
    send = _line(parsed, "11-", 1)
    assert send["event_type"] == "send_update_metadata" and send["controller_epoch"] == 46


def test_file_13_isr_shrink_and_expand_from_two_brokers(parsed):
    shrink = _line(parsed, "13-", 2)
    assert shrink["event_type"] == "isr_shrink"
    assert (shrink["broker"], shrink["topic"], shrink["partition"], shrink["isr"]) == (0, "othertopic", 2, [0])
    assert _attr(shrink, "previous_isr") == "0,2,1"
    expand = _line(parsed, "13-", 18)
    assert expand["event_type"] == "isr_expand" and expand["broker"] == 1 and expand["isr"] == [1, 2]
    assert _line(parsed, "13-", 13)["event_type"] == "zk_znode_create"


def test_file_01_and_07_controller_epochs(parsed):
    assert _line(parsed, "01-", 1)["event_type"] == "zk_session_expired"
    inc = _line(parsed, "01-", 6)
    assert inc["event_type"] == "controller_epoch_incremented" and inc["controller_epoch"] == 4
    resigned = _line(parsed, "07-", 6)
    assert resigned["event_type"] == "controller_resigned" and resigned["controller_id"] == 1
    inc = _line(parsed, "07-", 9)
    assert inc["event_type"] == "controller_epoch_incremented" and inc["controller_epoch"] == 28


def test_file_08_broker_failure(parsed):
    change = _line(parsed, "08-", 30)
    assert change["event_type"] == "broker_change"
    assert (change["added_brokers"], change["deleted_brokers"], change["live_brokers"]) == ([], [0], [1])
    failure = _line(parsed, "08-", 34)
    assert failure["event_type"] == "broker_failure" and failure["deleted_brokers"] == [0]


def test_file_19_controlled_shutdown(parsed):
    e = _line(parsed, "19-", 10)
    assert e["event_type"] == "controlled_shutdown" and e["target_broker"] == 1
    moved = _line(parsed, "19-", 14)
    assert moved["event_type"] == "leader_selected"
    assert (moved["partition"], moved["leader"], _attr(moved, "previous_leader")) == (43, 2, "1")
    isr = _line(parsed, "19-", 20)
    assert isr["event_type"] == "partition_isr_removed" and isr["isr"] == [2] and isr["leader_epoch"] == 9


def test_file_20_and_53_elections_seen_from_other_brokers(parsed):
    elected = _line(parsed, "20-", 3)
    assert elected["event_type"] == "controller_elected" and elected["controller_id"] == 1
    elsewhere = _line(parsed, "53-", 11)
    assert elsewhere["event_type"] == "controller_elected_elsewhere"
    assert elsewhere["broker"] == 1 and _attr(elsewhere, "elected_controller") == "0"
    change = _line(parsed, "53-", 3)
    assert change["event_type"] == "broker_change" and change["bounced_brokers"] == []


def test_file_23_leader_minus_one(parsed):
    e = _line(parsed, "23-", 14)
    assert e["event_type"] == "broker_leader_unavailable"
    assert (e["broker"], e["leader"], e["controller_id"], e["controller_epoch"]) == (3, -1, 3, 4)


def test_file_28_and_52_failed_elections(parsed):
    for prefix, strategy in (
        ("28-", "OfflinePartitionLeaderElectionStrategy"),
        ("52-", "ControlledShutdownPartitionLeaderElectionStrategy"),
    ):
        failed = next(e for e in _file(parsed, prefix).events if e["event_type"] == "partition_state_change_failed")
        assert strategy in failed["stack"]


def test_file_29_election_epoch_56(parsed):
    e = _line(parsed, "29-", 30)
    assert e["event_type"] == "controller_elected"
    assert e["controller_id"] == 0 and e["controller_epoch"] == 56 and _attr(e, "epoch_zk_version") == "56"
    error = _line(parsed, "29-", 13)
    assert error["event_type"] == "controller_event_error" and _attr(error, "event") == "RegisterBrokerAndReelect"
    assert "SessionExpiredException" in error["stack"]


def test_file_31_ignored_leader_and_isr(parsed):
    e = _line(parsed, "31-", 5)
    assert e["event_type"] == "stale_leader_epoch_rejected"
    assert (e["controller_epoch"], e["leader_epoch"], _attr(e, "current_leader_epoch")) == (5, 0, "0")


def test_file_34_generated_request_state(parsed):
    e = _line(parsed, "34-", 8)
    assert e["event_type"] == "broker_leader_and_isr_received"
    assert (e["topic"], e["partition"], e["leader"], e["isr"]) == ("My-Test-Topic1", 0, 0, [0])


def test_file_35_replica_election_and_lifecycle(parsed):
    e = _line(parsed, "35-", 34)
    assert e["event_type"] == "replica_election_started"
    assert _attr(e, "election_type") == "PREFERRED" and _attr(e, "election_trigger") == "ZkTriggered"
    assert _line(parsed, "35-", 3)["controller_epoch"] == 1
    assert _line(parsed, "35-", 79)["event_type"] == "controller_resigned"


def test_file_37_info_level_summaries(parsed):
    e = _line(parsed, "37-", 6)
    assert e["event_type"] == "send_leader_and_isr_summary"
    assert _attr(e, "num_become_leader") == "1" and _attr(e, "num_become_follower") == "0"
    starts = _line(parsed, "37-", 11)
    assert starts["event_type"] == "leader_starts" and starts["isr"] == [0] and starts["leader_epoch"] == 0


def test_file_40_isr_removed_leader_minus_one(parsed):
    e = _line(parsed, "40-", 7)
    assert e["event_type"] == "partition_isr_removed"
    assert (e["topic"], e["partition"], e["leader"], e["isr"], e["replica"]) == ("__consumer_offsets", 22, -1, [0], 0)
    assert e["partition_epoch"] == 1 and e["state_controller_epoch"] == 2 and e["to_state"] == "OfflineReplica"


def test_file_41_stop_replica_summaries(parsed):
    e = _line(parsed, "41-", 7)
    assert e["event_type"] == "send_stop_replica_summary" and e["target_broker"] == 0
    assert _line(parsed, "41-", 10)["event_type"] == "broker_stop_replica"


def test_file_43_kraft_epoch_churn(parsed):
    renounce = _line(parsed, "43-", 1)
    assert renounce["event_type"] == "kraft_leadership_renounced"
    assert renounce["controller_id"] == 2 and renounce["controller_epoch"] == 4031
    assert _attr(renounce, "new_epoch") == "4032" and _attr(renounce, "new_leader") == "(none)"
    epochs = [e["controller_epoch"] for e in _file(parsed, "43-").events if e["event_type"] == "kraft_new_epoch"]
    assert epochs[0] == 4033 and epochs[-1] == 4054 and 4046 in epochs
    leader = _line(parsed, "43-", 7)
    assert leader["controller_epoch"] == 4037 and _attr(leader, "new_leader") == "1"
    active = _line(parsed, "43-", 27)
    assert active["event_type"] == "kraft_controller_activated" and active["controller_epoch"] == 4048
    failover = _line(parsed, "43-", 35)
    assert failover["event_type"] == "kraft_event_failed" and failover["controller_epoch"] == 4048
    assert _attr(failover, "treated_as") == "NotControllerException"
    timeout = _line(parsed, "43-", 30)
    assert timeout["event_type"] == "kraft_heartbeat_timeout" and timeout["target_broker"] == 1


def test_file_44_alter_partition_rejected(parsed):
    e = _line(parsed, "44-", 27)
    assert e["event_type"] == "kraft_alter_partition_rejected"
    assert (e["controller_id"], e["topic"], e["partition"], e["partition_epoch"]) == (2, "test-topic", 1, 75)
    assert _attr(e, "request_partition_epoch") == "74" and _attr(e, "requesting_broker") == "3"
    unfenced = _line(parsed, "44-", 12)
    assert unfenced["event_type"] == "kraft_broker_unfenced" and unfenced["target_broker"] == 2
    change = _line(parsed, "44-", 1)
    assert change["event_type"] == "kraft_broker_registration_changed"
    assert change["target_broker"] == 2 and _attr(change, "fenced") == "1"
    assert _line(parsed, "44-", 5)["event_type"] == "kraft_controller_registered"  # "contaning" (sic)


def test_file_46_isr_updated_double_space(parsed):
    e = _line(parsed, "46-", 2)
    assert e["event_type"] == "isr_updated"
    assert (e["broker"], e["topic"], e["partition"], e["isr"], e["partition_epoch"]) == (
        1,
        "test-topic",
        1,
        [1, 2],
        111,
    )


def test_file_47_duplicate_registration_and_fencing(parsed):
    failed = _line(parsed, "47-", 9)
    assert failed["event_type"] == "kraft_event_failed"
    assert _attr(failed, "exception") == "DuplicateBrokerRegistrationException"
    fenced = _line(parsed, "47-", 16)
    assert fenced["event_type"] == "kraft_broker_fenced" and fenced["target_broker"] == 1
    assert _attr(fenced, "broker_epoch") == "67"
    incarnation = _line(parsed, "47-", 18)
    assert incarnation["event_type"] == "kraft_broker_registered" and _attr(incarnation, "broker_epoch") == "20529"
    shutdown = _line(parsed, "47-", 3)
    assert _attr(shutdown, "controlled_shutdown_change") == "in_controlled_shutdown"


def test_file_49_kraft_broker_transitions(parsed):
    events = _file(parsed, "49-").events
    assert Counter(e["event_type"] for e in events) >= Counter(
        {"kraft_partitions_transitioning": 6, "partition_created": 9, "leader_starts": 3, "follower_starts": 6}
    )
    leader = _line(parsed, "49-", 3)
    assert (leader["broker"], leader["topic"], leader["partition"], leader["isr"]) == (3, "my-topic", 1, [3, 1, 2])
    assert _attr(leader, "previous_leader") == "None"
    follower = _line(parsed, "49-", 6)
    assert follower["leader"] == 2 and _attr(follower, "previous_leader") == "2"


def test_file_50_grep_prefixed_controlled_shutdown(parsed):
    e = _line(parsed, "50-", 18)
    assert e["event_type"] == "partition_state_change"
    assert (e["from_state"], e["to_state"], e["leader"]) == ("OnlinePartition", "OnlinePartition", 2)
    assert _line(parsed, "50-", 11)["event_type"] == "controller_resigned"
