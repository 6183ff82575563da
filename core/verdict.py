"""The verdict: ``verdict.json``, what a scheduler acts on - written by ``check``, read by ``report``.

One definition of the document: ``Verdict`` is what the check job writes (atomically, always,
also on errors: ``jobs/check_job.py``), and ``summarize_verdict`` is how a reader (the HTML
report) reads one back - tolerantly, since an unreadable or foreign verdict must not cost the
on-call engineer the whole report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

VERDICT = "verdict.json"  # under the output directory
VERDICT_VERSION = 1


@dataclass
class Verdict:
    """What a scheduler acts on. ``exit_code``: 0 passed, 1 expectations failed, 2 input/config error, 3 bug."""

    passed: bool
    exit_code: int
    out_dir: str
    error: Optional[str] = None
    failed_expectations: list[str] = field(default_factory=list)  # "suite.expectation" that fail the check
    warnings: list[str] = field(default_factory=list)  # failed, but with a severity that does not fail it
    suites: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    findings_by_rule: dict[str, Any] = field(default_factory=dict)
    thresholds: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict_version": VERDICT_VERSION,
            "passed": self.passed,
            "exit_code": self.exit_code,
            "error": self.error,
            "failed_expectations": self.failed_expectations,
            "warnings": self.warnings,
            "suites": self.suites,
            "counts": self.counts,
            "findings_by_rule": self.findings_by_rule,
            "thresholds": self.thresholds,
            "inputs": self.inputs,
            "versions": self.versions,
            "out_dir": self.out_dir,
            "outputs": self.outputs,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False, ensure_ascii=False, default=str) + "\n"


@dataclass(frozen=True)
class SuiteSummary:
    """One suite's outcome as a reader of ``verdict.json`` shows it."""

    name: str
    passed: Optional[bool]
    evaluated: Optional[int]
    failed: Optional[int]


@dataclass(frozen=True)
class VerdictSummary:
    """What the report shows of a ``verdict.json`` (read by ``summarize_verdict``; missing: "not run")."""

    status: str  # passed | failed | not run | unreadable
    suites: tuple[SuiteSummary, ...] = ()
    note: Optional[str] = None
    failing: tuple[str, ...] = ()  # "suite.expectation" names that failed the check (at most 50)
    warnings: tuple[str, ...] = ()  # failed, but below the check's fail-on severity (at most 50)


def summarize_verdict(doc: Any) -> VerdictSummary:
    """Pass/fail and per-suite counts from whatever shape the check job wrote."""
    if not isinstance(doc, dict):
        return VerdictSummary(status="unreadable", note="verdict.json is not a JSON object")
    passed = _passed_of(doc)
    suites_doc = next((doc[k] for k in ("suites", "results", "suite_results", "per_suite") if k in doc), None)
    suites: list[SuiteSummary] = []
    if isinstance(suites_doc, dict):
        items = list(suites_doc.items())
    elif isinstance(suites_doc, list):
        items = [
            (str(s.get("suite") or s.get("name") or s.get("suite_name") or n), s)
            if isinstance(s, dict)
            else (str(n), s)
            for n, s in enumerate(suites_doc)
        ]
    else:
        items = []
    for name, s in items[:100]:
        if isinstance(s, dict):
            suites.append(
                SuiteSummary(
                    name=str(name),
                    passed=_passed_of(s),
                    evaluated=_int_of(s, ("evaluated", "evaluated_expectations", "total", "expectations", "count")),
                    failed=_int_of(s, ("failed", "unsuccessful", "unsuccessful_expectations", "failures")),
                )
            )
        elif isinstance(s, bool):
            suites.append(SuiteSummary(name=str(name), passed=s, evaluated=None, failed=None))
    if passed is None and suites and all(s.passed is not None for s in suites):
        passed = all(s.passed for s in suites)
    status = "unreadable" if passed is None else ("passed" if passed else "failed")
    note = None if passed is not None else "verdict.json has no pass/fail field"
    if isinstance(doc.get("error"), str) and doc["error"]:
        note = f"the check could not run: {doc['error'][:300]}"
    return VerdictSummary(
        status=status,
        suites=tuple(suites),
        note=note,
        failing=_names(doc.get("failed_expectations")),
        warnings=_names(doc.get("warnings")),
    )


def _names(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value[:50]) if isinstance(value, list) else ()


def _passed_of(doc: dict) -> Optional[bool]:
    for key in ("passed", "success", "ok"):
        if isinstance(doc.get(key), bool):
            return doc[key]
    for key in ("verdict", "status", "result"):
        value = doc.get(key)
        if isinstance(value, str) and value.lower() in ("pass", "passed", "success", "ok", "fail", "failed", "failure"):
            return value.lower() in ("pass", "passed", "success", "ok")
    return None


def _int_of(doc: dict, keys: tuple[str, ...]) -> Optional[int]:
    for key in keys:
        value = doc.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            return value
        if isinstance(value, list):
            return len(value)
    stats = doc.get("statistics")
    if isinstance(stats, dict):
        return _int_of(stats, keys)
    return None
