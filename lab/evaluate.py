"""Judge the tool on a recorded incident: the numbers of the lab's table, one incident at a time.

This is the only module of the lab that runs the tool under test (the in-process parse and replay,
``parsers.records.parse_file`` and ``statemachines.replay_local.replay_all``, the twins of the
Spark jobs); the truth it is judged against never came from it. It reports:

- reconciliation: per file, lines read = records + continuation lines + quarantined;
- typed: the share of state-change.log records whose ``event_type`` is not ``other``;
- final state: the replay's last leader / ISR / replicas of each partition against the ``end``
  describe snapshot (a deleted topic must end without a live state);
- findings against ``truth.json`` (``truth.judge``): recall of ``must``, ``must_not`` violations.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from kafka_forensics.core.errors import InputError

from .describe import partitions
from .truth import judge, load_truth

GONE_STATES = ("NonExistentPartition",)


@dataclass
class Evaluation:
    name: str
    truth: dict
    files: dict[str, dict] = field(default_factory=dict)  # file -> parse summary
    untyped: list[tuple[str, int, str]] = field(default_factory=list)  # (file, line, message) of state-change lines
    state_change_records: int = 0
    findings: list[dict] = field(default_factory=list)
    final: dict[tuple[str, int], dict] = field(default_factory=dict)  # replayed last interval
    mismatches: list[str] = field(default_factory=list)
    verdict: dict = field(default_factory=dict)

    @property
    def lines(self) -> int:
        return sum(s["lines_read"] for s in self.files.values())

    @property
    def unreconciled(self) -> list[str]:
        return [
            f
            for f, s in self.files.items()
            if s["lines_read"] != s["records"] + s["continuation_lines"] + s["quarantined"]
        ]

    @property
    def quarantined(self) -> int:
        return sum(s["quarantined"] for s in self.files.values())

    @property
    def typed_share(self) -> Optional[float]:
        if not self.state_change_records:
            return None
        return 1 - len(self.untyped) / self.state_change_records


def _events(folder: Path, files: list[str]) -> tuple[list[dict], dict[str, dict], list, int]:
    from kafka_forensics.parsers.records import parse_file

    events, summaries, untyped, sc = [], {}, [], 0
    for name in files:
        result = parse_file((folder / name).read_bytes(), name)
        summaries[name] = result.summary
        for e in result.events:
            if e["log_kind"] == "state-change" and Path(name).name.startswith("state-change"):
                sc += 1
                if e["event_type"] == "other":
                    untyped.append((name, e["line_no"], e["message"]))
            if e["ts"] is not None:
                e["ts"] = dt.datetime.fromtimestamp(e["ts"] / 1e6, dt.timezone.utc)
            e["attrs"] = dict(e.get("attrs") or {})
            events.append(e)
    return events, summaries, untyped, sc


def evaluate(folder: Path) -> Evaluation:
    from kafka_forensics.replay.local import replay_all

    folder = Path(folder)
    if not (folder / "truth.json").is_file():
        raise InputError(f"{folder} is not a recorded incident (no truth.json)")
    truth = load_truth(folder)
    ev = Evaluation(folder.name, truth)
    events, ev.files, ev.untyped, ev.state_change_records = _events(folder, truth["files"])
    result = replay_all(events)
    ev.findings = [f.to_row() for f in result.findings]
    for row in result.partition_intervals:
        ev.final[(row["topic"], row["partition"])] = row  # rows are in order per partition
    ev.mismatches = final_state_mismatches(truth["describe"][-1]["topics"], ev.final)
    ev.verdict = judge(truth, ev.findings)
    return ev


def final_state_mismatches(described: dict, final: dict[tuple[str, int], dict]) -> list[str]:
    """Where the replay's last state differs from what ``kafka-topics --describe`` printed at the end."""
    out = []
    seen = set()
    for topic, partition, want in partitions({"topics": described}):
        seen.add((topic, partition))
        got = final.get((topic, partition))
        if got is None:
            out.append(f"{topic}-{partition}: no replayed state (describe: leader {want['leader']}, isr {want['isr']})")
            continue
        diffs = []
        if got.get("leader") != want["leader"]:
            diffs.append(f"leader {got.get('leader')} != {want['leader']}")
        if got.get("isr") is None or set(got["isr"]) != set(want["isr"]):
            diffs.append(f"isr {got.get('isr')} != {want['isr']}")
        if got.get("replicas") is not None and set(got["replicas"]) != set(want["replicas"]):
            diffs.append(f"replicas {got.get('replicas')} != {want['replicas']}")
        if diffs:
            out.append(f"{topic}-{partition}: " + ", ".join(diffs))
    for (topic, partition), got in sorted(final.items()):
        if (topic, partition) not in seen and topic not in described and got.get("state") not in GONE_STATES:
            out.append(
                f"{topic}-{partition}: deleted (absent from describe) but replayed as {got.get('state')} "
                f"leader {got.get('leader')}"
            )
    return out


def table_row(ev: Evaluation) -> str:
    """One Markdown row of the lab's table."""
    v = ev.verdict
    recall = "-" if v["recall"] is None else f"{len(ev.truth['must']) - len(v['missing'])}/{len(ev.truth['must'])}"
    typed = "-" if ev.typed_share is None else f"{100 * ev.typed_share:.1f}% of {ev.state_change_records}"
    reconciled = "yes" if not ev.unreconciled else f"NO ({', '.join(ev.unreconciled)})"
    violations = sorted({f"{f['rule']}({f['severity']})" for _, f in v["violations"]})
    final = "equal" if not ev.mismatches else f"{len(ev.mismatches)} differ"
    return (
        f"| {ev.name} | {ev.lines:,} | {reconciled}, {ev.quarantined} quarantined | {typed} | {recall} | "
        f"{len(v['violations'])}{': ' + ', '.join(violations) if violations else ''} | {final} |"
    )


TABLE_HEAD = (
    "| incident | lines | reconciled | state-change typed | must found | must-not violations (findings) "
    "| final state vs describe |\n|---|---|---|---|---|---|---|"
)
