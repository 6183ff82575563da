"""kafka_forensics.statemachines: Kafka's controller state machines, per Kafka era.

Pure Python (no Spark, no Lark, no I/O) and the single source of truth for what is "legal":
states and their codes (``states``), valid previous states (``partition_machine``,
``replica_machine``), out-of-band assignments (``out_of_band``), the bundle for one version
(``machine``), leader elections (``elections``), the controller's ISR shrink (``isr_shrink``),
invariants checkable from logs (``invariants``) and renderings (``render``). Every rule cites
the apache/kafka source it was read from, ``path@tag``.
"""

from kafka_forensics.core.eras import ERAS, era_of
from kafka_forensics.core.versions import KafkaVersion

from .legality import is_forbidden, is_valid_transition
from .machine import StateMachineRules, rules_for
from .states import Entity, PartitionState, ReplicaState

__all__ = [
    "ERAS",
    "Entity",
    "KafkaVersion",
    "PartitionState",
    "ReplicaState",
    "StateMachineRules",
    "era_of",
    "is_forbidden",
    "is_valid_transition",
    "rules_for",
]
