"""Issue 14 ("Findings an on-call engineer can trust"), classes 1-7 and 11, on Kafka's own lines.

Each case in ``tests/data/issue14/`` is a small incident whose per-broker logs were rendered line by
line from Kafka's log statements at the release it names (``expected.json`` says which, and cites
the Kafka source for every expectation). The replay must report what Kafka's source says happened
and nothing else: the right rule, the right severity, one finding per anomaly with all its evidence.
Independent of the simulator (which shares our reading of Kafka).
"""

from __future__ import annotations

import pytest

from tests.support.issue14 import case_names, events_of, problems, replay_case, typing_problems

CASES = case_names()


def test_every_class_has_cases():
    classes = {c.split("-", 1)[0] for c in CASES}
    assert {"c1", "c2", "c3", "c4", "c5", "c6", "c7", "c11"} <= classes


@pytest.mark.parametrize("case", CASES)
def test_case_findings_match_kafka(case):
    assert problems(case, replay_case(case).findings) == []


@pytest.mark.parametrize("case", CASES)
def test_case_lines_are_typed(case):
    assert typing_problems(case, events_of(case)) == []
