"""One scenario run: the action log with its clock, the describe snapshots, and waits on Kafka.

A scenario script calls ``act`` for everything it does to the cluster (the time is taken when the
action is sent, in UTC milliseconds) and ``settle`` to wait until ``kafka-topics --describe`` says
the cluster reached the state the action leads to; each settled describe is kept as a snapshot
(``describe/NN-label.txt`` and its parsed form). Truth is computed from these two records only.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional

from kafka_forensics.core.errors import LabError

from .cluster import Cluster, now_ms
from .describe import parse_describe, partitions
from .tools import Tools


def iso_ms(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


@dataclass
class Run:
    cluster: Cluster
    tools: Tools
    out: Path  # the raw recording folder
    actions: list[dict] = field(default_factory=list)
    snapshots: list[dict] = field(default_factory=list)
    background: list = field(default_factory=list)  # clients running during the scenario (processes.Child)

    # ---- the action log -------------------------------------------------------------------------
    def act(self, action: str, broker: Optional[int] = None, detail: str = "") -> dict:
        at = now_ms()
        entry = {
            "seq": len(self.actions) + 1,
            "at_ms": at,
            "at": iso_ms(at),
            "action": action,
            "broker": broker,
            "detail": detail,
        }
        self.actions.append(entry)
        return entry

    # ---- describe snapshots -----------------------------------------------------------------------
    def describe(self) -> tuple[str, dict]:
        text = self.tools.describe()
        return text, parse_describe(text)

    def snapshot(self, label: str, text: str, parsed: dict, at: int) -> dict:
        folder = self.out / "describe"
        folder.mkdir(parents=True, exist_ok=True)
        name = f"describe/{len(self.snapshots):02d}-{label}.txt"
        (self.out / name).write_text(text)
        snap = {
            "label": label,
            "file": name,
            "at_ms": at,
            "after_action": self.actions[-1]["seq"] if self.actions else None,
            "topics": parsed["topics"],
        }
        self.snapshots.append(snap)
        return snap

    def settle(
        self, label: str, check: Callable[[dict], bool], what: str, timeout: float = 120, stable_for: float = 0.0
    ) -> dict:
        """Poll describe until ``check(parsed)``; keep the first describe that satisfies it - or, with
        ``stable_for``, the first one that still says the same ``stable_for`` seconds later (the end
        snapshot: brokers log a change a moment after the controller made it, and the logs are cut there)."""
        deadline = time.monotonic() + timeout
        last = ""
        previous: Optional[dict] = None
        while True:
            try:
                text, parsed = self.describe()
            except LabError as err:  # a broker may answer UnknownServerException mid-failover: ask again
                text, parsed = str(err), None
            at = now_ms()
            if parsed is not None and check(parsed):
                if not stable_for or parsed == previous:
                    return self.snapshot(label, text, parsed, at)
                previous = parsed
                time.sleep(stable_for)
                continue
            previous = None
            last = text
            if time.monotonic() > deadline:
                raise LabError(f"timed out after {timeout:.0f} s waiting for {what}; last describe:\n{last}")
            time.sleep(1.0)

    @property
    def last(self) -> dict:
        return self.snapshots[-1]

    # ---- what the logs say (Kafka's own statements, for the truth) ---------------------------------
    def kafka_lines(
        self,
        pattern: str,
        files: Iterable[str] = ("state-change.log", "server.log", "controller.log"),
        until_ms: Optional[int] = None,
    ) -> list[str]:
        """``broker-N/file:line`` of every line matching ``pattern`` (regex) that Kafka logged."""
        rx = re.compile(pattern)
        refs = []
        for node in sorted(self.cluster.nodes.values(), key=lambda n: n.node_id):
            for name in files:
                path = node.logs / name
                if not path.is_file():
                    continue
                for no, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                    if rx.search(line) and (until_ms is None or _line_ms(line, until_ms) <= until_ms):
                        refs.append(f"broker-{node.node_id}/{name}:{no}")
        return refs


_HEADER = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]")


def _line_ms(line: str, default: int) -> int:
    m = _HEADER.match(line)
    if not m:
        return default
    t = dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.timezone.utc)
    return int(t.timestamp()) * 1000 + int(m.group(2))


def line_ms(line: str) -> Optional[int]:
    """The UTC millisecond of a log4j line's header (the lab runs brokers with -Duser.timezone=UTC)."""
    value = _line_ms(line, -1)
    return None if value < 0 else value


# ---- predicates on a parsed describe -----------------------------------------------------------------
def state(parsed: dict, topic: str, partition: int) -> dict:
    return parsed["topics"][topic]["partitions"][str(partition)]


def fully_in_sync(topics: Optional[Iterable[str]] = None) -> Callable[[dict], bool]:
    """Every partition (of ``topics``) has a leader and its whole replica set in the ISR."""
    wanted = set(topics) if topics is not None else None

    def check(parsed: dict) -> bool:
        seen = False
        for topic, _, p in partitions(parsed):
            if wanted is not None and topic not in wanted:
                continue
            seen = True
            if p["leader"] is None or set(p["isr"]) != set(p["replicas"]):
                return False
        return seen or wanted is None

    return check


def without(broker: int, topics: Optional[Iterable[str]] = None) -> Callable[[dict], bool]:
    """No partition (of ``topics``) is led by ``broker`` and none has it in its ISR, unless it was the
    last replica in the ISR (Kafka keeps the last ISR member)."""
    wanted = set(topics) if topics is not None else None

    def check(parsed: dict) -> bool:
        for topic, _, p in partitions(parsed):
            if wanted is not None and topic not in wanted:
                continue
            if p["leader"] == broker:
                return False
            if broker in p["isr"] and len(p["isr"]) > 1:
                return False
        return True

    return check


def all_of(*checks: Callable[[dict], bool]) -> Callable[[dict], bool]:
    return lambda parsed: all(c(parsed) for c in checks)
