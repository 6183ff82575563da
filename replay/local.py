"""The whole replay in one Python process, for a handful of lines (tests, notebooks, oracles).

It wires the same pieces the Spark job wires (``jobs/replay_job.py``): cluster contexts from the
cluster lines and per-(controller, epoch) actions, one ``replay_partition`` per partition, one
finding per group of stale-epoch refusals. The job must produce exactly these rows; a test
compares the two on the real-log corpus.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from .cluster import ACTING_TYPES, ClusterContext, build_cluster_context, is_cluster_row
from .collector import rare_full_collections
from .events import compact_event, compact_events
from .findings import Finding, findings_order_key, unique_findings
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


class ControllerActivity:
    """One row per (controller_id, controller_epoch) of controller-authored lines: first/last action and how many,
    gathered one line at a time (a replay that streams its lines never holds them)."""

    def __init__(self) -> None:
        # (epoch, id) -> [first (ts, file, line), last (ts, file, line), lines]
        self._acts: dict[tuple[int, int], list] = {}

    def add(self, e: dict) -> None:
        """One line: counted if a controller's action with its id, epoch and time."""
        if e["event_type"] not in ACTING_TYPES:
            return
        epoch, cid, ts = e.get("controller_epoch"), e.get("controller_id"), e.get("ts")
        if epoch is None or cid is None or ts is None:
            return
        at = (ts, e["source_file"], e["line_no"])
        self._count((epoch, cid), at, at, 1)

    def merge(self, other: "ControllerActivity") -> None:
        """Add the lines ``other`` counted (another process's share of the same lines): the first and last are a
        minimum and a maximum, so the rows are those of one ``ControllerActivity`` that saw every line."""
        for key, (first, last, n) in other._acts.items():
            self._count(key, first, last, n)

    def _count(self, key: tuple[int, int], first: tuple, last: tuple, n: int) -> None:
        """``n`` more lines of ``key``'s controller, from ``first`` to ``last`` (time, file, line)."""
        act = self._acts.get(key)
        if act is None:
            self._acts[key] = [first, last, n]
            return
        if first < act[0]:  # equal places: the line counted first stays first, the one counted last is last
            act[0] = first
        if last >= act[1]:
            act[1] = last
        act[2] += n

    def rows(self) -> list[dict]:
        return [
            {
                "controller_epoch": epoch,
                "controller_id": cid,
                "n": n,
                "first_ts": first[0],
                "last_ts": last[0],
                "first_ref": f"{first[1]}:{first[2]}",
                "last_ref": f"{last[1]}:{last[2]}",
            }
            for (epoch, cid), (first, last, n) in sorted(self._acts.items())
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


def is_partition_line(e: dict) -> bool:
    """A line of one partition as it is, replayed in that partition's group: no cluster line, no stale-epoch
    refusal, not a line naming several partitions (``ClusterLines.add`` routes those)."""
    return (
        e.get("topic") is not None
        and e.get("partition") is not None
        and e["event_type"] in PARTITION_EVENT_TYPES
        and e["event_type"] != OFFLINE_REPLICAS_MARKED
        and not is_stale_epoch_event(e)
        and not is_cluster_row(e)
    )


class ClusterLines:
    """One cluster's lines, sorted in one pass into what each stage reads: the cluster's own lines, the
    controllers' actions and the templates (the context), each partition's lines, the stale-epoch episodes."""

    def __init__(self) -> None:
        self.cluster_lines: list[dict] = []
        self.activity = ControllerActivity()
        self.templates: set = set()
        self.partitions: dict[tuple, list[dict]] = {}
        self.stale: dict[tuple, list[dict]] = {}

    def add(self, e: dict) -> None:
        event_type = e["event_type"]
        if e.get("template"):
            self.templates.add((e.get("broker"), e["template"]))
        if e.get("ts") is not None and is_cluster_row(e):
            self.cluster_lines.append(e)
        self.activity.add(e)
        if is_stale_epoch_event(e):
            self.stale.setdefault(group_key(e), []).append(e)
        elif event_type == OFFLINE_REPLICAS_MARKED:
            for p in per_partition_events(e):
                self.partitions.setdefault((p["topic"], p["partition"]), []).append(p)
        elif e.get("topic") is not None and e.get("partition") is not None and event_type in PARTITION_EVENT_TYPES:
            self.partitions.setdefault((e["topic"], e["partition"]), []).append(e)

    def context(self, cluster: str, skew_seconds: float, templates: Optional[set] = None) -> ClusterContext:
        """The cluster's context (``templates``: the ones to date brokers by, default the lines' own)."""
        return build_cluster_context(
            cluster,
            sorted(self.cluster_lines, key=_time_key),
            self.activity.rows(),
            skew_seconds,
            sorted(self.templates if templates is None else templates, key=repr),
        )


def replay_partition_lines(
    events: list[dict], ctx: ClusterContext, cfg: ReplayConfig, sel: Selection, out: LocalReplay
) -> None:
    """One partition's lines replayed (those ``sel`` keeps), its rows and findings added to ``out``."""
    if sel.keep_partition is not None:
        events = [e for e in events if sel.keep_partition(e)]
        if not events:
            return
    result = replay_partition(events, ctx, cfg)
    out.partition_intervals.extend(result.partition_intervals)
    out.replica_intervals.extend(result.replica_intervals)
    out.findings.extend(result.findings)


def stale_epoch_findings(cluster: str, lines: ClusterLines, sel: Selection) -> list[Finding]:
    """One finding per stale-epoch episode of the cluster (none when ``sel`` replays only some partitions)."""
    return (
        [stale_epoch_finding(cluster, lines.stale[key]) for key in sorted(lines.stale, key=repr)]
        if sel.stale_epochs
        else []
    )


def _replay_cluster(
    cluster: str, evs: list[dict], user_version: Optional[str], skew_seconds: float, out: LocalReplay, sel: Selection
):
    """One cluster's lines, sorted in one pass into what each stage reads, then replayed."""
    lines = ClusterLines()
    for e in evs:
        lines.add(e)
    ctx = lines.context(cluster, skew_seconds, None if sel.templates is None else sel.templates.get(cluster, set()))
    out.contexts[cluster] = ctx
    out.findings.extend(ctx.findings)
    cfg = ReplayConfig(cluster=cluster, user_version=user_version)
    for key in sorted(lines.partitions):
        replay_partition_lines(lines.partitions[key], ctx, cfg, sel, out)
    out.findings.extend(stale_epoch_findings(cluster, lines, sel))


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
