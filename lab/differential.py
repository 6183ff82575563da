"""Real Kafka against the project's simulator: the line shapes each one prints, per release.

A line's shape is the grammar template that types it (``leader_starts__v36``...), per log kind; a
state-change or controller line no template types is shaped by its logger and its message with
numbers, topic-partitions and ids masked. For each release line, the shapes of every recorded
incident of that line (and TRACE level) are compared with those the simulator writes for the same
release over the scenarios the lab also plays (failover, zombie, unclean election, reassignment,
deletion, and the "lifecycle" day with controlled shutdown and preferred election). Both
differences are reported: shapes only real Kafka printed, and shapes only the simulator printed.
The simulator writes 3.9 only as KRaft, so 3.9 ZooKeeper-mode incidents are compared with its 3.6
(the same zk-3.x era), and 4.1 with its 3.9 KRaft.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

SIM_VERSION = {
    ("0.10", "zookeeper"): "0.10.2",
    ("1.1", "zookeeper"): "1.1",
    ("2.4", "zookeeper"): "2.4",
    ("2.8", "zookeeper"): "2.8",
    ("3.9", "zookeeper"): "3.6",
    ("3.9", "kraft"): "3.9-kraft",
    ("4.1", "kraft"): "3.9-kraft",
}
SIM_SCENARIOS = (
    "clean-failover",
    "zombie-controller",
    "unclean-election",
    "reassignment",
    "lifecycle",
    "topic-deletion-stuck",
)
_TP = re.compile(r"\b[A-Za-z_][\w.]*-\d+\b")
_ID = re.compile(r"\b[A-Za-z0-9_-]{22}\b")
_NUM = re.compile(r"\d+")
_TOPIC = re.compile(
    r"(?:(?<=\btopic )|(?<=\btopics ))(?!callback\b|deletion\b|id\b|ID\b|to\b|with\b|partitions?\b)"
    r"[\w.-]+|(?<=Topic=)[\w.-]+|(?<=name=')[\w.-]+(?=')"
)
_RECORD = re.compile(r'"type":"(\w+)"|controlType: (\w+)')


def shape(event: dict) -> str | None:
    kind = event["log_kind"]
    if event.get("template"):
        return f"{kind}: {event['template']}"
    if kind == "server":
        return None  # the simulator writes a few server.log lines only; untyped ones are not compared
    text = event["message"] or ""
    if kind == "metadata":  # a kafka-dump-log record: its record type
        m = _RECORD.search(text)
        return f"metadata: {(m.group(1) or m.group(2)) if m else text[:40]}"
    message = _NUM.sub("N", _ID.sub("ID", _TP.sub("T-P", _TOPIC.sub("T", text))))
    return f"{kind}: untyped {event.get('logger')}: {message[:140]}"


def shapes_of(folder: Path, files: Iterable[str]) -> set[str]:
    from kafka_forensics.parsers.records import parse_file

    out = set()
    for name in files:
        for event in parse_file((folder / name).read_bytes(), name).events:
            s = shape(event)
            if s:
                out.add(s)
    return out


@dataclass
class Difference:
    release: str  # "3.9 zookeeper INFO"
    simulator: str  # "3.6 INFO"
    incidents: list[str]
    real_only: list[str] = field(default_factory=list)
    sim_only: list[str] = field(default_factory=list)
    common: int = 0


def simulated_shapes(version: str, trace: bool, root: Path) -> set[str]:
    from kafka_forensics.simulator.scenarios import SCENARIOS, run_scenario

    out: set[str] = set()
    for name in SIM_SCENARIOS:
        scenario = SCENARIOS[name]
        if version not in scenario.versions:
            continue
        res = run_scenario(name, version, root / f"{name}-{version}-{int(trace)}", seed=7, trace=trace)
        out |= shapes_of(res.out_dir, res.files)
    return out


def differential(incidents: Iterable[Path]) -> list[Difference]:
    groups: dict[tuple[str, str, bool], list[Path]] = {}
    for folder in incidents:
        truth = json.loads((folder / "truth.json").read_text())
        line = ".".join(truth["kafka_version"].split(".")[:2])
        groups.setdefault((line, truth["mode"], truth["trace"]), []).append(folder)
    out = []
    with tempfile.TemporaryDirectory(prefix="kf-lab-diff-") as tmp:
        for (line, mode, trace), folders in sorted(groups.items()):
            sim = SIM_VERSION.get((line, mode))
            if sim is None:
                continue
            real: set[str] = set()
            for folder in folders:
                real |= shapes_of(folder, json.loads((folder / "truth.json").read_text())["files"])
            simulated = simulated_shapes(sim, trace, Path(tmp))
            level = "TRACE" if trace else "stock level"
            out.append(
                Difference(
                    f"{line} {mode} {level}",
                    f"{sim} {level}",
                    [f.name for f in folders],
                    sorted(real - simulated),
                    sorted(simulated - real),
                    len(real & simulated),
                )
            )
    return out


def render(diffs: list[Difference]) -> str:
    parts = []
    for d in diffs:
        parts.append(
            f"## Kafka {d.release} (real) vs simulator {d.simulator}\n\n"
            f"{len(d.incidents)} incidents, {d.common} shapes in common, {len(d.real_only)} only real, "
            f"{len(d.sim_only)} only simulated.\n"
        )
        parts.append("Only real Kafka printed:\n" + ("".join(f"- `{s}`\n" for s in d.real_only) or "- none\n"))
        parts.append("Only the simulator printed:\n" + ("".join(f"- `{s}`\n" for s in d.sim_only) or "- none\n"))
    return "\n".join(parts)
