"""``truth.json`` of a recorded incident: one shape for every incident, and how findings are judged.

Shape (``FORMAT``; every key always present, documented in lab/README.md):

- ``must`` / ``may`` / ``must_not``: lists of ``{"rule", "topic", "partition", "why"}``; ``topic`` or
  ``partition`` ``null`` means any. ``why`` says which action or which describe snapshot makes it so.
- ``evidence_contains``: ``broker-N/file.log:line`` refs (relative to the incident folder) of lines
  in which Kafka itself states the fault; a finding for a ``must`` should cite them.
- ``kafka_version``, ``mode`` (zookeeper|kraft), ``trace`` (state.change.logger at TRACE),
  ``scenario``, ``description``, ``recorded`` (UTC date, command, Java), ``configs``.
- ``actions``: the action log: ``{"seq", "at_ms", "at", "action", "broker", "detail"}`` (UTC).
- ``describe``: the snapshots (``before``, after each action, ``end``): ``{"label", "file", "at_ms",
  "after_action", "topics"}`` - the raw ``kafka-topics --describe`` text is ``file``
  (``describe/NN-label.txt``), ``topics`` its parsed form (``lab/describe.py``).
- ``window``: ``{"start_ms", "end_ms"}``: the logs are cut at ``end_ms`` (the end snapshot).
- ``files``: the log files of the incident (relative paths).

Truth comes from what the lab did and what Kafka reported (the describe snapshots, Kafka's own log
statements of a refusal), never from the tool under test. How findings are judged: every ``must``
is matched by a finding of any severity; a ``must_not`` is violated by a finding of severity
warning or worse (an ``info`` note is never a violation); ``may`` findings are allowed either way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Optional, Sequence

FORMAT = "kafka-forensics-lab-truth/1"
TRUTH_FILE = "truth.json"
LOUD = ("critical", "error", "warning")  # severities a must_not forbids
KEYS = (
    "format",
    "scenario",
    "description",
    "kafka_version",
    "mode",
    "trace",
    "recorded",
    "configs",
    "actions",
    "describe",
    "window",
    "files",
    "must",
    "may",
    "must_not",
    "evidence_contains",
)


def rule_names() -> tuple[str, ...]:
    """The vocabulary of rules (names only: the truth never runs the rules)."""
    from kafka_forensics.replay.findings import RULES

    return tuple(RULES)


def expect(rule: str, topic: Optional[str] = None, partition: Optional[int] = None, why: str = "") -> dict:
    if rule not in rule_names():
        raise ValueError(f"unknown rule {rule!r}")
    return {"rule": rule, "topic": topic, "partition": partition, "why": why}


def complete_must_not(
    must: Sequence[dict], may: Sequence[dict], partitions: Iterable[tuple[str, int]], why: str
) -> list[dict]:
    """Every rule that is neither a must nor a may, anywhere; and a rule that is a must on some
    partitions, on every other partition of the cluster (``partitions``) unless a may allows it."""
    named = {e["rule"] for e in (*must, *may)}
    out = [expect(r, None, None, why) for r in rule_names() if r not in named]
    allowed = {(e["rule"], e["topic"], e["partition"]) for e in (*must, *may)}
    anywhere = {e["rule"] for e in may if e["topic"] is None}
    for rule in sorted({e["rule"] for e in must if e["partition"] is not None} - anywhere):
        for topic, partition in sorted(set(partitions)):
            if (rule, topic, partition) not in allowed and (rule, topic, None) not in allowed:
                out.append(expect(rule, topic, partition, f"only the partitions named in must: {why}"))
    return out


def matches(expected: dict, finding: dict) -> bool:
    """A finding row (``rule``, ``topic``, ``partition``) reports an expectation (null = any)."""
    if finding.get("rule") != expected["rule"]:
        return False
    return all(expected[key] is None or finding.get(key) == expected[key] for key in ("topic", "partition"))


def judge(truth: dict, findings: Sequence[dict]) -> dict:
    """``{"missing": [must...], "violations": [(must_not, finding)...], "recall": float | None}``."""
    missing = [e for e in truth["must"] if not any(matches(e, f) for f in findings)]
    violations = []
    for f in findings:
        if f.get("severity") not in LOUD or any(matches(e, f) for e in truth["may"]):
            continue
        hit = next((e for e in truth["must_not"] if matches(e, f)), None)
        if hit is not None:
            violations.append((hit, f))
    recall = None if not truth["must"] else (len(truth["must"]) - len(missing)) / len(truth["must"])
    return {"missing": missing, "violations": violations, "recall": recall}


def validate(truth: dict) -> list[str]:
    """Problems with a truth document's shape (empty = well formed)."""
    problems = [f"missing key {k!r}" for k in KEYS if k not in truth]
    if problems:
        return problems
    if truth["format"] != FORMAT:
        problems.append(f"format {truth['format']!r} is not {FORMAT!r}")
    if truth["mode"] not in ("zookeeper", "kraft"):
        problems.append(f"mode {truth['mode']!r}")
    names = set(rule_names())
    for key in ("must", "may", "must_not"):
        for e in truth[key]:
            if set(e) != {"rule", "topic", "partition", "why"}:
                problems.append(f"{key} entry keys {sorted(e)}")
            elif e["rule"] not in names:
                problems.append(f"{key}: unknown rule {e['rule']!r}")
    for a in truth["actions"]:
        if set(a) != {"seq", "at_ms", "at", "action", "broker", "detail"}:
            problems.append(f"action keys {sorted(a)}")
    for d in truth["describe"]:
        if set(d) != {"label", "file", "at_ms", "after_action", "topics"}:
            problems.append(f"describe keys {sorted(d)}")
    if not truth["describe"] or truth["describe"][-1]["label"] != "end":
        problems.append("the last describe snapshot is not 'end'")
    return problems


def write_truth(folder: Path, truth: dict) -> Path:
    ordered = {k: truth[k] for k in KEYS}
    path = Path(folder) / TRUTH_FILE
    path.write_text(json.dumps(ordered, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load_truth(folder: Path) -> dict:
    return json.loads((Path(folder) / TRUTH_FILE).read_text(encoding="utf-8"))
