"""KRaft replay: controller epochs from LEADER_CHANGE records, the controller's ``UNCLEAN partition
change`` line, broker views matched by topic id (a re-created topic), offset gaps in a dump.

In-process (no Spark): ``parse_file`` on the dump fixtures of tests/data/metadata_dump/ (the shape
``kafka-dump-log.sh --cluster-metadata-decoder`` prints at 3.9, see tests/parsers/test_metadata_dump.py),
edited line by line, with controller.log / state-change.log lines in the 3.9 text.
"""

from __future__ import annotations

from kafka_forensics.replay.events import attr, attrs_of
from kafka_forensics.replay.kraft import resolve_metadata_events
from kafka_forensics.replay.local import replay_all
from tests.support.metadata_dump import DUMPS, TOPIC_ID, dump_events, replay_one, segment_lines

OTHER_ID = "Zz9pm1PUQIqcUJ5fJ3xkAb"  # the re-created topic's id
BATCH = (
    "baseOffset: {o} lastOffset: {o} count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
    "partitionLeaderEpoch: {e} isTransactional: false isControl: {c} deleteHorizonMs: OptionalLong.empty "
    "position: {pos} CreateTime: {ms} size: 80 magic: 2 compresscodec: none crc: 1 isvalid: true"
)
RECORD = "| offset: {o} CreateTime: {ms} keySize: -1 valueSize: 30 sequence: -1 headerKeys: [] payload: {p}"
LEADER_CHANGE = (
    "| offset: {o} CreateTime: {ms} keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] controlType: LEADER_CHANGE(2)"
)
UNCLEAN_DIFF = (
    "isr: [1] -> [2], leader: -1 -> 2, leaderRecoveryState: RECOVERED -> RECOVERING, "
    "leaderEpoch: 1 -> 2, partitionEpoch: 2 -> 3"
)
MS_10_00_40 = 1709546440000  # offset 10 of segment.log.dump: the unclean election


def _batch(offset: int, epoch: int, ms: int, payload: str | None) -> list[str]:
    control = payload is None
    head = BATCH.format(o=offset, e=epoch, c=str(control).lower(), pos=offset * 80, ms=ms)
    body = LEADER_CHANGE.format(o=offset, ms=ms) if control else RECORD.format(o=offset, ms=ms, p=payload)
    return [head, body]


def _controller_line(
    ts: str,
    node: int,
    text: str,
    level: str = "INFO",
    logger: str = "org.apache.kafka.controller.ReplicationControlManager",
) -> str:
    return f"[{ts}] {level} [QuorumController id={node}] {text} ({logger})"


def _text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


# ---- 1. controllers from LEADER_CHANGE control records ------------------------------------------------


def test_leader_change_records_date_raft_epochs_and_merge_with_controller_log():
    feature = '{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":21}}'
    lines = (
        segment_lines()[:2]
        + _batch(0, 1, 1709546400000, None)
        + _batch(1, 1, 1709546400105, feature)
        + _batch(2, 2, 1709546435000, None)
        + _batch(3, 2, 1709546435300, feature)
    )
    dump = dump_events("meta.dump", _text(lines))
    assert [(e["line_no"], e["controller_epoch"]) for e in dump if e["event_type"] == "metadata_control"] == [
        (4, 1),
        (8, 2),
    ]
    log = dump_events(
        "broker-3/controller.log",
        _text(
            [
                _controller_line(
                    "2024-03-04 10:00:35,100",
                    3,
                    "In the new epoch 2, the leader is 3.",
                    logger="org.apache.kafka.controller.QuorumController",
                ),
                _controller_line(
                    "2024-03-04 10:00:35,200",
                    3,
                    "Becoming the active controller at epoch 2, next write offset 9.",
                    logger="org.apache.kafka.controller.QuorumController",
                ),
            ]
        ),
    )
    ctx, _ = replay_one(dump + log)
    rows = [(c.controller_id, c.controller_epoch, c.evidence, c.elected) for c in ctx.controllers]
    assert rows == [
        (None, 1, ("meta.dump:4",), True),  # the dump dates epoch 1, but does not print its leader
        (3, 2, ("broker-3/controller.log:1", "broker-3/controller.log:2", "meta.dump:8"), True),
    ]
    first, second = ctx.controllers
    assert first.ts_end == second.ts_start  # epoch 1 ends where the LEADER_CHANGE of epoch 2 is written
    assert second.ts_start.strftime("%H:%M:%S") == "10:00:35"  # the record (35,000) is before the log lines
    assert not [f for f in ctx.findings if f.rule == "concurrent_controllers"]


def test_the_same_leader_change_in_two_controllers_dumps_is_one_epoch():
    one = dump_events("c1.dump", _text(segment_lines()[:4]))
    two = dump_events("c2.dump", _text(segment_lines()[:4]))
    ctx, _ = replay_one(one + two)
    assert [(c.controller_id, c.controller_epoch, c.evidence) for c in ctx.controllers] == [(None, 1, ("c1.dump:4",))]


# ---- 2. UNCLEAN partition change -----------------------------------------------------------------------


def _unclean_lines(nodes=(1, 3)) -> list[dict]:
    return [
        e
        for node in nodes
        for e in dump_events(
            f"broker-{node}/controller.log",
            _text(
                [
                    _controller_line(
                        "2024-03-04 10:00:40,001",
                        node,
                        f"UNCLEAN partition change for events-0 with topic ID {TOPIC_ID}: {UNCLEAN_DIFF}",
                    )
                ]
            ),
        )
    ]


def test_unclean_line_is_typed_and_cited_by_the_record_finding():
    lines = _unclean_lines()
    assert [(e["event_type"], e["topic"], e["partition"], e["controller_id"]) for e in lines] == [
        ("kraft_unclean_partition_change", "events", 0, 1),
        ("kraft_unclean_partition_change", "events", 0, 3),
    ]
    assert attrs_of(lines[0]) == {"topic_id": TOPIC_ID, "detail": UNCLEAN_DIFF}
    _, result = replay_one(dump_events("segment.log.dump") + lines)
    unclean = [f for f in result.findings if f.rule == "unclean_election"]
    assert len(unclean) == 1  # the record and both controllers' lines: one election
    assert unclean[0].evidence == (
        "segment.log.dump:17",
        "segment.log.dump:20",
        "broker-1/controller.log:1",
        "broker-3/controller.log:1",
    )
    assert "trigger not logged" in unclean[0].summary and "admin ElectLeaders(UNCLEAN)" in unclean[0].summary


def test_automatic_unclean_election_is_told_by_the_trigger_line():
    trigger = dump_events(
        "broker-3/controller.log",
        _text(
            [
                _controller_line(
                    "2024-03-04 10:00:39,990",
                    3,
                    "Triggering unclean leader election for offline partition events-0.",
                    "ERROR",
                )
            ]
        ),
    )
    assert trigger[0]["event_type"] == "unclean_leader_election"
    _, result = replay_one(dump_events("segment.log.dump") + trigger)
    record_finding = next(f for f in result.findings if f.rule == "unclean_election" and f.kind == "metadata")
    assert "automatic: unclean.leader.election.enable" in record_finding.summary
    assert "broker-3/controller.log:1" in record_finding.summary


def test_unclean_lines_without_a_dump_are_one_finding_per_change():
    _, result = replay_one(_unclean_lines())
    unclean = [f for f in result.findings if f.rule == "unclean_election"]
    assert [(f.kind, f.replica, f.evidence) for f in unclean] == [
        ("controller_log", 2, ("broker-1/controller.log:1", "broker-3/controller.log:1"))
    ]
    assert "partition epoch 2 -> 3" in unclean[0].summary


def test_an_unclean_line_for_another_change_is_not_merged_into_the_record_finding():
    other = dump_events(
        "broker-1/controller.log",
        _text(
            [
                _controller_line(
                    "2024-03-04 10:05:00,000",
                    1,
                    f"UNCLEAN partition change for events-0 with topic ID {TOPIC_ID}: "
                    "isr: [2] -> [1], leader: -1 -> 1, leaderEpoch: 3 -> 4, partitionEpoch: 6 -> 7",
                )
            ]
        ),
    )
    _, result = replay_one(dump_events("segment.log.dump") + other)
    kinds = sorted((f.kind, f.evidence[-1]) for f in result.findings if f.rule == "unclean_election")
    assert kinds == [("controller_log", "broker-1/controller.log:1"), ("metadata", "segment.log.dump:20")]


# ---- 3. broker views by topic id: a deleted and re-created topic ---------------------------------------


def _recreated_dump() -> str:
    lines = segment_lines()[:13]  # offsets 0-6: topic "events" (TOPIC_ID) created, leader 1
    lines += _batch(
        7, 1, 1709546500000, f'{{"type":"REMOVE_TOPIC_RECORD","version":0,"data":{{"topicId":"{TOPIC_ID}"}}}}'
    )
    lines += _batch(
        8, 1, 1709546510000, f'{{"type":"TOPIC_RECORD","version":0,"data":{{"name":"events","topicId":"{OTHER_ID}"}}}}'
    )
    lines += _batch(
        9,
        1,
        1709546510000,
        '{"type":"PARTITION_RECORD","version":1,"data":{"partitionId":0,"topicId":'
        f'"{OTHER_ID}","replicas":[2,1],"isr":[2,1],"removingReplicas":[],"addingReplicas":[],"leader":2,'
        '"leaderEpoch":0,"partitionEpoch":0,"directories":["AAAAAAAAAAAAAAAAAAAAAA","AAAAAAAAAAAAAAAAAAAAAA"]}}',
    )
    return _text(lines)


def _leader_line(ts: str, broker: int, topic_id: str) -> str:
    return (
        f"[{ts}] INFO [Broker id={broker}] Leader events-0 with topic id Some({topic_id}) starts at leader epoch 0 "
        f"from offset 0 with partition epoch 0, high watermark 0, ISR [{broker}], adding replicas [] and removing "
        "replicas [] . Previous leader None and previous leader epoch was -1. (state.change.logger)"
    )


def test_broker_view_of_a_recreated_topic_is_matched_by_topic_id():
    dump = resolve_metadata_events(dump_events("recreated.dump", _recreated_dump()))
    views = dump_events(
        "state-change.log",
        _text(
            [
                _leader_line("2024-03-04 10:01:20,000", 1, TOPIC_ID),  # the first incarnation: leader 1 at epoch 0
                _leader_line("2024-03-04 10:01:55,000", 2, OTHER_ID),  # the re-created topic: leader 2 at epoch 0
                _leader_line("2024-03-04 10:02:00,000", 1, TOPIC_ID),  # late line about the deleted incarnation
            ]
        ),
    )
    _, result = replay_one(dump + views)
    assert [f for f in result.findings if f.rule == "metadata_view_mismatch"] == []
    states = [(r["state"], r["leader"]) for r in result.partition_intervals]
    assert states == [("OnlinePartition", 1), ("NonExistentPartition", 1), ("OnlinePartition", 2)]


def test_broker_view_contradicting_its_own_incarnation_is_still_a_mismatch():
    dump = resolve_metadata_events(dump_events("recreated.dump", _recreated_dump()))
    views = dump_events("state-change.log", _text([_leader_line("2024-03-04 10:01:55,000", 1, OTHER_ID)]))
    _, result = replay_one(dump + views)
    found = [f for f in result.findings if f.rule == "metadata_view_mismatch"]
    assert [(f.broker, f.evidence) for f in found] == [(1, ("recreated.dump:19", "state-change.log:1"))]


# ---- 4. offset gaps in one dumped segment ----------------------------------------------------------------


def test_skipped_offsets_inside_a_segment_are_a_cluster_finding():
    lines = [ln for ln in segment_lines() if "offset: 7 " not in ln and "baseOffset: 7 " not in ln]
    events = dump_events("gap.dump", _text(lines))
    after = [e for e in events if "offset_gap_after" in attrs_of(e)]
    assert [(e["line_no"], attr(e, "offset_gap_after"), attr(e, "offset_gap_prev_line")) for e in after] == [
        (15, "6", "13")
    ]
    local = replay_all(events)
    gaps = [f for f in local.findings if f.rule == "metadata_offset_gap"]
    assert [(f.evidence, f.topic, f.controller_epoch) for f in gaps] == [(("gap.dump:13", "gap.dump:15"), None, 1)]
    assert "offsets 7..7 (1 record(s))" in gaps[0].summary


def test_a_dump_starting_late_snapshots_and_new_files_are_not_gaps():
    late = dump_events("late.dump", (DUMPS / "real49-companion.dump").read_text())  # starts at offset 120
    snapshot = dump_events("snapshot.checkpoint.dump")
    two_files = _text(
        segment_lines()[:8]
        + ["Dumping /var/lib/kafka/data/__cluster_metadata-0/00000000000000000050.log", "Log starting offset: 50"]
        + _batch(50, 2, 1709546500000, None)
    )
    split = dump_events("two.dump", two_files)
    for events in (late, snapshot, split):
        assert not [e for e in events if "offset_gap_after" in attrs_of(e)]
    assert not [f for f in replay_all(late + split).findings if f.rule == "metadata_offset_gap"]


def test_an_elr_election_logged_unclean_is_explained_by_its_clean_record():
    """electionWasClean looks only at the previous ISR: a leader taken from the ELR of an empty ISR
    is logged UNCLEAN; the record (leader in the ELR) shows it was clean, so no finding."""
    lines = segment_lines()[:13]  # offsets 0-6: events-0 created, leader 1, ISR [1, 2]
    lines += _batch(
        7,
        1,
        1709546420000,
        '{"type":"PARTITION_CHANGE_RECORD","version":2,"data":{"partitionId":0,'
        f'"topicId":"{TOPIC_ID}","isr":[],"leader":-1,"eligibleLeaderReplicas":[1,2]}}}}',
    )
    lines += _batch(
        8,
        1,
        1709546430000,
        '{"type":"PARTITION_CHANGE_RECORD","version":2,"data":{"partitionId":0,'
        f'"topicId":"{TOPIC_ID}","isr":[2],"leader":2,"eligibleLeaderReplicas":[]}}}}',
    )
    log = dump_events(
        "broker-1/controller.log",
        _text(
            [
                _controller_line(
                    "2024-03-04 10:00:30,001",
                    1,
                    f"UNCLEAN partition change for events-0 with topic ID {TOPIC_ID}: "
                    "isr: [] -> [2], leader: -1 -> 2, leaderEpoch: 1 -> 2, elr: [1, 2] -> [], partitionEpoch: 1 -> 2",
                )
            ]
        ),
    )
    _, result = replay_one(dump_events("elr.dump", _text(lines)) + log)
    assert [f for f in result.findings if f.rule == "unclean_election"] == []
    _, alone = replay_one(log)
    assert [f.kind for f in alone.findings if f.rule == "unclean_election"] == ["controller_log"]


def test_without_a_dump_the_unclean_line_joins_the_trigger_lines_finding():
    log = dump_events(
        "broker-3/controller.log",
        _text(
            [
                _controller_line(
                    "2024-03-04 10:00:39,990",
                    3,
                    "Triggering unclean leader election for offline partition events-0.",
                    "ERROR",
                ),
                _controller_line(
                    "2024-03-04 10:00:40,001",
                    3,
                    f"UNCLEAN partition change for events-0 with topic ID {TOPIC_ID}: {UNCLEAN_DIFF}",
                ),
            ]
        ),
    )
    _, result = replay_one(log)
    unclean = [f for f in result.findings if f.rule == "unclean_election"]
    assert len(unclean) == 1
    assert unclean[0].evidence[-2:] == ("broker-3/controller.log:1", "broker-3/controller.log:2")
