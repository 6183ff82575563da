"""``--topic``, ``--partitions``, ``--start-time``, ``--end-time``: one definition of what they keep.

The same four options as Kafka's ``kafka.tools.StateChangeLogMerger`` (core/src/main/scala/kafka/
tools/StateChangeLogMerger.scala@1.0.0): ``--partitions`` needs ``--topic`` and may not repeat an
id; times are ``yyyy-MM-dd HH:mm:ss,SSS`` and both bounds are inclusive. Times are read in the
logs' time zone (``--timezone``), as the logs' own timestamps are, so comparing them is comparing
what the brokers printed.

Two rules keep a filtered replay sound:
- ``--topic``/``--partitions`` never drop a line that is about no partition (controller elections,
  broker changes, live-broker sets): who was controller and which brokers were alive is what the
  replay of the selected partitions is judged against (``place_condition``).
- ``--start-time`` keeps the cluster lines before it for the same reason (they are few), but
  drops earlier partition lines: a partition's state at start-time is then unknown until its
  first line after it - the replay treats the window as logs that begin there, which it has to
  handle anyway. KRaft metadata records (``log_kind = metadata``) before it are kept too: they are
  the state itself (topic ids, partition epochs), like the snapshot a controller starts from, and
  without them every partition epoch after start-time would look like a gap.
  ``--end-time`` drops everything after it.

``keeps_place`` and ``keeps_time`` are the rules on one event (the in-process replay,
``jobs/replay_driver.py``); ``jobs/filters.py`` builds the same rules as Spark Columns, and
``tests/jobs/test_filters.py`` holds the two equal on real events.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from dataclasses import dataclass
from typing import Optional

from kafka_forensics.core.errors import UsageError

from .cluster import CLUSTER_EVENT_TYPES

KAFKA_TIME_FORMAT = "yyyy-MM-dd HH:mm:ss,SSS"
_KAFKA_TIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(?:[,.](\d{1,6}))?)?$")
TOPIC_CHARS = re.compile(r"^[a-zA-Z0-9._-]+$")  # Topic.LEGAL_CHARS (clients/.../internals/Topic.java@1.0.0)


@dataclass(frozen=True)
class EventFilter:
    topic: Optional[str] = None
    partitions: tuple[int, ...] = ()
    start: Optional[dt.datetime] = None  # aware, UTC
    end: Optional[dt.datetime] = None

    @property
    def has_place(self) -> bool:
        return self.topic is not None

    @property
    def has_time(self) -> bool:
        return self.start is not None or self.end is not None

    @property
    def active(self) -> bool:
        return self.has_place or self.has_time

    def describe(self) -> str:
        parts = []
        if self.topic is not None:
            parts.append(
                f"topic {self.topic}"
                + (f" partitions {','.join(map(str, self.partitions))}" if self.partitions else "")
            )
        if self.start is not None:
            parts.append(f"from {self.start:%Y-%m-%d %H:%M:%S} UTC")
        if self.end is not None:
            parts.append(f"until {self.end:%Y-%m-%d %H:%M:%S} UTC")
        return ", ".join(parts) or "no filter"


def parse_kafka_time(text: str, timezone: str, option: str) -> dt.datetime:
    """``2017-11-12 14:03:07,123`` (seconds and millis optional) in ``timezone`` → aware UTC."""
    found = _KAFKA_TIME.match(text.strip().strip('"').strip())
    if not found:
        raise UsageError(f"{option} {text!r} is not a time like 2017-11-12 14:03:07,123 ({KAFKA_TIME_FORMAT})")
    y, mo, d, h, mi, s, frac = found.groups()
    try:
        value = dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s or 0), int((frac or "0").ljust(6, "0")))
    except ValueError as err:
        raise UsageError(f"{option} {text!r} is not a valid date: {err}") from None
    tz = dt.timezone.utc if timezone.upper() == "UTC" else zoneinfo.ZoneInfo(timezone)
    return value.replace(tzinfo=tz).astimezone(dt.timezone.utc)


def parse_partitions(text: Optional[str]) -> tuple[int, ...]:
    if not text:
        return ()
    try:
        ids = [int(p) for p in text.split(",") if p.strip() != ""]
    except ValueError:
        raise UsageError(f"--partitions expects ids like 0,1,2, got {text!r}") from None
    duplicates = sorted({p for p in ids if ids.count(p) > 1})
    if duplicates:  # StateChangeLogMerger refuses these too
        raise UsageError(f"the list of partitions contains repeated entries: {','.join(map(str, duplicates))}")
    if any(p < 0 for p in ids):
        raise UsageError("--partitions ids must not be negative")
    return tuple(ids)


def event_filter_from(
    topic: Optional[str],
    partitions: Optional[str],
    start_time: Optional[str],
    end_time: Optional[str],
    timezone: str = "UTC",
) -> EventFilter:
    """Validate the four options (exit 2 on a bad value) and build the filter."""
    ids = parse_partitions(partitions)
    if ids and topic is None:
        raise UsageError("--partitions needs --topic")
    if topic is not None and not TOPIC_CHARS.match(topic):
        raise UsageError(f"--topic {topic!r} is not a legal Kafka topic name")
    start = parse_kafka_time(start_time, timezone, "--start-time") if start_time else None
    end = parse_kafka_time(end_time, timezone, "--end-time") if end_time else None
    if start is not None and end is not None and start > end:
        raise UsageError("--start-time is after --end-time")
    return EventFilter(topic=topic, partitions=ids, start=start, end=end)


def keeps_place(flt: EventFilter, event: dict, keep_unplaced: bool = True) -> bool:
    """Lines of the selected topic/partitions; with ``keep_unplaced``, also every line about no topic
    (without it, only the cluster lines among them). ``jobs.filters.place_condition`` is the Column."""
    topic = event.get("topic")
    if topic is None:
        return keep_unplaced or event["event_type"] in CLUSTER_EVENT_TYPES
    if topic != flt.topic:
        return False
    partition = event.get("partition")
    return not flt.partitions or partition is None or partition in flt.partitions


def keeps_time(flt: EventFilter, event: dict, keep_cluster_before_start: bool = True) -> bool:
    """Lines in [start, end] (a line without a time is in no window); with ``keep_cluster_before_start``,
    also the cluster lines and KRaft metadata records before start. ``jobs.filters.time_condition`` is the Column."""
    ts = event.get("ts")
    if flt.start is not None and not (ts is not None and ts >= flt.start):
        if not keep_cluster_before_start:
            return False
        if event["event_type"] not in CLUSTER_EVENT_TYPES and event.get("log_kind") != "metadata":
            return False
    return flt.end is None or (ts is not None and ts <= flt.end)


__all__ = [
    "KAFKA_TIME_FORMAT",
    "TOPIC_CHARS",
    "EventFilter",
    "event_filter_from",
    "keeps_place",
    "keeps_time",
    "parse_kafka_time",
    "parse_partitions",
]
