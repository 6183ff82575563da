"""The whole replay in one Python process, for a handful of lines (tests, notebooks, oracles).

It wires the same pieces the Spark job wires (``jobs/replay_job.py``): cluster contexts from the
cluster lines and per-(controller, epoch) actions, one ``replay_partition`` per partition, one
finding per group of stale-epoch refusals. The job must produce exactly these rows; a test
compares the two on the real-log corpus.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional, Sequence

from .cluster import ACTING_TYPES, ClusterContext, build_cluster_context, is_cluster_row
from .collector import rare_full_collections
from .events import compact_event, compact_events
from .findings import Finding, findings_order_key, ref_of, unique_findings
from .kraft import resolve_metadata_events
from .partition import PARTITION_EVENT_TYPES, ReplayConfig, replay_partition
from .partition_view import OFFLINE_REPLICAS_MARKED, per_partition_events
from .stale_epochs import group_key, is_stale_epoch_event, stale_epoch_finding


@dataclass
class LocalReplay:
    contexts: dict[str, ClusterContext] = field(default_factory=dict)
    partition_intervals: list[dict] = field(default_factory=list)
    replica_intervals: list[dict] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def replay_event(row: dict) -> dict:
    """A row of ``parse_file``'s events (``ts`` in microseconds, ``attrs`` as a dict) as the replay reads it
    (``events``: ``ts`` an aware UTC datetime, lists and ``attrs`` as tuples), as the Spark job's workers hand
    the events table to the replay. A copy: the parser's row is left as it was."""
    return compact_event(row, micros=True)


def replay_events(rows: Iterable[dict]) -> list[dict]:
    """``replay_event`` of every row, as dicts the cycle collector never tracks (``events.compact_events``). Under
    ``rare_full_collections``, like the replay."""
    with rare_full_collections():
        return compact_events(rows, micros=True)


def _time_key(e: dict) -> tuple:
    return (e.get("ts") is None, e.get("ts") or 0, e["source_file"], e["line_no"])


def controller_activity(events: Sequence[dict]) -> list[dict]:
    """One row per (controller_id, controller_epoch) of controller-authored lines: first/last action."""
    acts: dict[tuple, tuple[dict, dict, int]] = {}  # (epoch, id) -> (first line, last line, lines)
    # (time, file, line, position): every ts is known here, and the position keeps the sort stable. The
    # position, not the event: a tuple holding a dict is never untracked by the cycle collector (``events``)
    acting = [
        (e["ts"], e["source_file"], e["line_no"], n)
        for n, e in enumerate(events)
        if e["event_type"] in ACTING_TYPES
        and e.get("controller_id") is not None
        and e.get("controller_epoch") is not None
        and e.get("ts") is not None
    ]
    acting.sort()
    for *_, n in acting:
        e = events[n]
        key = (e["controller_epoch"], e["controller_id"])
        first, _, count = acts.get(key, (e, e, 0))
        acts[key] = (first, e, count + 1)
    return [
        {
            "controller_epoch": key[0],
            "controller_id": key[1],
            "n": n,
            "first_ts": first["ts"],
            "last_ts": last["ts"],
            "first_ref": ref_of(first),
            "last_ref": ref_of(last),
        }
        for key, (first, last, n) in sorted(acts.items())
    ]


@dataclass(frozen=True)
class Selection:
    """What the replay keeps of its input besides the lines themselves (the Spark job's options).

    ``templates``: per cluster the (broker, template) pairs that date each broker's release, when they come
    from more lines than the replayed ones (a time window still dates a broker by all its lines); None:
    from the replayed lines. ``keep_partition``: which per-partition events are replayed (``--topic``,
    ``--partitions``; the cluster story is always whole). ``stale_epochs``: whether the stale-epoch
    episodes, which name no partition, are replayed (not when only some partitions are)."""

    templates: Optional[dict[str, set]] = None
    keep_partition: Optional[Callable[[dict], bool]] = None
    stale_epochs: bool = True


EVERYTHING = Selection()


def _replay_cluster(
    cluster: str, evs: list[dict], user_version: Optional[str], skew_seconds: float, out: LocalReplay, sel: Selection
):
    """One cluster's lines, sorted in one pass into what each stage reads, then replayed."""
    cluster_lines, acting, templates = [], [], set()
    partitions: dict[tuple, list[dict]] = {}
    stale: dict[tuple, list[dict]] = {}
    for e in evs:
        event_type = e["event_type"]
        if e.get("template"):
            templates.add((e.get("broker"), e["template"]))
        if e.get("ts") is not None:
            if is_cluster_row(e):
                cluster_lines.append(e)
            if event_type in ACTING_TYPES:
                acting.append(e)
        if is_stale_epoch_event(e):
            stale.setdefault(group_key(e), []).append(e)
        elif event_type == OFFLINE_REPLICAS_MARKED:
            for p in per_partition_events(e):
                partitions.setdefault((p["topic"], p["partition"]), []).append(p)
        elif e.get("topic") is not None and e.get("partition") is not None and event_type in PARTITION_EVENT_TYPES:
            partitions.setdefault((e["topic"], e["partition"]), []).append(e)
    if sel.templates is not None:
        templates = sel.templates.get(cluster, set())
    ctx = build_cluster_context(
        cluster,
        sorted(cluster_lines, key=_time_key),
        controller_activity(acting),
        skew_seconds,
        sorted(templates, key=repr),
    )
    out.contexts[cluster] = ctx
    out.findings.extend(ctx.findings)
    cfg = ReplayConfig(cluster=cluster, user_version=user_version)
    for key in sorted(partitions):
        events = partitions[key]
        if sel.keep_partition is not None:
            events = [e for e in events if sel.keep_partition(e)]
            if not events:
                continue
        result = replay_partition(events, ctx, cfg)
        out.partition_intervals.extend(result.partition_intervals)
        out.replica_intervals.extend(result.replica_intervals)
        out.findings.extend(result.findings)
    for key in sorted(stale, key=repr) if sel.stale_epochs else ():
        out.findings.append(stale_epoch_finding(cluster, stale[key]))


def replay_all(
    events: Iterable[dict],
    cluster_of: Callable[[dict], str] = lambda e: "",
    user_version: Optional[str] = None,
    skew_seconds: float = 2.0,
    selection: Selection = EVERYTHING,
    metadata_resolved: bool = False,
) -> LocalReplay:
    """Replay every event (dicts shaped like rows of the ``events`` table, as ``replay_event`` makes them).
    ``metadata_resolved``: the caller already ran ``kraft.resolve_metadata_events`` over them."""
    with rare_full_collections():
        by_cluster: dict[str, list[dict]] = {}
        events = list(events)
        for e in events if metadata_resolved else resolve_metadata_events(events):  # KRaft: names by id, removals
            by_cluster.setdefault(cluster_of(e), []).append(e)
        out = LocalReplay()
        for cluster in sorted(by_cluster):
            _replay_cluster(cluster, by_cluster[cluster], user_version, skew_seconds, out, selection)
    out.findings = sorted(unique_findings(out.findings), key=findings_order_key)
    return out
