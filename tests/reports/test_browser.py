"""The report is safe and works in a real browser.

A replay of the kafka-2.4 failover sample, copied under a directory whose name is an HTML
injection and with log lines whose messages and topic names carry ``<script>``, ``"><img
onerror>``, ``</script><script>`` and ``javascript:``: the report must show them as text (escaped
in HTML, inert in the inline JSON), and headless Chromium (Debian's ``chromium``, no downloaded
browser) must run it with no dialog, no injected element, no console error and no network request.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kafka_forensics.jobs.report_job import build_report
from tests.support.paths import SAMPLES
from tests.support.report_html import finding_rows, script_blocks, without_plotly_js

SAMPLE = SAMPLES / "kafka-2.4-controller-failover"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
HANDOFF_SCREENSHOT = Path("/work/handoff/report-screenshot.png")
EVIL_DIR = 'incident "><img src=x onerror=alert(11)>'
PAYLOADS = (
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(2)>',
    "</script><script>alert(3)</script>",
    "javascript:alert(4)",
)
pytestmark = pytest.mark.spark


def _craft(root: Path) -> Path:
    """The failover sample with injections in a stack trace (it becomes a finding's summary and
    evidence), in a server.log message and in a state-change line's topic (quarantined)."""
    logs = root / EVIL_DIR
    shutil.copytree(SAMPLE, logs, ignore=shutil.ignore_patterns("README.md"))
    state_change = logs / "broker-2" / "state-change.log"
    lines = state_change.read_text("utf-8").splitlines(keepends=True)
    assert lines[87].startswith("kafka.common.StateChangeFailedException")
    lines[87] = lines[87].rstrip("\n") + " " + " ".join(PAYLOADS) + "\n"
    lines.append(
        "[2024-03-04 10:05:41,990] TRACE [Controller id=2 epoch=8] Changed partition "
        "<script>alert(5)</script>-0 state from NewPartition to OnlinePartition (state.change.logger)\n"
    )
    state_change.write_text("".join(lines), "utf-8")
    with open(logs / "broker-1" / "server.log", "a", encoding="utf-8") as fh:
        fh.write(
            '[2024-03-04 10:05:41,991] INFO Created log for partition "><img src=x onerror=alert(6)>-0 in '
            "javascript:alert(7) </script><script>alert(8)</script> (kafka.log.LogManager)\n"
        )
    with open(logs / "broker-3" / "server.log", "a", encoding="utf-8") as fh:
        fh.write('[2024-03-04 10:05:41,992] <script>alert(9)</script> "><img src=x onerror=alert(10)>\n')  # quarantined
    return logs


@pytest.fixture(scope="module")
def crafted_report(spark, tmp_path_factory):
    from kafka_forensics.jobs.replay_job import ReplayOptions, run_replay
    from kafka_forensics.parsers.records import ParseOptions

    root = tmp_path_factory.mktemp("xss")
    logs = _craft(root)
    out = root / "out"
    run_replay(spark, [str(logs)], str(out), ParseOptions(), ReplayOptions())
    html_path = root / "report.html"
    summary = build_report(spark, str(out), str(html_path))
    print(f"\ncrafted failover report: {summary.size_bytes:,} bytes")
    return html_path, html_path.read_text("utf-8"), summary


def test_injections_are_escaped_in_the_html(crafted_report):
    _, page, _ = crafted_report
    page = without_plotly_js(page)
    for payload in PAYLOADS + (EVIL_DIR,):
        assert payload not in page.replace("javascript:alert(4)", "").replace(
            "javascript:alert(7)", ""
        ) or payload.startswith("javascript:")
    assert "<img" not in page and "<svg" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # shown, as text
    assert "&lt;script&gt;alert(9)&lt;/script&gt;" in page  # the quarantined line's sample
    assert "&quot;&gt;&lt;img src=x onerror=alert(2)&gt;" in page
    assert 'href="javascript' not in page and 'src="javascript' not in page
    rows = finding_rows(page)
    failed = [r for r in rows if r["rule"] == "illegal_transition" and r["topic"] == "orders"]
    assert failed and PAYLOADS[0] in failed[0]["summary"]  # the parser gives the text back unchanged
    assert any(PAYLOADS[2] in t for t in failed[0]["texts"])


def test_inline_json_cannot_close_its_script_block(crafted_report):
    _, page, _ = crafted_report
    blocks = script_blocks(page)
    json_blocks = [body for attrs, body in blocks if 'type="application/json"' in attrs]
    assert len(json_blocks) >= 5
    for body in json_blocks:
        assert "<" not in body and ">" not in body
    assert "alert(1)" in "".join(json_blocks).replace("\\u003c", "<")  # the payloads are in the figures' text
    # plotly.js once, the two page scripts, the JSON blocks: nothing else is a script
    assert len(blocks) == 1 + 2 + len(json_blocks)


def _require_browser():
    ci = os.environ.get("CI", "").lower() == "true"
    if not CHROMIUM.exists():
        if ci:
            pytest.fail("CI=true but /usr/bin/chromium is missing (apt-get install -y chromium)")
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium); CI installs it")
    try:
        from playwright.sync_api import sync_playwright  # noqa: F401
    except ImportError:
        if ci:
            pytest.fail("CI=true but the playwright package is missing (pip install -e .[test])")
        pytest.skip("the playwright package is not installed (pip install -e .[test])")


def test_report_runs_in_chromium_with_nothing_injected(crafted_report, tmp_path):
    _require_browser()
    from playwright.sync_api import sync_playwright

    html_path, page_text, summary = crafted_report
    url = html_path.resolve().as_uri()
    dialogs, errors, requests = [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: errors.append(str(e)))

            def record(route):
                requests.append(route.request.url)
                if route.request.url == url:
                    route.continue_()
                else:
                    route.abort()

            page.route("**/*", record)
            page.goto(url)
            page.wait_for_selector("body[data-charts-ready]", timeout=60_000)
            charts = page.eval_on_selector_all("[data-figure]", "els => els.map(e => e.id)")
            assert {
                "chart-lanes",
                "chart-partitions",
                "chart-rates",
                "chart-matrix-partition",
                "chart-matrix-replica",
                "chart-quarantine",
            } <= set(charts)
            for chart in charts:
                assert page.locator(f"#{chart} .main-svg").count() > 0, chart
            for chart in ("chart-lanes", "chart-partitions", "chart-rates"):
                assert page.locator(f"#{chart} .js-plotly-path, #{chart} .point").count() > 0, chart
            assert page.locator("#card-findings .v").text_content() == f"{summary.findings_total:,}"
            assert "reconciled" in page.locator("#card-reconciliation").text_content()
            rows = page.locator("#findings-table tbody tr.finding")
            assert rows.count() == summary.findings_shown > 0
            assert page.locator("#findings-table .evidence pre.raw").count() >= summary.findings_shown
            # the filter hides rows, sorting keeps them all
            page.fill("#findings-filter", "stale controller epoch")
            assert page.locator("#findings-table tbody tr.finding:not([hidden])").count() == 1  # one zombie episode
            page.fill("#findings-filter", "")
            page.click("#findings-table th[data-key=rule]")
            assert rows.count() == summary.findings_shown
            # the partition selector switches the plot
            first_title = page.locator("#chart-partitions .gtitle").text_content()
            options = page.locator("#partition-select option")
            assert options.count() == summary.partitions_shown >= 2
            page.select_option("#partition-select", "1")
            page.wait_for_function(
                "t => document.querySelector('#chart-partitions .gtitle').textContent !== t", arg=first_title
            )
            assert (
                options.nth(1).inner_text().split(" — ")[0] in page.locator("#chart-partitions .gtitle").text_content()
            )
            # nothing injected: no image, no extra script, the payloads are text
            assert page.locator("img").count() == 0 and page.locator("svg image").count() <= 2
            assert page.evaluate("document.scripts.length") == len(script_blocks(page_text))
            assert "<script>alert(1)</script>" in page.locator("#findings-table").inner_text()
            assert "<script>alert(9)</script>" in page.locator("#quarantine-table").inner_text()
            page.select_option("#partition-select", "0")
            # a full-page capture repeats sticky elements mid-page: unstick the menu for the picture only
            page.add_style_tag(content="nav { position: static !important; }")
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
            if HANDOFF_SCREENSHOT.parent.is_dir():
                page.screenshot(path=str(HANDOFF_SCREENSHOT), full_page=True)
        finally:
            browser.close()
    assert dialogs == []
    assert errors == []
    assert requests == [url]
    assert (tmp_path / "report.png").stat().st_size > 10_000
