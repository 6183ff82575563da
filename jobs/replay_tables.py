"""The replay's output tables: Arrow schemas (the contract with expectations/ and reports/).

``partition_timeline`` / ``replica_timeline``: one row per state interval; an interval is the
longest run with the same (state, leader, ISR, replicas, leader epoch, partition epoch) and
``cause`` is the ``file:line`` that opened it. ``findings``: see ``statemachines.findings``.
``controllers``: one row per (controller, epoch). ``brokers``: one row per liveness interval.
"""

from __future__ import annotations

import pyarrow as pa

_INTS = pa.list_(pa.int32())
_TS = pa.timestamp("us", tz="UTC")

_TIMELINE_TAIL = (
    pa.field("seq", pa.int32()),
    pa.field("ts_start", _TS),
    pa.field("ts_end", _TS),  # the next interval's start; null = still so at the end of the logs
    pa.field("state", pa.string()),  # partition or replica state-machine state; null = not logged
    pa.field("leader", pa.int32()),
    pa.field("isr", _INTS),
    pa.field("replicas", _INTS),
    pa.field("leader_epoch", pa.int32()),
    pa.field("partition_epoch", pa.int32()),
    pa.field("controller_epoch", pa.int32()),  # epoch the cause line was replayed under
    pa.field("cause", pa.string()),  # file:line of the line that opened the interval
    pa.field("cause_event_type", pa.string()),
    pa.field("source", pa.string()),  # decision | controller_view | broker_view | leader_isr_change | failure
)
PARTITION_TIMELINE_SCHEMA = pa.schema([
    pa.field("cluster", pa.string()), pa.field("topic", pa.string()), pa.field("partition", pa.int32()),
    *_TIMELINE_TAIL,
])
REPLICA_TIMELINE_SCHEMA = pa.schema([
    pa.field("cluster", pa.string()), pa.field("topic", pa.string()), pa.field("partition", pa.int32()),
    pa.field("replica", pa.int32()), *_TIMELINE_TAIL,
])
FINDINGS_SCHEMA = pa.schema([
    pa.field("finding_id", pa.string()),
    pa.field("rule", pa.string()),
    pa.field("severity", pa.string()),
    pa.field("kind", pa.string()),
    pa.field("cluster", pa.string()),
    pa.field("topic", pa.string()),
    pa.field("partition", pa.int32()),
    pa.field("replica", pa.int32()),
    pa.field("broker", pa.int32()),
    pa.field("controller_epoch", pa.int32()),
    pa.field("ts", _TS),
    pa.field("summary", pa.string()),
    pa.field("evidence", pa.list_(pa.string())),
    pa.field("evidence_count", pa.int32()),
    pa.field("json", pa.string()),  # the findings.jsonl line (deterministic bytes)
])
CONTROLLERS_SCHEMA = pa.schema([
    pa.field("cluster", pa.string()),
    pa.field("controller_id", pa.int32()),
    pa.field("controller_epoch", pa.int32()),
    pa.field("ts_start", _TS),
    pa.field("ts_end", _TS),
    pa.field("evidence", pa.list_(pa.string())),
    pa.field("elected", pa.bool_()),  # false = inferred from the controller's own lines only
    pa.field("first_action_ts", _TS),
    pa.field("last_action_ts", _TS),
    pa.field("n_actions", pa.int64()),
    pa.field("end_evidence", pa.string()),
])
BROKERS_SCHEMA = pa.schema([
    pa.field("cluster", pa.string()),
    pa.field("broker", pa.int32()),
    pa.field("state", pa.string()),  # alive | shutting_down | dead | fenced
    pa.field("ts_start", _TS),
    pa.field("ts_end", _TS),
    pa.field("evidence", pa.string()),
])

ROW_KIND = "row_kind"


def _unified() -> pa.Schema:
    fields = [pa.field(ROW_KIND, pa.string())]
    seen = {ROW_KIND}
    for schema in (PARTITION_TIMELINE_SCHEMA, REPLICA_TIMELINE_SCHEMA, FINDINGS_SCHEMA):
        for f in schema:
            if f.name not in seen:
                seen.add(f.name)
                fields.append(f)
    return pa.schema(fields)


REPLAY_OUTPUT_SCHEMA = _unified()  # what the Python workers emit: the three tables in one stream
