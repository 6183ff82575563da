"""Properties of the per-line path over arbitrary input (hypothesis): no line can fail a file.

* Arbitrary bytes: ``parse_file`` never raises, every physical line (split at ``\\n`` only) is
  accounted for exactly once, and the rows convert to the events table's Arrow schema (what a
  Spark task does with them).
* Arbitrary header-shaped lines (Kafka's ``[%d] %p %m (%c)%n`` with any message, any digits in the
  timestamp, identity-like and template-like openings): each is a record on both parse paths, the
  two paths agree on every field, and the rows convert.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kafka_forensics.core.eras import AUTO
from kafka_forensics.jobs.parse_job import _event_batches
from kafka_forensics.parsers.fields import apply_fields
from kafka_forensics.parsers.lines import RECORD, FastLineParser, LarkLineParser
from kafka_forensics.parsers.records import ParseOptions, parse_file
from tests.support.kafka_lines import FAILED_11, STACK_11, STATE_CHANGE_21

# 300 examples per property keep the suite fast; KF_HYPOTHESIS_EXAMPLES=5000 searches harder.
SETTINGS = settings(
    max_examples=int(os.environ.get("KF_HYPOTHESIS_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# Pieces Kafka really puts at the start of a message (identity prefixes of kafka-log-formats.md §2
# and LogContext prefixes), and words templates start with; hypothesis mixes them with noise.
OPENERS = [
    "[Controller id=",
    "[Controller id=1 epoch=",
    "[Controller ",
    "[Broker id=",
    "[QuorumController id=",
    "[Partition orders-7 broker=",
    "[Controller id=1, targetBrokerId=",
    "[RequestSendThread controllerId=",
    "Changed partition ",
    "Changed state of replica ",
    "Controller ",
    "Broker ",
    "Leader ",
    "Metadata batch ",
    "Cached leader info ",
    "Mark replicas ",
    "Found ",
    "ISR updated to ",
    "Partition ",
]
LEVELS = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"]
LOGGERS = [
    "state.change.logger",
    "kafka.controller.KafkaController",
    "org.apache.kafka.clients.NetworkClient",
    "kafka.cluster.Partition",
    "org.apache.kafka.controller.QuorumController",
]

noise = st.text(alphabet=st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=60)
digits = st.integers(min_value=-(10**12), max_value=10**12).map(str)
message = st.lists(
    st.one_of(st.sampled_from(OPENERS), digits, noise, st.sampled_from(["] ", ", ", " epoch=", "-"])), max_size=8
).map("".join)
timestamp = st.tuples(
    *(st.integers(0, 10**n - 1).map(lambda v, n=n: str(v).zfill(n)) for n in (4, 2, 2, 2, 2, 2, 3))
).map(lambda p: f"{p[0]}-{p[1]}-{p[2]} {p[3]}:{p[4]}:{p[5]},{p[6]}")
prefix = st.sampled_from(["", "kafka-1  | ", "kafka1/controller.log:"])
header_line = st.builds(
    lambda pre, ts, level, msg, logger: f"{pre}[{ts}] {level} {msg} ({logger})",
    prefix,
    timestamp,
    st.sampled_from(LEVELS),
    message,
    st.sampled_from(LOGGERS),
)


def _check_file(data: bytes, options: ParseOptions | None = None) -> None:
    result = parse_file(data, "prop/state-change.log", options or ParseOptions())
    s = result.summary
    physical = data.split(b"\n")
    lines = len(physical) - (1 if physical[-1] == b"" else 0)
    assert s["lines_read"] == lines == s["records"] + s["continuation_lines"] + s["quarantined"]
    assert len(result.rows) == s["records"] and len(result.quarantine) == s["quarantined"]
    assert sum(r["n_continuation"] for r in result.events) == s["continuation_lines"]
    list(_event_batches(result.rows, None))


@SETTINGS
@given(st.binary(max_size=400))
@example(b"\xef\xbb\xbf[2021-02-30 25:61:61,999] INFO x (y)\n")
@example(b"\x1b[31m\tat x.y(Z.java:1)\x1b[0m\n")
@example(b"\x1f\x8b\x08\x00garbage")
def test_arbitrary_bytes_never_fail_a_file(data):
    _check_file(data)


@SETTINGS
@given(
    st.lists(st.one_of(header_line, st.sampled_from([*STACK_11, FAILED_11, STATE_CHANGE_21]), noise), max_size=6),
    st.sampled_from(["\n", "\r\n"]),
)
def test_arbitrary_files_of_header_shaped_lines_never_fail(lines, end):
    data = end.join(lines).encode("utf-8") + (end.encode() if lines else b"")
    _check_file(data)
    _check_file(data, ParseOptions(timezone="Pacific/Kiritimati"))


_LARK, _FAST = LarkLineParser(AUTO), FastLineParser(AUTO)


@SETTINGS
@given(header_line)
@example(
    "[2024-10-02 09:12:44,102] INFO [Controller id=1, targetBrokerId=3] Disconnecting from node 3 due to "
    "request timeout. (org.apache.kafka.clients.NetworkClient)"
)
@example("[2021-03-04 10:15:23,456] INFO [Controller id= (x)")
def test_every_header_shaped_line_is_a_record_on_both_paths(raw):
    a, b = _LARK.classify(raw), _FAST.classify(raw)
    assert a.kind == RECORD, raw
    assert a.key() == b.key() and apply_fields(a.fields) == apply_fields(b.fields), raw
