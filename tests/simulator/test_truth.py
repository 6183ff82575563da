"""Ground truth: the committed simulated samples are reproducible from their seed, their evidence
points at real lines, and the replay (replay.local, the in-process twin of
jobs/replay_job, and the Spark job itself) reports every expected finding - and, for scenarios
without a fault, nothing above "info"."""

from __future__ import annotations

import json

import pytest

from kafka_forensics.replay.findings import RULES, SEVERITIES
from kafka_forensics.simulator.scenarios import SCENARIOS, run_scenario
from kafka_forensics.simulator.truth import finding_matches, unmatched
from tests.support.paths import SAMPLES as SAMPLE_ROOT
from tests.support.simulator import CASES, CLEAN, case_id, load, mentions, replay_rows, sample_dirs, simulated

SAMPLES = sample_dirs()
ABOVE_INFO = set(SEVERITIES[: SEVERITIES.index("info")])

# Where the replay and Kafka's documented behaviour disagree (reported, kept visible as xfail):
# (none at the moment: the transient ISR-not-within-replicas of a reassignment, KAFKA-9672, is now
# reported at info once a later state resolves it)
REPLAY_DISAGREES: dict[str, str] = {}


def test_there_are_committed_samples():
    names = {load(p / "truth.json")["scenario"] for p in SAMPLES}
    assert {
        "clean-failover",
        "unclean-election",
        "zombie-controller",
        "kafka-3143",
        "reassignment",
        "lifecycle",
    } <= names


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_sample_is_reproducible_from_its_seed(tmp_path, sample):
    truth = load(sample / "truth.json")
    version = f"{truth['kafka_version']}{'-kraft' if truth['mode'] == 'kraft' else ''}"
    run_scenario(truth["scenario"], version, tmp_path, seed=truth["seed"], trace=truth["trace"], gzip=truth["gzip"])
    committed = {str(p.relative_to(sample)): p.read_bytes() for p in sorted(sample.rglob("*")) if p.is_file()}
    regenerated = {str(p.relative_to(tmp_path)): p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    assert committed.keys() == regenerated.keys()
    for name in committed:
        assert committed[name] == regenerated[name], f"{sample.name}/{name} differs from a fresh run"


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_sample_truth_is_well_formed(sample):
    truth = load(sample / "truth.json")
    for f in truth["files"]:
        assert (sample / f).is_file(), f
    for finding in truth["findings"]:
        assert finding["rule"] in RULES
        assert finding["evidence"], finding
        assert finding["ts"] and finding["controller_epoch"] is not None
        for ref in finding["evidence"]:
            path, line = ref.rsplit(":", 1)
            text = (sample / path).read_text(encoding="utf-8").splitlines()[int(line) - 1]
            assert text.startswith(("[2024-", "| offset: ")), ref  # a log line or a metadata dump record
            if finding["topic"] is not None:
                assert mentions(finding["topic"], finding["partition"]).search(text), (ref, text)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_replay_finds_the_sample_truth(sample):
    truth = load(sample / "truth.json")
    rows = replay_rows(sample, truth["files"])
    assert unmatched(truth["findings"], rows) == []


REPLAY_CASES = [c for c in CASES if not c[2]]


@pytest.mark.parametrize("case", REPLAY_CASES, ids=case_id)
def test_replay_finds_the_truth(case):
    res = simulated(*case)
    rows = replay_rows(res.out_dir, res.files)
    missing = unmatched(res.truth["findings"], rows)
    assert missing == [], [(m["rule"], m["topic"], m["partition"], m["evidence"][:2]) for m in missing]


def _clean_cases():
    out = []
    for case in REPLAY_CASES:
        if case[0] not in CLEAN:
            continue
        marks = ()
        if case[0] in REPLAY_DISAGREES and not case[1].startswith(("2.8", "3.6")):
            marks = (pytest.mark.xfail(reason=REPLAY_DISAGREES[case[0]], strict=False),)
        out.append(pytest.param(case, id=case_id(case), marks=marks))
    return out


@pytest.mark.parametrize("case", _clean_cases())
def test_no_false_positives_without_a_fault(case):
    res = simulated(*case)
    rows = replay_rows(res.out_dir, res.files)
    loud = [
        (r["rule"], r["severity"], r["topic"], r["partition"], r["summary"][:120])
        for r in rows
        if r["severity"] in ABOVE_INFO
    ]
    assert loud == []


def test_matching_rules():
    expected = {"rule": "unclean_election", "topic": "t", "partition": 0, "replica": 2}
    assert finding_matches(expected, {"rule": "unclean_election", "topic": "t", "partition": 0, "replica": None})
    assert not finding_matches(expected, {"rule": "unclean_election", "topic": "t", "partition": 1})
    assert not finding_matches(expected, {"rule": "state_gap", "topic": "t", "partition": 0})
    assert not finding_matches(expected, {"rule": "unclean_election", "topic": None, "partition": None})
    cluster_level = {"rule": "stale_epoch_rejected", "topic": None, "partition": None, "replica": None}
    assert finding_matches(cluster_level, {"rule": "stale_epoch_rejected", "topic": None, "partition": None})


@pytest.mark.spark
@pytest.mark.parametrize("name", ["sim-2.8-zombie-controller", "sim-2.8-lifecycle"])
def test_spark_replay_job_finds_the_sample_truth(spark, tmp_path, name):
    """The real job (jobs/replay_job.run_replay) on a committed sample."""
    from kafka_forensics.jobs.replay_job import ReplayOptions, run_replay
    from kafka_forensics.parsers.records import ParseOptions

    sample = SAMPLE_ROOT / name
    truth = load(sample / "truth.json")
    run_replay(spark, [str(sample)], str(tmp_path / "out"), ParseOptions(), ReplayOptions())
    rows = [
        json.loads(line)
        for p in sorted((tmp_path / "out").rglob("findings.jsonl"))
        for line in p.read_text().splitlines()
        if line.strip()
    ]
    if not rows:
        rows = spark.read.parquet(str(tmp_path / "out" / "findings")).toPandas().to_dict("records")
    for row in rows:  # the job cites paths as given; truth cites them relative to the sample
        row["evidence"] = [str(e).split(f"{name}/")[-1] for e in row.get("evidence") or []]
    assert unmatched(truth["findings"], rows) == []
    if truth["scenario"] in CLEAN:
        assert [r for r in rows if r["severity"] in ABOVE_INFO] == []


def test_every_scenario_documents_itself():
    for s in SCENARIOS.values():
        assert s.run.__doc__ and s.summary and s.versions
