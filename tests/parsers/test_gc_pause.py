"""parse_file pauses the cyclic collector for its own work only (parsers/gc_pause.py)."""

from __future__ import annotations

import gc

import pytest

from kafka_forensics.parsers.gc_pause import cyclic_gc_paused
from kafka_forensics.parsers.records import parse_file
from tests.support.kafka_lines import STATE_CHANGE_21, text


@pytest.fixture
def collector_state():
    was = gc.isenabled()
    yield
    gc.enable() if was else gc.disable()


def test_parse_file_runs_with_the_collector_paused_and_restores_it(collector_state, monkeypatch):
    seen = []
    import kafka_forensics.parsers.records as records

    real = records._parse_file
    monkeypatch.setattr(records, "_parse_file", lambda *a: seen.append(gc.isenabled()) or real(*a))
    gc.enable()
    assert len(parse_file(text(STATE_CHANGE_21), "broker-1/state-change.log").rows) == 1
    assert seen == [False] and gc.isenabled()
    gc.disable()  # a caller that paused it already keeps it paused
    parse_file(text(STATE_CHANGE_21), "broker-1/state-change.log")
    assert not gc.isenabled()


def test_an_error_inside_still_restores_the_collector(collector_state):
    gc.enable()
    with pytest.raises(ValueError), cyclic_gc_paused():
        assert not gc.isenabled()
        raise ValueError("boom")
    assert gc.isenabled()
