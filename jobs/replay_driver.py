"""The replay stage in the driver's own Python process, without Spark, for local runs that fit it (``engine``).

On a small input every second of the Spark replay is Spark's fixed cost per query (about a hundred
jobs: the cluster contexts' collects, the grouped replay, impact's window queries, the final state,
the story, eight table writes), not the input. ``replay_in_driver`` does the same work with the pure
twins the Spark job is tested against, and writes exactly what
``jobs.replay_job.replay_events`` writes - the same tables (same rows, values, column types and row
order), ``findings.jsonl``, ``replay_summary.json`` and ``story.json`` - so the stages after it, and the
user, cannot tell which engine ran. ``tests/jobs/test_replay_driver.py`` holds the two equal, output for
output, on the bundled sample, the recorded incidents and every option.

It wires the pieces as the Spark job does (``replay_frames``), step for step:
- ``cluster`` from ``--cluster-from-path``; the broker-dating templates from every line; the time
  window (``replay.filters``); the message kept only on the lines a rule reads it of (``TEXT_EVENT_TYPES``);
  KRaft metadata resolved (``replay.kraft``);
- contexts, the per-partition replay and the stale-epoch episodes (``replay.local``'s pieces, as ``replay_all``
  wires them), with ``--topic``/``--partition``/``--partitions`` applied to the partition stage only;
- the final-state oracle (``replay.final_state.snapshot_findings``), impact and its totals
  (``replay.impact``), the story (``replay.story.tell_local``).

Like the Spark job, it never holds the lines: it reads them as three streams (``replay_streams``), the
cluster-wide lines first (contexts), then each partition's lines one bucket of partitions at a time
(``replay_partitions``), and keeps what the outputs hold and, per broker, where its lines are
(``impact.BrokerLines``, about 24 bytes a line). Like Spark's workers, it splits the table and replays the
buckets on every core when the input pays for the processes (``replay_partitions.replay_workers``): what the
processes gather is merged here (``LightLines``, ``FactsBuilder.merge``), and the outputs do not depend on it.
It never imports pyspark (it runs before or while the JVM starts).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from operator import itemgetter
from pathlib import Path
from typing import Iterable, Optional, Sequence

from kafka_forensics.core.errors import UsageError
from kafka_forensics.core.tables import (
    BROKERS,
    CONTROLLERS,
    FINDINGS,
    IMPACT,
    IMPACT_TOTALS,
    PARTITION_TIMELINE,
    REPLICA_TIMELINE,
)
from kafka_forensics.replay.collector import rare_full_collections
from kafka_forensics.replay.events import TEXT_EVENT_TYPES
from kafka_forensics.replay.final_state import snapshot_findings
from kafka_forensics.replay.findings import Finding, findings_order_key, unique_findings
from kafka_forensics.replay.impact import FactsBuilder, impact_rows, impact_totals, min_isr_table, session_timeouts
from kafka_forensics.replay.kraft import resolve_metadata_events
from kafka_forensics.replay.local import (
    ClusterLines,
    ControllerActivity,
    LocalReplay,
    stale_epoch_findings,
)
from kafka_forensics.replay.story import STORY_JSON, Story, story_json, tell_local

from .fs import absolute, local_path
from .local_tables import write_table, write_text
from .replay_options import ReplayOptions, ReplaySummary, impact_summary, validate_options
from .replay_partitions import KeptLines, kept_lines, replay_partitions, replay_workers, selection
from .replay_streams import IN_GROUP, ClusterOf, EventStreams

SUMMARY_JSON = "replay_summary.json"
FINDINGS_JSONL = "findings.jsonl"

# The row order of each table as the Spark job writes it (``write_replay``'s sortWithinPartitions, every
# column ascending with nulls first); controllers and brokers keep the contexts' order, findings
# ``FINDINGS_ORDER``.
TABLE_ORDER: dict[str, tuple[str, ...]] = {
    PARTITION_TIMELINE: ("cluster", "topic", "partition", "seq"),
    REPLICA_TIMELINE: ("cluster", "topic", "partition", "replica", "seq"),
    IMPACT: ("cluster", "topic", "partition", "kind", "episode"),
    IMPACT_TOTALS: ("cluster", "kind", "topic"),
}


def supports(options: ReplayOptions, out_dir: Optional[str] = None) -> bool:
    """Whether ``replay_in_driver`` can stand in for the Spark job: every ``ReplayOptions`` field has its
    pure twin, so only the place matters - the output directory must be on this machine."""
    return out_dir is None or local_path(out_dir) is not None


def _unclean_times(findings: Iterable[Finding]) -> dict[tuple, list[datetime]]:
    out: dict[tuple, list[datetime]] = {}
    for f in findings:
        if f.rule == "unclean_election" and f.ts is not None:
            out.setdefault((f.cluster, f.topic, f.partition), []).append(f.ts)
    return out


class LightLines:
    """What the replay keeps of the light lines (``replay_streams.LineSink``): each cluster's controllers' actions
    (``replay.local.ControllerActivity``) and the impact facts of the lines in no partition's group, of the lines
    ``kept`` keeps. Picklable: the processes that split a share of the table each fill a copy."""

    def __init__(self, kept: KeptLines):
        self.kept = kept
        self.activity: dict[str, ControllerActivity] = {}
        self.facts = FactsBuilder(itemgetter("cluster"))

    def add(self, e: dict) -> None:
        if self.kept(e):
            (self.activity.get(e["cluster"]) or self.activity.setdefault(e["cluster"], ControllerActivity())).add(e)
            if not e[IN_GROUP]:
                self.facts.add(e)

    def merge(self, other: "LightLines") -> None:
        for name, activity in other.activity.items():
            self.activity.setdefault(name, ControllerActivity()).merge(activity)
        self.facts.merge(other.facts)


class DriverReplay:
    """Every output of one replay, in the order the Spark job writes it. The lines are read as three streams
    (``replay_streams``): only the cluster-wide lines, one partition's lines and what the outputs hold are in
    memory at a time."""

    def __init__(self, streams: EventStreams, options: ReplayOptions):
        cluster = itemgetter("cluster")
        kept = kept_lines(options)
        light = LightLines(kept)
        side = streams.split(light)
        facts = light.facts
        lines: dict[str, ClusterLines] = {}
        for name, activity in light.activity.items():
            lines[name] = ClusterLines()
            lines[name].activity = activity
        templates = streams.templates  # every line dates its broker, inside the time window or not
        # what the raw lines state (messages intact): min.insync.replicas, the session timeout
        min_isr = min_isr_table(side, options.min_isr.default, options.min_isr.topics)
        timeouts = session_timeouts(side, cluster)
        side = [e for e in side if kept(e)]
        for e in side:  # the job's _prepare: the message and stack only where a rule reads them
            if e["event_type"] not in TEXT_EVENT_TYPES:
                e["message"] = e["stack"] = None
        for e in resolve_metadata_events(side):
            (lines.get(e["cluster"]) or lines.setdefault(e["cluster"], ClusterLines())).add(e)
            facts.add(e)
        sel = selection(options, templates)
        out = LocalReplay()
        for name in sorted(lines):
            out.contexts[name] = lines[name].context(name, options.clock_skew_seconds, templates.get(name, set()))
        side_partitions = {(name, *key): group for name in lines for key, group in lines[name].partitions.items()}
        for name in lines:
            lines[name].partitions = {}  # handed to the buckets of their partitions
        per_partition: dict[tuple, LocalReplay] = {}
        for bucket in replay_partitions(streams, side_partitions, out.contexts, options):
            for name, context in bucket.contexts.items():  # a cluster of partitions' lines only
                if name not in out.contexts:
                    lines[name], out.contexts[name] = ClusterLines(), context
            facts.merge(bucket.facts)
            for key, own in bucket.partitions.items():  # its findings kept apart until they are put in order
                per_partition[key] = own
                out.partition_intervals.extend(own.partition_intervals)
                out.replica_intervals.extend(own.replica_intervals)
                own.partition_intervals, own.replica_intervals = [], []
        for name in sorted(lines):  # in replay_all's order: the context's, each partition's, the stale epochs'
            out.findings.extend(out.contexts[name].findings)
            for key in sorted(k for k in per_partition if k[0] == name):
                out.findings.extend(per_partition[key].findings)
            out.findings.extend(stale_epoch_findings(name, lines[name], sel))
        self.contexts = {name: out.contexts[name] for name in sorted(out.contexts)}
        self.partition_timeline = _ordered(out.partition_intervals, TABLE_ORDER[PARTITION_TIMELINE])
        self.replica_timeline = _ordered(out.replica_intervals, TABLE_ORDER[REPLICA_TIMELINE])
        lag, skew = timedelta(seconds=options.describe_lag_seconds), timedelta(seconds=options.clock_skew_seconds)
        final = snapshot_findings(self.partition_timeline, self.contexts, options.snapshots, lag, skew)
        replayed = sorted(unique_findings(out.findings), key=findings_order_key)
        unique = sorted(unique_findings([*replayed, *final]), key=findings_order_key)
        self.findings = [f.to_row() for f in unique]
        names = sorted(self.contexts)
        self.controllers = [c.to_row(n) for n in names for c in self.contexts[n].controllers]
        brokers = {n: [b.to_row(n) for b in self.contexts[n].brokers] for n in names}
        self.brokers = [row for n in names for row in brokers[n]]
        impact = impact_rows(self.partition_timeline, facts.facts(brokers, timeouts), min_isr, _unclean_times(unique))
        self.impact = _ordered(impact, TABLE_ORDER[IMPACT])
        self.impact_totals = _ordered(impact_totals(impact), TABLE_ORDER[IMPACT_TOTALS])

    def summary(self, out_dir: str) -> ReplaySummary:
        """``jobs.replay_job.summarize`` of these outputs."""
        summary = ReplaySummary(out_dir=out_dir, clusters=sorted(self.contexts))
        summary.controllers = len(self.controllers)
        summary.broker_intervals = len(self.brokers)
        summary.partition_intervals = len(self.partition_timeline)
        summary.partitions = len({(r["cluster"], r["topic"], r["partition"]) for r in self.partition_timeline})
        summary.replica_intervals = len(self.replica_timeline)
        summary.count_findings((rule, sev, n) for (rule, sev), n in Counter(map(_rule_severity, self.findings)).items())
        summary.impact = impact_summary(r for r in self.impact_totals if r["topic"] is None)
        return summary

    def stories(self) -> list[Story]:
        """Every cluster's story (``jobs.story_job.stories``)."""
        return tell_local(self.contexts, self.partition_timeline, self.findings)

    def story(self) -> str:
        """``story.json``'s text."""
        return story_json(self.stories())


def _rule_severity(row: dict) -> tuple[str, str]:
    return row["rule"], row["severity"]


def _ordered(rows: Sequence[dict], columns: Sequence[str]) -> list[dict]:
    """``rows`` sorted by ``columns`` ascending, nulls first (Spark's default order)."""
    return sorted(
        rows, key=lambda r: tuple(x for c in columns for x in (r[c] is not None, 0 if r[c] is None else r[c]))
    )


def write_outputs(replayed: DriverReplay, out_dir: str, named: Optional[str] = None) -> ReplaySummary:
    """Every file ``jobs.replay_job.replay_events`` writes, from ``replayed``, under the local ``out_dir``
    (``named``: the directory as the user named it, which the summary records; default ``out_dir``)."""
    root = Path(out_dir)
    write_table(root, PARTITION_TIMELINE, replayed.partition_timeline)
    write_table(root, REPLICA_TIMELINE, replayed.replica_timeline)
    write_table(root, FINDINGS, replayed.findings)
    write_text(root / FINDINGS_JSONL, "".join(f"{r['json']}\n" for r in replayed.findings))
    write_table(root, CONTROLLERS, replayed.controllers)
    write_table(root, BROKERS, replayed.brokers)
    write_table(root, IMPACT, replayed.impact)
    write_table(root, IMPACT_TOTALS, replayed.impact_totals)
    summary = replayed.summary(named or out_dir)
    write_text(root / SUMMARY_JSON, summary.to_json())
    write_text(root / STORY_JSON, replayed.story())
    return summary


def replay_in_driver(out_dir: str, options: ReplayOptions) -> ReplaySummary:
    """Replay ``out_dir/events`` (as ``parse`` wrote it) in this process and write the replay's outputs
    under ``out_dir``, exactly as the Spark job would (``jobs.replay_job.replay_events``)."""
    validate_options(options)
    local = local_path(out_dir)
    if local is None:
        raise UsageError(
            f"{out_dir}: the replay in the driver writes local directories only (the Spark job writes any)"
        )
    with (
        rare_full_collections(),
        EventStreams(local, ClusterOf(options.cluster_from_path), replay_workers) as streams,
    ):
        replayed = DriverReplay(streams, options)
    return write_outputs(replayed, local, absolute(out_dir))


def run_replay_in_driver(inputs: list[str], out_dir: str, parse_options, options: ReplayOptions) -> tuple:
    """``jobs.replay_job.run_replay`` in this process: parse ``inputs`` into ``out_dir`` (``parse_in_driver``),
    then replay them there. Returns both summaries."""
    from .parse_driver import parse_in_driver  # the parse imports pyspark's types; the replay alone never does

    validate_options(options)
    parsed = parse_in_driver(inputs, out_dir, parse_options)
    return parsed, replay_in_driver(out_dir, options)


def story_in_driver(inputs: list[str], parse_options, options: ReplayOptions) -> list[Story]:
    """``jobs.story_job.run_story`` in this process: ``inputs`` parsed into a temporary directory (deleted
    after), replayed in memory and told as ``replay`` tells ``story.json``."""
    import tempfile

    from .parse_driver import parse_in_driver

    validate_options(options)
    with tempfile.TemporaryDirectory(prefix="kafka-forensics-story-") as scratch:
        parse_in_driver(inputs, scratch, parse_options, scratch=True)
        with (
            rare_full_collections(),
            EventStreams(scratch, ClusterOf(options.cluster_from_path), replay_workers) as streams,
        ):
            replayed = DriverReplay(streams, options)
    return replayed.stories()


__all__ = [
    "DriverReplay",
    "replay_in_driver",
    "run_replay_in_driver",
    "story_in_driver",
    "supports",
    "write_outputs",
]
