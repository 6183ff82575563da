"""Every table kafka-forensics writes: its name, columns and types (the contract between the stages).

``parse`` writes ``events``, ``quarantine`` and ``files``; ``replay`` adds ``partition_timeline`` /
``replica_timeline`` (one row per state interval: the longest run with the same state, leader, ISR,
replicas, leader epoch and partition epoch; ``cause`` is the ``file:line`` that opened it),
``controllers`` (one row per controller and epoch), ``brokers`` (one row per liveness interval) and
``findings`` (``replay.findings``), and from the partition timeline ``impact`` (one row per episode of a
partition being unavailable, under-replicated or under min ISR, ``replay.impact``) with its totals per
topic and per cluster, ``impact_totals``. Names and columns are stable once reports and suites use them
(DESIGN.md "Tables"). Types are Arrow types; the Spark jobs derive their schemas from these, so
there is one definition.
"""

from __future__ import annotations

import pyarrow as pa

EVENTS, QUARANTINE, FILES = "events", "quarantine", "files"
PARTITION_TIMELINE, REPLICA_TIMELINE = "partition_timeline", "replica_timeline"
CONTROLLERS, BROKERS, FINDINGS = "controllers", "brokers", "findings"
IMPACT, IMPACT_TOTALS = "impact", "impact_totals"
PARSE_TABLES = (EVENTS, QUARANTINE, FILES)  # what ``parse`` writes under --out
# what ``replay`` adds
REPLAY_TABLES = (PARTITION_TIMELINE, REPLICA_TIMELINE, CONTROLLERS, BROKERS, FINDINGS, IMPACT, IMPACT_TOTALS)
TABLES = PARSE_TABLES + REPLAY_TABLES  # every table a replayed --out holds, in this order

_INTS = pa.list_(pa.int32())
_TS = pa.timestamp("us", tz="UTC")

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

# The event_type of each __cluster_metadata record (MetadataRecordType names, generated from the apiKey
# by MetadataRecordTypeGenerator); any other record is metadata_other, a control record metadata_control.
METADATA_RECORD_EVENT_TYPES = {
    "PARTITION_RECORD": "metadata_partition",
    "PARTITION_CHANGE_RECORD": "metadata_partition_change",
    "TOPIC_RECORD": "metadata_topic",
    "REMOVE_TOPIC_RECORD": "metadata_remove_topic",
    "REGISTER_BROKER_RECORD": "metadata_register_broker",
    "UNREGISTER_BROKER_RECORD": "metadata_unregister_broker",
    "BROKER_REGISTRATION_CHANGE_RECORD": "metadata_broker_registration_change",
    "FENCE_BROKER_RECORD": "metadata_fence_broker",
    "UNFENCE_BROKER_RECORD": "metadata_unfence_broker",
    "FEATURE_LEVEL_RECORD": "metadata_feature_level",
}
METADATA_OTHER, METADATA_CONTROL = "metadata_other", "metadata_control"
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
PARTITION_TIMELINE_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        *_TIMELINE_TAIL,
    ]
)
REPLICA_TIMELINE_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("replica", pa.int32()),
        *_TIMELINE_TAIL,
    ]
)
# One row per finding, and a finding is one *episode* of one anomaly (replay/findings.py consolidate):
# one rule on one partition (or the cluster) over a span of time or controller epochs.
FINDINGS_SCHEMA = pa.schema(
    [
        pa.field("finding_id", pa.string()),  # hash of rule, kind, place and the line that opened the episode
        pa.field("rule", pa.string()),
        pa.field("severity", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("cluster", pa.string()),
        pa.field("topic", pa.string()),  # null: a cluster-level finding
        pa.field("partition", pa.int32()),
        pa.field("replica", pa.int32()),  # null unless the episode is about one replica
        pa.field("broker", pa.int32()),
        pa.field("controller_epoch", pa.int32()),  # the episode's first controller epoch
        pa.field("ts", _TS),  # the episode's start
        pa.field("summary", pa.string()),  # ends with how many lines and partitions it covers
        pa.field("evidence", pa.list_(pa.string())),  # file:line, in order, at most 50
        pa.field("evidence_count", pa.int32()),  # how many lines the episode cites in all
        pa.field("ts_end", _TS),  # the timestamp of its last evidence line (>= ts)
        pa.field("controller_epoch_end", pa.int32()),  # the last controller epoch it spans
        pa.field("json", pa.string()),  # the findings.jsonl line (deterministic bytes)
    ]
)
# The findings as the commands list them (``--format json|csv``, README "Output formats"): a documented
# contract, so columns are only ever added at the end. One list for the job that selects them
# (jobs/replay_job.top_findings) and the listing that prints them (cli/listings.findings_listing).
FINDING_LISTING_COLUMNS = (
    "severity",
    "rule",
    "cluster",
    "topic",
    "partition",
    "replica",
    "controller_epoch",
    "controller_epoch_end",
    "ts",
    "ts_end",
    "summary",
    "evidence",
    "evidence_count",
)
CONTROLLERS_SCHEMA = pa.schema(
    [
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
    ]
)
BROKERS_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string()),
        pa.field("broker", pa.int32()),
        pa.field("state", pa.string()),  # alive | shutting_down | dead | fenced
        pa.field("ts_start", _TS),
        pa.field("ts_end", _TS),
        pa.field("evidence", pa.string()),
    ]
)

# One row per episode of a partition in one impact kind (replay/impact.py KINDS): the longest run of
# timeline time in which the condition held. ts_end null + open = still so at the end of the logs.
IMPACT_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("kind", pa.string()),  # unavailable | under_replicated | under_min_isr
        pa.field("episode", pa.int32()),  # 0, 1, ... per (cluster, topic, partition, kind) in time order
        pa.field("ts_start", _TS),
        pa.field("ts_end", _TS),  # null: still so when the logs end (open)
        pa.field("open", pa.bool_()),
        pa.field("duration_seconds", pa.float64()),  # null when open
        pa.field("known_seconds", pa.float64()),  # duration, or (open) from ts_start to the last line of the logs
        pa.field("leader", pa.int32()),  # at the start (-1: none)
        pa.field("isr", _INTS),  # at the start
        pa.field("replicas", _INTS),
        pa.field("min_isr", pa.int32()),  # min.insync.replicas used (under_min_isr), null = unknown
        pa.field("min_isr_source", pa.string()),  # where min_isr came from (option, file:line)
        pa.field("reason", pa.string()),  # unavailable: no_leader | leader_not_alive
        # leader_not_alive: the last line the dead leader wrote before its death was logged (it died in between)
        pa.field("leader_last_seen", _TS),
        pa.field("leader_last_seen_evidence", pa.string()),
        pa.field("failed_elections", pa.int32()),  # Kafka's failed-election lines inside the episode
        pa.field("ended_by", pa.string()),  # election | unclean_election | recovery | deletion; null when open
        pa.field("start_evidence", pa.string()),  # file:line that opened it
        pa.field("end_evidence", pa.string()),  # file:line that closed it; null when open
        pa.field("evidence", pa.list_(pa.string())),  # start, failed elections, end (at most MAX_EVIDENCE)
        pa.field("evidence_count", pa.int32()),
    ]
)
# Totals of ``impact`` per (cluster, kind, topic) and per (cluster, kind) with topic null.
IMPACT_TOTALS_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string()),
        pa.field("topic", pa.string()),  # null: the whole cluster
        pa.field("kind", pa.string()),
        pa.field("partitions", pa.int64()),  # partitions with at least one episode
        pa.field("episodes", pa.int64()),
        pa.field("open_episodes", pa.int64()),
        pa.field("seconds", pa.float64()),  # sum of known_seconds (open episodes: up to the end of the logs)
        pa.field("longest_seconds", pa.float64()),
        pa.field("longest_topic", pa.string()),
        pa.field("longest_partition", pa.int32()),
        pa.field("first_start", _TS),
        pa.field("last_end", _TS),  # null when an episode is still open
    ]
)

SCHEMAS: dict[str, pa.Schema] = {
    EVENTS: EVENTS_SCHEMA,
    QUARANTINE: QUARANTINE_SCHEMA,
    FILES: FILE_SCHEMA,
    PARTITION_TIMELINE: PARTITION_TIMELINE_SCHEMA,
    REPLICA_TIMELINE: REPLICA_TIMELINE_SCHEMA,
    CONTROLLERS: CONTROLLERS_SCHEMA,
    BROKERS: BROKERS_SCHEMA,
    FINDINGS: FINDINGS_SCHEMA,
    IMPACT: IMPACT_SCHEMA,
    IMPACT_TOTALS: IMPACT_TOTALS_SCHEMA,
}
assert tuple(SCHEMAS) == TABLES
