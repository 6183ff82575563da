"""Which Kafka era wrote a file: scored from the templates its first lines match.

A template is live in a range of versions (its ``//@`` directive); a dialect scores one point for
every sampled line typed by a template live in it. Renderings that only newer versions print
(kafka-log-formats.md §4) and the broker's own "Kafka version: X" line narrow the choice. Ties go
to the earliest era: every tied era accepts the same lines, and the earliest is the one whose
state-machine rules are the most conservative.

The version line is AppInfoParser's ``Kafka version: {}`` INFO line
(clients/src/main/java/org/apache/kafka/common/utils/AppInfoParser.java@3.5.0:119; ``Kafka version
: `` with a space before the colon up to 0.10.x, @0.10.2.2:83). Its text is read by the one
version reader (``core.versions.read_kafka_version``), so a Confluent build's ``7.5.0-ccs`` means
Apache Kafka 3.5, as it does for ``--kafka-version``.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

from kafka_forensics.core.eras import AUTO, DIALECTS, dialect_for_version
from kafka_forensics.core.versions import KafkaVersion

from .grammar_loader import templates_for

SAMPLE_LINES = 2000

# rendering → first release that prints it (kafka-log-formats.md §3, §4)
_RENDERING_HINTS: tuple[tuple[re.Pattern, KafkaVersion], ...] = tuple(
    (re.compile(pattern), KafkaVersion.parse(first))
    for pattern, first in (
        (r"\[Controller id=\d+", "1.0"),
        (r"LeaderAndIsr\(leader=", "1.1"),
        (r"LeaderAndIsrPartitionState\(|UpdateMetadataPartitionState\(", "2.4"),
        (r"become-leader and \d+ become-follower partitions", "2.6"),
        (r"LeaderRecoveryState:|leaderRecoveryState=", "3.2"),
        (r"partitionEpoch=", "3.3"),
        (r"isrWithBrokerEpoch=", "3.5"),
    )
)
_KRAFT_HINT = re.compile(r"\[QuorumController id=|org\.apache\.kafka\.controller\.|Transitioning \d+ partition\(s\)")
_VERSION_LINE = re.compile(r"Kafka version\s*:\s*(\d+\.\d+(?:\.\d+)*(?:-[\w.]+)?)")


def detect_dialect(lines: Iterable[str], classify) -> str:
    """``classify`` is an ``auto`` line classifier (FastLineParser(AUTO).classify)."""
    specs = {t.rule: t for t in templates_for(AUTO)}
    scores: Counter = Counter()
    floor: KafkaVersion | None = None  # the newest rendering seen: no earlier era printed it
    kraft = False
    for count, line in enumerate(lines):
        if count >= SAMPLE_LINES:
            break
        version = _VERSION_LINE.search(line)
        if version:
            try:
                return dialect_for_version(version.group(1) + ("-kraft" if kraft else "")).name
            except Exception:  # an odd version string: keep scoring
                pass
        if _KRAFT_HINT.search(line):
            kraft = True
        for hint, first in _RENDERING_HINTS:
            if (floor is None or first > floor) and hint.search(line):
                floor = first
        result = classify(line)
        spec = specs.get(result.template) if result.template else None
        if spec is None:
            continue
        # A template only KRaft-mode classes print (``//@ .. kraft``: RaftReplicaManager, RaftMetadataCache,
        # QuorumController, ...) is itself the hint: a 2.8 KRaft broker's state-change.log has no
        # QuorumController line, only [Broker id=N] ones.
        kraft = kraft or spec.kraft_only
        for dialect in DIALECTS:
            if dialect.covers(spec.since, spec.until, spec.kraft_only):
                scores[dialect.name] += 1
    possible = [d for d in DIALECTS if floor is None or d.until is None or d.until > floor]
    candidates = [d for d in possible if d.kraft == kraft] or possible
    if not scores:
        return candidates[0].name if floor is not None or kraft else AUTO
    best = max(scores.get(d.name, 0) for d in candidates)
    for dialect in candidates:  # DIALECTS is ordered oldest first
        if scores.get(dialect.name, 0) == best and best > 0:
            return dialect.name
    return candidates[0].name


__all__ = ["detect_dialect"]
