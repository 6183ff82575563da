"""The incident in order and in words: what a post-mortem reads first, each sentence citing its lines.

A story is told from what the replay already knows, never from the raw input, so it stays small
whatever the logs' size:

- controller changes: the ``ControllerInterval`` of each epoch, with the reason Kafka logged for the
  change (the previous controller's ZooKeeper session expiry, resignation or "controller moved", a
  KRaft quorum election), else the previous controller leaving the live brokers, else "no reason";
- broker deaths, returns, fencing and controlled shutdowns: the ``BrokerInterval`` transitions;
- leader elections by kind (new partition, offline, unclean, preferred, controlled shutdown,
  reassignment): each leader change of the controller-side partition timeline is classified
  (``election_kind``) and the changes of one kind, controller epoch and burst are told as one
  *round* (``ROUND_GAP_SECONDS``); the Spark job aggregates them the same way;
- findings: the first line and the last line of each episode, most severe first.

Every kind is capped (``CAPS``); what is left out is counted and said.

The lines a reason quotes (K = core/src/main/scala/kafka, M = metadata/src/main/java/org/apache/kafka):
``Session expired.`` K:zookeeper/ZooKeeperClient.scala@2.4.1:421 (``zk_session_expired``);
``Resigned`` K:controller/KafkaController.scala@2.4.1:377 (``controller_resigned``);
``Controller moved to another broker when …`` (``controller_moved``, parsers/grammar/era_1_1.lark);
``Renouncing the leadership due to a metadata log event …`` and ``In the new epoch {}, the leader is {}.``
M:controller/QuorumController.java@3.9.0-rc3:1172,1185 (``kraft_leadership_renounced``, ``kraft_new_epoch``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Iterable, Optional, Sequence

from .cluster import ALIVE, DEAD, FENCED, REASON_LINE_TYPES, SHUTTING_DOWN, ClusterContext, ControllerInterval
from .findings import format_ts, severity_rank

# Lines that say why a controller stopped being one, and the words for each.
REASON_TYPES: dict[str, str] = {
    "zk_session_expired": "its ZooKeeper session expired",
    "controller_resigned": "it resigned as controller",
    "controller_moved": "it found the controller had moved to another broker",
    "kraft_leadership_renounced": "it renounced the leadership (KRaft)",
}
QUORUM_ELECTION_TYPES = REASON_LINE_TYPES - frozenset(REASON_TYPES)  # "In the new epoch E, the leader is N"
REASON_LATE = timedelta(seconds=120)  # a deposed controller may log its expiry well after the new election

# Partition-timeline rows written from the controller's side (its decisions, its requests, metadata
# records): a leader change among them is an election. Broker views repeat them and are not counted.
CONTROLLER_SOURCES = ("decision", "controller_view", "metadata")

NEW_PARTITION, OFFLINE, UNCLEAN, PREFERRED = "new_partition", "offline", "unclean", "preferred"
CONTROLLED_SHUTDOWN, REASSIGNMENT, LEADER_CHANGE = "controlled_shutdown", "reassignment", "leader_change"
ELECTION_KINDS = (NEW_PARTITION, OFFLINE, UNCLEAN, PREFERRED, CONTROLLED_SHUTDOWN, REASSIGNMENT, LEADER_CHANGE)
_ELECTION_WORDS = {
    NEW_PARTITION: "elected the first leader of {n} new partition(s)",
    OFFLINE: "elected new leaders for {n} partition(s) whose leader was gone (offline election)",
    UNCLEAN: "made {n} UNCLEAN election(s): a leader from outside the ISR, committed data may be lost",
    PREFERRED: "moved {n} partition(s) back to their preferred leader (preferred election)",
    CONTROLLED_SHUTDOWN: "moved the leadership of {n} partition(s) off a broker in controlled shutdown "
    "(controlled-shutdown election)",
    REASSIGNMENT: "elected leaders for {n} partition(s) whose replicas were reassigned (reassignment election)",
    LEADER_CHANGE: "changed the leader of {n} partition(s) (no election kind the logs show)",
}
ROUND_GAP_SECONDS = 10.0  # leader changes of one kind and epoch further apart than this are another round
ROUND_SAMPLE = 5  # partitions named per round

STORY_JSON = "story.json"  # the story of a replay output directory
CONTROLLER, BROKER, SHUTDOWN, ELECTION, FINDING = "controller", "broker", "controlled_shutdown", "election", "finding"
KINDS = (CONTROLLER, BROKER, SHUTDOWN, ELECTION, FINDING)
CAPS = {CONTROLLER: 20, BROKER: 30, SHUTDOWN: 10, ELECTION: 8, FINDING: 20}  # ELECTION: rounds per election kind


@dataclass(frozen=True)
class Sentence:
    ts: Optional[datetime]
    kind: str
    text: str
    evidence: tuple[str, ...]
    cluster: str = ""

    def to_row(self) -> dict:
        return {
            "cluster": self.cluster,
            "ts": self.ts,
            "kind": self.kind,
            "sentence": self.text,
            "evidence": list(self.evidence),
        }


@dataclass
class Story:
    cluster: str = ""
    sentences: list[Sentence] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)  # kind -> how many were not told

    def notes(self) -> list[str]:
        label = f"cluster {self.cluster}: " if self.cluster else ""
        out = []
        for kind, n in self.left_out.items():
            if n:
                out.append(f"{label}{n} more {kind.replace('_', ' ')} sentence(s) left out (at most {_cap(kind)})")
        return out


def _cap(kind: str) -> int:
    return CAPS.get(kind.split(":", 1)[0], CAPS[ELECTION])


# ---- elections -----------------------------------------------------------------------------------
def election_kind(prev: Optional[dict], cur: dict, ctx: Optional[ClusterContext]) -> Optional[str]:
    """The kind of the election that made ``cur`` (a controller-side partition-timeline row), given the
    partition's state just before it (``prev``: its previous row of any source, whose ``leader`` is
    the last leader the controller set); None when ``cur`` names no new leader.

    Kafka's kinds (K:controller/PartitionStateMachine.scala@2.4.1 ``PartitionLeaderElectionStrategy``:
    Offline, Reassign, PreferredReplica, ControlledShutdown; unclean = offline with a leader outside
    the ISR, K:controller/Election.scala@2.4.1 ``leaderForOffline``): a first leader is a new
    partition's; a leader outside the ISR just before is unclean; new replicas mean a reassignment; a
    previous leader gone (offline state, -1, dead or fenced broker) an offline election; a previous
    leader in controlled shutdown a controlled-shutdown election; a move to the first assigned replica
    a preferred election."""
    leader = cur.get("leader")
    if leader is None or leader < 0:
        return None
    prev_leader = None if prev is None else prev.get("leader")
    if prev is not None and prev_leader == leader:
        return None
    if prev is None or prev_leader is None or prev.get("state") == "NewPartition":
        return NEW_PARTITION
    if _unclean(prev, cur):
        return UNCLEAN
    if prev.get("replicas") is not None and cur.get("replicas") is not None:
        if list(prev["replicas"]) != list(cur["replicas"]):
            return REASSIGNMENT
    if prev.get("state") == "OfflinePartition" or prev_leader < 0:
        return OFFLINE
    state = ctx.broker_state_at(prev_leader, cur.get("ts_start"))[0] if ctx is not None else None
    if state in (DEAD, FENCED):
        return OFFLINE
    if state == SHUTTING_DOWN:
        return CONTROLLED_SHUTDOWN
    replicas = cur.get("replicas") or prev.get("replicas")
    if replicas and leader == replicas[0]:
        return PREFERRED
    return LEADER_CHANGE


def _unclean(prev: dict, cur: dict) -> bool:
    """A leader from outside the ISR: Kafka said so (``No broker in ISR is alive … There's potential data
    loss``, K:controller/PartitionLeaderSelector.scala@0.10.2.2:79), the leader is RECOVERING (only an
    unclean election marks it, KIP-704), or the leader is not in the ISR just before. An empty ISR counts
    in ZooKeeper mode only: in KRaft a leader may come from the ELR with an empty ISR (KIP-966)."""
    if cur.get("state") == "RecoveringPartition" or cur.get("cause_event_type") == "unclean_leader_election":
        return True
    isr = prev.get("isr")
    if isr is None:
        return False
    if len(isr) == 0:
        return cur.get("source") != "metadata"
    return cur["leader"] not in isr


def state_before(previous_row: Optional[dict], controller_leader: Optional[int]) -> Optional[dict]:
    """The partition just before a controller-side row: its previous row of any source (the ISR a
    leader's expansion or shrink wrote counts), with the last leader the controller itself set."""
    if previous_row is None:
        return None
    return {**previous_row, "leader": controller_leader}


def leader_changes(rows: Iterable[dict], ctx: Optional[ClusterContext]) -> list[dict]:
    """The elections of one partition's timeline rows (in ``seq`` order), each with its kind."""
    out: list[dict] = []
    previous_row: Optional[dict] = None
    controller_leader: Optional[int] = None
    for row in rows:
        if row.get("source") in CONTROLLER_SOURCES:
            prev = state_before(previous_row, controller_leader)
            kind = election_kind(prev, row, ctx)
            if kind is not None:
                out.append({**row, "kind": kind, "prev_leader": None if prev is None else prev.get("leader")})
            controller_leader = row.get("leader")
        previous_row = row
    return out


def election_rounds(changes: Iterable[dict]) -> list[dict]:
    """Changes of one (cluster, kind, controller epoch) closer than ``ROUND_GAP_SECONDS`` form a round:
    ``{cluster, kind, controller_epoch, ts, ts_end, n, first_ref, last_ref, sample}`` (the in-process
    twin of ``jobs/story_job.election_rounds``)."""
    groups: dict[tuple, list[dict]] = {}
    for c in changes:
        if c.get("ts_start") is None:
            continue
        groups.setdefault((c.get("cluster") or "", c["kind"], c.get("controller_epoch")), []).append(c)
    rounds = []
    for (cluster, kind, epoch), group in groups.items():
        group.sort(key=lambda c: (c["ts_start"], c["topic"], c["partition"]))
        current: list[dict] = []
        for c in group:
            if current and (c["ts_start"] - current[-1]["ts_start"]).total_seconds() > ROUND_GAP_SECONDS:
                rounds.append(_round(cluster, kind, epoch, current))
                current = []
            current.append(c)
        if current:
            rounds.append(_round(cluster, kind, epoch, current))
    return sorted(rounds, key=lambda r: (r["cluster"], r["ts"], r["kind"]))


def _round(cluster: str, kind: str, epoch: Optional[int], changes: list[dict]) -> dict:
    by_time = sorted(changes, key=lambda c: (c["ts_start"], c["cause"]))
    return {
        "cluster": cluster,
        "kind": kind,
        "controller_epoch": epoch,
        "ts": by_time[0]["ts_start"],
        "ts_end": by_time[-1]["ts_start"],
        "n": len(changes),
        "first_ref": by_time[0]["cause"],
        "last_ref": by_time[-1]["cause"],
        "sample": [
            {"topic": c["topic"], "partition": c["partition"], "leader": c["leader"], "prev_leader": c["prev_leader"]}
            for c in sorted(changes, key=lambda c: (c["ts_start"], c["topic"], c["partition"]))[:ROUND_SAMPLE]
        ],
    }


# ---- sentences -----------------------------------------------------------------------------------
def _t(ts: Optional[datetime]) -> str:
    return "?" if ts is None else ts.strftime("%H:%M:%S.") + f"{ts.microsecond // 1000:03d}"


def _ref(line: dict) -> str:
    return f"{line['source_file']}:{line['line_no']}"


def _who(line: dict) -> Optional[int]:
    return line.get("controller_id") if line.get("controller_id") is not None else line.get("broker")


def _controller_sentences(ctx: ClusterContext, lines: Sequence[dict]) -> list[Sentence]:
    out = []
    ordered = sorted(
        (c for c in ctx.controllers if c.ts_start is not None), key=lambda c: (c.ts_start, c.controller_epoch)
    )
    for i, c in enumerate(ordered):
        prev = ordered[i - 1] if i else None
        who = "an unnamed controller" if c.controller_id is None else f"broker {c.controller_id}"
        text = f"{who} became the controller (epoch {c.controller_epoch})"
        evidence = list(c.evidence[:1])
        if prev is None:
            text += ", the first controller these logs show"
        else:
            if prev.controller_id is not None and prev.controller_id != c.controller_id:
                text += f", taking over from broker {prev.controller_id}"
            reason, refs = _reason(ctx, prev, c, lines)
            text += f": {reason}"
            evidence += [r for r in refs if r not in evidence]
        if not c.elected:
            text += " (no election line: known from its own actions)"
        out.append(Sentence(c.ts_start, CONTROLLER, text, tuple(evidence), ctx.cluster))
    return out


def _reason(ctx: ClusterContext, prev: ControllerInterval, cur: ControllerInterval, lines: Sequence[dict]):
    """Why ``prev`` stopped being controller, as Kafka logged it (see the module docstring)."""
    assert cur.ts_start is not None
    quorum = [
        line
        for line in lines
        if line["event_type"] in QUORUM_ELECTION_TYPES and line.get("controller_epoch") == cur.controller_epoch
    ]
    said = []
    if prev.controller_id is not None and prev.ts_start is not None:
        said = [
            line
            for line in lines
            if line["event_type"] in REASON_TYPES
            and _who(line) == prev.controller_id
            and prev.ts_start <= line["ts"] <= cur.ts_start + REASON_LATE
        ]
    parts, refs = [], []
    if quorum:
        parts.append(f"a KRaft quorum election (Raft epoch {cur.controller_epoch})")
        refs.append(_ref(quorum[0]))
    if said:
        line = said[0]
        late = (line["ts"] - cur.ts_start).total_seconds()
        when = f" ({late:.1f} s after the new election)" if late > 0.5 else ""
        parts.append(f"broker {prev.controller_id} logged that {REASON_TYPES[line['event_type']]}{when}")
        refs.append(_ref(line))
    if parts:
        return "; ".join(parts), refs
    gone = _left_live_brokers(ctx, prev, cur)
    if gone is not None:
        return (
            f"the logs give no reason from broker {prev.controller_id}, which was {gone.state} "
            f"from {_t(gone.ts_start)} (it left the live brokers)",
            [gone.evidence],
        )
    return "the logs give no reason (no resignation, session expiry or quorum election line)", []


def _left_live_brokers(ctx: ClusterContext, prev: ControllerInterval, cur: ControllerInterval):
    if prev.controller_id is None or cur.ts_start is None or prev.ts_start is None:
        return None
    for b in ctx.brokers:
        if (
            b.broker == prev.controller_id
            and b.state in (DEAD, FENCED)
            and b.ts_start is not None
            and prev.ts_start <= b.ts_start <= cur.ts_start + REASON_LATE
        ):
            return b
    return None


REJOIN_SECONDS = (
    1.0  # a return undone this fast is one rejoin (a restarted KRaft broker registers fenced, then is unfenced)
)


def _broker_sentences(ctx: ClusterContext) -> list[Sentence]:
    """Transitions only: a broker's first interval is how the logs first see it (startup), not news. A
    return followed within ``REJOIN_SECONDS`` by another departure is one rejoin, told once when it
    lasts (with what was logged in between: a restarted KRaft controller replays old records)."""
    out: list[Sentence] = []
    by_broker: dict[int, list] = {}
    for b in ctx.brokers:
        by_broker.setdefault(b.broker, []).append(b)
    for broker, intervals in sorted(by_broker.items()):
        seen_alive, gone_since = False, None
        back: Optional[tuple[list[Sentence], datetime]] = None  # told since the last return, and when it had left
        for i, b in enumerate(intervals):
            if b.state == SHUTTING_DOWN:
                if i > 0 and intervals[i - 1].state != ALIVE:
                    # Only a live broker shuts down in a controlled way (K:controller/KafkaController.scala@2.4.1:1191;
                    # a fenced one gets an immediate shutdown, M:controller/BrokerHeartbeatManager.java@3.9.0-rc3:
                    # 544-572): this is an old record a restarted KRaft controller replays into its log.
                    continue
                told = Sentence(
                    b.ts_start, SHUTDOWN, f"broker {broker} began a controlled shutdown", (b.evidence,), ctx.cluster
                )
                out.append(told)
                if back is not None:
                    back[0].append(told)
            elif b.state == ALIVE:
                if seen_alive and gone_since is not None and b.ts_start is not None:
                    away = (b.ts_start - gone_since).total_seconds()
                    told = Sentence(
                        b.ts_start,
                        BROKER,
                        f"broker {broker} came back ({away:.1f} s after it left)",
                        (b.evidence,),
                        ctx.cluster,
                    )
                    out.append(told)
                    back = ([told], gone_since)
                seen_alive, gone_since = True, None
            elif b.state in (DEAD, FENCED) and i > 0 and seen_alive and gone_since is None:
                returned = None if back is None else back[0][0].ts
                if returned is not None and b.ts_start is not None:
                    if (b.ts_start - returned).total_seconds() < REJOIN_SECONDS:
                        assert back is not None
                        for told in back[0]:
                            out.remove(told)  # not back yet: still rejoining since the earlier departure
                        gone_since, back = back[1], None
                        continue
                back = None
                gone_since = b.ts_start
                what = (
                    "left the live brokers (died or lost its ZooKeeper session)"
                    if b.state == DEAD
                    else "was fenced by the controller"
                )
                out.append(Sentence(b.ts_start, BROKER, f"broker {broker} {what}", (b.evidence,), ctx.cluster))
    return out


def _election_sentences(ctx: ClusterContext, rounds: Sequence[dict]) -> list[Sentence]:
    out = []
    for r in rounds:
        interval = ctx.interval_of_epoch(r.get("controller_epoch"))
        who = (
            f"controller {interval.controller_id} (epoch {r['controller_epoch']})"
            if interval is not None and interval.controller_id is not None
            else f"the controller of epoch {r.get('controller_epoch')}"
        )
        named = ", ".join(
            f"{s['topic']}-{s['partition']} -> {s['leader']}"
            + (f" (was {_leader(s['prev_leader'])})" if s.get("prev_leader") is not None else "")
            for s in r["sample"]
        )
        more = r["n"] - len(r["sample"])
        span = f" from {_t(r['ts'])} to {_t(r['ts_end'])}" if r["ts_end"] != r["ts"] else ""
        text = f"{who} {_ELECTION_WORDS[r['kind']].format(n=r['n'])}{span}: {named}" + (
            f" and {more} more" if more > 0 else ""
        )
        refs = (r["first_ref"],) if r["first_ref"] == r["last_ref"] else (r["first_ref"], r["last_ref"])
        out.append(Sentence(r["ts"], f"{ELECTION}:{r['kind']}", text, refs, ctx.cluster))
    return out


def _leader(leader: int) -> str:
    return "none" if leader < 0 else str(leader)


def _where(f: dict) -> str:
    where = f"{f['topic']}-{f['partition']}" if f.get("topic") is not None else "the cluster"
    return where + (f" replica {f['replica']}" if f.get("replica") is not None else "")


def _finding_sentences(findings: Sequence[dict], cluster: str) -> list[Sentence]:
    out = []
    for f in findings:
        evidence = list(f.get("evidence") or [])
        if not evidence:
            continue
        out.append(
            Sentence(
                f.get("ts"),
                FINDING,
                f"{f['severity']} finding {f['rule']} on {_where(f)} begins: {f['summary']}",
                (evidence[0],),
                cluster,
            )
        )
        complete = int(f.get("evidence_count") or len(evidence)) == len(evidence)
        if f.get("ts_end") is not None and f.get("ts") is not None and f["ts_end"] > f["ts"] and len(evidence) > 1:
            note = "" if complete else f" (the finding cites {len(evidence)} of its {f['evidence_count']} lines)"
            out.append(
                Sentence(
                    f["ts_end"],
                    FINDING,
                    f"the {f['rule']} episode on {_where(f)} ends: its last line{note}",
                    (evidence[-1],),
                    cluster,
                )
            )
    return out


def _capped(sentences: list[Sentence], kind: str, extra_left_out: int = 0) -> tuple[list[Sentence], int]:
    cap = _cap(kind)
    return sentences[:cap], max(len(sentences) - cap, 0) + extra_left_out


def tell(
    ctx: ClusterContext,
    rounds: Sequence[dict],
    findings: Sequence[dict],
    left_out: Optional[dict[str, int]] = None,
) -> Story:
    """The story of one cluster (its controllers, brokers and the lines that give reasons, in ``ctx``);
    ``rounds``: its election rounds (at most
    ``CAPS[ELECTION]`` per kind, the earliest); ``findings``: its most severe findings (rows of the
    findings table, at most ``CAPS[FINDING]``); ``left_out``: what the caller already left out per kind."""
    story = Story(cluster=ctx.cluster, left_out=dict(left_out or {}))
    told: list[Sentence] = []
    ordered_lines = sorted((x for x in ctx.reason_lines if x.get("ts") is not None), key=lambda x: (x["ts"], _ref(x)))
    for kind, made in (
        (CONTROLLER, _controller_sentences(ctx, ordered_lines)),
        (BROKER, [s for s in _broker_sentences(ctx) if s.kind == BROKER]),
        (SHUTDOWN, [s for s in _broker_sentences(ctx) if s.kind == SHUTDOWN]),
    ):
        made.sort(key=lambda s: (s.ts is None, s.ts or datetime.min, s.evidence))
        kept, dropped = _capped(made, kind)
        told += kept
        if dropped:
            story.left_out[kind] = story.left_out.get(kind, 0) + dropped
    by_kind: dict[str, list[dict]] = {}
    for r in sorted(rounds, key=lambda r: (r["ts"], r["kind"])):
        by_kind.setdefault(r["kind"], []).append(r)
    for kind, group in by_kind.items():
        kept_rounds = group[: _cap(ELECTION)]
        told += _election_sentences(ctx, kept_rounds)
        if len(group) > len(kept_rounds):
            key = f"{ELECTION}:{kind}"
            story.left_out[key] = story.left_out.get(key, 0) + len(group) - len(kept_rounds)
    chosen = sorted(
        findings,
        key=lambda f: (severity_rank(f["severity"]), f.get("ts") is None, f.get("ts") or 0, f.get("finding_id") or ""),
    )
    kept_findings = chosen[: CAPS[FINDING]]
    if len(chosen) > len(kept_findings):
        story.left_out[FINDING] = story.left_out.get(FINDING, 0) + len(chosen) - len(kept_findings)
    told += _finding_sentences(kept_findings, ctx.cluster)
    order = {k: i for i, k in enumerate(KINDS)}
    story.sentences = sorted(
        told,
        key=lambda s: (s.ts is None, s.ts or datetime.min, order.get(s.kind.split(":", 1)[0], 9), s.evidence, s.text),
    )
    story.left_out = {k: v for k, v in sorted(story.left_out.items()) if v}
    return story


def story_document(told: list[Story]) -> dict:
    """What ``DIR/story.json`` holds: the sentences in order and what was left out, per cluster."""
    return {
        "format": "kafka-forensics-story/1",
        "clusters": [
            {
                "cluster": story.cluster,
                "sentences": [{**s.to_row(), "ts": format_ts(s.ts)} for s in story.sentences],
                "left_out": story.left_out,
                "notes": story.notes(),
            }
            for story in told
        ],
    }


def story_json(told: list[Story]) -> str:
    """The text of ``DIR/story.json``."""
    return json.dumps(story_document(told), indent=1, sort_keys=True)


def tell_local(
    contexts: dict[str, ClusterContext], partition_intervals: Iterable[dict], findings: Iterable[dict]
) -> list[Story]:
    """Every cluster's story from an in-process replay (``replay.local.replay_all``): the twin of
    ``jobs/story_job.stories`` for tests and small inputs."""
    per_partition: dict[tuple, list[dict]] = {}
    for row in partition_intervals:
        per_partition.setdefault((row.get("cluster") or "", row["topic"], row["partition"]), []).append(row)
    changes = []
    for key in sorted(per_partition):
        rows = sorted(per_partition[key], key=lambda r: r["seq"])
        changes += leader_changes(rows, contexts.get(key[0]))
    rounds = election_rounds(changes)
    by_cluster: dict[str, list[dict]] = {}
    for f in findings:
        by_cluster.setdefault(f.get("cluster") or "", []).append(f)
    return [
        tell(contexts[c], [r for r in rounds if r["cluster"] == c], by_cluster.get(c, [])) for c in sorted(contexts)
    ]


__all__ = [
    "CAPS",
    "CONTROLLER_SOURCES",
    "ELECTION_KINDS",
    "ROUND_GAP_SECONDS",
    "ROUND_SAMPLE",
    "STORY_JSON",
    "Sentence",
    "Story",
    "election_kind",
    "election_rounds",
    "leader_changes",
    "story_document",
    "story_json",
    "tell",
    "tell_local",
]
