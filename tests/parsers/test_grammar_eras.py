"""The grammar family covers every catalogued template of every Kafka era (no Spark).

* Every dialect's LALR grammar builds (no conflicts).
* Every row of kafka-log-formats.md §5 (state-change.log) and §6 (controller.log key events),
  rendered with realistic values at its first and at its last examined tag, is typed by a
  template whose ``//@`` range covers that tag, and the fast path agrees with plain Lark.
* The rendered examples of §7 are typed.
* Hand-written lines per era (including the quirks of §10) give the expected event_type and
  fields through ``parse_file``.
* Every template rule of the grammar is exercised by at least one line of this file or of the
  real-log corpus.
"""

from __future__ import annotations

import re

import pytest

from kafka_forensics.core.eras import AUTO, DIALECTS
from kafka_forensics.core.versions import KafkaVersion
from kafka_forensics.parsers.fields import apply_fields
from kafka_forensics.parsers.grammar_loader import START_SYMBOLS, build_lark, templates_for
from kafka_forensics.parsers.lines import FastLineParser, LarkLineParser
from kafka_forensics.parsers.records import parse_file
from tests.support.paths import REAL_LOGS, SHARED

FORMATS = SHARED / "reference" / "kafka-log-formats.md"
TS = "2021-03-04 10:15:23,456"
UUID = "Kq3t2CXxT0qj4bwnNu5j7g"
UUID2 = "GF5yTQpMt_YHxA5HOTyQAw"


def L(message: str, level: str = "TRACE", logger: str = "state.change.logger") -> str:
    return f"[{TS}] {level} {message} ({logger})"


def C(message: str, level: str = "INFO", logger: str = "kafka.controller.KafkaController") -> str:
    return L(message, level, logger)


def Q(message: str, level: str = "INFO", logger: str = "org.apache.kafka.controller.QuorumController") -> str:
    return L(message, level, logger)


def S(message: str, level: str = "INFO", logger: str = "kafka.cluster.Partition") -> str:
    return L(message, level, logger)


@pytest.fixture(scope="module")
def lark():
    return LarkLineParser(AUTO)


@pytest.fixture(scope="module")
def fast():
    return FastLineParser(AUTO)


# =================================================================================================
# the grammar builds
# =================================================================================================


@pytest.mark.parametrize("dialect", [AUTO] + [d.name for d in DIALECTS])
def test_every_dialect_builds_without_conflicts(dialect):
    for start in START_SYMBOLS:
        build_lark(dialect, None, start)


def test_template_directives_are_well_formed():
    specs = templates_for(AUTO)
    assert len(specs) > 450
    for spec in specs:
        assert spec.since <= spec.until, spec.rule
        assert re.fullmatch(r"[a-z0-9_]+__[a-z0-9_]+", spec.rule), spec.rule
        if spec.source == "kraft.lark":
            assert spec.kraft_only, f"{spec.rule}: kraft.lark templates carry the kraft flag"


REQUIRED_EVENT_TYPES = {
    "partition_state_change",
    "replica_state_change",
    "partition_state_change_failed",
    "replica_state_change_failed",
    "leader_election_started",
    "leader_elected",
    "leader_election_aborted",
    "leader_election_error",
    "no_replica_alive",
    "unclean_leader_election",
    "partition_isr_removed",
    "send_leader_and_isr",
    "send_update_metadata",
    "send_stop_replica",
    "send_leader_and_isr_summary",
    "send_update_metadata_summary",
    "send_stop_replica_summary",
    "controller_response",
    "broker_leader_and_isr_received",
    "broker_leader_and_isr_step",
    "broker_leader_unavailable",
    "stale_controller_epoch_rejected",
    "stale_leader_epoch_rejected",
    "broker_stop_replica",
    "broker_metadata_cached",
    "leader_starts",
    "follower_starts",
    "kraft_partitions_transitioning",
    "partition_created",
    "isr_shrink",
    "isr_expand",
    "isr_updated",
    "controller_isr_updated",
    "controller_elected",
    "controller_epoch_incremented",
    "controller_ready",
    "controller_resigned",
    "controller_resigning",
    "controller_moved",
    "controller_elected_elsewhere",
    "zk_session_expired",
    "broker_change",
    "live_brokers",
    "broker_failure",
    "broker_startup",
    "controlled_shutdown",
    "preferred_election_started",
    "preferred_election_completed",
    "preferred_election_failed",
    "replica_election_started",
    "reassignment_started",
    "reassignment_completed",
    "reassignment_removed",
    "topic_deletion_started",
    "topic_deletion_completed",
    "controller_event_error",
    "kraft_controller_activated",
    "kraft_leadership_renounced",
    "kraft_new_epoch",
    "kraft_broker_fenced",
    "kraft_broker_unfenced",
    "kraft_broker_registered",
    "kraft_broker_registration_changed",
    "kraft_alter_partition_rejected",
    "kraft_event_failed",
    "kafka_version",
}


def test_the_replay_event_types_exist():
    # invalid_transition_refused is not in the set: Kafka never logs "should be in one of ...
    # states before moving to ..." as a record; it is the IllegalStateException message in the
    # stack trace of a *_state_change_failed record (kafka-log-formats.md §8).
    have = {t.event_type for t in templates_for(AUTO)}
    assert REQUIRED_EVENT_TYPES - have == set()


# =================================================================================================
# §5 / §6: every catalogued template, rendered at its first and last examined tag
# =================================================================================================


def _version(text: str) -> KafkaVersion:
    return KafkaVersion.parse(text.replace("-rc3", ""))


def _catalogue(section: int) -> list[dict]:
    text = FORMATS.read_text(encoding="utf-8")
    start = text.index(f"\n## {section}.")
    end = text.index("\n## ", start + 5)
    rows = []
    for n, raw in enumerate((ln for ln in text[start:end].splitlines() if re.match(r"^\| \d", ln)), 1):
        cells = [c.strip() for c in raw.strip().strip("|").split(" | ")]
        first, last = cells[0].split("–")
        rows.append(
            {
                "section": section,
                "n": n,
                "first": first,
                "last": last,
                "level": cells[1].split(" ")[0],
                "prefix": cells[2],
                "template": cells[3].strip("`"),
                "source": cells[4] if section == 5 else "",
            }
        )
    return rows


def _lice(v):
    if v.key >= (3, 2):
        return "(Leader:3,ISR:3,1,LeaderRecoveryState:RECOVERED,LeaderEpoch:7,ZkVersion:9,ControllerEpoch:5)"
    if v.key >= (3, 1) or (2, 7) <= v.key < (3, 0):
        return "(Leader:3,ISR:3,1,LeaderEpoch:7,ZkVersion:9,ControllerEpoch:5)"
    return "(Leader:3,ISR:3,1,LeaderEpoch:7,ControllerEpoch:5)"


def _leader_and_isr(v):
    if v.key < (1, 1):
        return '{"leader":3,"leader_epoch":7,"isr":[3,1]}'
    if v.key < (3, 2):
        return "LeaderAndIsr(leader=3, leaderEpoch=7, isr=List(3, 1), zkVersion=9)"
    if v.key < (3, 3):
        return "LeaderAndIsr(leader=3, leaderEpoch=7, isr=List(3, 1), leaderRecoveryState=RECOVERED, zkVersion=9)"
    if v.key < (3, 5):
        return "LeaderAndIsr(leader=3, leaderEpoch=7, isr=List(3, 1), leaderRecoveryState=RECOVERED, partitionEpoch=9)"
    states = "BrokerState(brokerId=3, brokerEpoch=-1), BrokerState(brokerId=1, brokerEpoch=-1)"
    coll = f"[{states}]" if v.key >= (99,) else f"List({states})"
    return f"LeaderAndIsr(leader=3, leaderEpoch=7, isrWithBrokerEpoch={coll}, leaderRecoveryState=RECOVERED, partitionEpoch=9)"


def _partition_state(v, kind):
    if v.key < (0, 10):
        return "(LeaderAndIsrInfo:(Leader:3,ISR:3,1,LeaderEpoch:7,ControllerEpoch:5),ReplicationFactor:3),AllReplicas:3,1,2)"
    if kind == "stop":
        return "StopReplicaPartitionState(partitionIndex=7, leaderEpoch=7, deletePartition=false)"
    if v.key < (0, 11):
        return "PartitionState(controllerEpoch=5, leader=3, leaderEpoch=7, isr=[3, 1], zkVersion=9, replicas=[3, 1, 2])"
    if v.key < (1, 0):
        return "PartitionState(controllerEpoch=5, leader=3, leaderEpoch=7, isr=3,1, zkVersion=9, replicas=3,1,2)"
    if v.key < (2, 4):
        if kind == "um":
            return (
                "PartitionState(controllerEpoch=5, leader=3, leaderEpoch=7, isr=[3, 1], zkVersion=9, "
                "replicas=[3, 1, 2], offlineReplicas=[])"
            )
        return "PartitionState(controllerEpoch=5, leader=3, leaderEpoch=7, isr=3,1, zkVersion=9, replicas=3,1,2, isNew=false)"
    zk = "partitionEpoch" if v.key >= (3, 3) else "zkVersion"
    if kind == "um":
        return (
            f"UpdateMetadataPartitionState(topicName='orders', partitionIndex=7, controllerEpoch=5, leader=3, "
            f"leaderEpoch=7, isr=[3, 1], {zk}=9, replicas=[3, 1, 2], offlineReplicas=[])"
        )
    lrs = ", leaderRecoveryState=0" if v.key >= (3, 2) else ""
    return (
        f"LeaderAndIsrPartitionState(topicName='orders', partitionIndex=7, controllerEpoch=5, leader=3, "
        f"leaderEpoch=7, isr=[3, 1], {zk}=9, replicas=[3, 1, 2], addingReplicas=[], removingReplicas=[], "
        f"isNew=false{lrs})"
    )


def _response(v, template):
    if "UpdateMetadata response" in template:
        return (
            "org.apache.kafka.common.requests.UpdateMetadataResponse@6d3af739"
            if v.key < (2, 8)
            else "UpdateMetadataResponseData(errorCode=11)"
        )
    if "StopReplica response" in template:
        return "StopReplicaResponseData(errorCode=11, partitionErrors=[])"
    if "LeaderAndIsr response" in template:
        if v.key < (2, 4):
            return "LeaderAndIsrResponse(responses={orders-7=NONE}, error=STALE_CONTROLLER_EPOCH)"
        if v.key < (2, 8):
            return "LeaderAndIsrResponseData(errorCode=11, partitionErrors=[])"
        return "LeaderAndIsrResponseData(errorCode=11, partitionErrors=[], topics=[])"
    if v.key < (0, 9):
        return "LeaderAndIsrResponse(123,Map((orders,7) -> 0),0)"
    if v.key < (2, 4):
        return "{error_code=0,partitions=[{topic=orders,partition=7,error_code=0}]}"
    if v.key < (2, 8):
        return (
            "{error_code=0,partition_errors=[{topic_name=orders,partition_index=7,error_code=0,"
            "_tagged_fields={}}],_tagged_fields={}}"
        )
    return (
        f"LeaderAndIsrResponseData(errorCode=0, partitionErrors=[], topics=[LeaderAndIsrTopicError(topicId={UUID}, "
        "partitionErrors=[LeaderAndIsrPartitionError(topicName='', partitionIndex=7, errorCode=0)])])"
    )


_SIMPLE = {
    "controllerId": "1",
    "controllerEpoch": "5",
    "localBrokerId": "2",
    "brokerId": "3",
    "correlationId": "42",
    "leader": "3",
    "topic": "orders",
    "partitionId": "7",
    "numPartitions": "10",
    "requestControllerEpoch": "4",
    "lastUpdateControllerEpoch": "4",
    "deletePartition": "false",
    "deletePartitions": "true",
    "previousLeaderEpoch": "6",
    "metadataOffset": "1234",
    "replicaId": "2",
    "lastCommittedOffset": "1000",
    "exceptionMessage": "Error while writing to checkpoint file /data/orders-7/leader-epoch-checkpoint",
    "exception": "org.apache.kafka.common.errors.KafkaStorageException: Error while writing to checkpoint file /data/x",
    "requestLeaderEpoch": "7",
    "highWatermark": "1500",
    "assignedReplicas": "3,1,2",
    "startOffset": "1490",
    "partitionEpoch": "9",
    "leaderEpoch": "7",
    "exceptionClass": "org.apache.kafka.common.errors.KafkaStorageException",
    "curClaimEpoch": "7",
    "newLeaderEpoch": "8",
    "newAssignedReplicas": "3,1,2",
    "removingReplicas": "[]",
    "isr": "[3,1]",
    "error": "STALE_CONTROLLER_EPOCH",
    "currentLeaderEpoch": "8",
    "addingReplicas": "[]",
    "preferredReplica": "3",
    "numFollowers": "5",
    "newBrokerIdsSorted": "4",
    "liveBrokerIdsSorted": "1,2,3,4",
    "deadBrokerIdsSorted": "",
    "bouncedBrokerIdsSorted": "",
    "currentLeader": "2",
    "batchPrefix": "Metadata batch 1234",
    "requestType": "become-leader",
    "numLeaders": "3",
    "newReplicas": "3,1,2",
    "newLeaderName": "(none)",
    "logTopicId": UUID2,
    "lastCommittedEpoch": "7",
    "id": "3",
    "epoch": "5",
    "elapsedMs": "12",
    "zkControllerEpoch": "4",
    "underMinIsr": "(under-min-isr)",
    "requestTopicId": UUID,
    "previousLeader": "Some(2)",
    "numDeleted": "0",
    "newEpoch": "8",
    "newControllerEpoch": "6",
    "newBrokers": "4",
    "deadBrokers": "3",
    "name": "processBrokerHeartbeat",
    "lowestActiveOffset": "2000",
    "liveAssignedReplicas": "2,3",
    "leaderRecoveryState": "RECOVERING",
    "deltaUs": "123",
    "controlledShutdownOffset": "1999",
    "controlledShutDownOffset": "1999",
    "targetState": "OfflineReplica",
    "requestVersion": "7",
    "numStrayPartitions": "2",
    "numRemoved": "1",
    "numRecordsAdded": "0",
    "numChanged": "3",
    "numCached": "10",
    "numBecomeLeaders": "3",
    "numBecomeFollowers": "7",
    "numAdded": "10",
    "newNextWriteOffset": "1234",
    "newLeader": "2",
    "newIsr": "[3, 1]",
    "newIsrWithEpochs": "[BrokerState(brokerId=3, brokerEpoch=52), BrokerState(brokerId=1, brokerEpoch=50)]",
    "newBrokerEpoch": "20529",
    "latestControllerEpoch": "6",
    "lastStableOffset": "1000",
    "isNew": "true",
    "incarnationId": "s8LRI6IERP2_S5xzsSRc4Q",
    "incarnationId2": "F35Kn4RCRB-Mdb2kKB_thw",
    "epochZkVersion": "4",
    "electionType": "PREFERRED",
    "electionTrigger": "AdminClientTriggered",
    "cachedBrokerEpoch": "4294967320",
    "brokerEpoch": "4294967319",
    "apiKey": "LEADER_AND_ISR",
    "event": "BrokerChange",
    "offlineReplicas": "orders-7,orders-8",
    "topicAndPartitions": "[orders,7],[orders,8]",
    "liveBrokers": "1,2,3",
    "topicsToBeDeleted": "orders",
    "topics": "orders",
    "topicsQueuedForDeletion": "orders",
    "allTopics": "Set(orders, payments)",
    "removingPartitions": "Set(orders-7)",
    "addedBrokers": "Set(4)",
    "removedBrokers": "Set()",
    "record": (
        "RegisterBrokerRecord(brokerId=3, isMigratingZkBroker=false, incarnationId=F35Kn4RCRB-Mdb2kKB_thw, "
        "brokerEpoch=20529, endPoints=[BrokerEndpoint(name='PLAINTEXT', host='kafka3', port=9092, "
        "securityProtocol=0)], features=[], rack=null, fenced=true, inControlledShutdown=false, logDirs=[])"
    ),
    "leaderEndpoint": "BrokerEndPoint(id=3, host=kafka3:9092)",
    "partitionPrefix": "Metadata batch 1234 orders-7",
    "request": (
        "UpdateMetadataRequestData(controllerId=1, controllerEpoch=5, brokerEpoch=-1, "
        "ungroupedPartitionStates=[], topicStates=[], liveBrokers=[])"
    ),
}


def _value(name, v, row):
    template = row["template"]
    if name in _SIMPLE:
        return _SIMPLE[name]
    if name == "partition":
        if "RaftMetadataCache" in row["source"] and "Cached leader info" in template:
            return "MetadataPartition(orders,7,3,7,[3, 1, 2],[3, 1],9,[],[],[])"
        return "[orders,7]" if v.key < (1, 0) else "orders-7"
    if name in ("fromState", "toState"):
        if "replica {replicaId}" in template or "replicas to {toState}" in template:
            return "OnlineReplica" if name == "fromState" else "OfflineReplica"
        return "NewPartition" if name == "fromState" else "OnlinePartition"
    if name == "topicId":
        return f"Some({UUID})" if "Partition.scala" in row["source"] else UUID
    if name == "partitionState":
        if "StopReplica" in template:
            return _partition_state(v, "stop")
        if "ached leader info" in template:
            return _partition_state(v, "um")
        if "locally" in template:
            return "MetadataPartition(orders,7,3,7,[3, 1, 2],[3, 1],9,[],[],[])"
        return _partition_state(v, "lai")
    if name == "leaderIsrAndControllerEpoch":
        return _lice(v)
    if name == "leaderAndIsr":
        return _leader_and_isr(v)
    if name == "response":
        return _response(v, template)
    if name == "broker":
        if v.key < (0, 9):
            return "id:3,host:kafka3,port:9092"
        return "Node(3, kafka3, 9092)" if v.key < (0, 10) else "kafka3:9092 (id: 3 rack: null)"
    if name in ("brokerIds", "liveBrokerIds"):
        return "HashSet(1, 2, 3)" if v.key >= (2, 6) else "Set(1, 2, 3)"
    if name == "assignment":
        return "ReplicaAssignment(replicas=3,1,2, addingReplicas=, removingReplicas=)"
    if name == "partitions":
        if "TopicPartitions:" in template:
            return "HashSet(orders-7, orders-8)" if v.key >= (2, 6) else "Set(orders-7, orders-8)"
        return "orders-7,orders-8" if v.key >= (1, 0) else "[orders,7],[orders,8]"
    raise KeyError(name)


_PREFIX = {"C+E": "[Controller id=1 epoch=5] ", "C": "[Controller id=1] ", "B": "[Broker id=2] ", "—": ""}


def render(row: dict, which: str) -> str:
    v = _version(row[which])
    message = re.sub(r"\{([A-Za-z0-9]+)\}", lambda m: _value(m.group(1), v, row), row["template"])
    message = message.replace("{{", "{").replace("}}", "}")
    if row["section"] == 5:
        return L(_PREFIX[row["prefix"]] + message, row["level"], "state.change.logger")
    return L(message, row["level"], row["prefix"].replace("o.a.k.", "org.apache.kafka."))


CATALOGUE = _catalogue(5) + _catalogue(6)


def test_the_catalogue_is_complete():
    assert len(_catalogue(5)) == 258 and len(_catalogue(6)) == 122


@pytest.mark.parametrize("row", CATALOGUE, ids=lambda r: f"s{r['section']}-{r['n']:03d}")
def test_every_catalogued_template_is_typed(row, lark, fast):
    specs = {t.rule: t for t in templates_for(AUTO)}
    for which in ("first", "last"):
        line = render(row, which)
        a, b = lark.classify(line), fast.classify(line)
        assert a.template, f"untyped ({which} {row[which]}): {line}"
        assert a.key() == b.key(), f"fast path differs on: {line}"
        spec = specs[a.template]
        assert spec.since <= _version(row[which]) <= spec.until, (
            f"{a.template} ({spec.since}..{spec.until}) typed a line of {row[which]}: {line}"
        )


def _examples_section7() -> list[str]:
    text = FORMATS.read_text(encoding="utf-8")
    start = text.index("\n## 7.")
    end = text.index("\n## 8.", start)
    return [ln for ln in text[start:end].splitlines() if ln.startswith("[")]


@pytest.mark.parametrize("line", _examples_section7())
def test_rendered_examples_of_section_7_are_typed(line, lark, fast):
    a, b = lark.classify(line), fast.classify(line)
    assert a.template and a.key() == b.key(), line


# =================================================================================================
# hand-written lines per era: event_type and fields through parse_file
# =================================================================================================


def parse_one(line: str, name: str = "state-change.log") -> dict:
    result = parse_file((line + "\n").encode("utf-8"), name)
    assert len(result.events) == 1 and not result.quarantine, line
    return result.events[0]


def _check(event: dict, expected: dict) -> None:
    for key, want in expected.items():
        if key.startswith("attrs."):
            got = (event.get("attrs") or {}).get(key[6:])
        else:
            got = event.get(key)
        assert got == want, f"{key}: {got!r} != {want!r} in {event['message']}"


# (id, line, event_type, expected columns; "attrs.k" reads the attrs map)
ERA_0_8 = [
    (
        "sc-assigned-replicas",
        L(
            "Controller 7 epoch 34 changed partition [__consumer_offsets,31] state from "
            "OnlinePartition to OnlinePartition with assigned replicas 7,0"
        ),
        "partition_state_change",
        {
            "controller_id": 7,
            "controller_epoch": 34,
            "topic": "__consumer_offsets",
            "partition": 31,
            "from_state": "OnlinePartition",
            "to_state": "OnlinePartition",
            "replicas": [7, 0],
            "broker": 7,
        },
    ),
    (
        "sc-send-lai-082",
        L(
            "Controller 5 epoch 32 sending become-follower LeaderAndIsr request (Leader:9,ISR:9,0,"
            "LeaderEpoch:58,ControllerEpoch:32) with correlationId 3391 to broker 0 for partition "
            "[__consumer_offsets,25]"
        ),
        "send_leader_and_isr",
        {
            "leader": 9,
            "isr": [9, 0],
            "leader_epoch": 58,
            "state_controller_epoch": 32,
            "correlation_id": 3391,
            "target_broker": 0,
            "attrs.request_type": "become-follower",
        },
    ),
    (
        "sc-literal-%d",
        L(
            "Broker 7 received stop replica request from an old controller epoch 28. Latest known "
            "controller epoch is %d 29",
            "WARN",
        ),
        "stale_controller_epoch_rejected",
        {"broker": 7, "controller_epoch": 28, "attrs.latest_controller_epoch": "29"},
    ),
    (
        "sc-081-older-leader-epoch",
        L(
            "Broker 0 received invalid LeaderAndIsr request with correlation id 12 from "
            "controller 0 epoch 4 with an older leader epoch 1 for partition [test,0], "
            "current leader epoch is 1",
            "WARN",
        ),
        "stale_leader_epoch_rejected",
        {
            "broker": 0,
            "controller_id": 0,
            "controller_epoch": 4,
            "leader_epoch": 1,
            "topic": "test",
            "partition": 0,
            "attrs.current_leader_epoch": "1",
        },
    ),
    (
        "sc-081-old-controller-epoch",
        L(
            "Broker 2 received LeaderAndIsr request correlation id 5 with an old "
            "controller epoch 3. Latest known controller epoch is 4",
            "WARN",
        ),
        "stale_controller_epoch_rejected",
        {"broker": 2, "correlation_id": 5, "controller_epoch": 3, "attrs.latest_controller_epoch": "4"},
    ),
    (
        "sc-081-not-in-replicas",
        L(
            "Broker 2 ignoring LeaderAndIsr request with correlation id 5 from controller 1 "
            "epoch 3 as broker is not in assigned replica list 1,3 for partition [t,0]",
            "WARN",
        ),
        "broker_not_in_replica_list",
        {"broker": 2, "controller_id": 1, "replicas": [1, 3], "topic": "t"},
    ),
    (
        "sc-081-leader-unavailable",
        L(
            "Broker 2 ignored the become-follower state change with correlation id 5 "
            "controller 1 epoch 3 for partition [t,0] since the designated leader 4 cannot "
            "be found in live or shutting down brokers 1,2"
        ),
        "broker_leader_unavailable",
        {"broker": 2, "leader": 4, "live_brokers": [1, 2], "partition": 0},
    ),
    (
        "sc-081-shutting-down",
        L(
            "Broker 2 ignored the become-follower state change with correlation id 5 from "
            "controller 1 epoch 3 for partition [t,0] since it is shutting down"
        ),
        "broker_leader_and_isr_step",
        {"broker": 2, "correlation_id": 5, "controller_epoch": 3},
    ),
    (
        "sc-aborted",
        L(
            "Controller 2 epoch 39 aborted leader election for partition [__consumer_offsets,19] since "
            "the LeaderAndIsr path was already written by another controller. This probably means that "
            "the current controller 2 went through a soft failure and another controller was elected "
            "with epoch 40.",
            "ERROR",
        ),
        "leader_election_aborted",
        {"controller_id": 2, "controller_epoch": 39, "partition": 19, "attrs.new_controller_epoch": "40"},
    ),
    (
        "sc-no-replica-alive",
        L(
            "Controller 3 epoch 7 encountered error during state change of partition [orders,7] "
            "from New to Online, assigned replicas are [1,2], live brokers are [3]. No assigned "
            "replica is alive.",
            "ERROR",
        ),
        "no_replica_alive",
        {"controller_epoch": 7, "replicas": [1, 2], "live_brokers": [3], "topic": "orders"},
    ),
    (
        "sc-replica-failed-08",
        L(
            "Controller 1 epoch 5 initiated state change of replica 2 for partition [orders,7] "
            "from OnlineReplica to OfflineReplica failed",
            "ERROR",
        ),
        "replica_state_change_failed",
        {"replica": 2, "from_state": "OnlineReplica", "to_state": "OfflineReplica"},
    ),
    (
        "sc-um-0102",
        L(
            "Controller 0 epoch 16 sending UpdateMetadata request (Leader:8,ISR:8,0,LeaderEpoch:28,"
            "ControllerEpoch:16) to brokers Set(1, 2) for partition clicks-40"
        ),
        "send_update_metadata",
        {"target_brokers": [1, 2], "leader": 8, "topic": "clicks", "partition": 40},
    ),
    (
        "ctl-epoch-incremented",
        C("[Controller 1]: Controller 1 incremented epoch to 28"),
        "controller_epoch_incremented",
        {"controller_id": 1, "controller_epoch": 28},
    ),
    (
        "ctl-failover-08",
        C("[Controller 0]: Broker 0 starting become controller state transition"),
        "controller_failover_started",
        {"controller_id": 0},
    ),
    (
        "ctl-ready-08",
        C("[Controller 0]: Broker 0 is ready to serve as the new controller with epoch 4"),
        "controller_ready",
        {"controller_id": 0, "controller_epoch": 4},
    ),
    (
        "ctl-resigned-09",
        C("[Controller 1]: Broker 1 resigned as the controller"),
        "controller_resigned",
        {"controller_id": 1},
    ),
    (
        "ctl-unclean-08",
        C(
            "[OfflinePartitionLeaderSelector]: No broker in ISR is alive for [orders,7]. Elect leader "
            "2 from live brokers 2,3. There's potential data loss.",
            "WARN",
            "kafka.controller.OfflinePartitionLeaderSelector",
        ),
        "unclean_leader_election",
        {"leader": 2, "live_brokers": [2, 3], "topic": "orders", "partition": 7},
    ),
    (
        "ctl-broker-change-08",
        C(
            "[BrokerChangeListener on Controller 7]: Newly added brokers: , deleted brokers: 3, "
            "all live brokers: 4,6,7,8",
            logger="kafka.controller.ReplicaStateMachine$BrokerChangeListener",
        ),
        "broker_change",
        {"controller_id": 7, "added_brokers": [], "deleted_brokers": [3], "live_brokers": [4, 6, 7, 8]},
    ),
    (
        "ctl-zk-expired-08",
        C(
            "[SessionExpirationListener on 1], ZK expired; shut down all controller components and try to re-elect",
            logger="kafka.controller.KafkaController$SessionExpirationListener",
        ),
        "zk_session_expired",
        {"broker": 1},
    ),
    (
        "ctl-trigerring",
        C(
            "[PreferredReplicaPartitionLeaderSelector]: Current leader 2 for partition [orders,7] is "
            "not the preferred replica. Trigerring preferred replica leader election",
            logger="kafka.controller.PreferredReplicaPartitionLeaderSelector",
        ),
        "preferred_election_triggered",
        {"topic": "orders", "attrs.previous_leader": "2"},
    ),
    (
        "ctl-triggering-0102",
        C(
            "[PreferredReplicaPartitionLeaderSelector]: Current leader 2 for partition [orders,7] "
            "is not the preferred replica. Triggering preferred replica leader election",
            logger="kafka.controller.PreferredReplicaPartitionLeaderSelector",
        ),
        "preferred_election_triggered",
        {"partition": 7},
    ),
    (
        "ctl-reassign-resuming-typo",
        C(
            "[Controller 1]: 3/3 replicas have caught up with the leader for partition "
            "[orders,7] being reassigned.Resuming partition reassignment"
        ),
        "reassignment_completed",
        {"topic": "orders", "partition": 7, "attrs.caught_up_replicas": "3"},
    ),
    (
        "ctl-reassign-waiting-08",
        C(
            "[Controller 1]: 1/3 replicas have caught up with the leader for partition "
            "[orders,7] being reassigned.Replica(s) 4,5 still need to catch up"
        ),
        "reassignment_progress",
        {"replicas": [4, 5]},
    ),
    (
        "ctl-reassign-updated-trailing-space",
        C("[Controller 1]: Updated assigned replicas for partition [orders,7] being reassigned to 1,2,3 "),
        "reassignment_progress",
        {"replicas": [1, 2, 3], "partition": 7},
    ),
    (
        "ctl-reassign-reelect",
        C(
            "[Controller 1]: Leader 2 for partition [orders,7] being reassigned, is not in the "
            "new list of replicas 3,4. Re-electing leader"
        ),
        "reassignment_progress",
        {"leader": 2, "replicas": [3, 4]},
    ),
    (
        "ctl-reassign-alive",
        C(
            "[Controller 1]: Leader 3 for partition [orders,7] being reassigned, is already in the "
            "new list of replicas 3,4 and is alive"
        ),
        "reassignment_progress",
        {"leader": 3},
    ),
    (
        "ctl-reassign-dead",
        C(
            "[Controller 1]: Leader 3 for partition [orders,7] being reassigned, is already in the "
            "new list of replicas 3,4 but is dead"
        ),
        "reassignment_progress",
        {"leader": 3},
    ),
    (
        "ctl-reassign-removed-08",
        C("[Controller 1]: Removed partition [orders,7] from the list of reassigned partitions in zookeeper"),
        "reassignment_removed",
        {"topic": "orders"},
    ),
    (
        "ctl-elected-instead",
        C("[Controller 2]: Broker 3 was elected as controller instead of broker 2", "DEBUG"),
        "controller_elected_elsewhere",
        {"controller_id": 2, "attrs.elected_controller": "3"},
    ),
    (
        "ctl-thread-error-08",
        C("[Controller-1-to-broker-2-send-thread], Error due to ", "ERROR", "kafka.controller.RequestSendThread"),
        "thread_error",
        {"controller_id": 1, "target_broker": 2},
    ),
    (
        "ctl-thread-error-011",
        C(
            "[controller-event-thread]: Error due to",
            "ERROR",
            "kafka.controller.ControllerEventManager$ControllerEventThread",
        ),
        "thread_error",
        {},
    ),
    (
        "ctl-thread-starting-08",
        C("[Controller-1-to-broker-2-send-thread], Starting ", logger="kafka.controller.RequestSendThread"),
        "thread_lifecycle",
        {"target_broker": 2},
    ),
    (
        "srv-shrink-08",
        S("Partition [othertopic,2] on broker 0: Shrinking ISR for partition [othertopic,2] from 0,2,1 to 0"),
        "isr_shrink",
        {"broker": 0, "topic": "othertopic", "partition": 2, "isr": [0], "attrs.previous_isr": "0,2,1"},
    ),
    (
        "srv-expand-0102",
        S("Partition [orders,7] on broker 1: Expanding ISR for partition orders-7 from 1 to 1,2"),
        "isr_expand",
        {"broker": 1, "isr": [1, 2]},
    ),
    (
        "srv-shrink-011",
        S("Partition [orders,7] on broker 1: Shrinking ISR from 1,2 to 1"),
        "isr_shrink",
        {"broker": 1, "topic": "orders", "isr": [1], "attrs.previous_isr": "1,2"},
    ),
    (
        "srv-expand-011",
        S("Partition [orders,7] on broker 1: Expanding ISR from 1 to 1,2"),
        "isr_expand",
        {"isr": [1, 2]},
    ),
    (
        "srv-zkversion-08",
        S("Partition [orders,7] on broker 1: Cached zkVersion [5] not equal to that in zookeeper, skip updating ISR"),
        "isr_update_failed",
        {"partition_epoch": 5, "broker": 1},
    ),
    (
        "srv-zkclient-expired",
        L("zookeeper state changed (Expired)", "INFO", "org.I0Itec.zkclient.ZkClient"),
        "zk_session_expired",
        {},
    ),
    (
        "srv-zkclient-state",
        L("zookeeper state changed (SyncConnected)", "INFO", "org.I0Itec.zkclient.ZkClient"),
        "zk_state_changed",
        {"attrs.zk_state": "SyncConnected"},
    ),
    (
        "srv-version-010",
        L("Kafka version : 0.10.0.0", "INFO", "org.apache.kafka.common.utils.AppInfoParser"),
        "kafka_version",
        {"attrs.kafka_version": "0.10.0.0"},
    ),
    (
        "srv-znode",
        L("Creating /controller (is it secure? false)", "INFO", "kafka.utils.ZKCheckedEphemeral"),
        "zk_znode_create",
        {"attrs.path": "/controller"},
    ),
    (
        "srv-znode-result",
        L("Result of znode creation is: NODEEXISTS", "INFO", "kafka.utils.ZKCheckedEphemeral"),
        "zk_znode_create",
        {"attrs.zk_state": "NODEEXISTS"},
    ),
]

ERA_1_0 = [
    (
        "sc-changed-10",
        L(
            "[Controller id=1 epoch=17] Changed partition __consumer_offsets-24 state from "
            "NonExistentPartition to NewPartition"
        ),
        "partition_state_change",
        {"controller_id": 1, "controller_epoch": 17, "partition": 24, "to_state": "NewPartition"},
    ),
    (
        "sc-changed-no-epoch-10",
        L("[Controller id=0] Changed partition temp-0 state from OfflinePartition to NonExistentPartition"),
        "partition_state_change",
        {"controller_id": 0, "controller_epoch": None, "to_state": "NonExistentPartition"},
    ),
    (
        "sc-send-lai-10",
        L(
            "[Controller id=0 epoch=6] Sending become-leader LeaderAndIsr request PartitionState("
            "controllerEpoch=6, leader=3, leaderEpoch=35, isr=3,9, zkVersion=53, replicas=3,9,0, "
            "isNew=true) to broker 3 for partition metrics-raw-86"
        ),
        "send_leader_and_isr",
        {
            "leader": 3,
            "leader_epoch": 35,
            "isr": [3, 9],
            "replicas": [3, 9, 0],
            "partition_epoch": 53,
            "target_broker": 3,
            "topic": "metrics-raw",
            "partition": 86,
        },
    ),
    (
        "sc-response-error-10",
        L(
            "[Controller id=1] Received error in LeaderAndIsr response LeaderAndIsrResponse("
            "responses={orders-7=KAFKA_STORAGE_ERROR}, error=NONE) from broker 3",
            "ERROR",
        ),
        "controller_response_error",
        {"controller_id": 1, "target_broker": 3},
    ),
    (
        "sc-mark-offline-10",
        L("[Controller id=1] Mark replicas orders-7,orders-8 on broker 3 as offline", "INFO"),
        "offline_replicas_marked",
        {"target_broker": 3, "attrs.partitions": "orders-7,orders-8"},
    ),
    (
        "sc-leader-minus1-10",
        L(
            "[Broker id=3] Received LeaderAndIsrRequest with correlation id 1 from controller 3 "
            "epoch 4 for partition temperature-2 (last update controller epoch 4) but cannot become "
            "follower since the new leader -1 is unavailable.",
            "ERROR",
        ),
        "broker_leader_unavailable",
        {
            "broker": 3,
            "leader": -1,
            "controller_epoch": 4,
            "topic": "temperature",
            "attrs.last_update_controller_epoch": "4",
        },
    ),
    (
        "sc-stale-epoch-10",
        L(
            "[Broker id=2] Ignoring LeaderAndIsr request from controller 1 with correlation id 9 "
            "since its controller epoch 45 is old. Latest known controller epoch is 46",
            "WARN",
        ),
        "stale_controller_epoch_rejected",
        {"broker": 2, "controller_id": 1, "controller_epoch": 45, "attrs.latest_controller_epoch": "46"},
    ),
    (
        "sc-stop-replica-10",
        L("[Broker id=0] Handling stop replica (delete=true) for partition temp-0"),
        "broker_stop_replica",
        {"broker": 0, "attrs.delete_partition": "true", "topic": "temp"},
    ),
    (
        "sc-follower-disk-10",
        L(
            "[Broker id=2] Skipped the become-follower state change with correlation id 5 from "
            "controller 1 epoch 3 for partition orders-7 (last update controller epoch 2) since the "
            "replica for the partition is offline due to disk error org.apache.kafka.common.errors."
            "KafkaStorageException: Error while reading checkpoint file",
            "ERROR",
        ),
        "broker_leader_and_isr_error",
        {"attrs.error": "org.apache.kafka.common.errors.KafkaStorageException: Error while reading checkpoint file"},
    ),
    (
        "ctl-incremented-10",
        C("[Controller id=2] Incremented epoch to 5"),
        "controller_epoch_incremented",
        {"controller_id": 2, "controller_epoch": 5},
    ),
    (
        "ctl-failover-10",
        C("[Controller id=2] Starting become controller state transition"),
        "controller_failover_started",
        {"controller_id": 2},
    ),
    (
        "ctl-elected-10",
        C("[Controller id=1] 1 successfully elected as the controller"),
        "controller_elected",
        {"controller_id": 1, "attrs.elected_controller": "1"},
    ),
    (
        "ctl-logdir-listener-10",
        C("[Controller id=1] Registering logDirEventNotificationListener", "DEBUG"),
        "controller_init_step",
        {},
    ),
    (
        "ctl-leader-cache-10",
        C(
            "[PartitionStateMachine controllerId=1] After leader election, leader cache for krp-0 "
            "is updated to (Leader:2,ISR:2,1,LeaderEpoch:1,ControllerEpoch:1)",
            "DEBUG",
            "kafka.controller.PartitionStateMachine",
        ),
        "leader_cache_updated",
        {"leader": 2, "isr": [2, 1], "leader_epoch": 1, "topic": "krp"},
    ),
]

ERA_1_1 = [
    (
        "sc-doubled-identity",
        L(
            "[Controller id=1 epoch=5] Controller 1 epoch 5 failed to change state for partition "
            "orders-7 from OfflinePartition to OnlinePartition",
            "ERROR",
        ),
        "partition_state_change_failed",
        {"controller_id": 1, "controller_epoch": 5, "from_state": "OfflinePartition"},
    ),
    (
        "sc-replica-failed-11",
        L(
            "[Controller id=1 epoch=5] Controller 1 epoch 5 initiated state change of replica 2 "
            "for partition orders-7 from OnlineReplica to OfflineReplica failed",
            "ERROR",
        ),
        "replica_state_change_failed",
        {"replica": 2, "topic": "orders"},
    ),
    (
        "sc-with-state-11",
        L(
            "[Controller id=0 epoch=30] Changed partition shipments-81 from OnlinePartition to "
            "OfflinePartition with state LeaderAndIsr(leader=8, leaderEpoch=37, isr=List(8), zkVersion=52)"
        ),
        "partition_state_change",
        {"leader": 8, "leader_epoch": 37, "isr": [8], "partition_epoch": 52},
    ),
    (
        "sc-response-11",
        L(
            "[Controller id=2 epoch=20] Received response {error_code=0,partitions=[{topic=sessions,"
            "partition=30,error_code=0}]} for request LEADER_AND_ISR with correlation id 1252 sent to "
            "broker 10.0.1.4:9092 (id: 4 rack: null)"
        ),
        "controller_response",
        {"correlation_id": 1252, "target_broker": 4, "attrs.api_key": "LEADER_AND_ISR"},
    ),
    (
        "sc-matches-23",
        L(
            "[Broker id=0] Ignoring LeaderAndIsr request from controller 0 with correlation id 1 epoch 5 "
            "for partition t-3 since its associated leader epoch 4 matches the current leader epoch",
            "DEBUG",
        ),
        "stale_leader_epoch_rejected",
        {"leader_epoch": 4, "controller_epoch": 5},
    ),
    (
        "ctl-elected-21",
        C(
            "[Controller id=4] 4 successfully elected as the controller. Epoch incremented to 28 and "
            "epoch zk version is now 649"
        ),
        "controller_elected",
        {"controller_id": 4, "controller_epoch": 28, "attrs.epoch_zk_version": "649"},
    ),
    (
        "ctl-removing-partition-11",
        C("[Controller id=0] Removing partition orders-7 from the list of reassigned partitions in zookeeper"),
        "reassignment_removed",
        {"partition": 7},
    ),
    (
        "ctl-reassign-resuming-11",
        C(
            "[Controller id=0] 3/3 replicas have caught up with the leader for partition "
            "orders-7 being reassigned. Resuming partition reassignment"
        ),
        "reassignment_completed",
        {"topic": "orders"},
    ),
    (
        "ctl-reassign-waiting-11",
        C(
            "[Controller id=0] 2/3 replicas have caught up with the leader for partition "
            "orders-7 being reassigned. Replica(s) 3 still need to catch up"
        ),
        "reassignment_progress",
        {"replicas": [3]},
    ),
    (
        "ctl-reassign-updated-11",
        C("[Controller id=0] Updated assigned replicas for partition orders-7 being reassigned to 1,2,3"),
        "reassignment_progress",
        {"replicas": [1, 2, 3]},
    ),
    (
        "ctl-no-more-reassign",
        C("[Controller id=0] No more partitions need to be reassigned. Deleting zk path /admin/reassign_partitions"),
        "reassignment_removed",
        {"attrs.path": "/admin/reassign_partitions"},
    ),
    (
        "ctl-moved-21",
        C(
            "[ControllerEventThread controllerId=1] Controller moved to another broker when processing BrokerChange.",
            logger="kafka.controller.ControllerEventManager$ControllerEventThread",
        ),
        "controller_moved",
        {"controller_id": 1, "attrs.event": "BrokerChange"},
    ),
    (
        "ctl-old-broker-epoch",
        C(
            "[Controller id=9] Received controlled shutdown request from an old broker epoch "
            "4294967319 for broker 3. Current broker epoch is 4294967320."
        ),
        "controlled_shutdown_rejected",
        {"target_broker": 3, "attrs.broker_epoch": "4294967319", "attrs.cached_broker_epoch": "4294967320"},
    ),
    (
        "ctl-bounced-22",
        C(
            "[Controller id=9] Newly added brokers: 6, deleted brokers: , bounced brokers: 2,4, all "
            "live brokers: 2,4,6,7,8,9"
        ),
        "broker_change",
        {"added_brokers": [6], "deleted_brokers": [], "bounced_brokers": [2, 4], "live_brokers": [2, 4, 6, 7, 8, 9]},
    ),
    (
        "srv-shrink-10",
        S("[Partition orders-7 broker=2] Shrinking ISR from 2,3 to 2"),
        "isr_shrink",
        {"broker": 2, "topic": "orders", "partition": 7, "isr": [2], "attrs.previous_isr": "2,3"},
    ),
    (
        "srv-shrink-22",
        S(
            "[Partition orders-7 broker=2] Shrinking ISR from 2,3,1 to 2,1. Leader: (highWatermark: "
            "1500, endOffset: 1520). Out of sync replicas: (brokerId: 3, endOffset: 1490)."
        ),
        "isr_shrink",
        {"isr": [2, 1], "attrs.previous_isr": "2,3,1", "attrs.high_watermark": "1500"},
    ),
    ("srv-expand-10", S("[Partition orders-7 broker=2] Expanding ISR from 2 to 2,3"), "isr_expand", {"isr": [2, 3]}),
    (
        "srv-zkversion-10",
        S("[Partition orders-7 broker=2] Cached zkVersion [14] not equal to that in zookeeper, skip updating ISR"),
        "isr_update_failed",
        {"partition_epoch": 14},
    ),
    (
        "srv-session-expired-11",
        L("[ZooKeeperClient Kafka server] Session expired.", "INFO", "kafka.zookeeper.ZooKeeperClient"),
        "zk_session_expired",
        {},
    ),
]

ERA_2_4 = [
    (
        "sc-received-24",
        L(
            "[Broker id=8] Received LeaderAndIsr request LeaderAndIsrPartitionState(topicName="
            "'payments', partitionIndex=47, controllerEpoch=12, leader=8, leaderEpoch=38, isr=[8, 4, 2], "
            "zkVersion=55, replicas=[8, 4, 2], addingReplicas=[], removingReplicas=[], isNew=false) "
            "correlation id 4056 from controller 8 epoch 12"
        ),
        "broker_leader_and_isr_received",
        {
            "broker": 8,
            "topic": "payments",
            "partition": 47,
            "leader": 8,
            "isr": [8, 4, 2],
            "controller_epoch": 12,
            "correlation_id": 4056,
        },
    ),
    (
        "sc-reassign-sent-24",
        L(
            "[Controller id=1 epoch=5] Sent LeaderAndIsr request (Leader:3,ISR:3,1,LeaderEpoch:7,"
            "ControllerEpoch:5) with new replica assignment ReplicaAssignment(replicas=3,1,2, "
            "addingReplicas=2, removingReplicas=) to leader 3 for partition being reassigned orders-7"
        ),
        "reassignment_leader_and_isr_sent",
        {"replicas": [3, 1, 2], "attrs.adding_replicas": "2", "leader": 3},
    ),
    (
        "sc-um-response-no-tostring",
        L(
            "[Controller id=1] Received error STALE_CONTROLLER_EPOCH in UpdateMetadata "
            "response org.apache.kafka.common.requests.UpdateMetadataResponse@6d3af739 "
            "from broker 2",
            "ERROR",
        ),
        "controller_response_error",
        {"target_broker": 2, "attrs.error": "STALE_CONTROLLER_EPOCH"},
    ),
    (
        "sc-started-fetcher-24",
        L(
            "[Broker id=2] Started fetcher to new leader as part of become-follower request "
            "from controller 1 epoch 5 with correlation id 42 for partition orders-7 with leader "
            "BrokerEndPoint(id=3, host=kafka3:9092)"
        ),
        "broker_leader_and_isr_step",
        {"leader": 3, "correlation_id": 42},
    ),
    (
        "ctl-replica-election-24",
        C(
            "[Controller id=0] Starting replica leader election (PREFERRED) for partitions "
            "orders-7,orders-8 triggered by AdminClientTriggered"
        ),
        "replica_election_started",
        {
            "attrs.election_type": "PREFERRED",
            "attrs.election_trigger": "AdminClientTriggered",
            "attrs.partitions": "orders-7,orders-8",
        },
    ),
    (
        "ctl-replica-election-empty",
        C("[Controller id=0] Starting replica leader election (PREFERRED) for partitions  triggered by ZkTriggered"),
        "replica_election_started",
        {"attrs.election_trigger": "ZkTriggered"},
    ),
    (
        "ctl-retrying-no-prefix",
        C(
            "Retrying leader election with strategy OfflinePartitionLeaderElectionStrategy(false) "
            "for partitions ArrayBuffer(orders-7)",
            logger="kafka.controller.ZkPartitionStateMachine",
        ),
        "leader_election_retried",
        {"attrs.election_strategy": "OfflinePartitionLeaderElectionStrategy(false)"},
    ),
    (
        "ctl-target-caught-up",
        C(
            "[Controller id=1] Target replicas List(3, 4, 5) have all caught up with the leader "
            "for reassigning partition orders-7"
        ),
        "reassignment_completed",
        {"replicas": [3, 4, 5], "topic": "orders", "partition": 7},
    ),
    (
        "srv-isr-updated-24",
        S("[Partition orders-7 broker=2] ISR updated to [2,3] and zkVersion updated to [15]"),
        "isr_updated",
        {"isr": [2, 3], "partition_epoch": 15, "broker": 2},
    ),
    (
        "srv-zkversion-24",
        S("[Partition orders-7 broker=2] Cached zkVersion 14 not equal to that in zookeeper, skip updating ISR"),
        "isr_update_failed",
        {"partition_epoch": 14},
    ),
]

ERA_2_6 = [
    (
        "sc-summary-26",
        L(
            "[Controller id=8 epoch=2] Sending LeaderAndIsr request to broker 8 with 17 become-leader "
            "and 190 become-follower partitions",
            "INFO",
        ),
        "send_leader_and_isr_summary",
        {
            "target_broker": 8,
            "attrs.num_become_leader": "17",
            "attrs.num_become_follower": "190",
            "controller_epoch": 2,
        },
    ),
    (
        "sc-handling-26",
        L(
            "[Broker id=2] Handling LeaderAndIsr request correlationId 4075 from controller 7 for 207 partitions",
            "INFO",
        ),
        "broker_leader_and_isr_received",
        {"broker": 2, "controller_id": 7, "attrs.num_partitions": "207"},
    ),
    (
        "sc-isr-removed-26",
        L(
            "[Controller id=0 epoch=2] Partition __consumer_offsets-22 state changed to (Leader:-1,"
            "ISR:0,LeaderRecoveryState:RECOVERED,LeaderEpoch:1,ZkVersion:1,ControllerEpoch:2) after "
            "removing replica 0 from the ISR as part of transition to OfflineReplica",
            "INFO",
        ),
        "partition_isr_removed",
        {
            "leader": -1,
            "isr": [0],
            "replica": 0,
            "to_state": "OfflineReplica",
            "partition_epoch": 1,
            "attrs.leader_recovery_state": "RECOVERED",
        },
    ),
    (
        "sc-stop-summary-delete",
        L("[Controller id=0 epoch=2] Sending StopReplica request (delete = true) for 50 replicas to broker 0", "INFO"),
        "send_stop_replica_summary",
        {"target_broker": 0, "attrs.delete_partition": "true", "attrs.num_partitions": "50"},
    ),
    (
        "sc-leader-starts-26",
        L(
            "[Broker id=0] Leader streams-plaintext-input-0 starts at leader epoch 0 from offset 0 "
            "with high watermark 0 ISR [0] addingReplicas [] removingReplicas []. Previous leader "
            "epoch was -1.",
            "INFO",
        ),
        "leader_starts",
        {
            "topic": "streams-plaintext-input",
            "partition": 0,
            "leader_epoch": 0,
            "isr": [0],
            "attrs.previous_leader_epoch": "-1",
        },
    ),
    (
        "sc-zk-makeleader-trailing-space",
        L(
            "[Broker id=2] A ZooKeeper client exception has occurred and makeLeader "
            "will be skipping the state change for the partition orders-7 with leader "
            "epoch: 6 ",
            "ERROR",
        ),
        "broker_leader_and_isr_error",
        {"attrs.previous_leader_epoch": "6"},
    ),
    (
        "sc-applied-deferred-28",
        L("[Broker id=1] Applied 10 deferred partitions: 3 leader(s) and 7 follower(s)in 12 ms", "INFO"),
        "kraft_deferred_applied",
        {"attrs.num_partitions": "10", "attrs.elapsed_ms": "12"},
    ),
    (
        "sc-raft-cached-28",
        L(
            "[Broker id=1] Cached leader info MetadataPartition(orders,7,3,7,[3, 1, 2],[3, 1],9,[],[],"
            "[]) in response to UpdateMetadata request sent by controller UpdateMetadataRequestData("
            "controllerId=1, controllerEpoch=5, brokerEpoch=-1, liveBrokers=[]).controllerId epoch "
            "UpdateMetadataRequestData(controllerId=1, controllerEpoch=5, brokerEpoch=-1, "
            "liveBrokers=[]).controllerEpoch with correlation id 42"
        ),
        "broker_metadata_cached",
        {"topic": "orders", "partition": 7, "leader": 3, "isr": [3, 1], "correlation_id": 42},
    ),
    (
        "sc-raft-pp-28",
        L(
            "[Broker id=1] Metadata batch 1234 orders-7: cannot become follower since the new leader 3 is unavailable.",
            "ERROR",
        ),
        "broker_leader_unavailable",
        {"leader": 3, "topic": "orders", "attrs.metadata_offset": "1234"},
    ),
    (
        "sc-raft-deferred-28",
        L(
            "[Broker id=1] Apply deferred follower partition orders-7: starting the become-follower "
            "transition with leader 3"
        ),
        "broker_leader_and_isr_step",
        {"leader": 3},
    ),
    (
        "sc-raft-batch-28",
        L("[Broker id=1] Metadata batch <multiple deferred>: stopped 4 fetcher(s)", "INFO"),
        "broker_leader_and_isr_step",
        {"attrs.num_partitions": "4"},
    ),
    (
        "srv-isr-alter-27",
        S("[Partition orders-7 broker=2] ISR updated from AlterIsr to 2,3 and version updated to [16]"),
        "isr_updated",
        {"isr": [2, 3], "partition_epoch": 16},
    ),
    (
        "srv-isr-updated-28",
        S("[Partition orders-7 broker=2] ISR updated to 2,3 and version updated to [16]"),
        "isr_updated",
        {"isr": [2, 3], "partition_epoch": 16},
    ),
    (  # K:controller/KafkaController.scala@1.1.1:217 (1.1 - 2.0 only)
        "ctl-reading-epoch-11",
        C("[Controller id=1] Reading controller epoch from ZooKeeper"),
        "controller_init_step",
        {"controller_id": 1},
    ),
    (  # K:controller/KafkaController.scala@2.0.1:223
        "ctl-incrementing-epoch-20",
        C("[Controller id=1] Incrementing controller epoch in ZooKeeper"),
        "controller_init_step",
        {"controller_id": 1},
    ),
    (  # K:controller/TopicDeletionManager.scala@1.1.1:349 (logIdent "[Topic Deletion Manager 1], ")
        "tdm-restarted-11",
        C(
            "[Topic Deletion Manager 1], Deletion of topic orders (re)started",
            logger="kafka.controller.TopicDeletionManager",
        ),
        "topic_deletion_restarted",
        {"topic": "orders"},
    ),
    (  # K:controller/TopicDeletionManager.scala@1.1.1:313
        "tdm-partition-callback-11",
        C(
            "[Topic Deletion Manager 1], Partition deletion callback for orders-0,orders-1",
            logger="kafka.controller.TopicDeletionManager",
        ),
        "topic_deletion_callback",
        {},
    ),
    (  # K:controller/TopicDeletionManager.scala@2.3.1:174 (logIdent "[Topic Deletion Manager 1] ")
        "tdm-halted-23",
        C(
            "[Topic Deletion Manager 1] Halted deletion of topics orders due to replica 3 is offline",
            logger="kafka.controller.TopicDeletionManager",
        ),
        "topic_deletion_halted",
        {},
    ),
    (  # K:controller/KafkaController.scala@2.8.2:2344 (DEBUG, the controller writes a leader's AlterIsr)
        "ctl-isr-updated-27",
        C("[Controller id=2] ISR for partition orders-0 updated to [1,2,3] and zkVersion updated to [10]", "DEBUG"),
        "controller_isr_updated",
        {"topic": "orders", "partition": 0, "isr": [1, 2, 3], "partition_epoch": 10, "leader": None},
    ),
]

ERA_3_X = [
    (  # K:controller/KafkaController.scala@3.5.0:2420 (DEBUG), LeaderAndIsr.toString @3.5.0:102
        "ctl-isr-updated-35",
        C(
            "[Controller id=3] ISR for partition orders-0 updated to LeaderAndIsr(leader=1, leaderEpoch=0, "
            "isrWithBrokerEpoch=List(BrokerState(brokerId=1, brokerEpoch=-1), BrokerState(brokerId=2, brokerEpoch=-1)), "
            "leaderRecoveryState=RECOVERED, partitionEpoch=1).",
            "DEBUG",
        ),
        "controller_isr_updated",
        {"topic": "orders", "partition": 0, "leader": 1, "leader_epoch": 0, "isr": [1, 2], "partition_epoch": 1},
    ),
    (
        "sc-leader-starts-36",
        L(
            "[Broker id=0] Leader shipments-93 with topic id Some(GF5yTQpMt_YHxA5HOTyQAw) starts at "
            "leader epoch 22 from offset 4460515 with partition epoch 27, high watermark 4464132, "
            "ISR [4,0], adding replicas [9] and removing replicas [9] (under-min-isr). Previous "
            "leader Some(4) and previous leader epoch was 21.",
            "INFO",
        ),
        "leader_starts",
        {
            "topic": "shipments",
            "partition": 93,
            "leader_epoch": 22,
            "partition_epoch": 27,
            "isr": [4, 0],
            "attrs.topic_id": UUID2,
            "attrs.under_min_isr": "true",
            "attrs.previous_leader": "4",
            "attrs.previous_leader_epoch": "21",
        },
    ),
    (
        "sc-leader-starts-empty-under-min-isr",
        L(
            "[Broker id=3] Leader my-topic-1 with topic id Some(P_42li05RQ6ikIgdf1uRrA)"
            " starts at leader epoch 0 from offset 0 with partition epoch 0, high "
            "watermark 0, ISR [3,1,2], adding replicas [] and removing replicas [] . "
            "Previous leader None and previous leader epoch was -1.",
            "INFO",
        ),
        "leader_starts",
        {"isr": [3, 1, 2], "attrs.previous_leader": "None"},
    ),
    (
        "sc-follower-starts-33",
        L(
            "[Broker id=1] Follower orders-7 starts at leader epoch 7 from offset 1490 with "
            "partition epoch 9 and high watermark 1500. Current leader is 3. Previous leader epoch "
            "was 6.",
            "INFO",
        ),
        "follower_starts",
        {"leader": 3, "leader_epoch": 7, "partition_epoch": 9},
    ),
    (
        "sc-transitioning",
        L("[Broker id=1] Transitioning 7 partition(s) to local leaders.", "INFO"),
        "kraft_partitions_transitioning",
        {"broker": 1, "attrs.num_partitions": "7", "attrs.role": "leaders"},
    ),
    (
        "sc-created-offline-dir-37",
        L(
            f"[Broker id=2] Creating new partition orders-7 with topic id {UUID}.A topic "
            "with the same name but different id exists but it resides in an offline log "
            "directory.",
            "INFO",
        ),
        "partition_created",
        {"topic": "orders", "partition": 7, "attrs.topic_id": UUID},
    ),
    (
        "sc-zk-makeleader-33",
        L(
            "[Broker id=2] A ZooKeeper client exception has occurred and makeLeader will be "
            "skipping the state change for the partition orders-7 with leader epoch: 6.",
            "ERROR",
        ),
        "broker_leader_and_isr_error",
        {"attrs.previous_leader_epoch": "6"},
    ),
    (
        "sc-metadata-error-36",
        L("[Broker id=2] Error: org.apache.kafka.common.errors.InvalidRequestException", "ERROR"),
        "broker_metadata_error",
        {"attrs.exception": "org.apache.kafka.common.errors.InvalidRequestException"},
    ),
    (
        "sc-metadata-error-topic-36",
        L(
            "[Broker id=2] Error: topic orders appeared in currentMetadata.topicNames, but "
            "not in currentMetadata.partitionStates.",
            "ERROR",
        ),
        "broker_metadata_error",
        {"topic": "orders"},
    ),
    (
        "sc-migration-brokers",
        L(
            "Adding brokers Set(4 : (EndPoint(kafka4,9092,ListenerName(PLAINTEXT),PLAINTEXT)) : "
            "null : Features{(metadata.version -> SupportedVersionRange[min_version:1, "
            "max_version:20])}), removing brokers Set().",
            "INFO",
        ),
        "migration_brokers_changed",
        {"attrs.detail": "Set()."},
    ),
    (
        "sc-migration-found-offline",
        L("[Controller id=3000] Found orders-7,orders-8 on broker 3 as offline", "ERROR"),
        "offline_replicas_marked",
        {"controller_id": 3000, "target_broker": 3},
    ),
    (
        "srv-isr-updated-31",
        S("[Partition orders-7 broker=2] ISR updated to 2,3 and version updated to 16"),
        "isr_updated",
        {"isr": [2, 3], "partition_epoch": 16},
    ),
    (
        "srv-isr-updated-under-min",
        S("[Partition orders-7 broker=2] ISR updated to 2 (under-min-isr) and version updated to 17"),
        "isr_updated",
        {"isr": [2], "partition_epoch": 17, "attrs.under_min_isr": "true"},
    ),
    (
        "srv-version-22",
        L("Kafka version: 3.9.0", "INFO", "org.apache.kafka.common.utils.AppInfoParser"),
        "kafka_version",
        {"attrs.kafka_version": "3.9.0"},
    ),
]

KRAFT = [
    (
        "kr-new-epoch",
        Q("[QuorumController id=2] In the new epoch 4046, the leader is (none)."),
        "kraft_new_epoch",
        {"controller_id": 2, "controller_epoch": 4046, "attrs.new_leader": "(none)"},
    ),
    (
        "kr-active-28",
        Q("[Controller 6] Becoming active at controller epoch 29."),
        "kraft_controller_activated",
        {"controller_id": 6, "controller_epoch": 29},
    ),
    (
        "kr-active-30",
        Q("[Controller 1] Becoming the active controller at epoch 8, committed offset 1000 and committed epoch 7."),
        "kraft_controller_activated",
        {"controller_epoch": 8},
    ),
    (
        "kr-active-36",
        Q("[QuorumController id=8] Becoming the active controller at epoch 38, next write offset 3395868."),
        "kraft_controller_activated",
        {"controller_id": 8, "controller_epoch": 38, "attrs.next_write_offset": "3395868"},
    ),
    (
        "kr-renounce-36",
        Q(
            "[QuorumController id=2] Renouncing the leadership due to a metadata log event. We were the "
            "leader at epoch 4031, but in the new epoch 4032, the leader is (none). Reverting to last "
            "stable offset 278457.",
            "WARN",
        ),
        "kraft_leadership_renounced",
        {"controller_epoch": 4031, "attrs.new_epoch": "4032"},
    ),
    (
        "kr-fenced-session",
        Q(
            "[QuorumController id=7] Fencing broker 9 because its session has timed out.",
            logger="org.apache.kafka.controller.ReplicationControlManager",
        ),
        "kraft_broker_fenced",
        {"controller_id": 7, "target_broker": 9},
    ),
    (
        "kr-failed-28",
        Q("[Controller 1] processBrokerHeartbeat: failed with NotControllerException in 23 us"),
        "kraft_event_failed",
        {
            "attrs.event": "processBrokerHeartbeat",
            "attrs.exception": "NotControllerException",
            "attrs.duration_us": "23",
        },
    ),
    (
        "kr-failed-35",
        Q(
            "[QuorumController id=1] processBrokerHeartbeat: failed with NotControllerException in 23 us. "
            "Reason: The active controller appears to be node 2"
        ),
        "kraft_event_failed",
        {"attrs.error": "The active controller appears to be node 2"},
    ),
    (
        "kr-not-started-28",
        Q("[Controller 1] unable to start processing processBrokerHeartbeat because of TimeoutException.", "INFO"),
        "kraft_event_failed",
        {"attrs.event": "processBrokerHeartbeat", "attrs.exception": "TimeoutException"},
    ),
    (
        "kr-not-started-32",
        Q("[Controller 1] processBrokerHeartbeat: unable to start processing because of TimeoutException.", "ERROR"),
        "kraft_event_failed",
        {"attrs.exception": "TimeoutException"},
    ),
    (
        "kr-not-started-35",
        Q(
            "[QuorumController id=1] processBrokerHeartbeat: unable to start processing because of "
            "TimeoutException. Reason: null",
            "ERROR",
        ),
        "kraft_event_failed",
        {"attrs.error": "null"},
    ),
    (
        "kr-failover-36",
        Q(
            "[QuorumController id=2] writeNoOpRecord: event failed with NotLeaderException (treated as "
            "NotControllerException) at epoch 4048 in 507724 microseconds. Renouncing leadership and "
            "reverting to the last committed offset 281629. Exception message: Append failed"
        ),
        "kraft_event_failed",
        {
            "controller_epoch": 4048,
            "attrs.treated_as": "NotControllerException",
            "attrs.committed_offset": "281629",
            "attrs.error": "Append failed",
        },
    ),
    (
        "kr-fence-record",
        Q(
            "[QuorumController id=1] Replayed FenceBrokerRecord modifying the registration for broker "
            "3: FenceBrokerRecord(id=3, epoch=52)",
            logger="org.apache.kafka.controller.ClusterControlManager",
        ),
        "kraft_broker_fenced",
        {"target_broker": 3},
    ),
    (
        "kr-unfence-record",
        Q(
            "[QuorumController id=1] Replayed UnfenceBrokerRecord modifying the registration for "
            "broker 3: UnfenceBrokerRecord(id=3, epoch=52)",
            logger="org.apache.kafka.controller.ClusterControlManager",
        ),
        "kraft_broker_unfenced",
        {"target_broker": 3},
    ),
    (
        "kr-unfence-28",
        Q(
            "[Controller 1] The request from broker 3 to unfence has been granted because it has caught "
            "up with the last committed metadata offset 1234.",
            logger="org.apache.kafka.controller.BrokerHeartbeatManager",
        ),
        "kraft_broker_unfenced",
        {"target_broker": 3, "attrs.register_offset": "1234"},
    ),
    (
        "kr-unfence-33",
        Q(
            "[Controller 1] The request from broker 3 to unfence has been granted because it has caught "
            "up with the offset of it's register broker record 1234.",
            logger="org.apache.kafka.controller.BrokerHeartbeatManager",
        ),
        "kraft_broker_unfenced",
        {"target_broker": 3},
    ),
    (
        "kr-change-record",
        Q(
            "[QuorumController id=3] Replayed BrokerRegistrationChangeRecord modifying the "
            "registration for broker 2: BrokerRegistrationChangeRecord(brokerId=2, brokerEpoch=52474, "
            "fenced=1, inControlledShutdown=0, logDirs=[])",
            logger="org.apache.kafka.controller.ClusterControlManager",
        ),
        "kraft_broker_registration_changed",
        {
            "target_broker": 2,
            "attrs.fenced": "1",
            "attrs.fencing_change": "fence",
            "attrs.in_controlled_shutdown": "0",
            "attrs.broker_epoch": "52474",
        },
    ),
    (
        "kr-alterisr-30",
        Q(
            "[Controller 1] Rejecting alterIsr request from node 3 for orders-7 because the current "
            "partition epoch is 9, not 8.",
            logger="org.apache.kafka.controller.ReplicationControlManager",
        ),
        "kraft_alter_partition_rejected",
        {
            "partition_epoch": 9,
            "attrs.request_partition_epoch": "8",
            "attrs.requesting_broker": "3",
            "topic": "orders",
            "partition": 7,
        },
    ),
    (
        "kr-alterisr-leader-epoch-30",
        Q(
            "[Controller 1] Rejecting alterIsr request from node 3 for orders-7 because "
            "the current leader epoch is 5, not 4."
        ),
        "kraft_alter_partition_rejected",
        {"leader_epoch": 5, "attrs.request_leader_epoch": "4"},
    ),
    (
        "kr-alterisr-leader-30",
        Q("[Controller 1] Rejecting alterIsr request from node 3 for orders-7 because the current leader is 2."),
        "kraft_alter_partition_rejected",
        {"leader": 2},
    ),
    (
        "kr-alter-leader-epoch-32",
        Q(
            "[QuorumController id=1] Rejecting AlterPartition request from node 3 for "
            "orders-7 because the current leader epoch is 5, not 4."
        ),
        "kraft_alter_partition_rejected",
        {"leader_epoch": 5},
    ),
    (
        "kr-alter-leader-32",
        Q(
            "[QuorumController id=1] Rejecting AlterPartition request from node 3 for orders-7 "
            "because the current leader is 2."
        ),
        "kraft_alter_partition_rejected",
        {"leader": 2},
    ),
    (
        "kr-alter-epoch-greater",
        Q(
            "[QuorumController id=1] Rejecting AlterPartition request from node 3 for orders-7 "
            "because the current partition epoch is 8, which is greater than the local value 9.",
            "DEBUG",
        ),
        "kraft_alter_partition_rejected",
        {"partition_epoch": 8, "attrs.request_partition_epoch": "9"},
    ),
    (
        "kr-alter-leader-epoch-greater",
        Q(
            "[QuorumController id=1] Rejecting AlterPartition request from node 3 for "
            "orders-7 because the current leader epoch is 4, which is greater than the "
            "local value 5.",
            "DEBUG",
        ),
        "kraft_alter_partition_rejected",
        {"leader_epoch": 4},
    ),
    (
        "kr-unlcean-32",
        Q(
            "[Controller 1] Rejecting AlterPartition request from node 3 for orders-7 because the ISR "
            "[3, 1] had more than one replica while the leader was still recovering from an unlcean "
            "leader election RECOVERING."
        ),
        "kraft_alter_partition_rejected",
        {"attrs.new_isr": "[3, 1]", "attrs.leader_recovery_state": "RECOVERING"},
    ),
    (
        "kr-unclean-builder",
        L(
            f"Setting new leader for topicId {UUID}, partition 7 to 3 using an unclean election",
            "INFO",
            "org.apache.kafka.controller.PartitionChangeBuilder",
        ),
        "unclean_leader_election",
        {"partition": 7, "leader": 3, "attrs.topic_id": UUID},
    ),
    # PartitionRegistration.maybeLogPartitionChange with ReplicationControlManager's logger (3.0.2+)
    (
        "kr-unclean-change",
        Q(
            f"[QuorumController id=2] UNCLEAN partition change for orders-7 with topic ID {UUID}: "
            "isr: [1] -> [3], leader: -1 -> 3, leaderRecoveryState: RECOVERED -> RECOVERING, "
            "leaderEpoch: 4 -> 5, partitionEpoch: 9 -> 10",
            "INFO",
            "org.apache.kafka.controller.ReplicationControlManager",
        ),
        "kraft_unclean_partition_change",
        {
            "topic": "orders",
            "partition": 7,
            "controller_id": 2,
            "attrs.topic_id": UUID,
            "attrs.detail": "isr: [1] -> [3], leader: -1 -> 3, leaderRecoveryState: "
            "RECOVERED -> RECOVERING, leaderEpoch: 4 -> 5, partitionEpoch: 9 -> 10",
        },
    ),
    (
        "kr-unclean-39",
        Q("[QuorumController id=1] Triggering unclean leader election for offline partition orders-7.", "ERROR"),
        "unclean_leader_election",
        {"topic": "orders", "partition": 7},
    ),
    (
        "kr-validate-create",
        Q(
            "[QuorumController id=1] Validate-only CreateTopics result(s): CreatableTopic(name="
            "'orders', numPartitions=3, replicationFactor=3, assignments=[], configs=[]): SUCCESS"
        ),
        "kraft_topics_created",
        {},
    ),
    (
        "kr-reassign-reutrning",
        Q(
            "[Controller 1] AlterIsr request from node 3 for orders-7 completed the ongoing "
            "partition reassignment and triggered a leadership change. Reutrning "
            "FENCED_LEADER_EPOCH."
        ),
        "reassignment_completed",
        {"topic": "orders"},
    ),
    (
        "kr-reassign-30",
        Q("[Controller 1] AlterIsr request from node 3 for orders-7 completed the ongoing partition reassignment."),
        "reassignment_completed",
        {"partition": 7},
    ),
    (
        "kr-reassign-returning",
        Q(
            "[QuorumController id=1] AlterPartition request from node 3 for orders-7 completed "
            "the ongoing partition reassignment and triggered a leadership change. Returning "
            "NEW_LEADER_ELECTED."
        ),
        "reassignment_completed",
        {"attrs.error": "NEW_LEADER_ELECTED"},
    ),
    (
        "kr-reassign-32",
        Q(
            "[QuorumController id=1] AlterPartition request from node 3 for orders-7 completed the "
            "ongoing partition reassignment."
        ),
        "reassignment_completed",
        {"attrs.requesting_broker": "3"},
    ),
]

HAND_WRITTEN = ERA_0_8 + ERA_1_0 + ERA_1_1 + ERA_2_4 + ERA_2_6 + ERA_3_X + KRAFT


@pytest.mark.parametrize("case_id, line, event_type, expected", HAND_WRITTEN, ids=[c[0] for c in HAND_WRITTEN])
def test_hand_written_lines(case_id, line, event_type, expected, lark, fast):
    a, b = lark.classify(line), fast.classify(line)
    assert a.key() == b.key() and apply_fields(a.fields) == apply_fields(b.fields), line
    event = parse_one(line)
    assert event["event_type"] == event_type, (event["template"], line)
    _check(event, expected)


def test_a_template_that_is_only_a_prefix_of_a_line_does_not_type_it(lark, fast):
    # "Starting " with the 0.8 trailing space vs "Starting" (0.11+): both forms lex, neither swallows
    # the layout's " (" and a longer text starting with "Starting" is not cut short.
    for message, want in [
        ("Starting ", "thread_lifecycle__v08_starting"),
        ("Starting", "thread_lifecycle__v011_starting"),
        ("Stopped ", "thread_lifecycle__v08_stopped"),
        ("Stopped", "thread_lifecycle__v011_stopped"),
    ]:
        line = C("[Controller-1-to-broker-2-send-thread], " + message, logger="kafka.controller.RequestSendThread")
        a, b = lark.classify(line), fast.classify(line)
        assert a.template == want and a.key() == b.key(), line
    line = C("[Controller 1]: Starting something no template knows")
    assert lark.classify(line).template is None and fast.classify(line).template is None


# =================================================================================================
# every template rule is exercised
# =================================================================================================


def test_every_template_is_exercised(lark):
    lines = [line for _, line, _, _ in HAND_WRITTEN] + _examples_section7() + SIMULATOR_FOUND
    for row in CATALOGUE:
        lines.extend(render(row, which) for which in ("first", "last"))
    for path in sorted(REAL_LOGS.glob("*.log")):
        lines.extend(ln for ln in path.read_text(encoding="utf-8").replace("\r\n", "\n").split("\n") if ln)
    hit = {lark.classify(line).template for line in lines}
    missing = sorted(t.rule for t in templates_for(AUTO) if t.rule not in hit)
    assert not missing, f"templates no test line reaches: {missing}"


# Lines the simulator wrote that no template typed (source-checked at the tags:
# KafkaController.scala@0.10.2.2:1097 with the ISR as a Scala List, @1.1.1:641 / @2.0.1:647,
# ReplicationControlManager.java@3.9.0-rc3:1372).
SIMULATOR_FOUND = [
    "[2016-01-05 13:29:01,938] WARN [Controller 0]: Cannot remove replica 2 from ISR of partition [t,0] since it "
    "is not in the ISR. Leader = 1 ; ISR = List(1, 3) (kafka.controller.KafkaController)",
    "[2019-01-05 13:29:01,938] INFO [Controller id=1] Epoch incremented to 7 (kafka.controller.KafkaController)",
    "[2025-01-05 13:29:01,938] INFO [QuorumController id=1] enterControlledShutdown[2]: changing 17 partition(s) "
    "(org.apache.kafka.controller.ReplicationControlManager)",
]


def test_templates_found_missing_by_the_simulator():
    from kafka_forensics.parsers.records import parse_file

    events = parse_file(("\n".join(SIMULATOR_FOUND) + "\n").encode(), "controller.log").events
    assert [e["event_type"] for e in events] == [
        "isr_remove_skipped",
        "controller_epoch_incremented",
        "kraft_broker_partitions_changed",
    ]
    assert (events[0]["replica"], events[0]["leader"], events[0]["isr"]) == (2, 1, [1, 3])
    assert events[1]["controller_epoch"] == 7
    assert events[2]["attrs"]["handler"] == "enterControlledShutdown[2]"
