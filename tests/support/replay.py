"""Helpers for the replay tests: turn small scenario logs into events and replay them in-process.

The pure-Python path (``parsers.records.parse_file`` + ``replay.local``) wires the
same pieces as the Spark job, so scenario tests need no Spark; ``test_replay_job`` checks that the
job produces exactly the same findings.
"""

from __future__ import annotations

import re
from typing import Optional

from kafka_forensics.parsers.records import ParseOptions, parse_file
from kafka_forensics.replay.local import LocalReplay, replay_all, replay_event
from tests.support.kafka_lines import line

SC = "state.change.logger"
CTRL = "kafka.controller.KafkaController"


def at(clock: str, day: str = "2021-03-04") -> str:
    """A log4j timestamp: ``at("10:00:01,250")``."""
    return f"{day} {clock}"


def sc(clock: str, message: str, level: str = "TRACE") -> str:
    return line(message, level=level, logger=SC, ts=at(clock))


def ctrl(clock: str, message: str, level: str = "INFO") -> str:
    return line(message, level=level, logger=CTRL, ts=at(clock))


def server(clock: str, message: str, level: str = "INFO", logger: str = "kafka.cluster.Partition") -> str:
    return line(message, level=level, logger=logger, ts=at(clock))


def events_of(files: dict[str, list[str]], **options) -> list[dict]:
    """Parse ``{path: [lines]}`` like the Spark job does; ``ts`` as aware UTC datetimes.

    Every scenario line must be typed by a template (an untyped line would make a near miss pass
    for the wrong reason)."""
    out = []
    for path, lines in files.items():
        result = parse_file(("\n".join(lines) + "\n").encode("utf-8"), path, ParseOptions(**options))
        assert not result.quarantine, result.quarantine
        for event in map(replay_event, result.events):
            assert event["event_type"] != "other", f"untyped scenario line: {event['message']}"
            out.append(event)
    return out


def replay_files(
    files: dict[str, list[str]],
    *,
    cluster_regex: Optional[str] = None,
    kafka_version: Optional[str] = None,
    **parse_options,
) -> LocalReplay:
    rx = re.compile(cluster_regex) if cluster_regex else None

    def cluster_of(event: dict) -> str:
        m = rx.search(event["source_file"]) if rx else None
        return m.group(m.re.groups) if m else ""

    return replay_all(events_of(files, **parse_options), cluster_of=cluster_of, user_version=kafka_version)


def rules(result: LocalReplay, rule: Optional[str] = None) -> list:
    return [f for f in result.findings if rule is None or f.rule == rule]
