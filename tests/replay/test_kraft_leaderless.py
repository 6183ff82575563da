"""KRaft: a partition without a leader while a replica of it is on an active broker (replay/kraft_leaderless.py).

In-process, on small dumps in the shape kafka-dump-log prints (tests/parsers/test_metadata_dump.py) whose
batches follow what the 3.9 controller writes: fencing a broker appends the partition changes first and the
broker's BrokerRegistrationChangeRecord after them (handleBrokerFenced,
M:controller/ReplicationControlManager.java@3.9.0-rc3:1288-1304); unfencing appends the broker's record first
and, in the same batch, the elections it makes possible (handleBrokerUnfenced :1339-1351). The recorded real
incidents (sample_logs/real-*-kraft-unclean-election*) are judged in tests/lab/test_incidents.py.
"""

from __future__ import annotations

import json

from tests.support.metadata_dump import TOPIC_ID, dump_events, replay_one, rule_kinds

T0 = 1709546400000  # 2024-03-04T10:00:00Z, ms


def _payload(kind: str, **data) -> str:
    return json.dumps({"type": kind, "version": 0, "data": data}, separators=(",", ":"))


def change(**data) -> str:
    return _payload("PARTITION_CHANGE_RECORD", partitionId=0, topicId=TOPIC_ID, **data)


def fencing(broker: int, fenced: int) -> str:
    """BrokerRegistrationFencingChange: 1 fence, -1 unfence (M:metadata/BrokerRegistrationFencingChange.java@3.9.0-rc3)."""
    return _payload("BROKER_REGISTRATION_CHANGE_RECORD", brokerId=broker, brokerEpoch=broker + 1, fenced=fenced)


def base(follower_fenced: bool) -> list[tuple[int, list[str]]]:
    """Replicas [1, 2] led by 1; broker 2 falls out of the ISR (fenced with it, or still active), then broker 1,
    leader and last ISR member, is fenced: leader -1."""
    shrink = [change(isr=[1]), fencing(2, 1)] if follower_fenced else [change(isr=[1])]
    return [
        (0, [_payload("FEATURE_LEVEL_RECORD", name="metadata.version", featureLevel=21)]),
        *(
            (100, [_payload("REGISTER_BROKER_RECORD", brokerId=b, brokerEpoch=b + 1, incarnationId=f"i{b}")])
            for b in (1, 2)
        ),
        (1000, [fencing(1, -1), fencing(2, -1)]),
        (
            10_000,
            [
                _payload("TOPIC_RECORD", name="events", topicId=TOPIC_ID),
                _payload(
                    "PARTITION_RECORD",
                    partitionId=0,
                    topicId=TOPIC_ID,
                    replicas=[1, 2],
                    isr=[1, 2],
                    leader=1,
                    leaderEpoch=0,
                    partitionEpoch=0,
                ),
            ],
        ),
        (20_000, shrink),
        (30_000, [change(leader=-1), fencing(1, 1)]),
    ]


def dump(batches: list[tuple[int, list[str]]]) -> str:
    """A segment dump: one batch per (ms after T0, records), offsets contiguous."""
    lines = ["Dumping /var/lib/kafka/data/__cluster_metadata-0/00000000000000000000.log", "Log starting offset: 0"]
    offset = 0
    for at, records in batches:
        ts = T0 + at
        lines.append(
            f"baseOffset: {offset} lastOffset: {offset + len(records) - 1} count: {len(records)} baseSequence: -1 "
            "lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 1 isTransactional: false "
            f"isControl: false deleteHorizonMs: OptionalLong.empty position: {offset * 100} CreateTime: {ts} size: 100 "
            "magic: 2 compresscodec: none crc: 1 isvalid: true"
        )
        for record in records:
            lines.append(
                f"| offset: {offset} CreateTime: {ts} keySize: -1 valueSize: 30 sequence: -1 headerKeys: [] payload: {record}"
            )
            offset += 1
    return "\n".join(lines) + "\n"


def offline(events: list[dict]):
    _, result = replay_one(events)
    return [f for f in result.findings if f.rule == "offline_with_live_replicas"], result


def test_an_election_in_the_unfencing_batch_is_no_finding():
    """Broker 1 comes back and is elected in its own unfencing batch; broker 2 was fenced meanwhile."""
    text = dump([*base(follower_fenced=True), (40_000, [fencing(1, -1), change(leader=1)])])
    found, result = offline(dump_events("clean.dump", text))
    assert found == [] and rule_kinds(result) == []


def test_the_controller_line_granting_the_unfencing_before_its_batch_does_not_count():
    """The active controller logs its decision a millisecond before it appends the batch (BrokerHeartbeatManager
    .java@3.9.0-rc3:549; real-3.9-kraft-unclean-election: broker-1/controller.log 18:59:34,003, record 34,004):
    where records state the broker, the records draw its timeline."""
    text = dump([*base(follower_fenced=True), (40_000, [fencing(1, -1), change(leader=1)])])
    granted = (
        "[2024-03-04 10:00:39,999] INFO [QuorumController id=3] The request from broker 1 to unfence has been granted "
        "because it has caught up with the offset of its register broker record 1. "
        "(org.apache.kafka.controller.BrokerHeartbeatManager)\n"
    )
    line = dump_events("broker-3/controller.log", granted)
    assert [e["event_type"] for e in line] == ["kraft_broker_unfenced"]
    found, _ = offline(dump_events("clean.dump", text) + line)
    assert found == []


def test_an_active_isr_member_left_without_the_leadership_is_an_error():
    text = dump([*base(follower_fenced=True), (40_000, [fencing(1, -1)]), (45_000, [change(leader=1)])])
    found, _ = offline(dump_events("late.dump", text))
    assert [(f.severity, f.kind, f.replica) for f in found] == [("error", "isr_member_live", 1)]
    assert found[0].evidence == ("late.dump:19", "late.dump:22", "late.dump:24")  # leader -1, unfenced, elected
    assert "for 5.0 s until late.dump:24" in found[0].summary


def test_an_out_of_isr_replica_active_where_the_dump_ends_is_a_warning():
    """Broker 2 (out of the ISR [1]) is active when the leader goes: the controller finds no ISR member to elect
    and, unclean elections off, writes nothing more."""
    found, _ = offline(dump_events("open.dump", dump(base(follower_fenced=False))))
    assert [(f.severity, f.kind, f.replica) for f in found] == [("warning", "replica_live", 2)]
    assert found[0].evidence == ("open.dump:18", "open.dump:11")  # leader -1; broker 2 unfenced
    assert found[0].summary.startswith("partition without a leader (ISR [1]) although replica(s) [2] were on active")
    assert "still leaderless where the metadata dump ends" in found[0].summary


def test_a_broker_registering_a_new_incarnation_is_fenced_until_unfenced():
    """``Registering a new incarnation of broker N`` (ClusterControlManager.java@3.9.0-rc3:470-475) precedes a
    RegisterBrokerRecord that is fenced by default (RegisterBrokerRecord.json@3.9.0-rc3:56): the broker is not
    active before "The request from broker N to unfence has been granted" (the real 3.9.1 lines of
    sample_logs/real-3.9-kraft-unclean-election, broker-1/controller.log 62 and 66)."""
    lines = dump_events(
        "broker-1/controller.log",
        "[2026-11-25 18:59:31,956] INFO [QuorumController id=1] Registering a new incarnation of broker 4. Previous "
        "incarnation ID was _dM8H6TBQV-9w9P3A-0_ow; new incarnation ID is ebruGi_KQUyTKicN96Rpfw. Generated 0 "
        "record(s) to clean up previous incarnations. Broker epoch will become 111. "
        "(org.apache.kafka.controller.ClusterControlManager)\n"
        "[2026-11-25 18:59:34,003] INFO [QuorumController id=1] The request from broker 4 to unfence has been granted "
        "because it has caught up with the offset of its register broker record 111. "
        "(org.apache.kafka.controller.BrokerHeartbeatManager)\n",
    )
    assert [e["event_type"] for e in lines] == ["kraft_broker_registered", "kraft_broker_unfenced"]
    ctx, _ = replay_one(lines)
    assert [(b.broker, b.state, b.evidence) for b in ctx.brokers] == [
        (4, "fenced", "broker-1/controller.log:1"),
        (4, "alive", "broker-1/controller.log:2"),
    ]
