"""The final-state oracle: what operators saw at incident time against what the replay says was so then.

A snapshot (``parsers.describe_output``: ``kafka-topics --describe``, ``kafka-metadata-quorum describe
--status``) taken at instant T is compared with the replay's state of the same partitions around T. Each
mismatch is one ``final_state_mismatch`` finding that says which side is missing what:

* the logs say nothing about a topic or partition the snapshot shows, or only after T: the logs are
  incomplete (``info``: a gap, never worse);
* the logs' state at T differs from the snapshot's (leader, ISR, replicas), or the logs say the partition
  was deleted: something changed that the logs do not show - lines are missing (``warning``);
* the logs show a partition of a snapshot's topic alive at T that the snapshot does not list (``warning``);
* the logs show topics alive at T that the snapshot does not list at all: one ``info`` finding, since a
  describe is often limited with ``--topic`` or ``--exclude-internal``;
* the quorum's leader or epoch differs from the controller the logs show at T (``warning``).

Replicas are compared as sets: 0.10's lines print them from a Scala ``Set`` (``AllReplicas:1,2,3``), so
their order in the logs is not the assignment order describe prints.

Timing: a snapshot reads a broker's metadata cache, which trails the controller and the leaders, and brokers'
clocks differ; a snapshot agrees with the logs if any state the partition had within
[T - ``lag``, T + ``skew``] matches it. Broker-view rows that only echo an older state count with the
controller-side state before them (``impact.effective_rows``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Iterable, Optional, Sequence

from kafka_forensics.parsers.describe_output import DescribedPartition, Snapshot
from kafka_forensics.statemachines.states import PartitionState as P

from .findings import INFO, WARNING, Finding, fmt_ints, format_ts

RULE = "final_state_mismatch"
# How far a snapshot's metadata cache may trail the logs: before AlterIsr (2.7) a leader's ISR change reaches the
# controller, and so the brokers' caches, once no change came for 5 s, checked every 2.5 s
# (K:server/ReplicaManager.scala@2.4.1:149,294-299,328): up to 7.5 s, plus the controller's UpdateMetadata.
DESCRIBE_LAG_SECONDS = 8.0
MAX_NAMED_TOPICS = 20  # topics named in the one "not in the snapshot" finding; the count says the rest
GONE = frozenset({P.NonExistentPartition.value})


@dataclass(frozen=True)
class SnapshotAt:
    """A snapshot, the instant it shows, and where that instant came from (the option or the file's mtime)."""

    snapshot: Snapshot
    at: datetime
    at_source: str  # "--describe-at" | "file modification time"


def _leader(row: dict) -> Optional[int]:
    """The replay's leader as describe would print it: None when there is none."""
    if row.get("state") == P.OfflinePartition.value:
        return None
    leader = row.get("leader")
    return None if leader is None or leader < 0 else leader


def _differences(row: dict, d: DescribedPartition) -> list[str]:
    """What the replay's row says differently from the snapshot (only what the row knows is compared)."""
    out = []
    if row.get("leader") is not None or row.get("state") == P.OfflinePartition.value:
        if _leader(row) != d.leader:
            out.append(f"leader {_leader(row) if _leader(row) is not None else 'none'} vs {d.leader or 'none'}")
    if row.get("isr") is not None and set(row["isr"]) != set(d.isr):
        out.append(f"ISR {fmt_ints(row['isr'])} vs {fmt_ints(d.isr)}")
    if row.get("replicas") and set(row["replicas"]) != set(d.replicas):
        out.append(f"replicas {fmt_ints(row['replicas'])} vs {fmt_ints(d.replicas)}")
    return out


def _covers(row: dict, start: datetime, end: datetime) -> bool:
    return row["ts_start"] is not None and row["ts_start"] <= end and (row["ts_end"] is None or row["ts_end"] > start)


def _state_at(rows: Sequence[dict], at: datetime) -> Optional[dict]:
    before = [r for r in rows if r["ts_start"] is not None and r["ts_start"] <= at]
    return max(before, key=lambda r: r["seq"]) if before else None


def compare_partition(
    s: SnapshotAt, d: DescribedPartition, rows: Sequence[dict], lag: timedelta, skew: timedelta, cluster: str = ""
) -> Optional[Finding]:
    """One described partition against its effective timeline rows (``impact.effective_rows``) around T."""
    where: dict[str, Any] = dict(cluster=cluster, topic=d.topic, partition=d.partition, ts=s.at)
    ref = s.snapshot.ref(d.line_no)
    when = f"kafka-topics --describe at {format_ts(s.at)} ({s.at_source})"
    rows = [r for r in rows if r["ts_start"] is not None and r["ts_start"] <= s.at + skew]
    if not rows:
        return Finding.make(
            RULE,
            INFO,
            f"{when} shows {d.topic}-{d.partition}; the logs say nothing about it until then: the logs are incomplete "
            f"(they start later, or its brokers' files are missing)",
            [ref],
            kind="absent_from_logs",
            **where,
        )
    window = [r for r in rows if _covers(r, s.at - lag, s.at + skew)]
    if any(not _differences(r, d) and r.get("state") not in GONE for r in window):
        return None
    current = _state_at(rows, s.at) or window[0]
    if current.get("state") in GONE:
        return Finding.make(
            RULE,
            WARNING,
            f"{when} shows {d.topic}-{d.partition} (leader {d.leader or 'none'}, ISR {fmt_ints(d.isr)}); the logs say "
            f"it was deleted at {format_ts(current['ts_start'])}: it was re-created, or lines are missing",
            [ref, current["cause"]],
            kind="deleted_in_logs",
            **where,
        )
    diffs = _differences(current, d)
    return Finding.make(
        RULE,
        WARNING,
        f"{when}: {d.topic}-{d.partition} differs from the logs' state since {format_ts(current['ts_start'])} "
        f"(logs vs snapshot: {'; '.join(diffs)}): something changed that the logs do not show (lines missing after "
        f"{current['cause']}), or the snapshot's time is off",
        [ref, current["cause"]],
        kind="state_differs",
        controller_epoch=current.get("controller_epoch"),
        **where,
    )


def absent_topic(s: SnapshotAt, topic: str, line_no: int, partitions: int, cluster: str = "") -> Finding:
    """A topic of the snapshot that no line of the logs mentions up to the snapshot's time."""
    return Finding.make(
        RULE,
        INFO,
        f"kafka-topics --describe at {format_ts(s.at)} ({s.at_source}) shows topic {topic} ({partitions} "
        f"partition(s)); the logs say nothing about it until then: the logs are incomplete (they start later, or its "
        f"brokers' files are missing)",
        [s.snapshot.ref(line_no)],
        kind="absent_from_logs",
        cluster=cluster,
        topic=topic,
        ts=s.at,
    )


def missing_from_snapshot(s: SnapshotAt, row: dict, topic_line: int) -> Finding:
    """A partition the logs show alive at T, of a topic the snapshot lists without it."""
    return Finding.make(
        RULE,
        WARNING,
        f"the logs show {row['topic']}-{row['partition']} alive at {format_ts(s.at)} (since "
        f"{format_ts(row['ts_start'])}); kafka-topics --describe then ({s.at_source}) lists its topic without it: "
        f"it was deleted, or the topic re-created, without a line in the logs",
        [s.snapshot.ref(topic_line), row["cause"]],
        kind="missing_from_snapshot",
        cluster=row.get("cluster") or "",
        topic=row["topic"],
        partition=row["partition"],
        controller_epoch=row.get("controller_epoch"),
        ts=s.at,
    )


def topics_not_in_snapshot(s: SnapshotAt, topics: Sequence[tuple[str, str]], total: int, cluster: str = "") -> Finding:
    """``topics``: (name, first line) of up to MAX_NAMED_TOPICS topics alive in the logs at T, ``total`` in all."""
    names = ", ".join(name for name, _ in topics[:MAX_NAMED_TOPICS])
    more = f" and {total - MAX_NAMED_TOPICS} more" if total > MAX_NAMED_TOPICS else ""
    first_line = min((t.line_no for t in s.snapshot.topics), default=1)
    return Finding.make(
        RULE,
        INFO,
        f"the logs show {total} topic(s) alive at {format_ts(s.at)} that kafka-topics --describe then does not list: "
        f"{names}{more} (a describe limited with --topic or --exclude-internal, or topics deleted without a line)",
        [s.snapshot.ref(first_line), *[ref for _, ref in topics[:MAX_NAMED_TOPICS]]],
        kind="not_in_snapshot",
        cluster=cluster,
        ts=s.at,
    )


def compare_quorum(s: SnapshotAt, controller, cluster: str = "") -> Optional[Finding]:
    """``kafka-metadata-quorum describe --status`` against the controller the logs show at T
    (``controller``: a ``ClusterContext.controller_at`` interval, or None)."""
    q = s.snapshot.quorum
    if q is None:
        return None
    ref = s.snapshot.ref(q.line_no)
    when = f"kafka-metadata-quorum at {format_ts(s.at)} ({s.at_source})"
    if controller is None:
        return Finding.make(
            RULE,
            INFO,
            f"{when} shows controller {q.leader_id} in epoch {q.leader_epoch}; the logs show no controller then: "
            f"the logs are incomplete",
            [ref],
            kind="absent_from_logs",
            cluster=cluster,
            ts=s.at,
        )
    if (controller.controller_id, controller.controller_epoch) == (q.leader_id, q.leader_epoch):
        return None
    return Finding.make(
        RULE,
        WARNING,
        f"{when} shows controller {q.leader_id} in epoch {q.leader_epoch}; the logs show controller "
        f"{controller.controller_id} in epoch {controller.controller_epoch} since {format_ts(controller.ts_start)}: "
        f"an election the logs do not show (lines missing), or the snapshot's time is off",
        [ref, *controller.evidence[:1]],
        kind="controller_differs",
        cluster=cluster,
        controller_epoch=controller.controller_epoch,
        ts=s.at,
    )


def compare_snapshot(
    s: SnapshotAt,
    rows_by_partition: dict[tuple[str, str, int], list[dict]],
    alive_at: Iterable[dict],
    other_topics: Sequence[tuple[str, str]],
    other_total: int,
    controller,
    lag: timedelta,
    skew: timedelta,
    cluster: str = "",
) -> list[Finding]:
    """Every finding of one snapshot for one cluster. ``rows_by_partition``: (cluster, topic, partition) ->
    effective timeline rows of each described partition up to T + skew; ``alive_at``: the state rows at T of
    the described topics' partitions; ``other_topics``: topics alive at T the snapshot does not list."""
    out: list[Finding] = []
    described_topics = {t.topic: t for t in s.snapshot.topics}
    logged_topics = {t for (c, t, _p) in rows_by_partition if c == cluster and rows_by_partition[(c, t, _p)]}
    for t in s.snapshot.topics:
        if t.topic not in logged_topics:
            count = t.partition_count or sum(1 for d in s.snapshot.partitions if d.topic == t.topic)
            out.append(absent_topic(s, t.topic, t.line_no, count, cluster))
    described = {(d.topic, d.partition) for d in s.snapshot.partitions}
    for d in s.snapshot.partitions:
        if d.topic in described_topics and d.topic not in logged_topics:
            continue  # reported once for its topic
        found = compare_partition(s, d, rows_by_partition.get((cluster, d.topic, d.partition), []), lag, skew, cluster)
        if found is not None:
            out.append(found)
    for row in alive_at:
        key = (row["topic"], row["partition"])
        if row["topic"] in described_topics and key not in described and row.get("state") not in GONE:
            out.append(missing_from_snapshot(s, row, described_topics[row["topic"]].line_no))
    if other_total:
        out.append(topics_not_in_snapshot(s, other_topics, other_total, cluster))
    quorum = compare_quorum(s, controller, cluster)
    if quorum is not None:
        out.append(quorum)
    return out


def needed_rows(rows: Sequence[dict], s: SnapshotAt, lag: timedelta, skew: timedelta) -> list[dict]:
    """Of one partition's effective rows, the few ``compare_partition`` reads: its first row, the rows around T,
    and its state at T (the Spark job collects exactly these)."""
    rows = [r for r in rows if r["ts_start"] is not None and r["ts_start"] <= s.at + skew]
    if not rows:
        return []
    keep = {min(rows, key=lambda r: r["seq"])["seq"]}
    keep |= {r["seq"] for r in rows if _covers(r, s.at - lag, s.at + skew)}
    current = _state_at(rows, s.at)
    if current is not None:
        keep.add(current["seq"])
    return [r for r in rows if r["seq"] in keep]


def snapshot_inputs(partition_rows: Iterable[dict], s: SnapshotAt, lag: timedelta, skew: timedelta):
    """What ``compare_snapshot`` needs, from in-memory timeline rows (``jobs/final_state_job`` computes the same):
    (rows by (cluster, topic, partition) of the described topics, their states at T, per cluster the topics
    alive at T the snapshot does not list as (name, first line) and their number)."""
    from .impact import effective_rows

    grouped: dict[tuple[str, str, int], list[dict]] = {}
    for r in partition_rows:
        grouped.setdefault((r["cluster"], r["topic"], r["partition"]), []).append(r)
    described = {d.topic for d in s.snapshot.partitions} | {t.topic for t in s.snapshot.topics}
    rows_by_partition: dict[tuple[str, str, int], list[dict]] = {}
    alive: list[dict] = []
    others: dict[str, dict[str, tuple]] = {}
    for key, rows in sorted(grouped.items()):
        eff = effective_rows(rows)
        current = _state_at([r for r in eff if r["ts_start"] is not None], s.at)
        if key[1] in described:
            rows_by_partition[key] = needed_rows(eff, s, lag, skew)
            if current is not None:
                alive.append(current)
        elif current is not None and current.get("state") not in GONE:
            first = min(
                (r for r in eff if r["ts_start"] is not None and r["ts_start"] <= s.at + skew), key=lambda r: r["seq"]
            )
            seen = others.setdefault(key[0], {})
            candidate = (first["ts_start"], first["cause"])
            if key[1] not in seen or candidate < seen[key[1]]:
                seen[key[1]] = candidate
    other_topics = {
        c: [(t, v[1]) for t, v in sorted(topics.items())][:MAX_NAMED_TOPICS] for c, topics in others.items()
    }
    return rows_by_partition, alive, other_topics, {c: len(t) for c, t in others.items()}


def snapshot_clusters(logged: Iterable[str], totals: dict[str, int], clusters: Iterable[str]) -> list[str]:
    """The clusters one snapshot is compared with: those with rows of a described partition up to T + skew
    (``logged``) or topics alive at T it does not list (``totals``); without either, every cluster of the
    replay (the snapshot shows what the logs do not), or the one unnamed cluster."""
    known = sorted(clusters)
    chosen = set(logged) | {c for c, n in totals.items() if n}
    if not chosen:
        return known or [""]
    return sorted(chosen | ({""} if not known else set()))


def compare_clusters(
    s: SnapshotAt,
    rows_by_partition: dict[tuple[str, str, int], list[dict]],
    alive_at: Sequence[dict],
    other_topics: dict[str, list[tuple[str, str]]],
    other_totals: dict[str, int],
    contexts: dict,
    lag: timedelta,
    skew: timedelta,
) -> list[Finding]:
    """``compare_snapshot`` for every cluster the snapshot is compared with (``snapshot_clusters``); the inputs
    as ``snapshot_inputs`` gives them (``contexts``: ``ClusterContext`` per cluster, for the controller at T)."""
    out: list[Finding] = []
    logged = {key[0] for key, kept in rows_by_partition.items() if kept}
    for cluster in snapshot_clusters(logged, other_totals, contexts):
        ctx = contexts.get(cluster)
        out += compare_snapshot(
            s,
            rows_by_partition,
            [r for r in alive_at if r["cluster"] == cluster],
            other_topics.get(cluster, []),
            other_totals.get(cluster, 0),
            ctx.controller_at(s.at) if ctx else None,
            lag,
            skew,
            cluster,
        )
    return out


def snapshot_findings(
    partition_rows: Iterable[dict], contexts: dict, snapshots: Sequence[SnapshotAt], lag: timedelta, skew: timedelta
) -> list[Finding]:
    """Every finding of ``snapshots`` against in-memory timeline rows; ``jobs/final_state_job.final_state_findings``
    is the Spark twin (it collects only the rows ``snapshot_inputs`` keeps)."""
    rows = list(partition_rows)
    out: list[Finding] = []
    for s in snapshots:
        by_partition, alive, others, totals = snapshot_inputs(rows, s, lag, skew)
        out += compare_clusters(s, by_partition, alive, others, totals, contexts, lag, skew)
    return out


__all__ = [
    "DESCRIBE_LAG_SECONDS",
    "RULE",
    "SnapshotAt",
    "compare_clusters",
    "compare_partition",
    "compare_quorum",
    "compare_snapshot",
    "needed_rows",
    "snapshot_clusters",
    "snapshot_findings",
    "snapshot_inputs",
]
