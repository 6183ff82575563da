"""Judge the replay on the issue-14 cases (``tests/data/issue14/<case>/``) against their ``expected.json``.

Each case holds per-broker logs rendered line by line from Kafka's own log statements at the release
it names, and an ``expected.json`` written from Kafka's source (every entry cites it in ``why``):

- ``must_report``: findings that must exist (``rule`` and optionally ``topic``, ``partition``,
  ``replica``, ``kind``), how many (``count``), how severe at least (``severity_at_least``), and which
  lines they must cite (``evidence_includes`` all of, ``evidence_any_of`` one of each group);
- ``must_not_report``: findings that must not exist (``rule`` or ``*``, ``severity_at_least``, ``kind``);
- ``may_report`` with ``severity_at_most``: allowed, but no more severe than that;
- ``max_findings_per_partition`` / ``max_findings_per_rule_partition``: one anomaly, one finding;
- ``must_type``: lines the parser must type (``event_type`` not ``other``), with field values.

Evidence refs are relative to the case folder (``broker-2/state-change.log:5``), as the events are
parsed with that ``source_file``.
"""

from __future__ import annotations

import json
from pathlib import Path

from kafka_forensics.parsers.records import parse_file
from kafka_forensics.replay.events import attrs_of
from kafka_forensics.replay.local import LocalReplay, replay_all, replay_event
from tests.support.paths import DATA

CASES_DIR = DATA / "issue14"
ORDER = ("info", "warning", "error", "critical")  # least severe first


def case_names() -> list[str]:
    return sorted(p.name for p in CASES_DIR.iterdir() if (p / "expected.json").is_file())


def expected_of(case: str) -> dict:
    return json.loads((CASES_DIR / case / "expected.json").read_text(encoding="utf-8"))


def events_of(case: str) -> list[dict]:
    root = CASES_DIR / case
    out = []
    for path in sorted(p for p in root.rglob("*.log") if p.is_file()):
        result = parse_file(path.read_bytes(), str(path.relative_to(root)))
        assert not result.quarantine, result.quarantine
        out.extend(map(replay_event, result.events))
    return out


def replay_case(case: str) -> LocalReplay:
    return replay_all(events_of(case))


def _matches(finding, spec: dict) -> bool:
    if spec.get("rule") not in (None, "*", finding.rule):
        return False
    for key in ("topic", "partition", "replica", "kind"):
        if spec.get(key) is not None and getattr(finding, key) != spec[key]:
            return False
    floor = spec.get("severity_at_least")
    return floor is None or ORDER.index(finding.severity) >= ORDER.index(floor)


def _describe(finding) -> str:
    return (
        f"{finding.rule}:{finding.severity}/{finding.kind} {finding.topic}-{finding.partition} r={finding.replica} "
        f"{list(finding.evidence)[:4]} {finding.summary[:160]}"
    )


def problems(case: str, findings) -> list[str]:
    """Everything in ``findings`` that contradicts the case's expected.json (empty = as expected)."""
    expected = expected_of(case)
    out: list[str] = []
    for spec in expected.get("must_report", []):
        loose = {k: v for k, v in spec.items() if not k.startswith("severity")}
        hits = [f for f in findings if _matches(f, loose)]
        good = [f for f in hits if _matches(f, spec)]
        what = f"{spec['rule']} {spec.get('topic')}-{spec.get('partition')}"
        if not hits:
            out.append(f"missed {what}")
            continue
        if not good:
            out.append(f"{what}: severity {sorted({f.severity for f in hits})}, want >= {spec['severity_at_least']}")
            continue
        if len(good) != spec.get("count", len(good)):
            out.append(f"{what}: {len(good)} findings, want {spec['count']}: {[_describe(f) for f in good]}")
        for ref in spec.get("evidence_includes", []):
            if not any(ref in f.evidence for f in good):
                out.append(f"{what}: evidence lacks {ref}: {[list(f.evidence) for f in good]}")
        for group in spec.get("evidence_any_of", []):
            if not any(r in f.evidence for f in good for r in group):
                out.append(f"{what}: evidence lacks one of {group}")
    for spec in expected.get("must_not_report", []):
        out += [f"must not report ({spec.get('why', '')[:60]}): {_describe(f)}" for f in findings if _matches(f, spec)]
    for spec in expected.get("may_report", []):
        if "severity_at_most" in spec:
            for f in findings:
                if _matches(f, {"rule": spec["rule"]}) and ORDER.index(f.severity) > ORDER.index(
                    spec["severity_at_most"]
                ):
                    out.append(f"may report at most {spec['severity_at_most']}: {_describe(f)}")
    per_partition: dict[str, int] = {}
    per_rule: dict[str, int] = {}
    for f in findings:
        where = f"{f.topic}-{f.partition}"
        per_partition[where] = per_partition.get(where, 0) + 1
        per_rule[f"{f.rule}/{where}"] = per_rule.get(f"{f.rule}/{where}", 0) + 1
    for key, limit in expected.get("max_findings_per_partition", {}).items():
        if per_partition.get(key, 0) > limit:
            out.append(f"{per_partition[key]} findings on {key}, at most {limit}")
    for key, limit in expected.get("max_findings_per_rule_partition", {}).items():
        if per_rule.get(key, 0) > limit:
            out.append(f"{per_rule[key]} findings {key}, at most {limit}")
    return out


def typing_problems(case: str, events: list[dict]) -> list[str]:
    """``must_type`` entries the parser does not meet."""
    by_ref = {f"{e['source_file']}:{e['line_no']}": e for e in events}
    out = []
    for spec in expected_of(case).get("must_type", []):
        event = by_ref.get(spec["ref"])
        if event is None or event["event_type"] == "other":
            out.append(f"{spec['ref']}: untyped")
            continue
        for key, want in spec.get("fields", {}).items():
            have = event.get(key) if key in event else attrs_of(event).get(key)
            if isinstance(have, (list, tuple)):
                have = list(have)
            if have != want and str(have) != str(want):
                out.append(f"{spec['ref']}: {key} = {have!r}, want {want!r}")
    return out


def case_path(case: str) -> Path:
    return CASES_DIR / case
