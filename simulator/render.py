"""``toString()`` of the values Kafka logs, release by release (kafka-log-formats.md §4, Appendix A
of kafka-state-machines.md). One ``Render`` per simulation picks the renderings of its release.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from .model import Snap
from .profile import Profile


def csv(ints: Iterable[int]) -> str:
    """``mkString(",")``: ``1,2,3``."""
    return ",".join(map(str, ints))


def jlist(ints: Iterable[int]) -> str:
    """Java ``List.toString`` / generated message arrays: ``[1, 2, 3]``."""
    return "[" + ", ".join(map(str, ints)) + "]"


def bracket_csv(ints: Iterable[int]) -> str:
    """``mkString("[", ",", "]")`` (Partition.scala 2.6+): ``[1,2,3]``."""
    return "[" + ",".join(map(str, ints)) + "]"


def slist(ints: Iterable[int]) -> str:
    """Scala ``List(1, 2)``."""
    return "List(" + ", ".join(map(str, ints)) + ")"


class Render:
    """The renderings of one release."""

    def __init__(self, prof: Profile) -> None:
        self.prof = prof
        at = prof.at_least
        self.scala213 = prof.scala == "2.13"
        self.old_tap = not at("1.0")  # TopicAndPartition "[t,0]" up to 0.11.0.x
        # LeaderIsrAndControllerEpoch: ZkVersion in 2.7.2-2.8.2 and 3.1+ (not 3.0.x), recovery state 3.2+.
        self.lice_zk = (at("2.7") and not at("3.0")) or at("3.1")
        self.lice_recovery = at("3.2")
        self.lai_json = not at("1.1")
        self.lai_recovery = at("3.2")
        self.lai_partition_epoch = at("3.3")
        self.lai_broker_epochs = at("3.5")
        self.v10, self.v24 = at("1.0"), at("2.4")
        # Rendered request states of the batch being delivered (the same snapshot goes to every
        # broker): keyed by id(snap), cleared by RequestFlow.send at each batch.
        self.memo: dict = {}

    # ---- names and collections --------------------------------------------------------------
    def tap(self, topic: str, index: int) -> str:
        """``TopicAndPartition``: ``[t,0]`` (<= 0.11.0.x) / ``t-0`` (1.0+)."""
        return f"[{topic},{index}]" if self.old_tap else f"{topic}-{index}"

    def mset(self, ints: Iterable[int]) -> str:
        """A Scala mutable set: ``Set(1, 2)``; Scala 2.13 builds print ``HashSet(1, 2)``."""
        body = ", ".join(map(str, sorted(ints)))
        return f"HashSet({body})" if self.scala213 else f"Set({body})"

    def iset(self, ints: Iterable[int]) -> str:
        """A Scala immutable set: ``Set(...)``; 2.13 prints ``HashSet`` above four elements."""
        items = sorted(ints)
        body = ", ".join(map(str, items))
        return f"HashSet({body})" if self.scala213 and len(items) > 4 else f"Set({body})"

    def topic_set(self, names: Iterable[str]) -> str:
        items = sorted(names)
        body = ", ".join(items)
        return f"HashSet({body})" if self.scala213 and len(items) > 4 else f"Set({body})"

    def node(self, broker: int) -> str:
        """``Node.toString`` (0.10.0.1+): ``kafka1:9092 (id: 1 rack: null)``."""
        return f"kafka{broker}:9092 (id: {broker} rack: null)"

    def endpoint(self, broker: int) -> str:
        """``BrokerEndPoint.toString``: ``BrokerEndPoint(id=1, host=kafka1:9092)``."""
        return f"BrokerEndPoint(id={broker}, host=kafka{broker}:9092)"

    # ---- partition states --------------------------------------------------------------------
    def lice(self, s: Snap) -> str:
        """``LeaderIsrAndControllerEpoch`` (KafkaController.scala at each tag)."""
        parts = [f"(Leader:{s[2]},ISR:{csv(s[4])}"]
        if self.lice_recovery:
            parts.append(f",LeaderRecoveryState:{'RECOVERING' if s[10] else 'RECOVERED'}")
        parts.append(f",LeaderEpoch:{s[3]}")
        if self.lice_zk:
            parts.append(f",ZkVersion:{s[5]}")
        parts.append(f",ControllerEpoch:{s[6]})")
        return "".join(parts)

    def lai(self, s: Snap) -> str:
        """``LeaderAndIsr`` (K:api/LeaderAndIsr.scala): JSON up to 1.0, case class from 1.1."""
        if self.lai_json:
            return f'{{"leader":{s[2]},"leader_epoch":{s[3]},"isr":[{csv(s[4])}]}}'
        if self.lai_broker_epochs:
            isr = "List(" + ", ".join(f"BrokerState(brokerId={b}, brokerEpoch=-1)" for b in s[4]) + ")"
            body = f"leader={s[2]}, leaderEpoch={s[3]}, isrWithBrokerEpoch={isr}"
        else:
            body = f"leader={s[2]}, leaderEpoch={s[3]}, isr={slist(s[4])}"
        if self.lai_recovery:
            body += f", leaderRecoveryState={'RECOVERING' if s[10] else 'RECOVERED'}"
        body += f", partitionEpoch={s[5]}" if self.lai_partition_epoch else f", zkVersion={s[5]}"
        return f"LeaderAndIsr({body})"

    def pstate_info(self, s: Snap) -> str:
        """``PartitionStateInfo`` (0.8-0.10), parentheses unbalanced as in the source."""
        return f"(LeaderAndIsrInfo:{self.lice(s)},ReplicationFactor:{len(s[7])}),AllReplicas:{csv(s[7])})"

    def lai_request_state(self, s: Snap, is_new: bool) -> str:
        """A partition of a LeaderAndIsr request as the broker (and, 1.0+, the controller) prints it."""
        if not self.v10:
            # PartitionState.java@0.10.0.1 (isr/replicas as Java lists).
            return (
                f"PartitionState(controllerEpoch={s[6]}, leader={s[2]}, leaderEpoch={s[3]}, "
                f"isr={jlist(s[4])}, zkVersion={s[5]}, replicas={jlist(s[7])})"
            )
        if not self.v24:
            # LeaderAndIsrRequest.java@1.0.2: comma-joined isr/replicas, isNew.
            return (
                f"PartitionState(controllerEpoch={s[6]}, leader={s[2]}, leaderEpoch={s[3]}, "
                f"isr={csv(s[4])}, zkVersion={s[5]}, replicas={csv(s[7])}, "
                f"isNew={'true' if is_new else 'false'})"
            )
        # Generated LeaderAndIsrRequest.json@2.4.1 / @3.2.3 / @3.3.2.
        version_field = f"partitionEpoch={s[5]}" if self.lai_partition_epoch else f"zkVersion={s[5]}"
        text = (
            f"LeaderAndIsrPartitionState(topicName='{s[0]}', partitionIndex={s[1]}, controllerEpoch={s[6]}, "
            f"leader={s[2]}, leaderEpoch={s[3]}, isr={jlist(s[4])}, {version_field}, "
            f"replicas={jlist(s[7])}, addingReplicas={jlist(s[8])}, removingReplicas={jlist(s[9])}, "
            f"isNew={'true' if is_new else 'false'}"
        )
        if self.lai_recovery:
            text += f", leaderRecoveryState={1 if s[10] else 0}"
        return text + ")"

    def um_request_state(self, s: Snap, offline: Sequence[int] = ()) -> str:
        """A partition of an UpdateMetadata request as the broker prints it when caching it."""
        key = ("um", id(s))
        text = self.memo.get(key)
        if text is None:
            text = self.memo[key] = self._um_request_state(s, offline)
        return text

    def _um_request_state(self, s: Snap, offline: Sequence[int] = ()) -> str:
        if not self.v10:
            return self.pstate_info(s)
        if not self.v24:
            return (
                f"PartitionState(controllerEpoch={s[6]}, leader={s[2]}, leaderEpoch={s[3]}, "
                f"isr={jlist(s[4])}, zkVersion={s[5]}, replicas={jlist(s[7])}, "
                f"offlineReplicas={jlist(offline)})"
            )
        return (
            f"UpdateMetadataPartitionState(topicName='{s[0]}', partitionIndex={s[1]}, controllerEpoch={s[6]}, "
            f"leader={s[2]}, leaderEpoch={s[3]}, isr={jlist(s[4])}, zkVersion={s[5]}, "
            f"replicas={jlist(s[7])}, offlineReplicas={jlist(offline)})"
        )

    def stop_replica_state(self, s: Snap, delete: bool) -> str:
        """``StopReplicaPartitionState`` (StopReplicaRequest.json@2.6.3)."""
        return (
            f"StopReplicaPartitionState(partitionIndex={s[1]}, leaderEpoch={s[3]}, "
            f"deletePartition={'true' if delete else 'false'})"
        )

    def assignment(self, replicas: Sequence[int], adding: Sequence[int], removing: Sequence[int]) -> str:
        """``ReplicaAssignment.toString`` (ControllerContext.scala@2.4.1)."""
        return f"ReplicaAssignment(replicas={csv(replicas)}, addingReplicas={csv(adding)}, removingReplicas={csv(removing)})"

    # ---- controller-side responses (RequestSendThread TRACE) ---------------------------------
    def response(self, api: str, parts: Sequence[Snap]) -> str:
        """What a response prints: protocol ``Struct`` up to 2.3, generated ``Struct`` with tagged
        fields 2.4-2.7, ``...Data(...)`` from 2.8 (kafka-log-formats.md §4, ``controller_response``).
        The 2.8+ per-topic shape is approximate (its exact text depends on the request version)."""
        p = self.prof
        if api == "UPDATE_METADATA":
            if p.at_least("2.8"):
                return "UpdateMetadataResponseData(errorCode=0)"
            return "{error_code=0,_tagged_fields={}}" if p.at_least("2.4") else "{error_code=0}"
        if p.at_least("2.8"):
            if api == "LEADER_AND_ISR":
                errs = ", ".join(
                    f"LeaderAndIsrPartitionError(topicName='', partitionIndex={s[1]}, errorCode=0)" for s in parts
                )
                tid = parts[0][11] if parts else "AAAAAAAAAAAAAAAAAAAAAA"
                return f"LeaderAndIsrResponseData(errorCode=0, partitionErrors=[], topics=[LeaderAndIsrTopicError(topicId={tid}, partitionErrors=[{errs}])])"
            errs = ", ".join(
                f"StopReplicaPartitionError(topicName='{s[0]}', partitionIndex={s[1]}, errorCode=0)" for s in parts
            )
            return f"StopReplicaResponseData(errorCode=0, partitionErrors=[{errs}])"
        if p.at_least("2.4"):
            errs = ",".join(
                f"{{topic_name={s[0]},partition_index={s[1]},error_code=0,_tagged_fields={{}}}}" for s in parts
            )
            return f"{{error_code=0,partition_errors=[{errs}],_tagged_fields={{}}}}"
        errs = ",".join(f"{{topic={s[0]},partition={s[1]},error_code=0}}" for s in parts)
        return f"{{error_code=0,partitions=[{errs}]}}"
