"""The KRaft model (replay/kraft.py): metadata records → timelines and KRaft findings.

In-process (no Spark): events come from ``parse_file`` on the dump fixtures of
tests/data/metadata_dump/ (shape: see tests/parsers/test_metadata_dump.py) and on the real KRaft logs.
"""

from __future__ import annotations

from kafka_forensics.replay.events import compact_event
from kafka_forensics.replay.kraft import Registration, merge
from tests.support.metadata_dump import DUMPS, TOPIC_ID, dump_events, replay_one, rule_kinds, segment_lines
from tests.support.paths import REAL_LOGS


def test_merge_follows_partition_registration_merge():
    cur = Registration(replicas=(1, 2, 3), isr=(1, 2, 3), leader=1, leader_epoch=4, partition_epoch=9)
    shrink = merge(cur, compact_event({"isr": [1, 2], "attrs": {}}))
    assert (shrink.leader, shrink.leader_epoch, shrink.partition_epoch, shrink.isr) == (1, 4, 10, (1, 2))
    same_leader = merge(cur, compact_event({"leader": 1, "attrs": {}}))  # PartitionChangeBuilder forces a bump this way
    assert (same_leader.leader_epoch, same_leader.partition_epoch) == (5, 10)
    offline = merge(cur, compact_event({"leader": -1, "attrs": {"leader_recovery_state": "-1"}}))
    assert (offline.leader, offline.leader_epoch, offline.recovery, offline.state) == (-1, 5, 0, "OfflinePartition")
    recovering = merge(
        offline, compact_event({"leader": 3, "isr": [3], "attrs": {"leader_recovery_state": "1", "elr": ""}})
    )
    assert recovering.state == "RecoveringPartition" and recovering.elr == ()


def test_timeline_and_unclean_election_from_the_segment_and_snapshot():
    ctx, result = replay_one(dump_events("segment.log.dump") + dump_events("snapshot.checkpoint.dump"))
    rows = [
        (r["state"], r["leader"], r["isr"], r["leader_epoch"], r["partition_epoch"], r["cause"])
        for r in result.partition_intervals
    ]
    assert rows == [
        ("OnlinePartition", 1, (1, 2), 0, 0, "segment.log.dump:13"),
        ("OnlinePartition", 1, (1,), 0, 1, "segment.log.dump:15"),
        ("OfflinePartition", -1, (1,), 1, 2, "segment.log.dump:17"),
        ("RecoveringPartition", 2, (2,), 2, 3, "segment.log.dump:20"),
        ("OnlinePartition", 2, (2,), 2, 4, "segment.log.dump:22"),
    ]  # the snapshot restates epoch 2 exactly: no interval, no finding
    assert all(r["source"] == "metadata" for r in result.partition_intervals)
    assert rule_kinds(result) == [("offline_with_live_replicas", "replica_live"), ("unclean_election", "metadata")]
    # leader -1 at offset 8 while broker 2 (unfenced at offset 4, out of the ISR [1]) is active, until the
    # unclean election 10 s later: one warning citing the leaderless record, the unfencing and the election
    offline = next(f for f in result.findings if f.rule == "offline_with_live_replicas")
    assert offline.severity == "warning" and offline.replica == 2
    assert offline.evidence == ("segment.log.dump:17", "segment.log.dump:10", "segment.log.dump:20")
    assert "for 10.0 s until segment.log.dump:20" in offline.summary
    replica_1 = [(r["state"], r["cause"]) for r in result.replica_intervals if r["replica"] == 1]
    assert replica_1 == [("OnlineReplica", "segment.log.dump:13"), ("OfflineReplica", "segment.log.dump:17")]
    assert [(b.broker, b.state) for b in ctx.brokers] == [(1, "fenced"), (1, "alive"), (1, "fenced"), (2, "alive")]
    assert ctx.metadata_version_at(None) == 21


def test_snapshot_ahead_of_the_records_is_a_partition_epoch_gap():
    lines = [ln for ln in segment_lines() if '"isr":[1]}' not in ln]  # drop the ISR shrink (offset 7)
    snapshot = dump_events("snapshot.checkpoint.dump")
    _, result = replay_one(dump_events("gap.dump", "\n".join(lines) + "\n") + snapshot)
    gap = [f for f in result.findings if f.rule == "partition_epoch_gap"]
    assert len(gap) == 1 and gap[0].kind == "snapshot_ahead"
    assert "1 PartitionChangeRecord(s) are missing" in gap[0].summary
    assert gap[0].evidence == ("gap.dump:16", "snapshot.checkpoint.dump:9")


def test_leader_on_fenced_broker_and_leader_outside_isr():
    lines = segment_lines()
    # offset 10, after broker 1 was fenced (offset 9): leader 1 again, with ISR [2]
    assert lines[19].startswith("| offset: 10 ")
    lines[19] = lines[19].replace('"isr":[2],"leader":2,"leaderRecoveryState":1', '"isr":[2],"leader":1')
    _, result = replay_one(dump_events("fenced.dump", "\n".join(lines[:20]) + "\n"))
    assert rule_kinds(result) == [
        ("leader_not_in_isr", "metadata"),
        ("leader_on_fenced_broker", "fenced"),
        ("offline_with_live_replicas", "replica_live"),  # offsets 8-10: broker 2 active, out of the ISR
    ]
    fenced = next(f for f in result.findings if f.rule == "leader_on_fenced_broker")
    assert fenced.evidence == ("fenced.dump:18", "fenced.dump:20") and fenced.broker == 1


def test_broker_view_mismatch_and_gap_against_state_change_lines():
    base = dump_events("segment.log.dump")
    views = dump_events(
        "broker-2/state-change.log",
        "\n".join(
            [
                # agrees with offset 10: leader 2, leader epoch 2, partition epoch 3
                f"[2024-03-04 10:00:40,050] INFO [Broker id=2] Leader events-0 with topic id Some({TOPIC_ID}) starts at leader "
                "epoch 2 from offset 120 with partition epoch 3, high watermark 120, ISR [2], adding replicas [] and removing "
                "replicas [] . Previous leader None and previous leader epoch was -1. (state.change.logger)",
                # no record has leader epoch 3 at partition epoch 4 (offset 11 kept leader epoch 2)
                f"[2024-03-04 10:00:41,050] INFO [Broker id=2] Leader events-0 with topic id Some({TOPIC_ID}) starts at leader "
                "epoch 3 from offset 120 with partition epoch 4, high watermark 120, ISR [2], adding replicas [] and removing "
                "replicas [] . Previous leader Some(2) and previous leader epoch was 2. (state.change.logger)",
                # partition epoch 6: beyond the last record (4)
                "[2024-03-04 10:00:50,000] INFO [Broker id=1] Follower events-0 starts at leader epoch 4 from offset 130 with "
                "partition epoch 6 and high watermark 130. Current leader is 2. Previous leader Some(2) and previous leader "
                "epoch was 3. (state.change.logger)",
            ]
        )
        + "\n",
    )
    assert [v["event_type"] for v in views] == ["leader_starts", "leader_starts", "follower_starts"]
    _, result = replay_one(base + views)
    found = {(f.rule, f.kind): f for f in result.findings}
    mismatch = found[("metadata_view_mismatch", "broker_view")]
    assert mismatch.evidence == ("segment.log.dump:22", "broker-2/state-change.log:2") and mismatch.broker == 2
    gap = found[("partition_epoch_gap", "broker_ahead")]
    assert gap.evidence == ("segment.log.dump:22", "broker-2/state-change.log:3")
    assert ("metadata_view_mismatch", "broker_view") in found and len(
        [f for f in result.findings if f.rule == "metadata_view_mismatch"]
    ) == 1


def test_real_log_49_broker_views_agree_with_a_matching_dump():
    """Real log 49 (4.0.0 brokers creating my-topic) against a hand-written dump of the records that
    created it (the same topic id, replica order and leaders the brokers logged)."""
    real = dump_events(str(REAL_LOGS / "49-ammar-4.0.0-kraft-state-change-3brokers-create.log"))
    dump = dump_events("real49-companion.dump")
    for partition, leader in ((0, 2), (1, 3), (2, 1)):
        _, result = replay_one(real + dump, "my-topic", partition)
        assert [r["leader"] for r in result.partition_intervals] == [leader]
        assert result.findings == []
    wrong = (
        (DUMPS / "real49-companion.dump")
        .read_text()
        .replace('"leader":3,"leaderEpoch":0', '"leader":1,"leaderEpoch":0')
    )
    wrong = wrong.replace('"isr":[3,1,2],', '"isr":[1,3,2],')
    _, result = replay_one(real + dump_events("wrong.dump", wrong), "my-topic", 1)
    mismatches = [f for f in result.findings if f.rule == "metadata_view_mismatch"]
    # broker 3 says it leads; brokers 1 and 2 follow leader 3: all three contradict leader 1
    assert sorted(f.broker for f in mismatches) == [1, 2, 3]


def test_real_kraft_logs_without_a_dump_replay_as_before():
    """43/44/46/47/49 carry no metadata records: no KRaft metadata rule may fire on them."""
    kraft_rules = {"partition_epoch_gap", "metadata_view_mismatch", "leader_on_fenced_broker", "elr_overlaps_isr"}
    for name in (
        "43-betrajj-3.9.0-kraft-controller-epoch-churn.log",
        "44-betrajj-3.9.0-kraft-controller-unfence-alterpartition-rejected.log",
        "46-betrajj-3.9.0-kraft-server-isr-updated.log",
        "47-ammar-4.0.0-kraft-controller-duplicate-registration-fence.log",
        "49-ammar-4.0.0-kraft-state-change-3brokers-create.log",
    ):
        events = dump_events(str(REAL_LOGS / name))
        places = {(e["topic"], e["partition"]) for e in events if e.get("topic") and e.get("partition") is not None}
        for topic, partition in sorted(places):
            _, result = replay_one(events, topic, partition)
            assert not {f.rule for f in result.findings} & kraft_rules, name
    events = dump_events(str(REAL_LOGS / "44-betrajj-3.9.0-kraft-controller-unfence-alterpartition-rejected.log"))
    _, result = replay_one(events, "test-topic", 1)
    assert ("stale_epoch_rejected", "stale_partition_epoch") in rule_kinds(result)


def test_alter_partition_rejected_for_a_recovering_leader():
    line = (
        "[2024-03-04 10:00:40,500] INFO [QuorumController id=3] Rejecting AlterPartition request from node 2 for "
        "events-0 because the ISR [2, 1] had more than one replica while the leader was still recovering from an "
        "unclean leader election RECOVERING. (org.apache.kafka.controller.ReplicationControlManager)\n"
    )
    events = dump_events("broker-3/controller.log", line)
    assert events[0]["event_type"] == "kraft_alter_partition_rejected"
    _, result = replay_one(dump_events("segment.log.dump") + events)
    found = [f for f in result.findings if f.rule == "alter_partition_rejected"]
    assert len(found) == 1 and found[0].broker == 2 and "RECOVERING" in found[0].summary


def test_topic_removal_ends_every_partition_of_the_topic():
    from kafka_forensics.replay.kraft import resolve_metadata_events

    remove = (
        "baseOffset: 12 lastOffset: 12 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
        "partitionLeaderEpoch: 2 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty "
        "position: 930 CreateTime: 1709546450000 size: 70 magic: 2 compresscodec: none crc: 1 isvalid: true\n"
        "| offset: 12 CreateTime: 1709546450000 keySize: -1 valueSize: 20 sequence: -1 headerKeys: [] payload: "
        f'{{"type":"REMOVE_TOPIC_RECORD","version":0,"data":{{"topicId":"{TOPIC_ID}"}}}}\n'
    )
    lines = [
        ln for ln in segment_lines() if "Error at" not in ln and "offset: 12 " not in ln and "baseOffset: 12 " not in ln
    ]
    events = resolve_metadata_events(dump_events("removed.dump", "\n".join(lines) + "\n" + remove))
    removal = [e for e in events if e["event_type"] == "metadata_remove_topic"]
    assert [(e["topic"], e["partition"]) for e in removal] == [("events", 0)]
    _, result = replay_one(events)
    last = result.partition_intervals[-1]
    assert (last["state"], last["cause"]) == ("NonExistentPartition", "removed.dump:24")
    assert {r["state"] for r in result.replica_intervals if r["cause"] == "removed.dump:24"} == {"NonExistentReplica"}


def test_kafka_4_fencing_text_fences_the_broker_like_3_x():
    """4.x prints ``Fencing broker 2 at epoch 18 because its session has timed out.``
    (kraft_broker_fenced__v40_session; 3.x has no "at epoch N"): the replay's broker timeline treats
    it as the 3.x line - on the recorded real 4.1.1 incident and on the simulator's 4.1 text."""
    import gzip

    from kafka_forensics.replay.cluster import CLUSTER_EVENT_TYPES, build_cluster_context
    from tests.support.paths import SAMPLES
    from tests.support.simulator import simulated

    def events_of(data: bytes, name: str) -> list[dict]:
        return dump_events(name, (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode())

    def fenced(events):
        cluster = sorted(
            (e for e in events if e["event_type"] in CLUSTER_EVENT_TYPES and e["ts"] is not None),
            key=lambda e: (e["ts"], e["source_file"], e["line_no"]),
        )
        return [(b.broker, b.evidence) for b in build_cluster_context("", cluster, []).brokers if b.state == "fenced"]

    real = SAMPLES / "real-4.1-kraft-broker-fencing" / "broker-1" / "controller.log.gz"
    events = events_of(real.read_bytes(), "broker-1/controller.log")
    assert next(e for e in events if e["line_no"] == 52)["template"] == "kraft_broker_fenced__v40_session"
    assert (2, "broker-1/controller.log:52") in fenced(events)
    # The simulator writes 4.1 as 3.9 but for this text: the same seed gives the same broker timeline.
    timelines = []
    for version in ("3.9-kraft", "4.1-kraft"):
        sim = simulated("unclean-election", version)
        sim_events = [
            e for f in sim.files if f.endswith("controller.log") for e in events_of((sim.out_dir / f).read_bytes(), f)
        ]
        templates = {e.get("template") for e in sim_events if e["event_type"] == "kraft_broker_fenced"}
        assert templates == {
            "kraft_broker_fenced__v28_session" if version == "3.9-kraft" else "kraft_broker_fenced__v40_session"
        }
        timelines.append(fenced(sim_events))
    assert timelines[0] and timelines[0] == timelines[1]
