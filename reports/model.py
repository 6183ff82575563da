"""The report's data: small, already-aggregated plain Python values (no Spark, no plotly).

jobs/report_job.py fills these from the replay tables after aggregating and limiting in Spark, so
everything here is bounded by the report's limits, never by the size of the logs. Strings that
came from a log (topics, messages, file paths) are raw here; the renderers escape them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Optional

from kafka_forensics.core.verdict import VerdictSummary
from kafka_forensics.replay.findings import SEVERITIES

SEVERITY_ORDER = SEVERITIES  # most severe first


def partition_label(cluster: str, topic: str, partition: int) -> str:
    """How the report names a partition: ``topic-partition``, with ``[cluster]`` when there are several."""
    name = f"{topic}-{partition}"
    return f"{name} [{cluster}]" if cluster else name


@dataclass(frozen=True)
class Count:
    """One labelled count (events per log kind, quarantined lines per reason, ...)."""

    label: str
    count: int
    sample: Optional[str] = None  # e.g. the first quarantined line of that reason, with its file:line


@dataclass(frozen=True)
class Reconciliation:
    files: int
    lines_read: int
    records: int
    continuation_lines: int
    quarantined: int
    read_errors: int

    @property
    def reconciled(self) -> bool:
        return self.lines_read == self.records + self.continuation_lines + self.quarantined


@dataclass(frozen=True)
class ControllerEpoch:
    cluster: str
    controller_id: Optional[int]  # None: a KRaft epoch only the metadata dump shows (it prints no leader)
    epoch: int
    ts_start: Optional[datetime]
    ts_end: Optional[datetime]  # None: still controller at the end of the logs
    elected: bool  # False: inferred from the controller's own lines only
    n_actions: int
    evidence: tuple[str, ...]

    @property
    def controller_label(self) -> str:
        return "unknown" if self.controller_id is None else str(self.controller_id)


@dataclass(frozen=True)
class BrokerInterval:
    cluster: str
    broker: int
    state: str  # alive | shutting_down | dead | fenced
    ts_start: Optional[datetime]
    ts_end: Optional[datetime]
    evidence: Optional[str]


@dataclass(frozen=True)
class EvidenceLine:
    ref: str  # file:line
    text: Optional[str]  # the line as parsed ([ts] LEVEL message + first stack lines); None = not found


@dataclass(frozen=True)
class FindingRow:
    finding_id: str
    severity: str
    rule: str
    cluster: str
    topic: Optional[str]
    partition: Optional[int]
    replica: Optional[int]
    broker: Optional[int]
    controller_epoch: Optional[int]
    ts: Optional[datetime]
    summary: str
    evidence: tuple[EvidenceLine, ...]
    evidence_count: int  # how many lines the finding cites in all (evidence may show fewer)
    ts_end: Optional[datetime] = None  # the episode's last line (ts: its start)
    controller_epoch_end: Optional[int] = None

    @property
    def where(self) -> str:
        if self.topic is None:
            return "cluster" if self.broker is None else f"broker {self.broker}"
        text = f"{self.topic}-{self.partition}"
        return text if self.replica is None else f"{text} replica {self.replica}"


@dataclass(frozen=True)
class StateInterval:
    """One interval of a partition (replica None) or of one of its replicas."""

    ts_start: Optional[datetime]
    ts_end: Optional[datetime]
    state: Optional[str]
    leader: Optional[int]
    isr: Optional[tuple[int, ...]]
    replicas: Optional[tuple[int, ...]]
    leader_epoch: Optional[int]
    controller_epoch: Optional[int]
    cause: Optional[str]
    cause_event_type: Optional[str]
    replica: Optional[int] = None


@dataclass(frozen=True)
class PartitionMark:
    """A finding placed on a partition's timeline."""

    ts: Optional[datetime]
    severity: str
    rule: str
    summary: str


@dataclass(frozen=True)
class PartitionStory:
    cluster: str
    topic: str
    partition: int
    findings: int
    intervals: tuple[StateInterval, ...]
    intervals_total: int
    replica_intervals: tuple[StateInterval, ...]
    replica_intervals_total: int
    marks: tuple[PartitionMark, ...]

    @property
    def label(self) -> str:
        return partition_label(self.cluster, self.topic, self.partition)


@dataclass(frozen=True)
class TransitionCell:
    from_state: str
    to_state: str
    count: int
    illegal_count: int  # how many of them the state machine of their era forbids
    eras: tuple[str, ...]  # dialects the lines were written in


@dataclass(frozen=True)
class TransitionMatrix:
    entity: str  # partition | replica
    states: tuple[str, ...]  # row/column order
    cells: tuple[TransitionCell, ...]


@dataclass(frozen=True)
class RateSeries:
    event_type: str
    points: tuple[tuple[datetime, int], ...]  # (bucket start, events)


@dataclass(frozen=True)
class StorySentence:
    """One sentence of the incident story (``replay.story``, read from DIR/story.json)."""

    cluster: str
    ts: Optional[datetime]
    kind: str
    text: str
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class ImpactTotal:
    """One cluster's total of one impact kind (``impact_totals`` with topic null)."""

    cluster: str
    kind: str
    partitions: int
    episodes: int
    open_episodes: int  # still so when the logs end: counted up to the last line
    seconds: float
    longest_seconds: float
    longest: str  # topic-partition of the longest episode


@dataclass(frozen=True)
class ImpactPartition:
    """One partition's impact: known seconds per kind (``replay.impact.KINDS``), episodes, any still open."""

    cluster: str
    topic: str
    partition: int
    seconds: dict[str, float]
    episodes: int
    open_episodes: int
    worst_start: Optional[datetime]  # its longest leaderless (leader_lost/unavailable) episode, if any
    worst_end: Optional[datetime]  # None: open, or no such episode
    worst_ended_by: Optional[str]
    worst_evidence: tuple[str, ...]  # that episode's first and last line

    @property
    def label(self) -> str:
        return partition_label(self.cluster, self.topic, self.partition)


@dataclass(frozen=True)
class ImpactEpisode:
    """One ``impact`` row of a partition the report shows (its timeline strip)."""

    cluster: str
    topic: str
    partition: int
    kind: str
    ts_start: Optional[datetime]
    ts_end: Optional[datetime]  # None: open when the logs end
    known_seconds: float
    reason: Optional[str]
    ended_by: Optional[str]
    start_evidence: Optional[str]
    end_evidence: Optional[str]

    @property
    def label(self) -> str:
        return partition_label(self.cluster, self.topic, self.partition)


@dataclass
class ReportData:
    title: str
    source_dir: str
    window_start: Optional[datetime]
    window_end: Optional[datetime]
    events: int
    events_by_kind: list[Count]
    dialects: list[Count]
    kafka_versions: list[Count]  # "broker 1: 2.4.1" -> lines
    brokers: list[int]
    brokers_total: int
    clusters: list[str]
    reconciliation: Reconciliation
    findings_total: int
    findings_by_rule: dict[str, dict[str, int]]  # rule -> severity -> count
    rule_sentences: dict[str, str]
    verdict: VerdictSummary
    controllers: list[ControllerEpoch]
    controllers_total: int
    broker_intervals: list[BrokerInterval]
    broker_intervals_total: int
    findings: list[FindingRow]
    partitions: list[PartitionStory]
    partitions_total: int
    matrices: list[TransitionMatrix]
    rate_bucket_seconds: int
    rates: list[RateSeries]
    quarantine: list[Count]
    quarantine_total: int
    left_out: list[str] = field(default_factory=list)  # sentences: what the report does not show
    story: list[StorySentence] = field(default_factory=list)  # the incident in order and in words
    story_notes: list[str] = field(default_factory=list)  # what the story left out
    impact_totals: list[ImpactTotal] = field(default_factory=list)
    impact_partitions: list[ImpactPartition] = field(default_factory=list)  # the worst, most leaderless first
    impact_partitions_total: int = 0  # partitions with any impact episode
    impact_episodes: list[ImpactEpisode] = field(default_factory=list)  # of impact_partitions, time order
    impact_episodes_total: int = 0  # episodes of impact_partitions in all

    @property
    def failovers(self) -> int:
        """Controller changes: epochs after the first of each cluster."""
        clusters = {c.cluster for c in self.controllers}
        return max(0, len(self.controllers) - len(clusters))
