"""The one table of Kafka eras: which log formats a release prints, and which rules judge its lines.

Two kinds of era, both defined here and nowhere else:

* **Rule eras** (``ERAS``): version ranges over which every controller rule this project models is
  the same. They are derived from ``rule_changes.RULE_CHANGES`` (one entry per change, with the
  Kafka source that proves it), so each boundary has exactly one definition.
* **Dialects** (``DIALECTS``): one per Kafka era whose log shapes differ (kafka-log-formats.md §3).
  Each gives its log-format bounds (``first`` .. ``until``, for the grammar) and the releases a
  line of that dialect is judged against (``judged``, for the replay, the report and the
  expectations). ``auto`` holds every template: it detects a file's dialect and is the per-line
  fallback for files that mix versions (a rolling upgrade writes two eras into one shared file).

A line's ``dialect`` names the *oldest* era of log formats that reads the whole file (ties go to
the oldest, ``parsers/detect.py``), and a format outlives its era: ``[Controller id=1 epoch=5]
Changed state of replica …`` reads the same from 1.0 to 3.9. So a dialect is a lower bound, and
the rules inside its range change (2.3 allows ``OfflineReplica -> ReplicaDeletionIneligible``).
A line is judged against the whole range: a transition is illegal only if *every* release in the
range forbids it, an invariant is violated only if every release would flag it. The range is
narrowed, in this order, by ``--kafka-version`` (the user knows), by the writing broker's own
``Kafka version: X`` line, else it is the dialect's ``judged`` range, cut to the releases that print
every line that broker wrote (its lines *date* it: ``range_for_line(dated=...)``). Valid previous states only
ever grew (K:controller/*StateMachine.scala@0.8.0 .. @3.9.0-rc3), so the representative release of
a range - the one whose tables decide "illegal" - is its last, the most permissive.

| dialect | log formats | judged against | why the upper bound |
|---|---|---|---|
| zk-0.8 | 0.8 - 0.11 | 0.8.0 - 0.11.0 | the inline ``Controller 1 epoch 3 …`` prefix ends with 0.11 (``StateChangeLogger``, 1.0.0) |
| zk-1.0 | 1.0 | 1.0 - 3.9 | later ZooKeeper releases print the same lines |
| zk-1.1 | 1.1 - 2.3 | 1.1 - 3.9 | idem |
| zk-2.4 | 2.4 - 2.5 | 2.4 - 3.9 | idem |
| zk-2.6 | 2.6 - 2.8 | 2.6 - 3.9 | idem |
| zk-3.x | 3.0 - 3.9 | 3.0 - 3.9 | the last ZooKeeper-mode release line |
| kraft | 2.8 and later | KRaft (no partition/replica state machines) | |
| auto / unknown | every era | 0.8.0 - 3.9 | |
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, TypeVar

from .errors import NoZooKeeperControllerError, UnknownKafkaVersionError
from .rule_changes import RULE_CHANGES, RuleChange, has_rule
from .versions import (
    KNOWN_RELEASE_LINES,
    KRAFT_INTRODUCED,
    KafkaRelease,
    KafkaVersion,
    VersionLike,
    as_version,
    read_kafka_version,
)

T = TypeVar("T")


# ---- rule eras ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Era:
    """A version range over which every rule modelled here is the same."""

    first: KafkaVersion
    last_line: Optional[str]  # last known release line of the era; None = open-ended
    changes: tuple[RuleChange, ...]  # what changed at ``first`` (empty for the first era)

    @property
    def label(self) -> str:
        first = self.first.line
        if self.last_line is None:
            return f"{first} and later"
        if self.last_line == first:
            return f"{first}.x"
        return f"{first} - {self.last_line}.x"

    def contains(self, version: VersionLike) -> bool:
        return era_of(version) == self


def _build_eras() -> tuple[Era, ...]:
    starts = sorted({c.since for c in RULE_CHANGES} | {KafkaVersion.parse(KNOWN_RELEASE_LINES[0])})
    eras = []
    for i, first in enumerate(starts):
        nxt = starts[i + 1] if i + 1 < len(starts) else None
        if nxt is None:
            last_line = None
        else:
            idx = KNOWN_RELEASE_LINES.index(nxt.line)
            last_line = KNOWN_RELEASE_LINES[idx - 1]
        changes = tuple(c for c in RULE_CHANGES if c.since == first)
        eras.append(Era(first=first, last_line=last_line, changes=changes))
    return tuple(eras)


ERAS: tuple[Era, ...] = _build_eras()


def era_of(version: VersionLike) -> Era:
    """The rule era whose rules ``version`` follows."""
    v = as_version(version)
    current = ERAS[0]
    for era in ERAS:
        if v >= era.first:
            current = era
    return current


def require_zookeeper_controller(version: VersionLike) -> KafkaVersion:
    """Return the parsed version, or raise if that Kafka has no ZooKeeper-mode state machines."""
    v = as_version(version)
    if has_rule(v, "kraft_only"):
        raise NoZooKeeperControllerError(
            f"Kafka {v} runs only the KRaft controller (ZooKeeper mode was removed in 4.0), "
            f"which has no partition or replica state machines; give a version from 0.8.0 to 3.9"
        )
    return v


def zookeeper_version(release: KafkaRelease) -> KafkaVersion:
    """The release whose ZooKeeper-mode state machines apply, or ``NoZooKeeperControllerError``."""
    if release.version is not None and has_rule(release.version, "kraft_only"):
        return require_zookeeper_controller(release.version)  # 4.0+: ZooKeeper mode was removed
    if release.kraft or release.version is None:
        raise NoZooKeeperControllerError(
            f"Kafka {release.text} is a KRaft cluster: the KRaft controller has no partition or replica state "
            f"machines; give a ZooKeeper-mode version from 0.8.0 to 3.9"
        )
    return release.version


# ---- the releases a line is judged against -------------------------------------------------------
@dataclass(frozen=True)
class VersionRange:
    """Kafka releases that may have written a line; ``kraft`` = a KRaft controller (no ZK machines)."""

    first: Optional[KafkaVersion]
    last: Optional[KafkaVersion]
    kraft: bool = False

    def __hash__(self) -> int:
        """The fields' hash, worked out once: a range is a key of the per-line caches (legality, snapshot
        invariants), and the dataclass hash would hash both versions' fields again on every line."""
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = hash((self.first, self.last, self.kraft))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __getstate__(self) -> dict:
        """Pickled (a broadcast cluster context) without the cached hash: ``hash(None)`` differs between
        processes."""
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    @property
    def label(self) -> str:
        if self.kraft:
            return "KRaft"
        if self.first == self.last:
            return str(self.last)
        return f"{self.first} - {self.last}"

    def checkpoints(self) -> tuple[KafkaVersion, ...]:
        """One release per rule era the range touches: enough to ask "in every release?"."""
        if self.kraft or self.first is None or self.last is None:
            return ()
        first, last = self.first, self.last
        return (first, *(e.first for e in ERAS if first < e.first <= last))

    def in_all(self, predicate: Callable[[KafkaVersion], bool]) -> bool:
        points = self.checkpoints()
        return bool(points) and all(predicate(v) for v in points)

    def in_any(self, predicate: Callable[[KafkaVersion], bool]) -> bool:
        return any(predicate(v) for v in self.checkpoints())

    def common(self, violations: Callable[[KafkaVersion], Iterable[T]]) -> list[T]:
        """Items ``violations`` returns for every checkpoint (order of the last one)."""
        points = self.checkpoints()
        if not points:
            return []
        sets = [list(violations(v)) for v in points]
        return [x for x in sets[-1] if all(x in s for s in sets[:-1])]

    def intersection(self, other: "VersionRange") -> Optional["VersionRange"]:
        """The releases in both ranges (None if they share none, or either is KRaft)."""
        if self.kraft or other.kraft:
            return None
        if self.first is None or self.last is None or other.first is None or other.last is None:
            return None
        first, last = max(self.first, other.first), min(self.last, other.last)
        return VersionRange(first, last) if first <= last else None

    def may_predate(self, rule_key: str) -> bool:
        """True if some release in the range lacks the rule change ``rule_key``."""
        return not self.kraft and self.first is not None and not has_rule(self.first, rule_key)

    def all_have(self, rule_key: str) -> bool:
        return not self.kraft and self.first is not None and has_rule(self.first, rule_key)

    def state_change_at_info(self) -> bool:
        """True if every release of the range ships state.change.logger at INFO (2.6+, KAFKA-8470):
        replica transitions and Offline/NonExistent partition transitions are TRACE-only there."""
        return not self.kraft and self.first is not None and state_change_logger_at_info(self.first)

    def logs_state_after_put(self) -> bool:
        """True if some release of the range logs ``changed partition … from <state after the put> to
        OnlinePartition`` (so always Online -> Online): 0.8.0 only."""
        return not self.kraft and self.first is not None and self.first < PREVIOUS_STATE_LOGGED_SINCE

    def partitions_gone_at_deletion_start(self) -> bool:
        """True if every release of the range moves a deleted topic's partitions to NonExistentPartition when
        its deletion starts (``PARTITIONS_GONE_AT_DELETION_START_SINCE``), not when it completes."""
        return not self.kraft and self.first is not None and self.first >= PARTITIONS_GONE_AT_DELETION_START_SINCE


KRAFT_RANGE = VersionRange(None, None, kraft=True)
# TopicDeletionManager.onTopicDeletion moves a topic's partitions to OfflinePartition, then NonExistentPartition,
# when its deletion starts ("Deletion of topic T (re)started") from 2.1 (K:controller/TopicDeletionManager.scala
# @2.1.1:267-275, @2.4.1:258-266, @3.9.0-rc3:256-261); up to 2.0 completeDeleteTopic does it when the deletion
# completes (@0.10.2.2:291-301, @1.1.1:227-237, @2.0.1:227-237).
PARTITIONS_GONE_AT_DELETION_START_SINCE = KafkaVersion.parse("2.1")
# config/log4j.properties@2.6.0 sets log4j.logger.state.change.logger=INFO (KAFKA-8470); TRACE before.
STATE_CHANGE_AT_INFO_SINCE = KafkaVersion.parse("2.6")


def state_change_logger_at_info(version: KafkaVersion) -> bool:
    """Does ``version`` ship ``log4j.logger.state.change.logger`` at INFO (TRACE before 2.6)?"""
    return version >= STATE_CHANGE_AT_INFO_SINCE


# config/log4j.properties@0.10.2.2:16 sends the root logger to stdout only (``log4j.rootLogger=INFO,
# stdout``) and only ``kafka`` to server.log (:64 ``log4j.logger.kafka=INFO, kafkaAppender``); from
# 0.11.0 the root logger writes server.log too (config/log4j.properties@0.11.0.2:18).
ROOT_TO_SERVER_LOG_SINCE = KafkaVersion.parse("0.11.0")


def reaches_server_log(logger: str, version: KafkaVersion) -> bool:
    """Does a stock broker of ``version`` write an INFO line of ``logger`` to server.log? Before
    0.11 only ``kafka.*`` loggers did: AppInfoParser's ``Kafka version`` (org.apache.kafka) and
    ZkClient's session events (org.I0Itec.zkclient) went to stdout only."""
    return version >= ROOT_TO_SERVER_LOG_SINCE or logger == "kafka" or logger.startswith("kafka.")


# K:controller/PartitionStateMachine.scala@0.8.0:158-161 logs the state after the put as the previous
# state; fixed by cef51736c70 (KAFKA-330 follow-up, first release 0.8.1).
PREVIOUS_STATE_LOGGED_SINCE = KafkaVersion.parse("0.8.1")


def _range(first: str, last: str) -> VersionRange:
    return VersionRange(KafkaVersion.parse(first), KafkaVersion.parse(last))


# ---- dialects: the log-format eras ---------------------------------------------------------------
@dataclass(frozen=True)
class Dialect:
    """One era of log formats: the grammar's templates live in it, and its lines are judged by ``judged``."""

    name: str
    first: KafkaVersion  # first release of the era
    until: Optional[KafkaVersion]  # first release after it (None: open-ended)
    kraft: bool
    judged: VersionRange  # the releases a line of this dialect is judged against
    summary: str

    def covers(self, since: KafkaVersion, until: KafkaVersion, kraft_only: bool) -> bool:
        """Is a template logged by releases ``since`` .. ``until`` live in this era?"""
        if kraft_only and not self.kraft:
            return False
        return (self.until is None or since < self.until) and until >= self.first

    def holds(self, version: KafkaVersion) -> bool:
        return self.first <= version and (self.until is None or version < self.until)

    @property
    def state_change_at_info(self) -> bool:
        """Kafka of this era ships state.change.logger at INFO (every release of ``judged``)."""
        return self.judged.state_change_at_info()


def _dialect(name: str, first: str, until: Optional[str], judged: VersionRange, summary: str) -> Dialect:
    return Dialect(
        name,
        KafkaVersion.parse(first),
        None if until is None else KafkaVersion.parse(until),
        judged.kraft,
        judged,
        summary,
    )


_LAST_ZOOKEEPER = "3.9"
DIALECTS: tuple[Dialect, ...] = (
    _dialect(
        "zk-0.8",
        "0.8.0",
        "1.0",
        _range("0.8.0", "0.11.0"),
        "0.8–0.11: inline identity ('Controller 1 epoch 3 changed ...'), [t,0], (Leader:..) states",
    ),
    _dialect(
        "zk-1.0",
        "1.0",
        "1.1",
        _range("1.0", _LAST_ZOOKEEPER),
        "1.0: '[Controller id=1 epoch=3]' prefixes, capitalised messages, t-0 partitions",
    ),
    _dialect(
        "zk-1.1",
        "1.1",
        "2.4",
        _range("1.1", _LAST_ZOOKEEPER),
        "1.1–2.3: rewritten controller, LeaderAndIsr(leader=.., zkVersion=..)",
    ),
    _dialect(
        "zk-2.4",
        "2.4",
        "2.6",
        _range("2.4", _LAST_ZOOKEEPER),
        "2.4–2.5: generated LeaderAndIsrPartitionState(...) request states",
    ),
    _dialect(
        "zk-2.6",
        "2.6",
        "3.0",
        _range("2.6", _LAST_ZOOKEEPER),
        "2.6–2.8: state-change at INFO by default, per-request summaries, 'Leader t-0 starts at ...'",
    ),
    _dialect(
        "zk-3.x",
        "3.0",
        "4.0",
        _range("3.0", _LAST_ZOOKEEPER),
        "3.x ZooKeeper mode: leaderRecoveryState, partitionEpoch, isrWithBrokerEpoch",
    ),
    _dialect(
        "kraft",
        KRAFT_INTRODUCED.text,
        None,
        KRAFT_RANGE,
        "KRaft: [QuorumController id=N] controller.log, 'Transitioning N partition(s)' brokers",
    ),
)
BY_NAME = {d.name: d for d in DIALECTS}
# Dialects whose Kafka ships state.change.logger at INFO: replica transitions and Offline/NonExistent
# partition transitions are TRACE-only there.
INFO_LEVEL_DIALECTS = frozenset(d.name for d in DIALECTS if d.state_change_at_info)
AUTO = "auto"
KRAFT_DIALECT = "kraft"
_ANY_RANGE = _range("0.8.0", _LAST_ZOOKEEPER)  # auto / an unknown dialect


def dialect_for_release(release: KafkaRelease) -> Dialect:
    """The dialect a release writes (KRaft releases: ``kraft``)."""
    if release.kraft or release.version is None:
        return BY_NAME[KRAFT_DIALECT]
    for dialect in DIALECTS:
        if not dialect.kraft and dialect.holds(release.version):
            return dialect
    raise UnknownKafkaVersionError(f"no dialect covers Kafka {release.text}")


def dialect_for_version(text: str) -> Dialect:
    """The dialect for ``--kafka-version`` text (``3.9`` = ZooKeeper, ``3.9-kraft`` and 4.0+ = KRaft)."""
    return dialect_for_release(read_kafka_version(text))


def range_for_dialect(dialect: Optional[str]) -> VersionRange:
    """The releases a line of ``dialect`` is judged against (auto / unknown: every ZooKeeper release)."""
    known = BY_NAME.get(dialect or "")
    return known.judged if known is not None else _ANY_RANGE


def range_for_release(release: KafkaRelease) -> VersionRange:
    """One release (or KRaft)."""
    if release.kraft or release.version is None:
        return KRAFT_RANGE
    return VersionRange(release.version, release.version)


@functools.lru_cache(maxsize=1024)
def range_for_line(
    dialect: Optional[str],
    broker_version: Optional[str],
    user_version: Optional[str],
    dated: Optional[VersionRange] = None,
) -> VersionRange:
    """The releases a line is judged against (see the module docstring for the precedence).

    ``dated``: the releases that print every line its broker wrote (the intersection of the templates'
    lives, ``replay/cluster.py``), e.g. ``Epoch incremented to 5`` exists only in 1.1 - 2.0
    (K:controller/KafkaController.scala@1.1.1:641, @2.0.1:647). Without a version line it narrows the
    dialect's range; if the two share no release (an upgrade inside the logs) the dialect's range stands."""
    if user_version:
        return range_for_release(read_kafka_version(user_version))
    if dialect == KRAFT_DIALECT:
        return KRAFT_RANGE  # a KRaft line: the broker's release number does not make it ZooKeeper
    if broker_version:
        try:
            return range_for_release(read_kafka_version(broker_version))
        except UnknownKafkaVersionError:
            pass  # a vendor build number we cannot map: the dialect still bounds it
    judged = range_for_dialect(dialect)
    narrowed = judged.intersection(dated) if dated is not None else None
    return narrowed or judged


__all__ = [
    "AUTO",
    "BY_NAME",
    "DIALECTS",
    "ERAS",
    "INFO_LEVEL_DIALECTS",
    "KRAFT_DIALECT",
    "KRAFT_RANGE",
    "Dialect",
    "Era",
    "VersionRange",
    "dialect_for_release",
    "dialect_for_version",
    "era_of",
    "range_for_dialect",
    "range_for_line",
    "range_for_release",
    "reaches_server_log",
    "require_zookeeper_controller",
    "state_change_logger_at_info",
    "zookeeper_version",
]
