"""State names as the logs print them, and the small facts about logging the replay needs.

Shared by ``replay`` and ``epoch_checks`` (names match ``states.PartitionState`` / ``ReplicaState``).
"""

from __future__ import annotations

from typing import Optional

from kafka_forensics.core.eras import VersionRange
from kafka_forensics.core.versions import KafkaVersion

P_NONEXISTENT, P_NEW, P_ONLINE, P_OFFLINE = "NonExistentPartition", "NewPartition", "OnlinePartition", "OfflinePartition"
R_ONLINE, R_OFFLINE, R_INELIGIBLE = "OnlineReplica", "OfflineReplica", "ReplicaDeletionIneligible"
R_GONE = frozenset({"OfflineReplica", "ReplicaDeletionStarted", "ReplicaDeletionSuccessful",
                    "ReplicaDeletionIneligible", "NonExistentReplica"})
R_DELETING = frozenset({"ReplicaDeletionStarted", "ReplicaDeletionSuccessful", "ReplicaDeletionIneligible"})
_V_0_8_1 = KafkaVersion.parse("0.8.1")
_V_2_6 = KafkaVersion.parse("2.6")


def fmt_ints(values) -> str:
    return "[" + ",".join(str(v) for v in values) + "]" if values is not None else "unknown"


def info_level_default(vrange: VersionRange) -> bool:
    """True if every release of the range ships state.change.logger at INFO (2.6+, KAFKA-8470)."""
    return not vrange.kraft and vrange.first is not None and vrange.first >= _V_2_6


def logs_state_after_put(vrange: VersionRange) -> bool:
    """0.8.0 logs ``changed partition … from <state after the put> to OnlinePartition`` (so always
    Online -> Online): K:controller/PartitionStateMachine.scala@0.8.0:158-161, fixed by cef51736c70
    (KAFKA-330 follow-up, first release 0.8.1)."""
    return not vrange.kraft and vrange.first is not None and vrange.first < _V_0_8_1


def first_line(text: Optional[str]) -> str:
    return (text or "").strip().splitlines()[0][:300] if (text or "").strip() else ""
