"""The three suites: which expectations each runs, on which table, with which thresholds.

``events``    the parsed lines: schema, levels, non-negative ids and epochs, states of the era,
              parsed timestamps, quarantine rate.          Batch: DIR/events.
``timelines`` the replayed state: legal transitions, leader ∈ ISR ⊆ replicas, epochs never go
              back.                                        Batch: DIR/partition_timeline.
``failover``  what goes wrong around a controller change.  Batch: DIR/findings.
``impact``    what the incident cost: no partition unavailable or under min ISR longer than a bound.
                                                           Batch: DIR/impact.

Every expectation carries ``meta.kf_key``: the stable name the verdict reports it under (the GX
expectation type, plus ``:column`` for a built-in column expectation).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import great_expectations.expectations as gxe
from great_expectations.expectations.expectation import Expectation

from kafka_forensics.core.tables import EVENT_COLUMNS, EVENTS, FINDINGS, IMPACT, PARTITION_TIMELINE

from . import custom
from .names import SUITES

SUITE_TABLES = {
    "events": EVENTS,
    "timelines": PARTITION_TIMELINE,
    "failover": FINDINGS,
    "impact": IMPACT,
}  # suite -> table it validates
# log4j levels the header grammar accepts (parsers/grammar/header.lark, LEVEL)
LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
NOT_NULL = ("source_file", "line_no", "event_type")
# Where a built-in column expectation's offending rows are cited from (partial_unexpected_index_list).
EVIDENCE_COLUMNS = {"events": ["source_file", "line_no"]}


@dataclass(frozen=True)
class SuiteSettings:
    """What the suites need from the check configuration."""

    max_quarantine_rate: float = 0.01
    clock_skew_seconds: float = 2.0
    max_unavailable_seconds: float = 60.0
    max_under_min_isr_seconds: float = 60.0
    severity: Mapping[str, str] = field(default_factory=dict)  # kf_key -> severity (default critical)


def key_of(expectation: Expectation) -> str:
    column = getattr(expectation, "column", None)
    return f"{expectation.expectation_type}:{column}" if column else expectation.expectation_type


def _column_expectations() -> list[Expectation]:
    out: list[Expectation] = [gxe.ExpectTableColumnsToMatchSet(column_set=list(EVENT_COLUMNS), exact_match=False)]
    out += [gxe.ExpectColumnValuesToNotBeNull(column=c) for c in NOT_NULL]
    out.append(gxe.ExpectColumnValuesToBeInSet(column="level", value_set=list(LEVELS)))
    return out


def expectations_for(suite: str, settings: SuiteSettings) -> list[Expectation]:
    """The expectations of ``suite``, each with ``meta.kf_key`` and its severity set."""
    if suite == "events":
        items = _column_expectations() + [
            custom.ExpectIdsAndEpochsToBeNonNegative(),
            custom.ExpectStateNamesToExistInTheirEra(),
            custom.ExpectTimestampsToBeParsed(),
            custom.ExpectQuarantineRateToBeBelow.with_max_rate(settings.max_quarantine_rate),
        ]
    elif suite == "timelines":
        items = [
            custom.ExpectTimelineTransitionsToBeLegalForTheirEra(),
            custom.ExpectLeaderToBeInIsr(),
            custom.ExpectIsrToBeWithinReplicas(),
            custom.ExpectLeaderEpochToNeverDecrease(),
            custom.ExpectPartitionEpochToNeverDecrease(),
            custom.ExpectControllerEpochToNeverDecrease(),
        ]
    elif suite == "failover":
        items = [
            custom.ExpectNoLeaderIsrMismatchAfterFailover(),
            custom.ExpectNoConcurrentControllers.with_skew(settings.clock_skew_seconds),
            custom.ExpectNoStaleEpochRejections(),
            custom.ExpectNoOfflinePartitionWithLiveReplicas(),
            custom.ExpectNoUncleanElections(),
            custom.ExpectNoLeaderOnFencedBroker(),
            custom.ExpectNoPartitionEpochGaps(),
            custom.ExpectBrokerViewsToMatchMetadata(),
        ]
    elif suite == "impact":
        items = [
            custom.ExpectNoPartitionUnavailableLongerThan.with_max_seconds(settings.max_unavailable_seconds),
            custom.ExpectNoPartitionUnderMinIsrLongerThan.with_max_seconds(settings.max_under_min_isr_seconds),
        ]
    else:
        raise ValueError(f"unknown suite {suite!r}")
    for item in items:
        key = key_of(item)
        item.meta = {
            **(item.meta or {}),
            "kf_key": key,
            "kf_suite": suite,
            "kf_rule": getattr(type(item), "rule", "") or None,
        }
        item.severity = settings.severity.get(key, "critical")
    return items


def all_keys() -> dict[str, list[str]]:
    """suite -> the kf_keys of its expectations (to validate severity overrides in a config)."""
    return {s: [key_of(e) for e in expectations_for(s, SuiteSettings())] for s in SUITES}
