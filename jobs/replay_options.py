"""What a replay is asked (``ReplayOptions``) and what it reports (``ReplaySummary``), without Spark.

Both replay engines use these: the Spark job (``jobs/replay_job.py``) and the replay in the driver
(``jobs/replay_driver.py``), which runs before or while the JVM starts and so must not import pyspark.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Iterable, Optional

from kafka_forensics.core.errors import UsageError
from kafka_forensics.core.versions import read_kafka_version
from kafka_forensics.replay.filters import EventFilter
from kafka_forensics.replay.final_state import DESCRIBE_LAG_SECONDS, SnapshotAt
from kafka_forensics.replay.findings import SEVERITIES
from kafka_forensics.replay.impact import MinIsrOption


@dataclass(frozen=True)
class ReplayOptions:
    kafka_version: Optional[str] = None  # --kafka-version: judge every line against this release
    cluster_from_path: Optional[str] = None  # regex whose last group in source_file names the cluster
    clock_skew_seconds: float = 2.0
    topic: Optional[str] = None  # restrict the partition stage (timeline, describe --topic)
    partition: Optional[int] = None
    event_filter: Optional[EventFilter] = None  # --topic/--partitions/--start-time/--end-time (replay.filters)
    min_isr: MinIsrOption = field(default_factory=MinIsrOption)  # --min-isr N / TOPIC=N (impact)
    snapshots: tuple[SnapshotAt, ...] = ()  # --describe FILE [--describe-at T]: the final-state oracle
    describe_lag_seconds: float = DESCRIBE_LAG_SECONDS

    @property
    def has_place(self) -> bool:
        """Only some partitions are replayed: the stale-epoch episodes (about no partition) are left out."""
        return (
            self.topic is not None
            or self.partition is not None
            or (self.event_filter is not None and self.event_filter.has_place)
        )


@dataclass
class ReplaySummary:
    out_dir: Optional[str]
    clusters: list[str] = field(default_factory=list)
    controllers: int = 0
    broker_intervals: int = 0
    partitions: int = 0
    partition_intervals: int = 0
    replica_intervals: int = 0
    findings: int = 0
    findings_by_rule: dict[str, dict[str, int]] = field(default_factory=dict)
    # per cluster and impact kind: partitions, episodes, open_episodes, seconds, longest_seconds, longest (t-p)
    impact: dict[str, dict[str, dict]] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    def count_findings(self, counts: Iterable[tuple[str, str, int]]) -> None:
        """``findings_by_rule`` and ``findings`` from (rule, severity, count) rows; severities most severe first."""
        by_rule: dict[str, dict[str, int]] = {}
        for rule, severity, n in counts:
            by_rule.setdefault(rule, {})[severity] = by_rule.get(rule, {}).get(severity, 0) + int(n)
        self.findings_by_rule = {
            rule: dict(sorted(sev.items(), key=lambda kv: SEVERITIES.index(kv[0])))
            for rule, sev in sorted(by_rule.items())
        }
        self.findings = sum(sum(v.values()) for v in by_rule.values())


def impact_summary(cluster_totals: Iterable[dict]) -> dict[str, dict[str, dict]]:
    """cluster -> kind -> the cluster's totals, from the ``impact_totals`` rows whose topic is null."""
    out: dict[str, dict[str, dict]] = {}
    for r in sorted(cluster_totals, key=lambda r: (r["cluster"], r["kind"])):
        out.setdefault(r["cluster"], {})[r["kind"]] = {
            "partitions": int(r["partitions"]),
            "episodes": int(r["episodes"]),
            "open_episodes": int(r["open_episodes"]),
            "seconds": float(r["seconds"]),
            "longest_seconds": float(r["longest_seconds"]),
            "longest": f"{r['longest_topic']}-{r['longest_partition']}",
        }
    return out


def validate_options(options: ReplayOptions) -> None:
    if options.kafka_version:
        read_kafka_version(options.kafka_version)  # UnknownKafkaVersionError (exit 2)
    if options.cluster_from_path:
        try:
            rx = re.compile(options.cluster_from_path)
        except re.error as err:
            raise UsageError(f"--cluster-from-path is not a valid regex: {err}") from err
        if rx.groups < 1:
            raise UsageError("--cluster-from-path needs a capture group for the cluster name")
    if options.clock_skew_seconds < 0:
        raise UsageError("--clock-skew must not be negative")


__all__ = ["ReplayOptions", "ReplaySummary", "impact_summary", "validate_options"]
