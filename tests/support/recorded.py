"""The lab's recorded incidents (``sample_logs/real-*``: logs real Kafka wrote, ``truth.json`` with the action
log and ``describe/*.txt`` snapshots) replayed in-process, for tests that judge the tool against what was done.

``KF_RECORDED_INCIDENTS=DIR`` points at another ``sample_logs`` directory (a checkout of the lab's branch
before it is merged); without recorded incidents the tests that need them are skipped with that reason.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

from kafka_forensics.parsers.records import ParseOptions, parse_file
from kafka_forensics.replay.impact import cluster_facts, impact_rows, min_isr_table
from kafka_forensics.replay.local import LocalReplay, replay_all, replay_event
from tests.support.paths import SAMPLES

LOG_NAMES = ("state-change.log", "controller.log", "server.log", "stage-change.log")


def incidents_dir() -> Path:
    return Path(os.environ.get("KF_RECORDED_INCIDENTS") or SAMPLES)


def recorded_incidents() -> list[Path]:
    return sorted(p for p in incidents_dir().glob("real-*") if (p / "truth.json").is_file())


def require_recorded() -> list[Path]:
    found = recorded_incidents()
    if not found:
        pytest.skip(f"no recorded incident (real-*/truth.json) in {incidents_dir()}: the lab branch adds them")
    return found


def incident_ids() -> list[str]:
    return [p.name for p in recorded_incidents()] or ["none"]


def _is_log(path: Path) -> bool:
    name = path.name.removesuffix(".gz")
    return path.is_file() and (name.startswith(LOG_NAMES) or name.endswith(".dump"))


@functools.lru_cache(maxsize=None)
def parsed_rows(directory: Path) -> tuple[tuple[dict, ...], tuple[dict, ...]]:
    """(event rows as ``parse_file`` makes them, quarantine rows) of every log file under ``directory``, parsed
    once per test run (the in-process replays and the driver replay's differential test read the same)."""
    events: list[dict] = []
    quarantine: list[dict] = []
    for path in sorted(directory.rglob("*")):
        if not _is_log(path):
            continue
        result = parse_file(path.read_bytes(), str(path), ParseOptions())
        quarantine += [dict(q) for q in result.quarantine]
        events += result.events
    return tuple(events), tuple(quarantine)


def read_events(directory: Path) -> tuple[list[dict], list[dict]]:
    """(events, quarantine rows) of every log file under ``directory``, as the parse job would type them."""
    rows, quarantine = parsed_rows(directory)
    return list(map(replay_event, rows)), [dict(q) for q in quarantine]


@dataclass
class Replayed:
    """One incident (or sample) replayed in-process, with its impact rows."""

    path: Path
    truth: Optional[dict]
    events: list[dict]
    replay: LocalReplay
    impact: list[dict]

    def at(self, seconds_since_epoch_ms: int) -> dt.datetime:
        return dt.datetime.fromtimestamp(seconds_since_epoch_ms / 1000, dt.timezone.utc)

    def actions(self, action: str, broker: Optional[int] = None) -> list[dict]:
        return [
            a
            for a in (self.truth or {}).get("actions", [])
            if a["action"] == action and (broker is None or a["broker"] == broker)
        ]

    def episodes(self, kind: str, topic: str, partition: int) -> list[dict]:
        return [r for r in self.impact if (r["kind"], r["topic"], r["partition"]) == (kind, topic, partition)]


@functools.lru_cache(maxsize=None)
def replayed(path: Path) -> Replayed:
    events, _ = read_events(path)
    result = replay_all(events)
    brokers = {c: [b.to_row(c) for b in ctx.brokers] for c, ctx in result.contexts.items()}
    unclean: dict[tuple, list[dt.datetime]] = {}
    for f in result.findings:
        if f.rule == "unclean_election" and f.ts is not None:
            unclean.setdefault((f.cluster, f.topic, f.partition), []).append(f.ts)
    facts = cluster_facts(events, brokers)
    impact = impact_rows(result.partition_intervals, facts, min_isr_table(events), unclean)
    truth_file = path / "truth.json"
    truth = json.loads(truth_file.read_text("utf-8")) if truth_file.is_file() else None
    return Replayed(path, truth, events, result, impact)
