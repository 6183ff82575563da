"""The events and quarantine tables: column names and types (the contract with later stages).

Names are stable once reports and suites use them (DESIGN.md "Tables"). Types are Arrow types;
the Spark job derives its schema from these, so there is one definition.
"""

from __future__ import annotations

import pyarrow as pa

_INTS = pa.list_(pa.int32())

EVENT_FIELDS: tuple[pa.Field, ...] = (
    pa.field("source_file", pa.string(), nullable=False),
    pa.field("line_no", pa.int64(), nullable=False),
    pa.field("broker", pa.int32()),  # the broker that wrote the line (owner of file or line)
    pa.field("broker_source", pa.string()),  # line | path | file
    pa.field("ts", pa.timestamp("us", tz="UTC")),
    pa.field("ts_raw", pa.string()),
    pa.field("ts_out_of_order", pa.bool_()),  # earlier than the previous record of the file
    pa.field("level", pa.string()),
    pa.field("logger", pa.string()),
    pa.field("log_kind", pa.string()),  # state-change | controller | server | metadata
    pa.field("dialect", pa.string()),  # Kafka era of the grammar that read the line
    pa.field("template", pa.string()),  # grammar rule that typed the line (null for other)
    pa.field("event_type", pa.string(), nullable=False),
    pa.field("controller_id", pa.int32()),
    pa.field("controller_epoch", pa.int32()),
    pa.field("topic", pa.string()),
    pa.field("partition", pa.int32()),
    pa.field("replica", pa.int32()),
    pa.field("from_state", pa.string()),
    pa.field("to_state", pa.string()),
    pa.field("leader", pa.int32()),
    pa.field("leader_epoch", pa.int32()),
    pa.field("isr", _INTS),
    pa.field("replicas", _INTS),
    pa.field("partition_epoch", pa.int32()),  # zkVersion (ZK) / partitionEpoch (3.3+, KRaft)
    pa.field("state_controller_epoch", pa.int32()),  # controller epoch inside a leader/ISR state
    pa.field("correlation_id", pa.int32()),
    pa.field("target_broker", pa.int32()),
    pa.field("target_brokers", _INTS),
    pa.field("live_brokers", _INTS),
    pa.field("added_brokers", _INTS),
    pa.field("deleted_brokers", _INTS),
    pa.field("bounced_brokers", _INTS),
    pa.field("attrs", pa.map_(pa.string(), pa.string())),
    pa.field("message", pa.string()),
    pa.field("stack", pa.string()),  # continuation lines, newline-joined
    pa.field("n_continuation", pa.int32(), nullable=False),
    pa.field("line_prefix", pa.string()),  # docker compose / grep prefix that was stripped
    pa.field("crlf", pa.bool_()),
)
EVENTS_SCHEMA = pa.schema(EVENT_FIELDS)
EVENT_COLUMNS = tuple(f.name for f in EVENT_FIELDS)

QUARANTINE_FIELDS: tuple[pa.Field, ...] = (
    pa.field("source_file", pa.string(), nullable=False),
    pa.field("line_no", pa.int64(), nullable=False),
    pa.field("broker", pa.int32()),
    pa.field("raw", pa.string()),
    pa.field("reason", pa.string(), nullable=False),
)
QUARANTINE_SCHEMA = pa.schema(QUARANTINE_FIELDS)
QUARANTINE_COLUMNS = tuple(f.name for f in QUARANTINE_FIELDS)

# One row per input file: what the reader saw, for the reconciliation.
FILE_FIELDS: tuple[pa.Field, ...] = (
    pa.field("source_file", pa.string(), nullable=False),
    pa.field("lines_read", pa.int64(), nullable=False),
    pa.field("records", pa.int64(), nullable=False),
    pa.field("continuation_lines", pa.int64(), nullable=False),
    pa.field("quarantined", pa.int64(), nullable=False),
    pa.field("out_of_order", pa.int64(), nullable=False),
    # added for issue 14 (nullable: a files table written before them has none)
    pa.field("ts_invalid", pa.int64()),  # records whose ts is null (attrs.ts_invalid)
    pa.field("bom_lines", pa.int64()),  # lines that began with a byte-order mark (removed)
    pa.field("ansi_lines", pa.int64()),  # lines ANSI escapes were removed from
    pa.field("control_lines", pa.int64()),  # text lines kept with control characters
    pa.field("dialect", pa.string()),
    pa.field("compressed", pa.bool_()),
    pa.field("read_error", pa.string()),
)
FILE_SCHEMA = pa.schema(FILE_FIELDS)
FILE_COUNTS = tuple(f.name for f in FILE_FIELDS if f.type == pa.int64())  # a file summary's counters
