"""The driver engine's per-partition replay, a bucket of partitions at a time, on every core when the input pays.

Why: after the streaming split (``replay_streams``) almost all of the replay's work is per partition: sorting a
bucket's lines, turning them into events, gathering their impact facts and replaying each partition through its
era's state machines (on 998,821 simulated lines, 78 % of the replay's CPU, py-spy, 2026-11-26). A partition's
replay reads only its own lines, its side lines and the cluster contexts, so the buckets are independent: a
pool of processes (``process_pool``) replays them side by side, each worker one bucket at a time.

One path for both: ``replay_bucket`` is what a worker runs and what the driver runs in its own process, bucket
after bucket, when there is one core or the input is small (``replay_workers``). Its result is what the
outputs hold of a bucket: each partition's timeline rows and findings (kept apart, as ``replay_all`` orders
them), the impact facts of its lines (``impact.FactsBuilder``, machine integers) and the contexts it made for
clusters that have only partitions' lines.

What does not need a partition's sequence is done on the bucket's Arrow table before its lines become events: the
time window (``KeptLines.rows``) and the impact facts (``replay_streams.gather_facts``); and a bucket's values are
converted once per distinct value (``replay.events``: a partition's lines repeat their broker lists and times).
"""

from __future__ import annotations

import heapq
import os
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Callable, Iterator, Optional

import pyarrow as pa
import pyarrow.compute as pc

from kafka_forensics.replay.cluster import CLUSTER_EVENT_TYPES, ClusterContext
from kafka_forensics.replay.filters import EventFilter, keeps_place, keeps_time
from kafka_forensics.replay.impact import FactsBuilder
from kafka_forensics.replay.kraft import METADATA
from kafka_forensics.replay.local import ClusterLines, LocalReplay, Selection, replay_partition_lines
from kafka_forensics.replay.partition import ReplayConfig

from .process_pool import cores, map_in_pool, may_fork
from .replay_options import ReplayOptions
from .replay_streams import Bucket, EventStreams, gather_facts, read_bucket, spark_order, table_groups

POOL_MIN_ROWS = 250_000
"""The fewest events rows for which the driver splits and replays in a pool.

The pool's fixed cost, measured on this 2-core machine (2026-11-26, bench/RESULTS.md, "The driver replay on every
core"): the forkserver's start and imports when the parse did not start it, and the pickling of the contexts,
the side lines and the results, about 0.7 s (the bundled sample's replay: 0.07 s in one process, 0.75 s forced into
the pool). At 255,655 simulated rows the pool took 3.0-3.5 s against 4.2-4.5 s in one process; the bundled sample
and the recorded incidents stay in one process."""

Partition = tuple  # (cluster, topic, partition)
_CLUSTER_TYPES = pa.array(sorted(CLUSTER_EVENT_TYPES))


def replay_workers(rows: int) -> int:
    """How many processes replay the buckets of an events table of ``rows`` rows (1: this one, serially)."""
    return cores() if rows >= POOL_MIN_ROWS and may_fork() else 1


@dataclass(frozen=True)
class KeptLines:
    """Whether the replay keeps a line: in ``--start-time``/``--end-time``'s window (every line without one).
    Picklable, for the processes that split and replay."""

    window: Optional[EventFilter] = None

    def __call__(self, e: dict) -> bool:
        return self.window is None or keeps_time(self.window, e)

    def rows(self, table: pa.Table) -> pa.Table:
        """The rows of ``table`` (lines of the events table) the replay keeps: ``keeps_time`` on each, column-wise
        (``jobs.filters.time_condition`` is the same in Spark: a comparison with a null time is false, and
        ``or`` is Kleene's, so a cluster line without a time before ``--start-time`` is kept)."""
        window = self.window
        if window is None:
            return table
        ts, keep = table.column("ts"), pa.scalar(True)
        if window.start is not None:
            after = pc.or_kleene(
                pc.or_kleene(
                    pc.greater_equal(ts, pa.scalar(window.start, ts.type)),
                    pc.is_in(table.column("event_type"), value_set=_CLUSTER_TYPES),
                ),
                pc.equal(table.column("log_kind"), METADATA),
            )
            keep = pc.and_(keep, pc.fill_null(after, False))
        if window.end is not None:
            keep = pc.and_(keep, pc.fill_null(pc.less_equal(ts, pa.scalar(window.end, ts.type)), False))
        return table.filter(keep)


def kept_lines(options: ReplayOptions) -> KeptLines:
    """The lines ``options`` keep (``KeptLines``)."""
    flt = options.event_filter
    return KeptLines(flt if flt is not None and flt.has_time else None)


def partition_filter(options: ReplayOptions) -> Optional[Callable[[dict], bool]]:
    """``--topic``/``--partition`` (timeline, describe) and the place filter, on the partition stage's events."""
    flt = options.event_filter if options.event_filter is not None and options.event_filter.has_place else None
    if options.topic is None and options.partition is None and flt is None:
        return None

    def keep(e: dict) -> bool:
        if options.topic is not None and e["topic"] != options.topic:
            return False
        if options.partition is not None and e["partition"] != options.partition:
            return False
        return flt is None or keeps_place(flt, e)

    return keep


def selection(options: ReplayOptions, templates: dict[str, set]) -> Selection:
    """What the replay keeps of its input besides the lines (``replay.local.Selection``), from the options."""
    return Selection(templates, partition_filter(options), stale_epochs=not options.has_place)


def bare_context(cluster: str, options: ReplayOptions, templates: dict[str, set]) -> ClusterContext:
    """The context of a cluster that has only partitions' lines (no line of its own, no controller's action)."""
    return ClusterLines().context(cluster, options.clock_skew_seconds, templates.get(cluster, set()))


@dataclass
class BucketWork:
    """One bucket's replay: its lines, the side lines of its partitions (as ``ClusterLines`` gathered them), and what
    every partition's replay reads (the contexts, the options, the templates for a context it has to make)."""

    bucket: Optional[Bucket]  # None: the bucket has side lines only
    side: dict[Partition, list[dict]]
    contexts: dict[str, ClusterContext]
    templates: dict[str, set]
    options: ReplayOptions
    size: int = 0  # the bucket's bytes, to deal the largest first


@dataclass
class BucketReplay:
    """What the outputs hold of one bucket."""

    partitions: dict[Partition, LocalReplay] = field(default_factory=dict)  # rows and findings, per partition
    facts: FactsBuilder = field(default_factory=lambda: FactsBuilder(itemgetter("cluster")))
    contexts: dict[str, ClusterContext] = field(default_factory=dict)  # made for clusters of partitions' lines only


def replay_bucket(work: BucketWork) -> BucketReplay:
    """Replay every partition of one bucket: its lines in the time window, each with its side lines merged in
    Spark's order, then the partitions that have side lines only; each partition's rows and findings apart."""
    options, out = work.options, BucketReplay()
    kept, sel = kept_lines(options), selection(options, work.templates)
    side = dict(work.side)

    def replay(cluster: str, key: Partition, lines: list[dict]) -> None:
        context = work.contexts.get(cluster, out.contexts.get(cluster))
        if context is None:  # a cluster of partitions' lines only
            context = out.contexts[cluster] = bare_context(cluster, options, work.templates)
        cfg = ReplayConfig(cluster=cluster, user_version=options.kafka_version)
        replay_partition_lines(lines, context, cfg, sel, out.partitions.setdefault(key, LocalReplay()))

    if work.bucket is not None:
        table = kept.rows(read_bucket(work.bucket))
        gather_facts(out.facts, table)
        for key, group in table_groups(table):
            side_lines = sorted(side.pop(key, ()), key=spark_order)
            replay(key[0], key, list(heapq.merge(group, side_lines, key=spark_order)) if side_lines else group)
    for key in sorted(side):  # as they came (``ClusterLines``' order)
        replay(key[0], key, side[key])
    return out


def replay_partitions(
    streams: EventStreams,
    side: dict[Partition, list[dict]],
    contexts: dict[str, ClusterContext],
    options: ReplayOptions,
) -> Iterator[BucketReplay]:
    """Every partition replayed, bucket by bucket (after ``streams.split``): ``side`` holds each partition's side
    lines. In a pool of ``streams.workers`` processes, or in this process one bucket at a time (only one bucket's
    lines in memory)."""
    keys = sorted(side)
    per_bucket: dict[int, dict[Partition, list[dict]]] = {}
    for key, k in zip(keys, streams.bucket_ids(keys)):
        per_bucket.setdefault(k, {})[key] = side[key]
    buckets: dict[int, Bucket] = dict(streams.buckets())
    works = [
        BucketWork(buckets.get(k), per_bucket.get(k, {}), contexts, streams.templates, options, _size(buckets.get(k)))
        for k in sorted(buckets.keys() | per_bucket.keys())
    ]
    del buckets
    if streams.workers > 1 and len(works) > 1:
        yield from map_in_pool(replay_bucket, works, min(streams.workers, len(works)), cost=lambda w: w.size)
        return
    for work in works:
        yield replay_bucket(work)
        work.bucket = None  # a bucket held in memory is freed once replayed


def _size(bucket: Optional[Bucket]) -> int:
    """A bucket's size in bytes, to deal the largest first."""
    if bucket is None:
        return 0
    return sum(map(os.path.getsize, bucket)) if isinstance(bucket, tuple) else bucket.nbytes


__all__ = [
    "POOL_MIN_ROWS",
    "BucketReplay",
    "BucketWork",
    "KeptLines",
    "kept_lines",
    "partition_filter",
    "replay_bucket",
    "replay_partitions",
    "replay_workers",
    "selection",
]
