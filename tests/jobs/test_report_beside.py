"""The driver engine's report built in a process of its own beside the check (``jobs/report_beside.py``), on the
bundled zombie-controller incident: the same page as built in this process, its errors as themselves, and never a
verdict the check did not write."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from kafka_forensics.core.errors import InputError
from kafka_forensics.jobs.check_job import run_check
from kafka_forensics.jobs.frames import duckdb_session
from kafka_forensics.jobs.replay_driver import run_replay_in_driver
from kafka_forensics.jobs.replay_options import ReplayOptions
from kafka_forensics.jobs.report_beside import ReportBeside
from kafka_forensics.jobs.report_job import build_report
from kafka_forensics.parsers.records import ParseOptions
from tests.support.paths import REPO

INCIDENT = REPO / "sample_logs" / "kafka-2.4-controller-failover"


@pytest.fixture(scope="module")
def replayed(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report-process") / "out"
    run_replay_in_driver([str(INCIDENT)], str(out), ParseOptions(), ReplayOptions())
    return out


def test_the_report_of_its_own_process_is_the_page_built_here(replayed, tmp_path):
    beside = ReportBeside(str(replayed), str(tmp_path / "beside.html"), 20)  # it waits for the verdict at the end
    verdict = run_check(None, str(replayed))
    beside.verdict_written()
    summary, seconds = beside.result()
    here = build_report(duckdb_session(), str(replayed), str(tmp_path / "here.html"), top_partitions=20)
    assert not verdict.passed  # the zombie controller: the page shows the failed verdict it waited for
    page = (tmp_path / "beside.html").read_text("utf-8")
    assert '<span class="verdict-failed">failed</span>' in page
    assert page == (tmp_path / "here.html").read_text("utf-8")
    assert summary == type(here)(**{**vars(here), "path": str(tmp_path / "beside.html")}) and seconds > 0


def test_an_error_of_the_report_is_raised_as_itself(tmp_path):
    with pytest.raises(InputError) as here:
        build_report(duckdb_session(), str(tmp_path), str(tmp_path / "here.html"))
    beside = ReportBeside(str(tmp_path), str(tmp_path / "beside.html"), 20)
    beside.verdict_written()
    with pytest.raises(InputError) as there:
        beside.result()
    assert str(there.value) == str(here.value)


def test_a_check_that_fails_ends_the_report_before_it_reads_a_verdict(replayed, tmp_path):
    """``analyze`` ends the report's process when the check raises: it was waiting for the verdict, and writes no page."""
    beside = ReportBeside(str(replayed), str(tmp_path / "beside.html"), 20)
    beside._process.join(timeout=5)  # the page's data is read; only the verdict is awaited
    assert beside._process.is_alive()
    beside.end()
    assert beside._process.exitcode == -signal.SIGTERM
    assert not (tmp_path / "beside.html").exists()
