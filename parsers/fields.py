"""Field rules → event columns.

A *field* is a grammar rule named in ``FIELDS``; both parse paths hand its exact text to the same
converter, so the Lark path and the fast path can only disagree about *where* a field is, never
about what its text means. Composite values (``LeaderAndIsr(...)``, request states, ...) are single
tokens in the grammar and are unpacked here with the renderings of kafka-log-formats.md §4.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Callable

Columns = dict[str, Any]
_INT = re.compile(r"-?\d+")


@functools.lru_cache(maxsize=8192)
def _int_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in _INT.findall(text))


def _ints(text: str) -> list[int]:
    """Integer lists (ISRs, replica sets) repeat a lot: parse each text once, hand out copies."""
    return list(_int_tuple(text))


# The converters that only differ by their column or key are small classes, so the columnar parser
# (columnar_fields.py) can tell what each field does and do the same column-wise.


@dataclass(frozen=True)
class _int:
    column: str

    def __call__(self, text: str, out: Columns) -> None:
        out[self.column] = int(text)


@dataclass(frozen=True)
class _str:
    column: str

    def __call__(self, text: str, out: Columns) -> None:
        out[self.column] = text


@dataclass(frozen=True)
class _int_list:
    column: str

    def __call__(self, text: str, out: Columns) -> None:
        out[self.column] = _ints(text)


@dataclass(frozen=True)
class _attr:
    key: str

    def __call__(self, text: str, out: Columns) -> None:
        out.setdefault("attrs", {})[self.key] = text


def _topic_partition(text: str, out: Columns) -> None:
    topic, _, partition = text.rpartition("-")
    out["topic"] = topic
    out["partition"] = int(partition)


_BROKER_ID = re.compile(r"\(id: (-?\d+)|Node\((-?\d+),|^id:(-?\d+),|^(-?\d+)$")


def _broker_ref(text: str, out: Columns) -> None:
    m = _BROKER_ID.search(text)
    if m:
        out["target_broker"] = int(m.group(m.lastindex))  # type: ignore[arg-type]  # each branch has exactly one group
    out.setdefault("attrs", {})["target_broker_ref"] = text


_LICE = re.compile(
    r"Leader:(-?\d+),ISR:([\d,-]*)(?:,LeaderRecoveryState:(\w+))?,LeaderEpoch:(-?\d+)"
    r"(?:,ZkVersion:(-?\d+))?,ControllerEpoch:(-?\d+)"
)


def _leader_isr_state(text: str, out: Columns) -> None:
    """LeaderIsrAndControllerEpoch: ``(Leader:1,ISR:1,2,LeaderEpoch:3[,ZkVersion:4],ControllerEpoch:5)``."""
    m = _LICE.search(text)
    if not m:
        return
    out["leader"] = int(m.group(1))
    out["isr"] = _ints(m.group(2))
    if m.group(3):
        out.setdefault("attrs", {})["leader_recovery_state"] = m.group(3)
    out["leader_epoch"] = int(m.group(4))
    if m.group(5) is not None:
        out["partition_epoch"] = int(m.group(5))
    out["state_controller_epoch"] = int(m.group(6))


_ALL_REPLICAS = re.compile(r"AllReplicas:([\d,-]*)\)$")


def _partition_state_info(text: str, out: Columns) -> None:
    """PartitionStateInfo (≤0.9): the LeaderIsrAndControllerEpoch plus ``AllReplicas:1,2,3``."""
    _leader_isr_state(text, out)
    m = _ALL_REPLICAS.search(text)
    if m:
        out["replicas"] = _ints(m.group(1))


# key=value pairs of a request state: quoted strings, [lists], "1,2" csv lists (0.11–2.3
# print isr=1,2 without brackets) or a plain scalar.
# (``\b``: a key starts a word; the leftmost match always does, so this only skips mid-word tries.)
_RS_PAIR = re.compile(r"\b(\w+)=('[^']*'|\[[^\]]*\]|-?\d+(?:,-?\d+)+(?=, |\))|[^,)]*)")
_RS_INT_KEYS = {
    "leader": "leader",
    "leaderEpoch": "leader_epoch",
    "zkVersion": "partition_epoch",
    "partitionEpoch": "partition_epoch",
    "controllerEpoch": "state_controller_epoch",
    "partitionIndex": "partition",
}
_RS_LIST_KEYS = {"isr": "isr", "replicas": "replicas"}
_RS_ATTR_KEYS = {
    "addingReplicas": "adding_replicas",
    "removingReplicas": "removing_replicas",
    "offlineReplicas": "offline_replicas",
    "isNew": "is_new",
    "leaderRecoveryState": "leader_recovery_state",
    "deletePartition": "delete_partition",
}


def _request_state(text: str, out: Columns) -> None:
    """PartitionState(...) 0.10–2.3 and the generated ``*PartitionState(...)`` of 2.4+."""
    if "@" in text:  # 0.10.0 printed the object identity: nothing to read
        out.setdefault("attrs", {})["request_state"] = text
        return
    for key, value in _RS_PAIR.findall(text):
        spec = _RS_KEYS.get(key)
        if spec is None:
            continue
        kind, column = spec
        if kind is _RS_INT:
            if value.lstrip("-").isdigit():
                out[column] = int(value)
        elif kind is _RS_LIST:
            out[column] = _ints(value)
        elif kind is _RS_ATTR:
            out.setdefault("attrs", {})[column] = value
        elif value.startswith("'"):  # topicName
            out[column] = value[1:-1]


# one lookup per key=value pair: key → (how to convert, column)
_RS_INT, _RS_LIST, _RS_ATTR, _RS_QUOTED = "int", "list", "attr", "quoted"
_RS_KEYS: dict[str, tuple[str, str]] = {
    **{k: (_RS_INT, c) for k, c in _RS_INT_KEYS.items()},
    **{k: (_RS_LIST, c) for k, c in _RS_LIST_KEYS.items()},
    **{k: (_RS_ATTR, c) for k, c in _RS_ATTR_KEYS.items()},
    "topicName": (_RS_QUOTED, "topic"),
}


_LAI_INT = {
    "leader": re.compile(r'\bleader(?:=|":)(-?\d+)'),
    "leader_epoch": re.compile(r'\b(?:leaderEpoch=|leader_epoch":)(-?\d+)'),
    "partition_epoch": re.compile(r"\b(?:zkVersion|partitionEpoch)=(-?\d+)"),
}
_LAI_ISR = re.compile(r'\bisr(?:=List\(|=\[|":\[)([^)\]]*)')
_LAI_ISR_STATES = re.compile(r"\bisrWithBrokerEpoch=(?:List\(|\[)(.*?)\)?\]?, leaderRecoveryState")
_BROKER_ID_IN_STATE = re.compile(r"brokerId=(-?\d+)")
_LAI_LRS = re.compile(r"\bleaderRecoveryState=(\w+)")


def _leader_and_isr(text: str, out: Columns) -> None:
    """LeaderAndIsr: JSON ``{"leader":1,"leader_epoch":3,"isr":[1,2]}`` (≤1.0) or
    ``LeaderAndIsr(leader=1, leaderEpoch=3, isr=List(1, 2) | isrWithBrokerEpoch=.., ...)``."""
    for column, rx in _LAI_INT.items():
        m = rx.search(text)
        if m:
            out[column] = int(m.group(1))
    m = _LAI_ISR_STATES.search(text)
    if m:
        out["isr"] = [int(x) for x in _BROKER_ID_IN_STATE.findall(m.group(1))]
    else:
        m = _LAI_ISR.search(text)
        if m:
            out["isr"] = _ints(m.group(1))
    m = _LAI_LRS.search(text)
    if m:
        out.setdefault("attrs", {})["leader_recovery_state"] = m.group(1)


class _memo:
    """Composite values repeat (one state sent to every broker): convert each text once."""

    def __init__(self, convert: Callable[[str, Columns], None], size: int = 4096) -> None:
        self.convert = convert
        self.size = size
        self.cache: dict[str, Columns] = {}

    def __call__(self, text: str, out: Columns) -> None:
        found = self.cache.get(text)
        if found is None:
            found = {}
            self.convert(text, found)
            if len(self.cache) >= self.size:
                self.cache.clear()
            self.cache[text] = found
        for key, value in found.items():
            if key == "attrs":
                out.setdefault("attrs", {}).update(value)
            else:
                out[key] = value


_SOME = re.compile(r"^Some\((.*)\)$")


@dataclass(frozen=True)
class _attr_unwrapped:
    """Option[X] rendered by Scala ("Some(v)" / "None") → "v" / "None"."""

    key: str

    def __call__(self, text: str, out: Columns) -> None:
        m = _SOME.match(text)
        out.setdefault("attrs", {})[self.key] = m.group(1) if m else text


@dataclass(frozen=True)
class _flag:
    key: str

    def __call__(self, text: str, out: Columns) -> None:
        out.setdefault("attrs", {})[self.key] = "true"


@dataclass(frozen=True)
class _fixed_attr:
    key: str
    value: str

    def __call__(self, text: str, out: Columns) -> None:
        out.setdefault("attrs", {})[self.key] = self.value


_RA_PART = re.compile(r"\b(replicas|addingReplicas|removingReplicas)=((?:-?\d+(?:,-?\d+)*)?)")


def _replica_assignment(text: str, out: Columns) -> None:
    """ReplicaAssignment(replicas=1,2,3, addingReplicas=, removingReplicas=) (2.4+)."""
    for key, value in _RA_PART.findall(text):
        if key == "replicas":
            out["replicas"] = _ints(value)
        else:
            out.setdefault("attrs", {})["adding_replicas" if key == "addingReplicas" else "removing_replicas"] = value
    out.setdefault("attrs", {})["assignment"] = text


_ENDPOINT_ID = re.compile(r"id=(-?\d+)")


def _leader_endpoint(text: str, out: Columns) -> None:
    """BrokerEndPoint(id=3, host=kafka3:9092) (2.4–2.5 "with leader ...")."""
    m = _ENDPOINT_ID.search(text)
    if m:
        out["leader"] = int(m.group(1))
    out.setdefault("attrs", {})["leader_endpoint"] = text


_MP_LIST = re.compile(r"\[[^\]]*\]|[^,\[\]]+")


def _metadata_partition(text: str, out: Columns) -> None:
    """2.8 MetadataPartition(topic,partition,leader,leaderEpoch,[replicas],[isr],partitionEpoch,...)."""
    inner = text[text.find("(") + 1 : text.rfind(")")]
    parts = [p.strip() for p in _MP_LIST.findall(inner)]
    if len(parts) >= 7:
        try:
            out["topic"] = parts[0]
            out["partition"] = int(parts[1])
            out["leader"] = int(parts[2])
            out["leader_epoch"] = int(parts[3])
            out["replicas"] = _ints(parts[4])
            out["isr"] = _ints(parts[5])
            out["partition_epoch"] = int(parts[6])
        except ValueError:
            pass
    out.setdefault("attrs", {})["partition_state"] = text


_REC_FIELD = re.compile(r"\b(brokerId|brokerEpoch|fenced|inControlledShutdown|incarnationId)=([^,)\s]+)")
_FENCING = {"1": "fence", "-1": "unfence", "0": "none"}
_SHUTDOWN = {"1": "in_controlled_shutdown", "0": "none"}


# The record keys that become attributes, and the two whose change records also say what changed.
_REC_ATTRS = {
    "brokerEpoch": "broker_epoch",
    "incarnationId": "incarnation_id",
    "fenced": "fenced",
    "inControlledShutdown": "in_controlled_shutdown",
}
_REC_CHANGES = {
    "fenced": ("fencing_change", _FENCING),
    "inControlledShutdown": ("controlled_shutdown_change", _SHUTDOWN),
}


@dataclass(frozen=True)
class _broker_record:
    """KRaft RegisterBrokerRecord(...) / BrokerRegistrationChangeRecord(...): the broker, its epoch
    and (for change records, ``kind`` "change") the fenced / inControlledShutdown changes as attrs."""

    kind: str

    def __call__(self, text: str, out: Columns) -> None:
        attrs = out.setdefault("attrs", {})
        for key, value in _REC_FIELD.findall(text):
            if key == "brokerId":
                out["target_broker"] = int(value)
                continue
            attrs[_REC_ATTRS[key]] = value
            if self.kind == "change" and key in _REC_CHANGES:
                name, meanings = _REC_CHANGES[key]
                attrs[name] = meanings.get(value, value)
        attrs["record"] = text


# field rule name → converter(text, columns)
FIELDS: dict[str, Callable[[str, Columns], None]] = {
    # identity prefix (header.lark)
    "ident_controller_id": _int("controller_id"),
    "ident_controller_epoch": _int("controller_epoch"),
    "ident_broker_id": _int("broker"),
    # partitions
    "topic": _str("topic"),
    "partition_id": _int("partition"),
    "topic_partition": _topic_partition,
    # scalars
    "controller_id": _int("controller_id"),
    "controller_epoch": _int("controller_epoch"),
    "broker_id": _int("broker"),
    "replica": _int("replica"),
    "leader": _int("leader"),
    "leader_epoch": _int("leader_epoch"),
    "partition_epoch": _int("partition_epoch"),
    "state_controller_epoch": _int("state_controller_epoch"),
    "correlation_id": _int("correlation_id"),
    "from_pstate": _str("from_state"),
    "to_pstate": _str("to_state"),
    "from_rstate": _str("from_state"),
    "to_rstate": _str("to_state"),
    "target_broker": _broker_ref,
    # lists
    "replicas": _int_list("replicas"),
    "isr": _int_list("isr"),
    "live_brokers": _int_list("live_brokers"),
    "added_brokers": _int_list("added_brokers"),
    "deleted_brokers": _int_list("deleted_brokers"),
    "bounced_brokers": _int_list("bounced_brokers"),
    "target_brokers": _int_list("target_brokers"),
    # composites
    "leader_isr_state": _memo(_leader_isr_state),
    "partition_state_info": _memo(_partition_state_info),
    "request_state": _memo(_request_state),
    "leader_and_isr": _memo(_leader_and_isr),
    # attributes (kept as text in the attrs map)
    "new_controller_epoch": _attr("new_controller_epoch"),
    "latest_controller_epoch": _attr("latest_controller_epoch"),
    "current_leader_epoch": _attr("current_leader_epoch"),
    "request_type": _attr("request_type"),
    "transition": _attr("transition"),
    "delete_partition": _attr("delete_partition"),
    "error_message": _attr("error"),
    "response_text": _attr("response"),
    "response_text_11": _attr("response"),
    "api_key": _attr("api_key"),
    # ---- added with the era_2_4 / era_2_6 / era_3_x / kraft / server templates (fields_ext.lark)
    "num_partitions": _attr("num_partitions"),
    "num_become_leader": _attr("num_become_leader"),
    "num_become_follower": _attr("num_become_follower"),
    "num_cached": _attr("num_cached"),
    "num_deleted": _attr("num_deleted"),
    "elapsed_ms": _attr("elapsed_ms"),
    "last_update_controller_epoch": _attr("last_update_controller_epoch"),
    "previous_leader_epoch": _attr("previous_leader_epoch"),
    "previous_leader": _attr_unwrapped("previous_leader"),
    "previous_leader_id": _attr("previous_leader"),
    "start_offset": _attr("start_offset"),
    "high_watermark": _attr("high_watermark"),
    "metadata_offset": _attr("metadata_offset"),
    "topic_id": _attr_unwrapped("topic_id"),
    "log_topic_id": _attr_unwrapped("log_topic_id"),
    "isr_list": _int_list("isr"),
    "isr_scala": _int_list("isr"),
    "adding_replicas": _attr("adding_replicas"),
    "removing_replicas": _attr("removing_replicas"),
    "under_min_isr": _flag("under_min_isr"),
    "under_min_isr_and_version": _flag("under_min_isr"),
    "offline_partitions": _attr("partitions"),
    "leader_transition": _attr("transition"),
    "follower_transition": _attr("transition"),
    "error_name": _attr("error"),
    "response_text_from": _attr("response"),
    "request_text_offline": _attr("request"),
    "request_text_reconnect": _attr("request"),
    "request_text_raft": _attr("request"),
    "removed_brokers": _int_list("deleted_brokers"),
    "exception_class": _attr("exception"),
    "replica_assignment": _replica_assignment,
    "leader_endpoint": _leader_endpoint,
    "election_type": _attr("election_type"),
    "election_trigger": _attr("election_trigger"),
    "controller_event": _attr("event"),
    "collection_text": _attr("detail"),
    "kraft_event": _attr("event"),
    "new_leader": _attr("new_leader"),
    "ratio": _attr("ratio"),
    "broker_epoch": _attr("broker_epoch"),
    "cached_broker_epoch": _attr("cached_broker_epoch"),
    "epoch_zk_version": _attr("epoch_zk_version"),
    "committed_offset": _attr("committed_offset"),
    "next_write_offset": _attr("next_write_offset"),
    "request_partition_epoch": _attr("request_partition_epoch"),
    "requesting_broker": _attr("requesting_broker"),
    "is_new": _attr("is_new"),
    "elected_controller": _attr("elected_controller"),
    "new_isr_text": _attr("new_isr"),
    "leader_recovery_state": _attr("leader_recovery_state"),
    "incarnation_id": _attr("incarnation_id"),
    "new_incarnation_id": _attr("new_incarnation_id"),
    "delete_flag": _attr("delete_partition"),
    "detail_text": _attr("detail"),
    "topics_text": _attr("topics"),
    "partitions_text": _attr("partitions"),
    "partitions_coll": _attr("partitions"),
    "partitions_until_trigger": _attr("partitions"),
    "election_strategy": _attr("election_strategy"),
    "request_text_raft_epoch": _attr("request"),
    "metadata_partition": _metadata_partition,
    "added_brokers_text": _attr("added_brokers"),
    "qualified_exception": _attr("exception"),
    "local_role": _attr("role"),
    "subject_broker": _int("target_broker"),
    "lowest_active_offset": _attr("lowest_active_offset"),
    "controlled_shutdown_offset": _attr("controlled_shutdown_offset"),
    "register_offset": _attr("register_offset"),
    "new_epoch": _attr("new_epoch"),
    "delta_us": _attr("duration_us"),
    "kraft_exception": _attr("exception"),
    "treated_exception": _attr("treated_as"),
    "kraft_event_mid": _attr("event"),
    "kraft_handler": _attr("handler"),
    "kraft_task": _attr("task"),
    "num_records": _attr("num_records"),
    "snapshot_name": _attr("snapshot"),
    "registration_change": _broker_record("change"),
    "register_record": _broker_record("register"),
    "request_leader_epoch": _attr("request_leader_epoch"),
    "kafka_version": _attr("kafka_version"),
    "previous_isr": _attr("previous_isr"),
    "zk_state": _attr("zk_state"),
    "znode_path": _attr("path"),
    "caught_up_replicas": _attr("caught_up_replicas"),
    "replica_set": _int_list("replicas"),
}


def register(name: str, converter: Callable[[str, Columns], None]) -> None:
    """Era modules may add fields; a name can only mean one thing."""
    if name in FIELDS and FIELDS[name] is not converter:
        raise ValueError(f"field {name} already registered")
    FIELDS[name] = converter


def attr_field(key: str) -> Callable[[str, Columns], None]:
    return _attr(key)


def int_field(column: str) -> Callable[[str, Columns], None]:
    return _int(column)


def int_list_field(column: str) -> Callable[[str, Columns], None]:
    return _int_list(column)


def apply_fields(pairs: list[tuple[str, str]]) -> Columns:
    """Convert (field, text) pairs, in line order, into columns."""
    out: Columns = {}
    for name, text in pairs:
        FIELDS[name](text, out)
    return out


_OTHER_IDENT_RULES: tuple[tuple[re.Pattern, tuple[str, ...]], ...] = (
    # "[Controller-0-to-broker-1-send-thread], " (0.8–1.0 RequestSendThread)
    (re.compile(r"^\[Controller-(\d+)-to-broker-(\d+)-send-thread\]"), ("controller_id", "target_broker")),
    # LogContext of the controller's channel to one broker: "[Controller id=1, targetBrokerId=3] "
    # (core/src/main/scala/kafka/controller/ControllerChannelManager.scala@3.9.0-rc3:123, @1.0.0:112)
    (re.compile(r"^\[Controller id=(\d+), targetBrokerId=(\d+)\]"), ("controller_id", "target_broker")),
    # "[RequestSendThread controllerId=0] ", "[PartitionStateMachine controllerId=1] ", ...
    (re.compile(r"controllerId=(\d+)"), ("controller_id",)),
    # "[Partition state machine on Controller 0]: ", "[Channel manager on controller 1]: ", ...
    (re.compile(r"on [Cc]ontroller (\d+)\]"), ("controller_id",)),
    # "[Topic Deletion Manager 1], ", "[delete-topics-thread-1], "
    (re.compile(r"^\[(?:Topic Deletion Manager |delete-topics-thread-)(\d+)\]"), ("controller_id",)),
    # "[Partition test-topic-1 broker=1] " (kafka.cluster.Partition, 2.x+)
    (re.compile(r"^\[Partition ([A-Za-z0-9._-]+)-(\d+) broker=(\d+)\]"), ("topic", "partition", "broker")),
    # "[ReplicaFetcherManager on broker 1] ", "[SessionExpirationListener on 0], "
    (re.compile(r"on (?:broker )?(\d+)\]"), ("broker",)),
    (re.compile(r"\bbroker[= ](\d+)\]"), ("broker",)),
)


def _ident_other(text: str, out: Columns) -> None:
    """Identity inside a class prefix that no specific ident rule covers (kafka-log-formats.md §2.2)."""
    out.setdefault("attrs", {})["ident"] = text.rstrip(" ,:")
    for rx, columns in _OTHER_IDENT_RULES:
        m = rx.search(text)
        if m:
            for column, value in zip(columns, m.groups()):
                out[column] = value if column == "topic" else int(value)
            if "broker" not in out and "controller_id" in out:
                out["broker"] = out["controller_id"]
            return


FIELDS["ident_other"] = _ident_other
