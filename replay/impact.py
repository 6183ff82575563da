"""What an incident cost: episodes of each partition being unavailable, under-replicated or under min ISR.

The three conditions are the ones ``kafka-topics --describe`` filters on, with Kafka's own definitions
(T:tools/TopicCommand.java@3.9.0-rc3:335-353, ``PartitionDescription``; the same tests in
K:admin/TopicCommand.scala@2.4.1 before the tool moved to Java in 3.5):

* ``unavailable``      ``!hasLeader() || !liveBrokers.contains(leader)``: no leader (leader -1,
                       OfflinePartition), or a leader on a broker that is not alive (dead, or fenced
                       in KRaft) - the time between a leader's death being logged and the election;
* ``under_replicated`` ``replicationFactor - isr.size > 0``;
* ``under_min_isr``    ``!hasLeader() || isr.size < min.insync.replicas``, when min.insync.replicas is
                       known (``MinIsr``).

They are read from the replay's ``partition_timeline``. A *broker view* row (a broker repeating a
LeaderAndIsr or UpdateMetadata it received, ``partition_view``) may be a delayed echo of a state the
controller has already left: unless its (leader epoch, partition epoch) is newer than the last
controller-side row's, it counts with that row's values (its own values while no such row exists). New and deleted partitions
(``NewPartition``, ``NonExistentPartition``) are not counted.

An episode is the longest run of timeline time in which the condition holds; one still holding when
the logs end is *open*: ``ts_end`` is null and ``known_seconds`` runs to the last line of the logs, a
lower bound. This module is the pure reference (``replay/local.py``, tests); ``jobs/impact_job.py``
computes the same rows in Spark with window functions, and a test compares the two.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from itertools import pairwise
from typing import Iterable, Optional, Sequence

import numpy as np

from kafka_forensics.statemachines.states import PartitionState as P

from .cluster import DELETION_COMPLETED
from .findings import MAX_EVIDENCE
from .partition_view import BROKER_VIEW, FAILURE

UNAVAILABLE, UNDER_REPLICATED, UNDER_MIN_ISR = "unavailable", "under_replicated", "under_min_isr"
LEADER_LOST = "leader_lost"
KINDS: dict[str, str] = {
    LEADER_LOST: "the leader's broker had stopped but was not yet declared dead or fenced: from the session timeout "
    "before its logged death (the config dump's, else Kafka's largest default, 18 s; or its last logged line, if "
    "later) to that death",
    UNAVAILABLE: "no leader, or a leader on a broker that is not alive (kafka-topics --unavailable-partitions)",
    UNDER_REPLICATED: "fewer in-sync replicas than replicas (kafka-topics --under-replicated-partitions)",
    UNDER_MIN_ISR: "no leader, or fewer in-sync replicas than min.insync.replicas: acks=all writes fail "
    "(kafka-topics --under-min-isr-partitions)",
}
NO_LEADER = -1
# Brokers not in Kafka's liveBrokers: dead (deregistered) and, in KRaft, fenced (replay/cluster.py states).
NOT_LIVE_BROKER_STATES = frozenset({"dead", "fenced"})
NOT_COUNTED_STATES = frozenset({P.NewPartition.value, P.NonExistentPartition.value})
NO_LEADER_STATES = frozenset({P.OfflinePartition.value})
# Why an unavailable episode began; how any episode ended.
NO_LEADER_REASON, LEADER_NOT_ALIVE = "no_leader", "leader_not_alive"
ELECTION, UNCLEAN_ELECTION, RECOVERY, DELETION = "election", "unclean_election", "recovery", "deletion"
DETECTION = "detection"  # leader_lost: the broker's death was logged
LEADERLESS_KINDS = frozenset({UNAVAILABLE, UNDER_MIN_ISR})  # kinds an election can end

# ---- min.insync.replicas: where the logs state it (Java-compatible regexes: the Spark job uses them too) ----
# LogManager "Created log for partition t-p in DIR with properties {...}": up to 2.7 every effective log
# config as ``k -> v`` (K:log/LogManager.scala@2.4.1:776, config.originals), from 2.8 the topic's
# overrides only as ``k=v`` (@2.8.2:837, LogConfig.overriddenConfigsAsLoggableString); 0.x names the
# partition ``[t,p]``.
SETTING = "min.insync.replicas"  # the literal each of the patterns below requires
CREATED_LOG_RX = r"^Created log for partition (?:\[(.+),(\d+)\]|(.+)-(\d+)) in .*min\.insync\.replicas(?: -> |=)(\d+)"
# KRaft DynamicConfigPublisher (K:server/metadata/DynamicConfigPublisher.scala@trunk 1eb7644:64,79):
# "Updating topic t with new configuration : k -> v,..." and "Updating cluster configuration : k -> v".
TOPIC_CONFIG_RX = r"^Updating topic (\S+) with new configuration : .*min\.insync\.replicas -> (\d+)"
CLUSTER_CONFIG_RX = r"^Updating cluster configuration : .*min\.insync\.replicas -> (\d+)"
# The broker's config dump: one record whose message is "KafkaConfig values: " and one "\tkey = value"
# line per setting (clients/.../common/config/AbstractConfig.java@3.9.0-rc3:358-372, logAll).
CONFIG_DUMP_START = "KafkaConfig values:"
CONFIG_DUMP_RX = r"^\s*min\.insync\.replicas = (\d+)\s*$"
# How long the cluster waits before it declares a silent broker dead: the ZooKeeper session of a ZooKeeper-mode
# broker, the controller's broker session in KRaft (process.roles set). A broker that died at X is logged dead
# at about X + this, so leader_lost starts no earlier than (its logged death - the timeout).
ZK_SESSION_RX = r"^\s*zookeeper\.session\.timeout\.ms = (\d+)\s*$"
KRAFT_SESSION_RX = r"^\s*broker\.session\.timeout\.ms = (\d+)\s*$"
KRAFT_ROLES_RX = r"^\s*process\.roles = \[?\s*\w"
# Without a config dump, the largest session timeout Kafka ships with bounds leader_lost: zookeeper.session.timeout.ms
# 6000 up to 2.4, 18000 from 2.5 (KIP-537; K:server/KafkaConfig.scala@2.4.1:49, @2.5.0:51), KRaft's
# broker.session.timeout.ms 9000 (server/.../config/KRaftConfigs.java@3.9.0-rc3:52). A broker quiet for longer
# before it died is not counted as lost longer than that (a lower bound when a larger timeout was configured).
DEFAULT_SESSION_TIMEOUT_MS = 18000

# Priority of the sources (lower wins): the option, the partition's own log config, the topic's and the
# cluster's dynamic config (KRaft), the brokers' static config.
OPTION, CREATED_LOG, TOPIC_CONFIG, CLUSTER_CONFIG, CONFIG_DUMP = 0, 1, 2, 3, 4


@dataclass(frozen=True)
class MinIsrOption:
    """``--min-isr N`` / ``--min-isr TOPIC=N`` (``parse_min_isr_option``): the default and the per-topic values."""

    default: Optional[int] = None
    topics: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class MinIsr:
    value: int
    source: str  # "--min-isr" or the file:line that stated it


@dataclass
class MinIsrTable:
    """min.insync.replicas per partition, as the logs (or ``--min-isr``) state it."""

    option_default: Optional[int] = None  # --min-isr N
    option_topics: dict[str, int] | None = None  # --min-isr TOPIC=N
    partitions: dict[tuple[str, int], MinIsr] | None = None  # Created log ... min.insync.replicas
    topics: dict[str, MinIsr] | None = None  # KRaft topic config
    cluster: Optional[MinIsr] = None  # KRaft cluster config
    dump: Optional[MinIsr] = None  # broker config dump (the largest value any broker logged)

    def lookup(self, topic: str, partition: int) -> Optional[MinIsr]:
        if self.option_topics and topic in self.option_topics:
            return MinIsr(self.option_topics[topic], "--min-isr")
        if self.option_default is not None:
            return MinIsr(self.option_default, "--min-isr")
        found = (self.partitions or {}).get((topic, partition)) or (self.topics or {}).get(topic)
        return found or self.cluster or self.dump


def parse_min_isr_option(values: Sequence[str]) -> tuple[Optional[int], dict[str, int]]:
    """``--min-isr N`` and ``--min-isr TOPIC=N`` (repeatable) -> (default, per topic); ValueError if bad."""
    default: Optional[int] = None
    topics: dict[str, int] = {}
    for text in values:
        topic, sep, number = text.rpartition("=")
        if not number.strip().isdigit() or int(number) < 1 or (sep and not topic.strip()):
            raise ValueError(f"--min-isr expects N or TOPIC=N with N >= 1, got {text!r}")
        if sep:
            topics[topic.strip()] = int(number)
        else:
            default = int(number)
    return default, topics


_UNKNOWN_TIME = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _stated_order(e: dict) -> tuple:
    """The order in which settings take effect, the last one winning: time, then file and line. A line without a
    time counts as the earliest (the Spark job's ``coalesce(ts, 0)``): it never overrides a setting whose time is
    known, since nothing says it came later."""
    ts = e.get("ts")
    return (_UNKNOWN_TIME if ts is None else ts, e["source_file"], e["line_no"])


def min_isr_table(
    events: Iterable[dict], option_default: Optional[int] = None, option_topics: Optional[dict[str, int]] = None
) -> MinIsrTable:
    """Every min.insync.replicas the lines state, with ``--min-isr`` on top."""
    created, topic_rx, cluster_rx, dump_rx = (
        re.compile(CREATED_LOG_RX),
        re.compile(TOPIC_CONFIG_RX),
        re.compile(CLUSTER_CONFIG_RX),
        re.compile(CONFIG_DUMP_RX),
    )
    table = MinIsrTable(option_default, dict(option_topics or {}), {}, {})
    assert table.partitions is not None and table.topics is not None
    dumps: list[MinIsr] = []
    # every pattern names the setting: only the lines that do are ordered and matched
    stated = [e for e in events if SETTING in (e.get("message") or "")]
    for e in sorted(stated, key=_stated_order):
        message = e["message"]
        ref = f"{e['source_file']}:{e['line_no']}"
        m = created.match(message)
        if m:
            topic, part = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
            table.partitions[(topic, int(part))] = MinIsr(int(m.group(5)), ref)
            continue
        m = topic_rx.match(message)
        if m:
            table.topics[m.group(1)] = MinIsr(int(m.group(2)), ref)
            continue
        m = cluster_rx.match(message)
        if m:
            table.cluster = MinIsr(int(m.group(1)), ref)
            continue
        if message.startswith(CONFIG_DUMP_START):
            for offset, text in enumerate(message.split("\n")):
                m = dump_rx.match(text)
                if m:
                    dumps.append(MinIsr(int(m.group(1)), f"{e['source_file']}:{e['line_no'] + offset}"))
    if dumps:
        table.dump = max(dumps, key=lambda d: (d.value, d.source))  # the strictest broker
    return table


# ---- episodes ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Piece:
    """A stretch of a partition's timeline with one set of values (a row, cut where its leader's liveness changes)."""

    ts_start: Optional[datetime]
    ts_end: Optional[datetime]
    state: Optional[str]
    leader: Optional[int]
    isr: Optional[tuple[int, ...]]
    replicas: Optional[tuple[int, ...]]
    leader_live: Optional[bool]  # None: unknown
    cause: str  # the line that opened this piece
    failure: bool  # the row is one of Kafka's failed-election lines


def _ints(values) -> Optional[tuple[int, ...]]:
    return None if values is None else tuple(values)


def _epochs(row: dict) -> tuple[int, int]:
    le, pe = row.get("leader_epoch"), row.get("partition_epoch")
    return (-1 if le is None else le, -1 if pe is None else pe)


def effective_rows(rows: Sequence[dict]) -> list[dict]:
    """The partition's rows (one partition, by ``seq``) as the cluster had them: a broker-view row (a broker
    repeating a request it received, ``partition_view``) that is not newer than the last controller-side
    row - by (leader epoch, partition epoch) - is a delayed echo and gets that row's values."""
    out, last = [], None
    for r in sorted(rows, key=lambda r: r["seq"]):
        values = {k: r[k] for k in ("state", "leader", "isr", "replicas")}
        if r.get("source") != BROKER_VIEW:
            last = r
        elif last is not None and _epochs(r) <= _epochs(last):
            values = {k: last[k] for k in values}
        out.append({**r, **values})
    return out


def _liveness(broker_rows: Sequence[dict], broker: int) -> list[tuple[datetime, bool, str]]:
    """(from, live, evidence) of each liveness interval of ``broker``, in (time, evidence) order."""
    spans = [
        (b["ts_start"], b["state"] not in NOT_LIVE_BROKER_STATES, b["evidence"])
        for b in broker_rows
        if b["broker"] == broker and b["ts_start"] is not None
    ]
    return sorted(spans, key=lambda s: (s[0], s[2]))


def _pieces(rows: Sequence[dict], broker_rows: Sequence[dict]) -> list[_Piece]:
    """Every row, cut where its leader's broker changed liveness (the broker's line opens the later piece)."""
    out: list[_Piece] = []
    spans_of: dict[int, list[tuple[datetime, bool, str]]] = {}
    for r in effective_rows(rows):
        start, end, leader = r["ts_start"], r["ts_end"], r["leader"]
        base = dict(
            state=r["state"],
            leader=leader,
            isr=_ints(r["isr"]),
            replicas=_ints(r["replicas"]),
            failure=r.get("source") == FAILURE,
        )
        if leader is None or leader < 0 or start is None:
            out.append(_Piece(start, end, leader_live=None, cause=r["cause"], **base))
            continue
        spans = spans_of.setdefault(leader, _liveness(broker_rows, leader))
        before = [live for b_start, live, _ in spans if b_start <= start]
        cuts: list[tuple[datetime, Optional[bool], str]] = [(start, before[-1] if before else None, r["cause"])]
        cuts += [(b, up, ref) for b, up, ref in spans if b > start and (end is None or b < end)]
        for i, (c_start, c_live, cause) in enumerate(cuts):
            c_end = cuts[i + 1][0] if i + 1 < len(cuts) else end
            out.append(_Piece(c_start, c_end, leader_live=c_live, cause=cause, **base))
    return out


def _flags(p: _Piece, min_isr: Optional[MinIsr]) -> dict[str, bool]:
    if p.state in NOT_COUNTED_STATES:
        return {LEADER_LOST: False, UNAVAILABLE: False, UNDER_REPLICATED: False, UNDER_MIN_ISR: False}
    no_leader = p.state in NO_LEADER_STATES or (p.leader is not None and p.leader < 0)
    unavailable = no_leader or p.leader_live is False
    under_replicated = p.isr is not None and bool(p.replicas) and len(p.isr) < len(p.replicas or ())
    under_min = min_isr is not None and (no_leader or (p.isr is not None and len(p.isr) < min_isr.value))
    return {LEADER_LOST: False, UNAVAILABLE: unavailable, UNDER_REPLICATED: under_replicated, UNDER_MIN_ISR: under_min}


def _reason(p: _Piece) -> str:
    if p.state in NO_LEADER_STATES or (p.leader is not None and p.leader < 0):
        return NO_LEADER_REASON
    return LEADER_NOT_ALIVE


def _seconds(start: Optional[datetime], end: Optional[datetime]) -> Optional[float]:
    return None if start is None or end is None else round(max((end - start).total_seconds(), 0.0), 3)


def _ended_by(kind: str, pieces: list[_Piece], after: Optional[_Piece], unclean_times) -> Optional[str]:
    """How an episode ended. A leaderless episode during which an unclean_election finding is dated ended
    with that election (the finding's line may precede the state change it causes, or be the only line of
    it: KRaft's "UNCLEAN partition change", 0.10's "Elect leader 2 from live brokers")."""
    if after is None:
        return None
    start = pieces[0]
    if after.state == P.NonExistentPartition.value:
        return DELETION
    if kind in LEADERLESS_KINDS and any(start.ts_start < t <= after.ts_start for t in unclean_times):
        return UNCLEAN_ELECTION
    if kind == UNAVAILABLE and after.leader != start.leader:
        return ELECTION
    return RECOVERY


def _episode(
    where: dict,
    kind: str,
    number: int,
    pieces: list[_Piece],
    after: Optional[_Piece],
    min_isr: Optional[MinIsr],
    unclean_times,
    logs_end: Optional[datetime],
) -> dict:
    """One ``impact`` row: the flagged ``pieces`` of one episode and the piece that ended it (None: open)."""
    start, last = pieces[0], pieces[-1]
    end = last.ts_end if after is None else after.ts_start
    failures = [p.cause for p in pieces if p.failure]
    end_ref = None if after is None else after.cause
    refs = list(dict.fromkeys([start.cause, *failures, *([end_ref] if end_ref else [])]))
    measured = min_isr if kind == UNDER_MIN_ISR else None
    return {
        **where,
        "kind": kind,
        "episode": number,
        "ts_start": start.ts_start,
        "ts_end": end,
        "open": end is None,
        "duration_seconds": _seconds(start.ts_start, end),
        "known_seconds": _seconds(start.ts_start, end if end is not None else logs_end) or 0.0,
        "leader": NO_LEADER if start.leader is None or start.leader < 0 else start.leader,
        "isr": None if start.isr is None else list(start.isr),
        "replicas": None if start.replicas is None else list(start.replicas),
        "min_isr": measured.value if measured else None,
        "min_isr_source": measured.source if measured else None,
        "reason": _reason(start) if kind == UNAVAILABLE else None,
        "failed_elections": len(failures),
        "ended_by": _ended_by(kind, pieces, after, unclean_times),
        "start_evidence": start.cause,
        "end_evidence": end_ref,
        "evidence": refs[:MAX_EVIDENCE],
        "evidence_count": len(refs),
    }


class BrokerLines:
    """Every line each broker itself wrote, (time, file, line), compactly: ``last_seen`` asks which was the last at
    or before a time. A replay that streams its lines (``jobs.replay_driver``) adds millions of them, so they are
    kept as machine integers (about 20 bytes a line), not as a tuple of objects each."""

    def __init__(self) -> None:
        self._files: dict[str, int] = {}
        self._added: dict[int, tuple[array, array, array]] = {}  # broker -> (ts µs, file id, line)
        self._sorted: Optional[dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]] = None
        self._names: list[str] = []

    def _of(self, broker: int) -> tuple[array, array, array]:
        """The broker's (ts µs, file id, line) arrays, made on its first line."""
        return self._added.get(broker) or self._added.setdefault(broker, (array("q"), array("q"), array("q")))

    def _file_ids(self, names: Iterable[str]) -> np.ndarray:
        """The id of each file name, numbering the names not seen before."""
        return np.array([self._files.setdefault(name, len(self._files)) for name in names], dtype=np.int64)

    def add(self, broker: int, ts: datetime, source_file: str, line_no: int) -> None:
        micros, files, lines = self._of(broker)
        micros.append((ts - _EPOCH) // _MICROSECOND)
        files.append(self._files.setdefault(source_file, len(self._files)))
        lines.append(line_no)
        self._sorted = None

    def extend(
        self, brokers: np.ndarray, micros: np.ndarray, files: Sequence[str], file_at: np.ndarray, lines: np.ndarray
    ) -> None:
        """``add`` of many lines at once, column-wise (a replay worker's bucket: up to a million lines, at 1 µs a
        line through ``add``): line ``i`` is broker ``brokers[i]``'s, at ``micros[i]`` µs since the epoch, line
        ``lines[i]`` of file ``files[file_at[i]]``."""
        ids = self._file_ids(files)
        for broker in np.unique(brokers).tolist():
            mine = self._of(broker)
            at = brokers == broker
            mine[0].frombytes(micros[at].astype(np.int64).tobytes())
            mine[1].frombytes(ids[file_at[at]].tobytes())
            mine[2].frombytes(lines[at].astype(np.int64).tobytes())
        self._sorted = None

    def merge(self, other: "BrokerLines") -> None:
        """Add every line ``other`` holds (another process's share of the same lines): ``last_seen`` then answers
        as if all had been added here, in any order (lines are ordered by time, file and line alone)."""
        ids = self._file_ids(other._files)  # ``other``'s names in the order of its ids
        for broker, (micros, files, lines) in other._added.items():
            mine = self._of(broker)
            mine[0].extend(micros)
            mine[1].frombytes(ids[np.frombuffer(files, np.int64)].tobytes())
            mine[2].extend(lines)
        self._sorted = None

    def _index(self) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Each broker's lines sorted by (time, file, line): file ids renumbered in the files' own order."""
        if self._sorted is None:
            self._names = sorted(self._files)
            rank = np.empty(len(self._files), dtype=np.int64)
            for n, name in enumerate(self._names):
                rank[self._files[name]] = n
            self._sorted = {}
            for broker, (micros, files, lines) in self._added.items():
                ts, fs, ls = (
                    np.frombuffer(micros, np.int64),
                    rank[np.frombuffer(files, np.int64)],
                    np.frombuffer(lines, np.int64),
                )
                order = np.lexsort((ls, fs, ts))
                self._sorted[broker] = (ts[order], fs[order], ls[order])
        return self._sorted

    def last_seen(self, broker: int, until: datetime) -> Optional[tuple[datetime, str]]:
        """The last line ``broker`` itself wrote at or before ``until``: (its time, file:line)."""
        found = self._index().get(broker)
        if found is None:
            return None
        ts, fs, ls = found
        i = int(np.searchsorted(ts, (until - _EPOCH) // _MICROSECOND, side="right")) - 1
        if i < 0:
            return None
        return _EPOCH + timedelta(microseconds=int(ts[i])), f"{self._names[fs[i]]}:{ls[i]}"


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


@dataclass
class ClusterFacts:
    """What one cluster's impact needs besides a partition's own rows."""

    brokers: list[dict]  # the ``brokers`` rows
    logs_end: Optional[datetime] = None  # the last timestamp of the cluster's lines
    deletions: dict[str, list[tuple[datetime, str]]] = field(default_factory=dict)  # topic -> (ts, ref), sorted
    writers: BrokerLines = field(default_factory=BrokerLines)  # each broker's own lines
    session_timeout: Optional[tuple[int, str]] = None  # (ms, file:line) the longest a config dump states

    def last_seen(self, broker: int, until: datetime) -> Optional[tuple[datetime, str]]:
        """The last line ``broker`` itself wrote at or before ``until``."""
        return self.writers.last_seen(broker, until)

    def reaches(self, ts: datetime) -> None:
        """A line of the cluster at ``ts``: the logs end no earlier."""
        if self.logs_end is None or ts > self.logs_end:
            self.logs_end = ts


def session_timeouts(events: Iterable[dict], cluster_of=lambda e: "") -> dict[str, tuple[int, str]]:
    """Per cluster, the longest session timeout (ms, file:line) a config dump of its lines states."""
    out: dict[str, tuple[int, str]] = {}
    for e in events:
        found = session_timeout_of(e)
        if found is not None:
            cluster = cluster_of(e)
            if cluster not in out or found > out[cluster]:
                out[cluster] = found
    return out


class FactsBuilder:
    """``ClusterFacts`` per cluster, gathered one line at a time (``add``), so that a replay streaming its lines
    never holds them; ``cluster_facts`` is the same for lines in memory."""

    def __init__(self, cluster_of=lambda e: "") -> None:
        self._cluster_of = cluster_of
        self._facts: dict[str, ClusterFacts] = {}

    def _of(self, cluster: str) -> ClusterFacts:
        return self._facts.get(cluster) or self._facts.setdefault(cluster, ClusterFacts([]))

    def add(self, e: dict) -> None:
        """One line: the last time of its cluster's lines, a topic deletion it completes, its broker's line."""
        ts = e.get("ts")
        if ts is None:
            return
        f = self._of(self._cluster_of(e))
        f.reaches(ts)
        if e["event_type"] == DELETION_COMPLETED and e.get("topic"):
            f.deletions.setdefault(e["topic"], []).append((ts, f"{e['source_file']}:{e['line_no']}"))
        if e.get("broker") is not None and e.get("log_kind") != "metadata":
            f.writers.add(e["broker"], ts, e["source_file"], e["line_no"])

    def add_columns(
        self,
        cluster: str,
        last: datetime,
        brokers: np.ndarray,
        micros: np.ndarray,
        files: Sequence[str],
        file_at: np.ndarray,
        lines: np.ndarray,
    ) -> None:
        """``add`` of many timed lines of one cluster at once, none of them a topic's deletion: ``last`` is their
        latest time, and the others are the columns of those of them a broker wrote (``BrokerLines.extend``)."""
        f = self._of(cluster)
        f.reaches(last)
        f.writers.extend(brokers, micros, files, file_at, lines)

    def merge(self, other: "FactsBuilder") -> None:
        """Add what ``other`` gathered from other lines (a replay worker's): the same facts as if this builder had
        seen them (the last time is a maximum, deletions are sorted by ``facts``, lines by ``BrokerLines``)."""
        for cluster, theirs in other._facts.items():
            f = self._of(cluster)
            if theirs.logs_end is not None:
                f.reaches(theirs.logs_end)
            for topic, lines in theirs.deletions.items():
                f.deletions.setdefault(topic, []).extend(lines)
            f.writers.merge(theirs.writers)

    def facts(self, broker_rows: dict[str, list[dict]], timeouts: dict[str, tuple[int, str]]) -> dict:
        """The facts per cluster, with each cluster's ``brokers`` rows and session timeout."""
        out = {c: ClusterFacts(list(rows)) for c, rows in broker_rows.items()}
        for cluster, stated in timeouts.items():
            (out.get(cluster) or out.setdefault(cluster, ClusterFacts([]))).session_timeout = stated
        for cluster, gathered in self._facts.items():
            f = out.get(cluster) or out.setdefault(cluster, ClusterFacts([]))
            f.logs_end, f.writers = gathered.logs_end, gathered.writers
            f.deletions = {topic: sorted(lines) for topic, lines in gathered.deletions.items()}
        return out


def cluster_facts(
    events: Iterable[dict],
    broker_rows: dict[str, list[dict]],
    cluster_of=lambda e: "",
    timeouts: Optional[dict[str, tuple[int, str]]] = None,
) -> dict:
    """``ClusterFacts`` per cluster from the events (dicts like rows of ``events``) and the ``brokers`` rows.
    ``timeouts``: the session timeouts per cluster (``session_timeouts``) when they come from other lines than
    ``events`` (the replay's lines keep their message only where a rule reads it; the config dumps are in the
    parsed lines); default: from ``events``, whether or not a dump's line has a time (as the Spark job)."""
    if timeouts is None:
        events = list(events)
        timeouts = session_timeouts(events, cluster_of)
    builder = FactsBuilder(cluster_of)
    for e in events:
        builder.add(e)
    return builder.facts(broker_rows, timeouts)


def session_timeout_of(event: dict) -> Optional[tuple[int, str]]:
    """(ms, file:line) of the session timeout a KafkaConfig dump states, or None."""
    message = event.get("message") or ""
    if not message.startswith(CONFIG_DUMP_START):
        return None
    lines = message.split("\n")
    kraft = any(re.match(KRAFT_ROLES_RX, text) for text in lines)
    rx = re.compile(KRAFT_SESSION_RX if kraft else ZK_SESSION_RX)
    for offset, text in enumerate(lines):
        m = rx.match(text)
        if m:
            return int(m.group(1)), f"{event['source_file']}:{event['line_no'] + offset}"
    return None


def _cut_at_deletion(row: dict, deletions: list[tuple[datetime, str]]) -> dict:
    """An episode that outlives its topic's logged deletion ends there."""
    start, end = row["ts_start"], row["ts_end"]
    hit = next(((ts, ref) for ts, ref in deletions if ts > start and (end is None or ts < end)), None)
    if hit is None:
        return row
    ts, ref = hit
    refs = list(dict.fromkeys([r for r in row["evidence"] if r != row["end_evidence"]] + [ref]))
    return {
        **row,
        "ts_end": ts,
        "open": False,
        "duration_seconds": _seconds(start, ts),
        "known_seconds": _seconds(start, ts) or 0.0,
        "ended_by": DELETION,
        "end_evidence": ref,
        "evidence": refs[:MAX_EVIDENCE],
        "evidence_count": len(refs),
    }


def partition_impact(
    rows: Sequence[dict], facts: ClusterFacts, min_isr: Optional[MinIsr], unclean_times: Sequence[datetime]
) -> list[dict]:
    """The ``impact`` rows of one partition (``rows``: its partition_timeline rows; ``unclean_times``: when its
    unclean_election findings are dated)."""
    if not rows:
        return []
    where = {k: rows[0][k] for k in ("cluster", "topic", "partition")}
    pieces = [p for p in _pieces(rows, facts.brokers) if p.ts_start is not None]
    out: list[dict] = []
    for kind in KINDS:
        run: list[_Piece] = []
        number = 0
        for p in pieces:
            if _flags(p, min_isr)[kind]:
                run.append(p)
            elif run:
                out.append(_episode(where, kind, number, run, p, min_isr, unclean_times, facts.logs_end))
                run, number = [], number + 1
        if run:
            out.append(_episode(where, kind, number, run, None, min_isr, unclean_times, facts.logs_end))
    out += _leader_lost(where, rows, facts)
    deletions = (facts.deletions or {}).get(where["topic"], [])
    out = [_cut_at_deletion(r, deletions) for r in out]
    for r in out:
        if r["kind"] == LEADER_LOST:
            continue
        seen = facts.last_seen(r["leader"], r["ts_start"]) if r["reason"] == LEADER_NOT_ALIVE else None
        r["leader_last_seen"], r["leader_last_seen_evidence"] = seen if seen else (None, None)
    return out


def broker_deaths(broker_rows: Sequence[dict]) -> list[tuple[int, datetime, str, str]]:
    """(broker, ts, state, evidence) of every change from live to dead or fenced (the first interval of a
    broker says nothing about before it, so it is not a change)."""
    out = []
    by_broker: dict[int, list[dict]] = {}
    for b in broker_rows:
        if b["ts_start"] is not None:
            by_broker.setdefault(b["broker"], []).append(b)
    for broker, items in by_broker.items():
        items.sort(key=lambda b: (b["ts_start"], b["evidence"]))
        for prev, cur in pairwise(items):
            if cur["state"] in NOT_LIVE_BROKER_STATES and prev["state"] not in NOT_LIVE_BROKER_STATES:
                out.append((broker, cur["ts_start"], cur["state"], cur["evidence"]))
    return sorted(out, key=lambda d: (d[1], d[0]))


def _leader_lost(where: dict, rows: Sequence[dict], facts: ClusterFacts) -> list[dict]:
    """From a leader's last line to its logged death, for every death of the partition's leader at the time."""
    eff = effective_rows(rows)
    run_start: list[Optional[datetime]] = []
    for i, r in enumerate(eff):
        same = i > 0 and eff[i - 1]["leader"] == r["leader"]
        run_start.append(run_start[-1] if same else r["ts_start"])
    out: list[dict] = []
    for broker, died, state, ref in broker_deaths(facts.brokers):
        at = next(
            (
                i
                for i, r in enumerate(eff)
                if r["leader"] == broker
                and r["ts_start"] is not None
                and r["ts_start"] < died
                and (r["ts_end"] is None or died <= r["ts_end"])
            ),
            None,
        )
        seen = facts.last_seen(broker, died) if at is not None else None
        if at is None or seen is None:
            continue
        led_from = run_start[at]
        bounds = [seen[0]] + ([led_from] if led_from is not None else [])
        refs = [seen[1]]
        if facts.session_timeout is not None:
            bounds.append(died - timedelta(milliseconds=facts.session_timeout[0]))
            refs.append(facts.session_timeout[1])
        else:
            bounds.append(died - timedelta(milliseconds=DEFAULT_SESSION_TIMEOUT_MS))
        start = max(bounds)
        if start >= died:
            continue
        r = eff[at]
        out.append(
            {
                **where,
                "kind": LEADER_LOST,
                "episode": len(out),
                "ts_start": start,
                "ts_end": died,
                "open": False,
                "duration_seconds": _seconds(start, died),
                "known_seconds": _seconds(start, died) or 0.0,
                "leader": broker,
                "isr": None if r["isr"] is None else list(r["isr"]),
                "replicas": None if r["replicas"] is None else list(r["replicas"]),
                "min_isr": None,
                "min_isr_source": None,
                "reason": state,
                "failed_elections": 0,
                "ended_by": DETECTION,
                "start_evidence": seen[1],
                "end_evidence": ref,
                "evidence": [*refs, ref],
                "evidence_count": len(refs) + 1,
                "leader_last_seen": seen[0],
                "leader_last_seen_evidence": seen[1],
            }
        )
    return out


def impact_rows(
    partition_rows: Iterable[dict],
    facts: dict[str, ClusterFacts],
    min_isr: MinIsrTable,
    unclean_times: dict[tuple, list[datetime]],
) -> list[dict]:
    """``partition_impact`` for every partition of the timeline (pure twin of ``jobs/impact_job``)."""
    grouped: dict[tuple, list[dict]] = {}
    for r in partition_rows:
        grouped.setdefault((r["cluster"], r["topic"], r["partition"]), []).append(r)
    out: list[dict] = []
    for key in sorted(grouped):
        cluster, topic, partition = key
        out += partition_impact(
            sorted(grouped[key], key=lambda r: r["seq"]),
            facts.get(cluster) or ClusterFacts([]),
            min_isr.lookup(topic, partition),
            unclean_times.get(key, []),
        )
    return out


def impact_totals(rows: Iterable[dict]) -> list[dict]:
    """``impact_totals``: per (cluster, kind, topic) and per (cluster, kind) with topic None."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["cluster"], r["kind"], r["topic"]), []).append(r)
        groups.setdefault((r["cluster"], r["kind"], None), []).append(r)
    out = []
    for (cluster, kind, topic), items in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or "")):
        longest = max(items, key=lambda r: (r["known_seconds"], r["topic"], -r["partition"]))
        out.append(
            {
                "cluster": cluster,
                "topic": topic,
                "kind": kind,
                "partitions": len({(r["topic"], r["partition"]) for r in items}),
                "episodes": len(items),
                "open_episodes": sum(1 for r in items if r["open"]),
                "seconds": round(sum(r["known_seconds"] for r in items), 3),
                "longest_seconds": longest["known_seconds"],
                "longest_topic": longest["topic"],
                "longest_partition": longest["partition"],
                "first_start": min(r["ts_start"] for r in items),
                "last_end": None if any(r["open"] for r in items) else max(r["ts_end"] for r in items),
            }
        )
    return out


__all__ = [
    "KINDS",
    "UNAVAILABLE",
    "UNDER_MIN_ISR",
    "UNDER_REPLICATED",
    "BrokerLines",
    "ClusterFacts",
    "FactsBuilder",
    "MinIsr",
    "MinIsrOption",
    "MinIsrTable",
    "cluster_facts",
    "effective_rows",
    "impact_rows",
    "impact_totals",
    "min_isr_table",
    "parse_min_isr_option",
    "partition_impact",
    "session_timeouts",
]
