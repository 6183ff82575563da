"""The ``check`` configuration: a TOML file merged over the bundled ``expectations/default_check.toml``.

The defaults live in that one documented file; a user's file may set only the keys it changes.
Anything unknown (a key, a suite, an expectation name, a severity) is a usage error (exit 2),
because a typo in a scheduled job's config must not silently check less.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from importlib import resources
from typing import Any, Optional

import tomllib

from kafka_forensics.core.errors import UsageError
from kafka_forensics.expectations.names import SEVERITIES as _SEVERITIES
from kafka_forensics.expectations.names import SUITES

DEFAULT_CONFIG = "default_check.toml"
_KEYS = {
    "suites": None,
    "thresholds": {"max_quarantine_rate", "clock_skew_seconds", "max_unavailable_seconds", "max_under_min_isr_seconds"},
    "verdict": {"fail_on", "sample_rows"},
    "severity": None,
}


@dataclass(frozen=True)
class CheckConfig:
    suites: tuple[str, ...] = SUITES
    max_quarantine_rate: float = 0.01
    clock_skew_seconds: float = 2.0
    max_unavailable_seconds: float = 60.0
    max_under_min_isr_seconds: float = 60.0
    fail_on: tuple[str, ...] = ("critical",)
    sample_rows: int = 5
    severity: dict[str, str] = field(default_factory=dict)  # expectation name -> severity
    source: str = "default"  # where the values came from: "default" or the file given

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["suites"], out["fail_on"] = list(self.suites), list(self.fail_on)
        out["severity"] = dict(sorted(self.severity.items()))
        return out


def _default_text() -> str:
    return (resources.files("kafka_forensics.expectations") / DEFAULT_CONFIG).read_text("utf-8")


def _parse(text: str, where: str) -> dict:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise UsageError(f"--config {where} is not valid TOML: {err}") from None
    for key, value in data.items():
        if key not in _KEYS:
            raise UsageError(f"--config {where}: unknown key {key!r} (known: {', '.join(_KEYS)})")
        allowed = _KEYS[key]
        if allowed is not None:
            if not isinstance(value, dict):
                raise UsageError(f"--config {where}: [{key}] must be a table")
            unknown = sorted(set(value) - allowed)
            if unknown:
                raise UsageError(
                    f"--config {where}: unknown key {key}.{unknown[0]} (known: {', '.join(sorted(allowed))})"
                )
    return data


def _merge(base: dict, override: dict) -> dict:
    out = dict(base)
    for key, value in override.items():
        out[key] = {**out.get(key, {}), **value} if isinstance(value, dict) else value
    return out


def _number(value: Any, name: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise UsageError(f"--config {where}: {name} must be a non-negative number, got {value!r}")
    return float(value)


def _build(data: dict, where: str) -> CheckConfig:
    from kafka_forensics.expectations.suites import all_keys

    suites = data.get("suites", [])
    if not isinstance(suites, list) or not suites or not all(isinstance(s, str) for s in suites):
        raise UsageError(f"--config {where}: suites must be a non-empty list of suite names")
    for suite in suites:
        if suite not in SUITES:
            raise UsageError(f"--config {where}: unknown suite {suite!r} (known: {', '.join(SUITES)})")
    thresholds, verdict = data.get("thresholds", {}), data.get("verdict", {})
    fail_on = verdict.get("fail_on", ["critical"])
    if not isinstance(fail_on, list) or any(s not in _SEVERITIES for s in fail_on):
        raise UsageError(f"--config {where}: verdict.fail_on must list severities from {', '.join(_SEVERITIES)}")
    sample_rows = verdict.get("sample_rows", 5)
    if isinstance(sample_rows, bool) or not isinstance(sample_rows, int) or not 0 <= sample_rows <= 100:
        raise UsageError(f"--config {where}: verdict.sample_rows must be an integer from 0 to 100")
    known = {k for keys in all_keys().values() for k in keys}
    severity = data.get("severity", {})
    for name, level in severity.items():
        if name not in known:
            raise UsageError(f"--config {where}: [severity] names no expectation: {name!r}")
        if level not in _SEVERITIES:
            raise UsageError(f"--config {where}: severity of {name} must be one of {', '.join(_SEVERITIES)}")
    rate = _number(thresholds.get("max_quarantine_rate", 0.01), "thresholds.max_quarantine_rate", where)
    if rate > 1:
        raise UsageError(f"--config {where}: thresholds.max_quarantine_rate is a share, at most 1")
    return CheckConfig(
        suites=tuple(dict.fromkeys(suites)),
        max_quarantine_rate=rate,
        clock_skew_seconds=_number(thresholds.get("clock_skew_seconds", 2.0), "thresholds.clock_skew_seconds", where),
        max_unavailable_seconds=_number(
            thresholds.get("max_unavailable_seconds", 60.0), "thresholds.max_unavailable_seconds", where
        ),
        max_under_min_isr_seconds=_number(
            thresholds.get("max_under_min_isr_seconds", 60.0), "thresholds.max_under_min_isr_seconds", where
        ),
        fail_on=tuple(fail_on),
        sample_rows=sample_rows,
        severity=dict(severity),
        source=where,
    )


def load_check_config(path: Optional[str] = None) -> CheckConfig:
    """The bundled defaults, overridden by the TOML file at ``path`` if given (UsageError if unusable)."""
    data = _parse(_default_text(), "(bundled default)")
    if path is None:
        return _build(data, "default")
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"--config {path}: cannot read it: {err}") from None
    return _build(_merge(data, _parse(text, path)), path)
