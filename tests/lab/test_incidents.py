"""The recorded real incidents (sample_logs/real-*/, written by ``kafka-forensics lab record`` from real
Kafka brokers) judged against their truth.json, which came from the lab's action log and Kafka's own
describe output - never from this tool.

For every incident: every line is reconciled, every state-change line is typed, every line with the
layout's header is a record, the replay's final state equals the last describe snapshot, every
``must`` finding is found and no ``must_not`` finding (warning or worse) is raised. Where today's tool
falls short the check is an expected failure from ONE table, KNOWN_GAPS, naming the class of the gap
(issue 14's numbering where it has one); ``strict=True`` makes a fix flip it, so its entry must go.
"""

from __future__ import annotations

import fnmatch
import functools
from typing import Optional

import pytest

from kafka_forensics.lab.evaluate import evaluate
from kafka_forensics.lab.truth import load_truth, validate
from tests.support.paths import REPO

INCIDENTS = sorted(p.parent.name for p in (REPO / "sample_logs").glob("real-*/truth.json"))

# ---- the known gaps of today's tool: ONE table ---------------------------------------------------------
# Each gap class once, with the incidents (fnmatch patterns on the folder name) and the check it fails.
# Checks: reconciled, records, typed, final_state, must, must_not. A fixed class makes its xfails pass
# (strict): delete its row then.
KNOWN_GAPS: list[tuple[str, str, str]] = []


def known_gap(name: str, check: str) -> Optional[str]:
    reasons = [reason for pattern, c, reason in KNOWN_GAPS if c == check and fnmatch.fnmatchcase(name, pattern)]
    return "; ".join(reasons) or None


def _param(check: str):
    out = []
    for name in INCIDENTS:
        reason = known_gap(name, check)
        marks = (pytest.mark.xfail(strict=True, reason=reason),) if reason else ()
        out.append(pytest.param(name, id=name, marks=marks))
    return out


@functools.lru_cache(maxsize=None)
def _evaluated(name: str):
    return evaluate(REPO / "sample_logs" / name)


def test_there_are_recorded_incidents():
    truths = [load_truth(REPO / "sample_logs" / n) for n in INCIDENTS]
    assert len(truths) >= 10
    assert {t["mode"] for t in truths} == {"zookeeper", "kraft"}
    assert len({t["kafka_version"] for t in truths}) >= 2


@pytest.mark.parametrize("name", INCIDENTS)
def test_truth_is_well_formed(name):
    folder = REPO / "sample_logs" / name
    truth = load_truth(folder)
    assert validate(truth) == []
    for f in truth["files"]:
        assert (folder / f).is_file(), f
    for snap in truth["describe"]:
        assert (folder / snap["file"]).read_text().startswith("Topic:"), snap["file"]
    for ref in truth["evidence_contains"]:
        path, line = ref.rsplit(":", 1)
        assert (folder / path).is_file() and int(line) >= 1, ref
    assert (folder / "README.md").is_file()


@pytest.mark.parametrize("name", _param("reconciled"))
def test_every_line_is_reconciled(name):
    ev = _evaluated(name)
    assert ev.unreconciled == []


@pytest.mark.parametrize("name", _param("records"))
def test_every_header_line_is_a_record(name):
    ev = _evaluated(name)
    assert ev.quarantined == 0, {f: s["quarantined"] for f, s in ev.files.items() if s["quarantined"]}


@pytest.mark.parametrize("name", _param("typed"))
def test_every_state_change_line_is_typed(name):
    ev = _evaluated(name)
    assert ev.untyped == []


@pytest.mark.parametrize("name", _param("final_state"))
def test_final_state_equals_the_last_describe(name):
    ev = _evaluated(name)
    assert ev.mismatches == []


@pytest.mark.parametrize("name", _param("must"))
def test_every_must_finding_is_found(name):
    ev = _evaluated(name)
    assert [(e["rule"], e["topic"], e["partition"]) for e in ev.verdict["missing"]] == []


@pytest.mark.parametrize("name", _param("must_not"))
def test_no_must_not_finding(name):
    ev = _evaluated(name)
    assert [
        (f["rule"], f["severity"], f["topic"], f["partition"], f["summary"][:160]) for _, f in ev.verdict["violations"]
    ] == []
