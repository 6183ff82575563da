"""Which Kafka releases may have written a line, and how to judge a line against all of them.

A line's ``dialect`` names the *oldest* era of log formats that reads the whole file (ties go to
the oldest, ``parsers/detect.py``), and a format outlives its era: ``[Controller id=1 epoch=5]
Changed state of replica …`` reads the same from 1.0 to 3.9. So a dialect is a lower bound, and
the rules inside a range change (2.3 allows ``OfflineReplica -> ReplicaDeletionIneligible``).
A line is judged against the whole range: a transition is illegal only if *every* release in
the range forbids it, an invariant is violated only if every release would flag it. The range
is narrowed, in this order, by ``--kafka-version`` (the user knows), by the writing broker's own
``Kafka version: X`` line, else it is the dialect's range below. Valid previous states only ever
grew (K:controller/*StateMachine.scala@0.8.0 .. @3.9.0-rc3), so the representative release of a
range - the one whose tables decide "illegal" - is its last, the most permissive.

| dialect | releases judged against | why the upper bound |
|---|---|---|
| zk-0.8 | 0.8.0 - 0.11.0 | the inline ``Controller 1 epoch 3 …`` prefix ends with 0.11 (``StateChangeLogger``, 1.0.0) |
| zk-1.0 | 1.0 - 3.9 | later ZooKeeper releases print the same lines |
| zk-1.1 | 1.1 - 3.9 | idem |
| zk-2.4 | 2.4 - 3.9 | idem |
| zk-2.6 | 2.6 - 3.9 | idem |
| zk-3.x | 3.0 - 3.9 | the last ZooKeeper-mode release line |
| kraft | KRaft (no partition/replica state machines) | |
| auto / unknown | 0.8.0 - 3.9 | |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Optional, TypeVar

from .errors import UnknownKafkaVersionError

from .versions import ERAS, KafkaVersion, has_rule

T = TypeVar("T")

_DIALECT_RANGES: dict[str, tuple[str, str]] = {
    "zk-0.8": ("0.8.0", "0.11.0"),
    "zk-1.0": ("1.0", "3.9"),
    "zk-1.1": ("1.1", "3.9"),
    "zk-2.4": ("2.4", "3.9"),
    "zk-2.6": ("2.6", "3.9"),
    "zk-3.x": ("3.0", "3.9"),
}
_ANY = ("0.8.0", "3.9")
KRAFT_DIALECT = "kraft"
# Dialects whose Kafka ships state.change.logger at INFO (KAFKA-8470, config/log4j.properties@2.6.0):
# replica transitions and Offline/NonExistent partition transitions are TRACE-only there.
INFO_LEVEL_DIALECTS = frozenset({"zk-2.6", "zk-3.x"})


@dataclass(frozen=True)
class VersionRange:
    """Kafka releases that may have written a line; ``kraft`` = a KRaft controller (no ZK machines)."""

    first: Optional[KafkaVersion]
    last: Optional[KafkaVersion]
    kraft: bool = False

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
        points = [self.first] + [e.first for e in ERAS if self.first < e.first <= self.last]
        return tuple(points)

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

    def may_predate(self, rule_key: str) -> bool:
        """True if some release in the range lacks the rule change ``rule_key``."""
        return not self.kraft and self.first is not None and not has_rule(self.first, rule_key)

    def all_have(self, rule_key: str) -> bool:
        return not self.kraft and self.first is not None and has_rule(self.first, rule_key)


def _range(first: str, last: str) -> VersionRange:
    return VersionRange(KafkaVersion.parse(first), KafkaVersion.parse(last))


KRAFT_RANGE = VersionRange(None, None, kraft=True)


def range_for_dialect(dialect: Optional[str]) -> VersionRange:
    if dialect == KRAFT_DIALECT:
        return KRAFT_RANGE
    first, last = _DIALECT_RANGES.get(dialect or "", _ANY)
    return _range(first, last)


def range_for_version_text(text: str) -> VersionRange:
    """``--kafka-version`` / ``Kafka version: X`` text -> a one-release range (or KRaft).

    ``3.9-kraft``, ``kraft`` and 4.0+ (ZooKeeper removed) are KRaft. Vendor suffixes such as
    ``2.4.1-cp1`` or ``7.0.1-ccs`` keep only a known Apache release; otherwise None is returned
    and the caller falls back to the dialect.
    """
    raw = text.strip().lower()
    if raw.endswith("kraft"):
        return KRAFT_RANGE
    version = KafkaVersion.parse(raw.split("-")[0])
    if has_rule(version, "kraft_only"):
        return KRAFT_RANGE
    return VersionRange(version, version)


def range_for_line(dialect: Optional[str], broker_version: Optional[str], user_version: Optional[str]) -> VersionRange:
    """The releases a line is judged against (see the module docstring for the precedence)."""
    if user_version:
        return range_for_version_text(user_version)
    if dialect == KRAFT_DIALECT:
        return KRAFT_RANGE  # a KRaft line: the broker's release number does not make it ZooKeeper
    if broker_version:
        try:
            return range_for_version_text(broker_version)
        except UnknownKafkaVersionError:
            pass  # a vendor build number we cannot map: the dialect still bounds it
    return range_for_dialect(dialect)
