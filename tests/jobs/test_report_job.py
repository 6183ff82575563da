"""The report job on the committed samples: one replay of every sample (each its own cluster), one
report, and each scenario's known findings are in it with their evidence lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kafka_forensics.cli.main import main
from kafka_forensics.core.verdict import summarize_verdict
from kafka_forensics.jobs.report_job import EVIDENCE_LIMIT, bucket_seconds_for
from kafka_forensics.simulator.truth import finding_matches, unmatched
from tests.support.driver_replay import assert_driver_equals_job
from tests.support.engines import assert_report_engines_agree
from tests.support.paths import SAMPLES
from tests.support.report_html import finding_rows, script_blocks, without_plotly_js

# The hand-written and simulated samples (the recorded real-* incidents have their own tests, tests/lab).
SCENARIOS = sorted(p.name for p in SAMPLES.iterdir() if p.is_dir() and not p.name.startswith("real-"))
CLUSTER_RX = r"sample_logs/([^/]+)/"
pytestmark = pytest.mark.spark

# kafka-2.4-controller-failover/README.md "Findings": (rule, topic, partition, one evidence line).
FAILOVER_FINDINGS = [
    ("concurrent_controllers", None, None, "broker-2/controller.log:4"),
    ("stale_epoch_rejected", None, None, "broker-3/state-change.log:70"),
    ("stale_epoch_rejected", None, None, "broker-2/state-change.log:179"),
    ("illegal_transition", "orders", 2, "broker-2/state-change.log:87"),
]


@pytest.fixture(scope="module")
def samples_report(spark, tmp_path_factory):
    from kafka_forensics.jobs.replay_job import ReplayOptions, run_replay
    from kafka_forensics.parsers.records import ParseOptions

    out = tmp_path_factory.mktemp("report") / "out"
    run_replay(
        spark,
        [str(SAMPLES / s) for s in SCENARIOS],
        str(out),
        ParseOptions(),
        ReplayOptions(cluster_from_path=CLUSTER_RX),
    )
    html_path = out.parent / "report.html"
    result = CliRunner().invoke(main, ["report", str(out), "--out", str(html_path), "--top", "6"])
    assert result.exit_code == 0, result.output
    page = html_path.read_text("utf-8")
    print(f"\nreport of all {len(SCENARIOS)} samples: {html_path.stat().st_size:,} bytes")
    return out, page, finding_rows(page), result.output


def _message_of(raw: str) -> str:
    """``[ts] LEVEL message (logger)`` -> message."""
    return raw.split("] ", 1)[1].rsplit(" (", 1)[0].split(" ", 1)[1]


def _of(rows: list[dict], scenario: str) -> list[dict]:
    return [r for r in rows if r["cluster"] == scenario]


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if (SAMPLES / s / "truth.json").is_file()])
def test_report_shows_each_simulated_scenarios_truth_with_evidence(samples_report, scenario):
    out, _, rows, _ = samples_report
    truth = json.loads((SAMPLES / scenario / "truth.json").read_text("utf-8"))
    jsonl = {f["finding_id"]: f for f in map(json.loads, (out / "findings.jsonl").read_text().splitlines())}
    mine = _of(rows, scenario)
    assert unmatched(truth["findings"], mine) == []
    for expected in truth["findings"]:
        for row in (r for r in mine if finding_matches(expected, r)):
            cited = jsonl[row["finding-id"]]["evidence"]
            assert row["refs"] == cited[:EVIDENCE_LIMIT]  # the finding's own evidence, in its order
            assert len(row["texts"]) == len(row["refs"]) and all(t.strip() for t in row["texts"])
            for ref, text in zip(row["refs"], row["texts"]):
                path, line_no = ref.rsplit(":", 1)
                raw = Path(path).read_text("utf-8").splitlines()[int(line_no) - 1]
                assert _message_of(raw)[:40] in text  # the line's own words


def test_report_shows_the_failover_incident_with_its_lines(samples_report):
    _, _, rows, _ = samples_report
    scenario = "kafka-2.4-controller-failover"
    mine = _of(rows, scenario)
    for rule, topic, partition, ref in FAILOVER_FINDINGS:
        full = f"{SAMPLES}/{scenario}/{ref}"
        hits = [
            r
            for r in mine
            if r["rule"] == rule and r["topic"] == topic and r["partition"] == partition and full in r["refs"]
        ]
        assert hits, (rule, ref)
        text = hits[0]["texts"][hits[0]["refs"].index(full)]
        line_no = int(ref.rsplit(":", 1)[1])
        raw = (SAMPLES / scenario / ref.rsplit(":", 1)[0]).read_text("utf-8").splitlines()[line_no - 1]
        assert raw.split("] ", 1)[1].split(" (", 1)[0][:60] in text  # the line's own words, escaped back


def test_report_summary_counts_and_sections(samples_report):
    out, page, rows, output = samples_report
    parse = json.loads((out / "parse_summary.json").read_text())
    replay = json.loads((out / "replay_summary.json").read_text())
    assert f"{parse['lines_read']:,}" in page and "reconciled" in page
    assert f"{replay['findings']:,}" in page
    assert len(rows) == replay["findings"]  # fewer than 500: all shown
    for section in ("summary", "lanes", "findings", "partitions", "transitions", "rates", "quarantine"):
        assert f'<section id="{section}">' in page
    assert "partitions: showing 6 of" in page and "left out" in output
    assert "not run" in page  # no verdict.json
    assert page.count('<script type="text/javascript">') == 1  # plotly.js once
    assert "cdn" not in " ".join(a for a, _ in script_blocks(page)).lower()
    ours = without_plotly_js(page)
    assert 'src="http' not in ours and 'href="http' not in ours and "@import" not in ours


def test_report_tells_the_story_the_replay_wrote(samples_report):
    import html

    out, page, _, _ = samples_report
    doc = json.loads((out / "story.json").read_text())
    assert [c["cluster"] for c in doc["clusters"]] == sorted(SCENARIOS)
    story = page[page.index('<section id="story">') : page.index('<section id="findings">')]
    told = [s for c in doc["clusters"] for s in c["sentences"]]
    assert told and story.count("<li ") == len(told)
    at = 0
    for s in told:  # every sentence, in the order of story.json (clusters, then time)
        at = story.index(html.escape(s["sentence"], quote=True), at) + 1
    failover = [s["sentence"] for s in told if s["cluster"] == "kafka-2.4-controller-failover"]
    assert any(s.startswith("broker 2 became the controller (epoch 8), taking over from broker 1") for s in failover)


def test_the_replay_in_the_driver_equals_the_job_on_the_samples(samples_report, tmp_path):
    """The hand-written and simulated samples, each its own cluster: every replay output of the driver's replay."""
    from kafka_forensics.jobs.replay_options import ReplayOptions

    assert_driver_equals_job(samples_report[0], tmp_path, ReplayOptions(cluster_from_path=CLUSTER_RX))


def test_report_is_deterministic(samples_report, spark, tmp_path):
    from kafka_forensics.jobs.report_job import build_report

    out, page, _, _ = samples_report
    again = build_report(spark, str(out), str(tmp_path / "again.html"), top_partitions=6)
    assert (tmp_path / "again.html").read_text("utf-8") == page
    assert again.size_bytes == len(page.encode("utf-8"))
    assert again.partitions_shown == 6 and again.partitions_total > 6


def test_verdict_is_shown_when_present(samples_report, spark, tmp_path):
    from kafka_forensics.jobs.report_job import build_report

    out, _, _, _ = samples_report
    # the shape jobs/check_job.py writes
    (out / "verdict.json").write_text(
        json.dumps(
            {
                "verdict_version": 1,
                "passed": False,
                "exit_code": 1,
                "error": None,
                "failed_expectations": ["findings.no_critical_findings"],
                "warnings": [],
                "suites": {
                    "events": {"success": True, "evaluated": 12, "unsuccessful": 0, "expectations": {}},
                    "findings": {"success": False, "evaluated": 5, "unsuccessful": 2, "expectations": {}},
                },
            }
        )
    )
    try:
        build_report(spark, str(out), str(tmp_path / "v.html"), top_partitions=1, max_findings=3)
    finally:
        (out / "verdict.json").unlink()
    page = (tmp_path / "v.html").read_text("utf-8")
    assert 'class="verdict-failed">failed<' in page and '<table id="suites">' in page
    assert "failed: findings.no_critical_findings" in page
    assert "findings: showing the 3 most severe of" in page


def test_report_command_exits_2_without_replay_tables(tmp_path):
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(main, ["report", str(tmp_path / "empty"), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 2 and "no replay tables" in result.output
    assert not (tmp_path / "r.html").exists()


def test_verdict_shapes_are_tolerated():
    assert summarize_verdict({"passed": True}).status == "passed"
    v = summarize_verdict(
        {
            "status": "FAILED",
            "results": [{"suite": "events", "success": False, "statistics": {"evaluated_expectations": 4}}],
        }
    )
    assert v.status == "failed" and v.suites[0].name == "events" and v.suites[0].evaluated == 4
    assert summarize_verdict({"suites": {"a": True, "b": True}}).status == "passed"
    assert summarize_verdict({"something": 1}).status == "unreadable"
    assert summarize_verdict([1, 2]).status == "unreadable"


def test_event_rate_buckets_are_bounded():
    from datetime import datetime, timedelta, timezone

    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    for span in (
        timedelta(seconds=3),
        timedelta(minutes=5),
        timedelta(hours=7),
        timedelta(days=40),
        timedelta(days=3000),
    ):
        step = bucket_seconds_for(start, start + span)
        assert span.total_seconds() / step <= 500
    assert bucket_seconds_for(start, start + timedelta(minutes=5)) == 1


def test_the_report_opens_with_the_impact_of_the_worst_partitions(samples_report):
    """The Impact section comes first; its worst partitions are the impact table's, longest without a leader
    first (leader lost + unavailable seconds), each with its seconds per kind; its strip is a chart."""
    import pyarrow.parquet as pq

    out, page, _, _ = samples_report
    assert page.index('<section id="impact">') < page.index('<section id="summary">')
    impact = pq.read_table(out / "impact").to_pylist()
    leaderless: dict[tuple, float] = {}
    for r in impact:
        key = (r["cluster"], r["topic"], r["partition"])
        leaderless[key] = leaderless.get(key, 0.0) + (
            r["known_seconds"] if r["kind"] in ("leader_lost", "unavailable") else 0.0
        )
    most = max(leaderless.values())
    worst = [k for k, v in leaderless.items() if abs(v - most) < 1e-6]
    section = page[page.index('<section id="impact">') : page.index('<section id="summary">')]
    table = section[section.index('id="impact-worst"') :]
    first_row = table[table.index("<tbody><tr>") : table.index("</tr>", table.index("<tbody><tr>"))]
    assert any(f"{t}-{p} [{c}]" in first_row for c, t, p in worst), (first_row, worst)
    assert f"{min(20, len(leaderless)):,} of {len(leaderless):,}" in section
    assert 'data-figure="fig-impact"' in section
    totals = json.loads((out / "replay_summary.json").read_text())["impact"]
    for cluster, kinds in totals.items():
        for kind, t in kinds.items():
            assert f"{t['seconds']:,.1f}" in section, (cluster, kind)


def test_the_report_of_every_sample_on_duckdb_equals_sparks(spark, samples_report, tmp_path):
    """Every hand-written and simulated sample, each its own cluster: the report Spark wrote (``--top 6``) and
    its model, built again on DuckDB through SQLFrame (jobs/frames.py)."""
    out, *_ = samples_report
    assert_report_engines_agree(spark, out, tmp_path, top_partitions=6, spark_html=out.parent / "report.html")
