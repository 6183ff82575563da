"""Dialects: one per Kafka era whose log shapes differ (kafka-log-formats.md §3).

A dialect selects the templates live in its version range; ``auto`` holds every template and is
used to detect a file's dialect and as the per-line fallback for files that mix versions (a
rolling upgrade writes two eras into one shared file).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_forensics.core.errors import UnknownKafkaVersionError
from .versions import major_minor, parse_version


@dataclass(frozen=True)
class Dialect:
    name: str
    lo: tuple[int, int]  # first (major, minor) in the era
    hi: tuple[int, int]  # first (major, minor) after it
    kraft: bool
    summary: str

    def covers(self, since: tuple[int, ...], until: tuple[int, ...], kraft_only: bool) -> bool:
        """Is a template logged by versions since..until live in this era?"""
        if kraft_only and not self.kraft:
            return False
        return major_minor(since) < self.hi and major_minor(until) >= self.lo


DIALECTS: tuple[Dialect, ...] = (
    Dialect("zk-0.8", (0, 8), (1, 0), False,
            "0.8–0.11: inline identity ('Controller 1 epoch 3 changed ...'), [t,0], (Leader:..) states"),
    Dialect("zk-1.0", (1, 0), (1, 1), False,
            "1.0: '[Controller id=1 epoch=3]' prefixes, capitalised messages, t-0 partitions"),
    Dialect("zk-1.1", (1, 1), (2, 4), False,
            "1.1–2.3: rewritten controller, LeaderAndIsr(leader=.., zkVersion=..)"),
    Dialect("zk-2.4", (2, 4), (2, 6), False,
            "2.4–2.5: generated LeaderAndIsrPartitionState(...) request states"),
    Dialect("zk-2.6", (2, 6), (3, 0), False,
            "2.6–2.8: state-change at INFO by default, per-request summaries, 'Leader t-0 starts at ...'"),
    Dialect("zk-3.x", (3, 0), (4, 0), False,
            "3.x ZooKeeper mode: leaderRecoveryState, partitionEpoch, isrWithBrokerEpoch"),
    Dialect("kraft", (2, 8), (99, 0), True,
            "KRaft: [QuorumController id=N] controller.log, 'Transitioning N partition(s)' brokers"),
)
BY_NAME = {d.name: d for d in DIALECTS}
AUTO = "auto"


def dialect_for_version(text: str) -> Dialect:
    """The dialect for ``--kafka-version`` (``3.9``, ``3.9-kraft``, ``kraft``, ``4.0`` = KRaft)."""
    raw = text.strip().lower()
    kraft = raw.endswith("kraft")
    if raw == "kraft":
        return BY_NAME["kraft"]
    version = parse_version(raw.removesuffix("-kraft").removesuffix("kraft").rstrip("-"))
    mm = major_minor(version)
    if kraft or mm >= (4, 0):
        if mm < (2, 8):
            raise UnknownKafkaVersionError(f"Kafka {text} has no KRaft mode (KRaft starts in 2.8)")
        return BY_NAME["kraft"]
    for dialect in DIALECTS:
        if not dialect.kraft and dialect.lo <= mm < dialect.hi:
            return dialect
    raise UnknownKafkaVersionError(f"no dialect covers Kafka {text}")
