"""Ground truth: what the replay must report for a simulated incident, with the evidence lines.

``truth.json`` lists the findings a correct replay reports (rule names of
``kafka_forensics.replay.findings.RULES``), each with topic/partition/replica, controller
epoch, the timestamp as logged and the ``file:line`` of the lines that prove it; plus the facts a
reader needs to judge the logs (lines removed from a file, clock skews, shared files).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Optional, Sequence

from .clock import iso_utc
from .writer import LogOutput

TRUTH_FILE = "truth.json"


class Truth:
    """Collected during the run; line references are resolved to file names only at the end."""

    def __init__(self) -> None:
        self.findings: list[dict] = []
        self.deleted: list[dict] = []
        self.skews: list[dict] = []
        self.shared: list[dict] = []
        self.events: list[dict] = []  # what happened, for the scenario README (not findings)

    def add(
        self,
        rule: str,
        *,
        evidence: Sequence[Optional[tuple]],
        topic: Optional[str] = None,
        partition: Optional[int] = None,
        replica: Optional[int] = None,
        controller_epoch: Optional[int] = None,
        note: str = "",
    ) -> None:
        refs = [r for r in evidence if r is not None][:20]
        self.findings.append(
            {
                "rule": rule,
                "topic": topic,
                "partition": partition,
                "replica": replica,
                "controller_epoch": controller_epoch,
                "_refs": refs,
                "note": note,
            }
        )

    def event(self, what: str, ref: Optional[tuple] = None, **detail) -> None:
        self.events.append({"what": what, "_ref": ref, **detail})

    def to_dict(self, meta: dict) -> dict:
        """The JSON document (call after ``LogOutput.close()``: file names are final then)."""
        findings = []
        for f in self.findings:
            refs = f["_refs"]
            findings.append(
                {
                    "rule": f["rule"],
                    "topic": f["topic"],
                    "partition": f["partition"],
                    "replica": f["replica"],
                    "controller_epoch": f["controller_epoch"],
                    "ts": iso_utc(refs[0][2]) if refs else None,
                    "evidence": [LogOutput.ref_text(r) for r in refs],
                    "note": f["note"],
                }
            )
        events = [
            {**{k: v for k, v in e.items() if k != "_ref"}, "at": LogOutput.ref_text(e["_ref"]) if e["_ref"] else None}
            for e in self.events
        ]
        deleted = []
        for d in self.deleted:
            after = d["_after"]
            deleted.append(
                {
                    "file": after[0].name if after else d["_file"],
                    "after_line": after[1] if after else 0,
                    "count": d["count"],
                    "lines": d["lines"],
                }
            )
        return {
            **meta,
            "findings": findings,
            "deleted_lines": deleted,
            "clock_skew": self.skews,
            "shared_files": self.shared,
            "events": events,
        }


def write_truth(root: Path, doc: dict) -> Path:
    path = Path(root) / TRUTH_FILE
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load_truth(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def finding_matches(expected: dict, row: dict) -> bool:
    """Does a replay finding row report the expected one? Rule must be equal; topic, partition and
    replica must be equal where both sides name them (a request-level finding has no partition)."""
    if row.get("rule") != expected["rule"]:
        return False
    for key in ("topic", "partition", "replica"):
        want = expected.get(key)
        if want is not None and row.get(key) is not None and row.get(key) != want:
            return False
        if want is not None and key != "replica" and row.get(key) is None:
            return False
    return True


def unmatched(expected: Iterable[dict], rows: Sequence[dict]) -> list[dict]:
    """The expected findings no row reports (empty = the replay found the whole truth)."""
    return [e for e in expected if not any(finding_matches(e, r) for r in rows)]
