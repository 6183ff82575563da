"""The impact table and the final-state oracle from the Spark job equal their pure twins (replay/impact.py,
replay/final_state.py) on a recorded real incident, run through the CLI as an operator would:
``replay LOGS --min-isr 2 --describe FILE --describe-at TIME``."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from kafka_forensics.cli.main import main
from kafka_forensics.parsers.describe_output import parse_describe
from kafka_forensics.replay.events import compact_events
from kafka_forensics.replay.final_state import DESCRIBE_LAG_SECONDS, SnapshotAt, compare_snapshot, snapshot_inputs
from kafka_forensics.replay.impact import cluster_facts, impact_rows, impact_totals, min_isr_table
from kafka_forensics.replay.local import replay_all
from tests.support.driver_replay import assert_driver_equals_job
from tests.support.engines import assert_report_engines_agree
from tests.support.paths import SAMPLES

pytestmark = pytest.mark.spark
INCIDENT = SAMPLES / "real-3.9-zk-controller-kill"
COLUMNS = (
    "cluster",
    "topic",
    "partition",
    "kind",
    "episode",
    "ts_start",
    "ts_end",
    "open",
    "known_seconds",
    "leader",
    "min_isr",
    "min_isr_source",
    "reason",
    "ended_by",
    "start_evidence",
    "end_evidence",
    "evidence",
)


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("impact")
    truth = json.loads((INCIDENT / "truth.json").read_text("utf-8"))
    snap = truth["describe"][-1]
    at = dt.datetime.fromtimestamp(snap["at_ms"] / 1000, dt.timezone.utc)
    # what the operator saw, with partition 1's leader changed: something the logs do not show
    text = (INCIDENT / snap["file"]).read_text("utf-8")
    line = next(ln for ln in text.splitlines() if "Partition: 1\t" in ln)
    leader = int(line.split("Leader: ")[1].split("\t")[0])
    describe = tmp / "describe.txt"
    describe.write_text(text.replace(line, line.replace(f"Leader: {leader}\t", f"Leader: {leader % 3 + 1}\t")))
    out = tmp / "out"
    args = ["replay", str(INCIDENT), "--out", str(out), "--min-isr", "2", "--show", "0"]
    args += ["--describe", str(describe), "--describe-at", at.strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    events = compact_events(pq.read_table(out / "events").to_pylist())  # as the job's workers read them
    local = replay_all(events)
    return out, events, local, describe, at


def _plain(value):
    """Timestamps as UTC ISO text (Parquet hands back naive pandas Timestamps, the replay aware datetimes)."""
    if hasattr(value, "isoformat"):
        import pandas as pd

        ts = pd.Timestamp(value)
        ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
        return ts.isoformat(timespec="milliseconds")
    return list(value) if isinstance(value, (list, tuple)) else value


def _key(r: dict) -> tuple:
    return (r["cluster"], r["topic"], r["partition"], r["kind"], r["episode"])


def test_the_impact_table_equals_the_pure_reference(run):
    out, events, local, _, _ = run
    brokers = {c: [b.to_row(c) for b in ctx.brokers] for c, ctx in local.contexts.items()}
    unclean: dict[tuple, list] = {}
    for f in local.findings:
        if f.rule == "unclean_election" and f.ts is not None:
            unclean.setdefault((f.cluster, f.topic, f.partition), []).append(f.ts)
    pure = impact_rows(local.partition_intervals, cluster_facts(events, brokers), min_isr_table(events, 2), unclean)
    job = pq.read_table(out / "impact").to_pylist()
    assert pure and {r["kind"] for r in pure} >= {"leader_lost", "unavailable", "under_replicated", "under_min_isr"}
    assert [[_plain(r[c]) for c in COLUMNS] for r in sorted(job, key=_key)] == [
        [_plain(r[c]) for c in COLUMNS] for r in sorted(pure, key=_key)
    ]
    assert all(r["min_isr_source"] == "--min-isr" for r in job if r["kind"] == "under_min_isr")
    totals = pq.read_table(out / "impact_totals").to_pylist()
    tkey = lambda r: (r["cluster"], r["kind"], r["topic"] or "")  # noqa: E731
    plain = lambda rows: [{k: _plain(v) for k, v in r.items()} for r in sorted(rows, key=tkey)]  # noqa: E731
    assert plain(totals) == plain(impact_totals(pure))
    summary = json.loads((out / "replay_summary.json").read_text("utf-8"))
    assert summary["impact"][""]["unavailable"]["episodes"] == sum(1 for r in pure if r["kind"] == "unavailable")


def test_the_final_state_finding_equals_the_pure_reference(run):
    out, _, local, describe, at = run
    found = [json.loads(x) for x in (out / "findings.jsonl").read_text("utf-8").splitlines()]
    job = [f for f in found if f["rule"] == "final_state_mismatch"]
    s = SnapshotAt(parse_describe(describe.read_text("utf-8"), str(describe)), at, "--describe-at")
    lag, skew = dt.timedelta(seconds=DESCRIBE_LAG_SECONDS), dt.timedelta(seconds=2)
    rows, alive, others, totals = snapshot_inputs(local.partition_intervals, s, lag, skew)
    ctx = local.contexts[""]
    pure = compare_snapshot(s, rows, alive, others.get("", []), totals.get("", 0), ctx.controller_at(at), lag, skew)
    fields = ("rule", "severity", "summary", "topic", "partition", "evidence")
    assert [[f.to_row()[k] for k in fields] for f in pure] == [[f[k] for k in fields] for f in job]
    (finding,) = job
    assert (finding["severity"], finding["partition"]) == ("warning", 1)
    lines = describe.read_text("utf-8").splitlines()
    assert finding["evidence"][0] == f"{describe}:{1 + next(n for n, ln in enumerate(lines) if 'Partition: 1' in ln)}"


def test_the_replay_in_the_driver_equals_the_job_with_min_isr_and_a_snapshot(run, tmp_path):
    from kafka_forensics.jobs.replay_options import ReplayOptions
    from kafka_forensics.replay.impact import MinIsrOption

    out, _, _, describe, at = run
    snapshot = SnapshotAt(parse_describe(describe.read_text("utf-8"), str(describe)), at, "--describe-at")
    summary = assert_driver_equals_job(out, tmp_path, ReplayOptions(min_isr=MinIsrOption(2), snapshots=(snapshot,)))
    assert summary is not None and summary.findings_by_rule["final_state_mismatch"] == {"warning": 1}


def test_the_impact_plan_reads_its_inputs_a_bounded_number_of_times(spark, run):
    """Each self-join of the episodes once carried the whole plan into both sides: 945 scans of the
    inputs in the impact plan (10,497 plan lines) and ~30 s of planning and recomputation on the
    584-line sample (jobs/lineage.py). The plan's leaves are the scans of what it reads."""
    from kafka_forensics.jobs.replay_job import ReplayOptions, arrow_batches, replay_frames

    out = run[0]
    with arrow_batches(spark):
        frames = replay_frames(spark, spark.read.parquet(str(out / "events")), ReplayOptions())
        try:
            leaves = {
                name: getattr(frames, name)._jdf.queryExecution().analyzed().collectLeaves().size()
                for name in ("partition_timeline", "impact", "impact_totals")
            }
        finally:
            frames.unpersist()
    assert leaves["impact"] <= leaves["partition_timeline"] + 10, leaves
    assert leaves["impact_totals"] <= 2 * leaves["impact"], leaves


def test_the_report_of_a_recorded_incident_on_duckdb_equals_sparks(spark, run, tmp_path):
    """A recorded incident with impact episodes and a describe snapshot's findings: the report, its model, the
    summary and the findings listing are the same on DuckDB through SQLFrame (jobs/frames.py) as on Spark."""
    out = run[0]
    assert_report_engines_agree(spark, out, tmp_path)
