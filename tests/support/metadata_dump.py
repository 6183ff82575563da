"""Helpers for the KRaft replay tests: events from the dump fixtures (tests/data/metadata_dump/), one partition replayed."""

from __future__ import annotations

from pathlib import Path

from kafka_forensics.parsers.records import parse_file
from kafka_forensics.replay.cluster import CLUSTER_EVENT_TYPES, build_cluster_context
from kafka_forensics.replay.local import replay_event
from kafka_forensics.replay.partition import replay_partition
from tests.support.paths import DATA

DUMPS = DATA / "metadata_dump"
TOPIC_ID = "qV5pm1PUQIqcUJ5fJ3xkUw"


def dump_events(name: str, text: str | None = None) -> list[dict]:
    data = (
        text.encode()
        if text is not None
        else (DUMPS / name).read_bytes()
        if (DUMPS / name).exists()
        else Path(name).read_bytes()
    )
    return [replay_event(e) for e in parse_file(data, name).events]


def replay_one(events: list[dict], topic: str = "events", partition: int = 0):
    cluster = sorted(
        (e for e in events if e["event_type"] in CLUSTER_EVENT_TYPES and e["ts"] is not None),
        key=lambda e: (e["ts"], e["source_file"], e["line_no"]),
    )
    ctx = build_cluster_context("", cluster, [])
    part = [e for e in events if e.get("topic") == topic and e.get("partition") == partition]
    return ctx, replay_partition(part, ctx)


def rule_kinds(result) -> list[tuple[str, str]]:
    return sorted((f.rule, f.kind) for f in result.findings)


def segment_lines() -> list[str]:
    return (DUMPS / "segment.log.dump").read_text().splitlines()
