"""The tables the commands print, as ``output.Listing`` objects: their stable names and columns.

Each builder turns what a job returned into rows of plain values; ``output.emit`` prints them as a
table, text, json or csv. The column names here are the documented contract of ``--format json|csv``
(README "Output formats"): add columns at the end, never rename one.
"""

from __future__ import annotations

from typing import Optional

from kafka_forensics.core.tables import FINDING_LISTING_COLUMNS

from .output import Listing, human, log_time, one_line

FINDING_COLUMNS = FINDING_LISTING_COLUMNS


def where_of(r: dict) -> str:
    """Where a finding is: ``topic-partition`` (``replica N``), or ``cluster``."""
    where = f"{r['topic']}-{r['partition']}" if r.get("topic") is not None else "cluster"
    if r.get("replica") is not None:
        where += f" replica {r['replica']}"
    return where


def epochs_of(r: dict) -> str:
    first, last = r.get("controller_epoch"), r.get("controller_epoch_end")
    return f"epoch {human(first)}" if last in (None, first) else f"epochs {first}..{last}"


def _finding_text(r: dict, lines: int = 5) -> str:
    evidence = list(r.get("evidence") or [])
    more = max(int(r.get("evidence_count") or 0), len(evidence)) - min(len(evidence), lines)
    cited = " ".join(evidence[:lines]) + (f" (+{more} more)" if more > 0 else "")
    return "\t".join(
        [
            r["severity"],
            r["rule"],
            one_line(where_of(r)),
            epochs_of(r),
            f"{log_time(r.get('ts'))}..{log_time(r.get('ts_end'))}",
            one_line(r.get("summary") or ""),
            f"evidence: {cited}",
        ]
    )


def findings_listing(rows: list[dict], title: Optional[str] = None) -> Listing:
    """The findings list of ``replay``, ``analyze`` and ``timeline``: one row per episode."""
    return Listing(
        name="findings",
        columns=FINDING_COLUMNS,
        rows=rows,
        title=title,
        text=_finding_text,
    )


# ---- describe ----------------------------------------------------------------------------------
DESCRIBE_COLUMNS = (
    "cluster",
    "topic",
    "partition",
    "leader",
    "replicas",
    "isr",
    "leader_epoch",
    "controller_epoch",
    "state",
    "since",
    "evidence",
    "known",
)
DESCRIBE_LABELS = {
    "cluster": "Cluster",
    "topic": "Topic",
    "partition": "Partition",
    "leader": "Leader",
    "replicas": "Replicas",
    "isr": "Isr",
    "leader_epoch": "LeaderEpoch",
    "controller_epoch": "ControllerEpoch",
    "state": "State",
    "since": "Since",
    "evidence": "Evidence",
    "known": "Known",
}


def _leader_text(leader) -> str:
    """kafka-topics prints ``Leader: none`` for a partition without a leader (-1)."""
    return "none" if leader is not None and leader < 0 else human(leader)


def _describe_text(r: dict) -> str:
    """``Topic: t<TAB>Partition: 0<TAB>Leader: 2<TAB>Replicas: 1,2,3<TAB>Isr: 2,3`` (kafka-topics
    --describe, T:tools/TopicCommand.java@3.9.0-rc3:357-362, K:admin/TopicCommand.scala@2.4.1:143-144) plus the
    epochs, the state, since when and the ``file:line`` that says so."""
    tail = [f"Cluster: {one_line(r['cluster'])}"] if r.get("cluster") else []
    if not r.get("known"):
        return "\t".join(
            [
                f"Topic: {one_line(r['topic'])}",
                f"Partition: {r['partition']}",
                "Leader: unknown",
                f"FirstLine: {log_time(r.get('since'))}",
                f"Evidence: {r.get('evidence')}",
            ]
            + tail
        )
    return "\t".join(
        [
            f"Topic: {one_line(r['topic'])}",
            f"Partition: {r['partition']}",
            f"Leader: {_leader_text(r.get('leader'))}",
            f"Replicas: {human(r.get('replicas'))}",
            f"Isr: {human(r.get('isr'))}",
            f"LeaderEpoch: {human(r.get('leader_epoch'))}",
            f"ControllerEpoch: {human(r.get('controller_epoch'))}",
            f"State: {human(r.get('state'))}",
            f"Since: {log_time(r.get('since'))}",
            f"Evidence: {one_line(human(r.get('evidence')))}",
        ]
        + tail
    )


def describe_listing(at, rows: list[dict], later: list[dict], contexts: dict, last=None) -> Listing:
    """What ``kafka-topics --describe`` would have printed at ``at``; partitions whose first line
    comes later are listed as unknown (``known`` false) rather than left out."""
    notes = [f"as the logs say at {log_time(at)} UTC"]
    if last is not None and at > last:
        notes.append(
            f"note: the last state change in the logs is at {log_time(last)}; later changes, if any, are not in these logs"
        )
    if not rows and not later:
        notes.append("the logs say nothing about any partition at that instant: cannot know")
    out = []
    for cluster in sorted({r["cluster"] for r in rows + later}):
        ctx = contexts.get(cluster)
        ctrl = ctx.controller_at(at) if ctx else None
        if ctrl is None:
            ctrl_text = "controller unknown at that instant"
        else:
            who = "unknown (only the metadata log dates it)" if ctrl.controller_id is None else ctrl.controller_id
            ctrl_text = f"controller {who}, epoch {ctrl.controller_epoch} (since {log_time(ctrl.ts_start)})"
        notes.append(("" if not cluster else f"cluster {cluster}: ") + ctrl_text)
        for r in (x for x in rows if x["cluster"] == cluster):
            out.append(
                {
                    "cluster": cluster,
                    "topic": r["topic"],
                    "partition": r["partition"],
                    "leader": r["leader"],
                    "replicas": r["replicas"],
                    "isr": r["isr"],
                    "leader_epoch": r["leader_epoch"],
                    "controller_epoch": ctrl.controller_epoch if ctrl else r["controller_epoch"],
                    "state": r["state"],
                    "since": r["ts_start"],
                    "evidence": r["cause"],
                    "known": True,
                }
            )
        for r in (x for x in later if x["cluster"] == cluster):
            out.append(
                {
                    "cluster": cluster,
                    "topic": r["topic"],
                    "partition": r["partition"],
                    "since": r["first"],
                    "evidence": "cannot know: no earlier line",
                    "known": False,
                }
            )
    return Listing(
        name="partitions", columns=DESCRIBE_COLUMNS, rows=out, notes=notes, text=_describe_text, labels=DESCRIBE_LABELS
    )


# ---- timeline ----------------------------------------------------------------------------------
INTERVAL_COLUMNS = (
    "cluster",
    "topic",
    "partition",
    "seq",
    "ts_start",
    "state",
    "leader",
    "isr",
    "replicas",
    "leader_epoch",
    "partition_epoch",
    "controller_epoch",
    "cause",
    "cause_event_type",
    "cause_line",
)
REPLICA_COLUMNS = (
    "cluster",
    "topic",
    "partition",
    "replica",
    "seq",
    "ts_start",
    "state",
    "controller_epoch",
    "cause",
    "cause_event_type",
    "cause_line",
)


def _quoted(lines: dict, ref: str) -> str:
    text = one_line((lines.get(ref) or "").strip())
    return text[:197] + "..." if len(text) > 200 else text


def timeline_listings(
    topic: str, partition: int, rows: list[dict], replicas: list[dict], findings: list[dict], lines: dict
) -> list[Listing]:
    """One partition's state intervals, its replicas' intervals and its findings."""
    notes = [] if rows or replicas or findings else [f"no line of these logs says anything about {topic}-{partition}"]
    intervals = [{**r, "cause_line": _quoted(lines, r["cause"])} for r in rows]
    reps = [{**r, "cause_line": _quoted(lines, r["cause"])} for r in replicas]
    return [
        Listing(
            name="partition_intervals",
            columns=INTERVAL_COLUMNS,
            rows=intervals,
            title=f"{topic}-{partition}: partition state intervals",
            notes=notes,
        ),
        Listing(
            name="replica_intervals",
            columns=REPLICA_COLUMNS,
            rows=reps,
            title=f"{topic}-{partition}: replica state intervals",
        ),
        findings_listing(findings, title=f"{topic}-{partition}: {len(findings)} finding(s)"),
    ]


# ---- story -------------------------------------------------------------------------------------
STORY_COLUMNS = ("cluster", "ts", "kind", "sentence", "evidence")


def _story_text(r: dict) -> str:
    cluster = f"[{one_line(r['cluster'])}] " if r.get("cluster") else ""
    return f"{log_time(r.get('ts'))}\t{cluster}{one_line(r['sentence'])}\t({' '.join(r['evidence'])})"


def story_listing(stories: list) -> Listing:
    """The incident in order and in words (``replay.story``): one sentence per row with its lines."""
    rows = [s.to_row() for story in stories for s in story.sentences]
    notes = [n for story in stories for n in story.notes()]
    if not rows:
        notes.append("these logs tell no story: no controller, broker, election or finding")
    return Listing(name="story", columns=STORY_COLUMNS, rows=rows, notes=notes, text=_story_text, title="the incident")


__all__ = [
    "DESCRIBE_COLUMNS",
    "FINDING_COLUMNS",
    "INTERVAL_COLUMNS",
    "REPLICA_COLUMNS",
    "STORY_COLUMNS",
    "describe_listing",
    "findings_listing",
    "story_listing",
    "timeline_listings",
]
