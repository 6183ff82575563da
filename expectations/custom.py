"""The custom Great Expectations expectations of kafka-forensics.

Each one is a real GX expectation class (a subclass of ``UnexpectedRowsExpectation``) whose
Spark-SQL query selects the *offending rows*: the expectation is met when the query returns
none. Every query returns the same columns, so the verdict and Data Docs can show any of them:

``topic, partition, replica, ts`` (ISO-8601 UTC text), ``evidence`` (``file:line`` of a log line
that proves the row) and ``detail`` (one sentence).

``{batch}`` is the DataFrame being validated (GX registers it as a temp view); other tables are
read from the views of ``expectations.views``. Queries order their rows, so the sample GX keeps
(the first rows) is deterministic. Which expectations read the replay's findings and which
check the tables themselves (an independent second check) is said in each docstring.
"""

from __future__ import annotations

from typing import ClassVar, Union

from great_expectations.core.suite_parameters import SuiteParameterDict
from great_expectations.expectations import UnexpectedRowsExpectation

from kafka_forensics.replay.cluster import ACTING_TYPES
from kafka_forensics.replay.stale_epochs import REJECTED, TOP_LEVEL_ERROR_11
from kafka_forensics.statemachines.invariants import LEADER_DURING_DELETE, NO_LEADER
from kafka_forensics.statemachines.states import PartitionState as P

from . import views
from .legality import KRAFT_DIALECT, STATE_CHANGE_EVENT_TYPES, dialect_sql, entity_sql

SAMPLE_ROWS = 20  # offending rows kept per expectation in its result (GX itself stops at 200)
OUTPUT_COLUMNS = ("topic", "partition", "replica", "ts", "evidence", "detail")
NON_NEGATIVE_COLUMNS = (
    "broker",
    "controller_id",
    "controller_epoch",
    "partition",
    "replica",
    "leader_epoch",
    "partition_epoch",
    "target_broker",
)


def ts_text(column: str) -> str:
    """An instant as ISO-8601 UTC text with milliseconds, like findings.jsonl (session time zone is UTC)."""
    return f"date_format({column}, \"yyyy-MM-dd'T'HH:mm:ss.SSS'Z'\")"


def _sql_literal(text: str) -> str:
    """A Spark-SQL string literal that survives GX's ``str.format`` of the query."""
    escaped = text.replace("\\", "\\\\").replace("'", "\\'")
    return "'" + escaped.replace("{", "{{").replace("}", "}}") + "'"


def _in_list(values) -> str:
    return ", ".join(_sql_literal(v) for v in sorted(values))


class KafkaRowsExpectation(UnexpectedRowsExpectation):
    """Base of the kafka-forensics expectations: the result always carries a bounded sample of
    the offending rows (``details.unexpected_rows``), whatever result format the run asked for,
    because the verdict's evidence comes from it."""

    # Fixed per class; overriding the field's default keeps the query out of every call site.
    unexpected_rows_query: Union[str, SuiteParameterDict]
    rule: ClassVar[str] = ""  # the replay rule (replay/findings.py RULES) this expectation mirrors

    def _validate(self, metrics: dict, runtime_configuration: dict | None = None, execution_engine=None):
        rows = metrics["unexpected_rows_query.table"] or []
        count = metrics["unexpected_rows_query.row_count"]
        return {
            "success": count == 0,
            "result": {"observed_value": count, "details": {"unexpected_rows": rows[:SAMPLE_ROWS]}},
        }


# ---- events ------------------------------------------------------------------------------------
class ExpectStateNamesToExistInTheirEra(KafkaRowsExpectation):
    """Every from/to state of a partition or replica state-change line is a state that Kafka's
    state machine of that line's era has (``statemachines.rules_for``: 0.8.0 has four replica
    states, 0.8.1+ seven). Checks the events table directly. KRaft lines are not judged."""

    description: str = (
        "Every from/to state of a state-change line is a state of the Kafka era that wrote "
        "the line (states per era from `statemachines/`)."
    )
    unexpected_rows_query: Union[str, SuiteParameterDict] = f"""
        WITH e AS (
          SELECT *, {entity_sql("event_type")} AS kf_entity, {dialect_sql("dialect")} AS kf_dialect
          FROM {{batch}}
          WHERE event_type IN ({_in_list(STATE_CHANGE_EVENT_TYPES)}) AND coalesce(dialect, '') <> '{KRAFT_DIALECT}'
            AND (from_state IS NOT NULL OR to_state IS NOT NULL))
        SELECT e.topic, e.partition, e.replica, {ts_text("e.ts")} AS ts,
               concat(e.source_file, ':', e.line_no) AS evidence,
               concat(e.kf_entity, ' state ', coalesce(e.from_state, '?'), ' -> ', coalesce(e.to_state, '?'),
                      ' names a state that the ', e.kf_dialect, ' era does not have') AS detail
        FROM e
        LEFT JOIN {views.ERA_STATES} f ON f.dialect = e.kf_dialect AND f.entity = e.kf_entity AND f.state = e.from_state
        LEFT JOIN {views.ERA_STATES} t ON t.dialect = e.kf_dialect AND t.entity = e.kf_entity AND t.state = e.to_state
        WHERE (e.from_state IS NOT NULL AND f.state IS NULL) OR (e.to_state IS NOT NULL AND t.state IS NULL)
        ORDER BY e.source_file, e.line_no"""


class ExpectIdsAndEpochsToBeNonNegative(KafkaRowsExpectation):
    """Broker, controller, partition and replica ids and the controller, leader and partition epochs
    a line carries are never negative; a leader is a broker id or a no-leader sentinel (-1 NoLeader,
    -2 LeaderDuringDelete). One query over the events table instead of one GX column expectation
    per column: one Spark pass."""

    description: str = (
        "Ids (broker, controller, partition, replica) and epochs (controller, leader, partition) "
        "are never negative; a leader is an id or -1/-2 (no leader)."
    )
    unexpected_rows_query: Union[str, SuiteParameterDict] = f"""
        SELECT topic, partition, replica, {ts_text("ts")} AS ts, concat(source_file, ':', line_no) AS evidence,
               concat_ws(', ', {", ".join(f"CASE WHEN {c} < 0 THEN concat('{c}=', {c}) END" for c in NON_NEGATIVE_COLUMNS)},
                         CASE WHEN leader < {LEADER_DURING_DELETE} THEN concat('leader=', leader) END,
                         CASE WHEN line_no < 1 THEN concat('line_no=', line_no) END) AS detail
        FROM {{batch}}
        WHERE {" OR ".join(f"{c} < 0" for c in NON_NEGATIVE_COLUMNS)} OR leader < {LEADER_DURING_DELETE} OR line_no < 1
        ORDER BY source_file, line_no"""


class ExpectTimestampsToBeParsed(KafkaRowsExpectation):
    """A line whose header carried a timestamp (``ts_raw``) has it parsed into ``ts``: a null
    ``ts`` would drop the line out of every time-ordered check. Checks the events table directly."""

    description: str = "Every logged timestamp was parsed (`ts_raw` present implies `ts` present)."
    unexpected_rows_query: Union[str, SuiteParameterDict] = """
        SELECT topic, partition, replica, ts_raw AS ts, concat(source_file, ':', line_no) AS evidence,
               concat('timestamp text ', ts_raw, ' was not parsed') AS detail
        FROM {batch}
        WHERE ts_raw IS NOT NULL AND ts IS NULL
        ORDER BY source_file, line_no"""


_QUARANTINE_RATE_QUERY = f"""
        WITH kf_unused AS (SELECT 1 FROM {{batch}} LIMIT 0),
        totals AS (SELECT sum(lines_read) AS lines_read, sum(quarantined) AS quarantined FROM {views.FILES}),
        first_q AS (SELECT concat(source_file, ':', line_no) AS evidence FROM {views.QUARANTINE}
                    ORDER BY source_file, line_no LIMIT 1)
        SELECT CAST(NULL AS STRING) AS topic, CAST(NULL AS INT) AS partition, CAST(NULL AS INT) AS replica,
               CAST(NULL AS STRING) AS ts, (SELECT evidence FROM first_q) AS evidence,
               concat(quarantined, ' of ', lines_read, ' lines quarantined (rate ',
                      format_number(quarantined / lines_read, 4), ' > MAX_RATE)') AS detail
        FROM totals
        WHERE lines_read > 0 AND quarantined / lines_read > MAX_RATE"""


class ExpectQuarantineRateToBeBelow(KafkaRowsExpectation):
    """The share of input lines the grammar did not accept stays under a threshold (files table:
    ``sum(quarantined) / sum(lines_read)``). A high rate means an unknown layout or Kafka version,
    and every other expectation then sees only part of the logs. Build with ``with_max_rate``."""

    description: str = (
        "The quarantine rate (lines the grammar did not accept / lines read) is at most the configured maximum."
    )
    unexpected_rows_query: Union[str, SuiteParameterDict] = _QUARANTINE_RATE_QUERY.replace("MAX_RATE", "0.01")

    @classmethod
    def with_max_rate(cls, max_rate: float, **kwargs) -> "ExpectQuarantineRateToBeBelow":
        rate = repr(float(max_rate))
        return cls(
            unexpected_rows_query=_QUARANTINE_RATE_QUERY.replace("MAX_RATE", rate),
            description=f"The quarantine rate (lines the grammar did not accept / lines read) is at most {rate}.",
            **kwargs,
        )


# ---- timelines ---------------------------------------------------------------------------------
class ExpectTimelineTransitionsToBeLegalForTheirEra(KafkaRowsExpectation):
    """Every partition/replica timeline interval opened by a logged state change (``cause``) entered
    its state by a transition the era's state machine allows: (the cause line's logged from-state,
    the interval's state) must be in ``statemachines``' valid-previous-states table for some
    release of the line's dialect. Checks the timelines (joined to their cause lines) directly,
    independently of the replay's ``illegal_transition`` rule. A from-state that differs from the
    previous interval is a gap (missing lines), not an illegal transition, so it is not judged here."""

    rule: ClassVar[str] = "illegal_transition"
    description: str = (
        "Every state transition on the partition and replica timelines is legal for the "
        "Kafka era that logged it (valid previous states from `statemachines/`)."
    )
    unexpected_rows_query: Union[str, SuiteParameterDict] = f"""
        WITH t AS (
          SELECT 'partition' AS kf_entity, topic, partition, CAST(NULL AS INT) AS replica, state, cause, cause_event_type
          FROM {{batch}}
          UNION ALL
          SELECT 'replica' AS kf_entity, topic, partition, replica, state, cause, cause_event_type
          FROM {views.REPLICA_TIMELINE}),
        c AS (
          SELECT t.*, e.from_state, e.ts, {dialect_sql("e.dialect")} AS kf_dialect
          FROM t JOIN {views.EVENTS} e
            ON e.event_type IN ({_in_list(STATE_CHANGE_EVENT_TYPES)}) AND t.cause = concat(e.source_file, ':', e.line_no)
          WHERE t.cause_event_type IN ({_in_list(STATE_CHANGE_EVENT_TYPES)}) AND t.state IS NOT NULL
            AND e.from_state IS NOT NULL AND coalesce(e.dialect, '') <> '{KRAFT_DIALECT}')
        SELECT c.topic, c.partition, c.replica, {ts_text("c.ts")} AS ts, c.cause AS evidence,
               concat(c.kf_entity, ' ', c.from_state, ' -> ', c.state, ' is not a legal transition in the ',
                      c.kf_dialect, ' era') AS detail
        FROM c LEFT ANTI JOIN {views.LEGAL_TRANSITIONS} l
          ON l.dialect = c.kf_dialect AND l.entity = c.kf_entity AND l.from_state = c.from_state AND l.to_state = c.state
        ORDER BY c.topic, c.partition, c.replica, c.cause"""


class ExpectLeaderToBeInIsr(KafkaRowsExpectation):
    """On the partition timeline a leader is a member of its ISR, unless it is a no-leader sentinel
    (-1 NoLeader, -2 LeaderDuringDelete; ``statemachines.invariants``). Checks the timeline directly
    (I2), but only intervals whose cause line carried both a leader and an ISR: an interval opened
    by an election line keeps the previous ISR until the next LeaderAndIsr is logged, and absence
    of a line is not a violation."""

    rule: ClassVar[str] = "leader_not_in_isr"
    description: str = "On the partition timeline the leader is in the ISR (or there is no leader: -1/-2)."
    unexpected_rows_query: Union[str, SuiteParameterDict] = f"""
        SELECT t.topic, t.partition, CAST(NULL AS INT) AS replica, {ts_text("t.ts_start")} AS ts, t.cause AS evidence,
               concat('leader ', t.leader, ' is not in ISR [', array_join(t.isr, ','), ']') AS detail
        FROM {{batch}} t JOIN {views.EVENTS} e ON t.cause = concat(e.source_file, ':', e.line_no)
        WHERE e.leader IS NOT NULL AND e.isr IS NOT NULL
          AND t.leader IS NOT NULL AND t.leader NOT IN ({NO_LEADER}, {LEADER_DURING_DELETE}) AND t.isr IS NOT NULL
          AND NOT array_contains(t.isr, t.leader)
        ORDER BY t.cluster, t.topic, t.partition, t.seq"""


class ExpectIsrToBeWithinReplicas(KafkaRowsExpectation):
    """On the partition timeline every ISR member is an assigned replica (I3). Checks the timeline
    directly, for intervals whose cause line carried both the ISR and the replicas. Transiently
    false during a reassignment (KAFKA-9672), hence ``warning`` in the default configuration."""

    rule: ClassVar[str] = "isr_not_subset_of_replicas"
    description: str = (
        "On the partition timeline the ISR is a subset of the assigned replicas "
        "(transiently false during reassignment, KAFKA-9672)."
    )
    unexpected_rows_query: Union[str, SuiteParameterDict] = f"""
        SELECT t.topic, t.partition, CAST(NULL AS INT) AS replica, {ts_text("t.ts_start")} AS ts, t.cause AS evidence,
               concat('ISR [', array_join(t.isr, ','), '] is not within replicas [', array_join(t.replicas, ','), ']')
                 AS detail
        FROM {{batch}} t JOIN {views.EVENTS} e ON t.cause = concat(e.source_file, ':', e.line_no)
        WHERE e.isr IS NOT NULL AND e.replicas IS NOT NULL
          AND t.isr IS NOT NULL AND t.replicas IS NOT NULL AND size(array_except(t.isr, t.replicas)) > 0
        ORDER BY t.cluster, t.topic, t.partition, t.seq"""


def _epoch_query(column: str, label: str) -> str:
    """Rows of the partition timeline whose ``column`` is below the largest earlier value of the same
    partition incarnation (a NewPartition/NonExistentPartition interval starts a new one)."""
    return f"""
        WITH inc AS (
          SELECT *, sum(CASE WHEN state IN ('{P.NewPartition.value}', '{P.NonExistentPartition.value}') THEN 1 ELSE 0 END)
                      OVER (PARTITION BY cluster, topic, partition ORDER BY seq) AS kf_incarnation
          FROM {{batch}}),
        w AS (
          SELECT *, max({column}) OVER (PARTITION BY cluster, topic, partition, kf_incarnation ORDER BY seq
                                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS kf_before
          FROM inc)
        SELECT topic, partition, CAST(NULL AS INT) AS replica, {ts_text("ts_start")} AS ts, cause AS evidence,
               concat('{label} ', {column}, ' after ', kf_before, ' was already established') AS detail
        FROM w
        WHERE {column} IS NOT NULL AND kf_before IS NOT NULL AND {column} < kf_before
        ORDER BY cluster, topic, partition, seq"""


class ExpectLeaderEpochToNeverDecrease(KafkaRowsExpectation):
    """Within one incarnation of a partition the leader epoch never goes back (I8). Checks the
    partition timeline directly, in ``seq`` order."""

    rule: ClassVar[str] = "leader_epoch_regression"
    description: str = "The leader epoch of a partition never goes back (within one incarnation of the topic)."
    unexpected_rows_query: Union[str, SuiteParameterDict] = _epoch_query("leader_epoch", "leader epoch")


class ExpectPartitionEpochToNeverDecrease(KafkaRowsExpectation):
    """Within one incarnation of a partition the zkVersion / partition epoch never goes back (I9).
    Checks the partition timeline directly, in ``seq`` order."""

    rule: ClassVar[str] = "partition_epoch_regression"
    description: str = (
        "The partition epoch (zkVersion / partitionEpoch) never goes back (within one incarnation of the topic)."
    )
    unexpected_rows_query: Union[str, SuiteParameterDict] = _epoch_query("partition_epoch", "partition epoch")


class ExpectControllerEpochToNeverDecrease(KafkaRowsExpectation):
    """Controllers, in the order they took office (``ts_start``), hold ever larger epochs (I5/I10).
    Checks the controllers table directly."""

    rule: ClassVar[str] = "controller_epoch_regression"
    description: str = "Each new controller epoch is larger than every earlier one."
    unexpected_rows_query: Union[str, SuiteParameterDict] = f"""
        WITH kf_unused AS (SELECT 1 FROM {{batch}} LIMIT 0),
        w AS (
          SELECT *, max(controller_epoch) OVER (PARTITION BY cluster ORDER BY ts_start, controller_epoch
                                                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS kf_before
          FROM {views.CONTROLLERS}
          WHERE ts_start IS NOT NULL)
        SELECT CAST(NULL AS STRING) AS topic, CAST(NULL AS INT) AS partition, CAST(NULL AS INT) AS replica,
               {ts_text("ts_start")} AS ts, evidence[0] AS evidence,
               concat('controller ', controller_id, ' took epoch ', controller_epoch, ' after epoch ', kf_before)
                 AS detail
        FROM w
        WHERE kf_before IS NOT NULL AND controller_epoch < kf_before
        ORDER BY cluster, ts_start, controller_epoch"""


# ---- failover ----------------------------------------------------------------------------------
def _finding_query(*rules: str) -> str:
    """The replay's findings of these rules, as offending rows."""
    return f"""
        SELECT topic, partition, replica, {ts_text("ts")} AS ts, evidence[0] AS evidence,
               concat(severity, ': ', summary) AS detail
        FROM {{batch}}
        WHERE rule IN ({_in_list(rules)})
        ORDER BY cluster, ts, topic, partition, replica, finding_id"""


class ExpectNoLeaderIsrMismatchAfterFailover(KafkaRowsExpectation):
    """After a controller failover the new controller's leader/ISR agree with its predecessor's
    unless a logged event explains the change, and keep no dead broker (KAFKA-3143). Reads the
    replay's ``leader_isr_mismatch_after_failover`` findings: the comparison needs the replayed
    state of both controllers, which only the replay has."""

    rule: ClassVar[str] = "leader_isr_mismatch_after_failover"
    description: str = (
        "No leader/ISR mismatch after a controller failover (replay findings `leader_isr_mismatch_after_failover`)."
    )
    unexpected_rows_query: Union[str, SuiteParameterDict] = _finding_query("leader_isr_mismatch_after_failover")


class ExpectNoOfflinePartitionWithLiveReplicas(KafkaRowsExpectation):
    """No partition is left without a leader while replicas of it were on live brokers. Reads the
    replay's ``offline_with_live_replicas`` findings: liveness at each instant comes from the
    replayed cluster context."""

    rule: ClassVar[str] = "offline_with_live_replicas"
    description: str = "No offline partition with live replicas (replay findings `offline_with_live_replicas`)."
    unexpected_rows_query: Union[str, SuiteParameterDict] = _finding_query("offline_with_live_replicas")


class ExpectNoUncleanElections(KafkaRowsExpectation):
    """No leader was elected from outside the ISR: committed data may have been lost (ZooKeeper
    ``unclean.leader.election.enable`` elections, KRaft records that elect outside the ISR or mark a
    leader RECOVERING). Reads the replay's ``unclean_election`` findings: whether the new leader was
    in the ISR needs the replayed ISR before the election."""

    rule: ClassVar[str] = "unclean_election"
    description: str = (
        "No unclean leader election, i.e. no leader from outside the ISR (replay findings `unclean_election`)."
    )
    unexpected_rows_query: Union[str, SuiteParameterDict] = _finding_query("unclean_election")


class ExpectNoLeaderOnFencedBroker(KafkaRowsExpectation):
    """KRaft: no metadata record makes a fenced or unregistered broker leader (the controller only
    elects active brokers). Reads the replay's ``leader_on_fenced_broker`` findings: fencing at each
    record comes from the replayed broker registrations."""

    rule: ClassVar[str] = "leader_on_fenced_broker"
    description: str = "KRaft: no leader on a fenced broker (replay findings `leader_on_fenced_broker`)."
    unexpected_rows_query: Union[str, SuiteParameterDict] = _finding_query("leader_on_fenced_broker")


class ExpectNoPartitionEpochGaps(KafkaRowsExpectation):
    """KRaft: the metadata records reach every partition epoch a snapshot or a broker applied, and
    no segment skips offsets; either means records are missing from the dump. Reads the replay's
    ``partition_epoch_gap`` and ``metadata_offset_gap`` findings."""

    rule: ClassVar[str] = "partition_epoch_gap"
    description: str = (
        "KRaft: no records missing from the metadata log (replay findings "
        "`partition_epoch_gap`, `metadata_offset_gap`)."
    )
    unexpected_rows_query: Union[str, SuiteParameterDict] = _finding_query("partition_epoch_gap", "metadata_offset_gap")


class ExpectBrokerViewsToMatchMetadata(KafkaRowsExpectation):
    """KRaft: every broker's ``Leader ... starts at leader epoch E`` agrees with the metadata record
    that made that partition epoch. Reads the replay's ``metadata_view_mismatch`` findings."""

    rule: ClassVar[str] = "metadata_view_mismatch"
    description: str = (
        "KRaft: brokers' leader views match the metadata records (replay findings `metadata_view_mismatch`)."
    )
    unexpected_rows_query: Union[str, SuiteParameterDict] = _finding_query("metadata_view_mismatch")


_CONCURRENT_QUERY = f"""
        WITH kf_unused AS (SELECT 1 FROM {{batch}} LIMIT 0),
        c AS (SELECT * FROM {views.CONTROLLERS}),
        zombie AS (
          SELECT o.cluster, o.controller_id AS old_id, o.controller_epoch AS old_epoch,
                 min(n.ts_start) AS new_start, min_by(n.controller_id, n.ts_start) AS new_id,
                 min_by(n.controller_epoch, n.ts_start) AS new_epoch
          FROM c o JOIN c n
            ON o.cluster = n.cluster AND n.controller_epoch > o.controller_epoch AND n.controller_id <> o.controller_id
          WHERE o.last_action_ts > timestampadd(MILLISECOND, SKEW_MS, n.ts_start)
          GROUP BY o.cluster, o.controller_id, o.controller_epoch),
        acts AS (
          SELECT z.cluster, z.old_id, z.old_epoch, z.new_id, z.new_epoch, z.new_start,
                 min(struct(e.ts, e.source_file, e.line_no)) AS first_act
          FROM zombie z JOIN {views.EVENTS} e
            ON e.controller_id = z.old_id AND e.controller_epoch = z.old_epoch
           AND e.event_type IN ({_in_list(ACTING_TYPES)})
           AND e.ts > timestampadd(MILLISECOND, SKEW_MS, z.new_start)
          GROUP BY z.cluster, z.old_id, z.old_epoch, z.new_id, z.new_epoch, z.new_start),
        twice AS (
          SELECT cluster, controller_epoch, min(ts_start) AS ts_start, sort_array(collect_set(controller_id)) AS ids,
                 min(evidence[0]) AS evidence
          FROM c GROUP BY cluster, controller_epoch HAVING count(DISTINCT controller_id) > 1)
        SELECT topic, partition, replica, ts, evidence, detail FROM (
          SELECT cluster, CAST(NULL AS STRING) AS topic, CAST(NULL AS INT) AS partition, CAST(NULL AS INT) AS replica,
                 {ts_text("first_act.ts")} AS ts, concat(first_act.source_file, ':', first_act.line_no) AS evidence,
                 concat('controller ', old_id, ' still acted with epoch ', old_epoch, ' after controller ', new_id,
                        ' took epoch ', new_epoch, ' at ', {ts_text("new_start")}, ' (zombie controller)') AS detail
          FROM acts
          UNION ALL
          SELECT cluster, NULL, NULL, NULL, {ts_text("ts_start")}, evidence,
                 concat('controller epoch ', controller_epoch, ' claimed by controllers ', array_join(ids, ', '))
          FROM twice)
        ORDER BY cluster, ts, evidence"""


class ExpectNoConcurrentControllers(KafkaRowsExpectation):
    """At most one controller acts at a time: no controller acts with its epoch after a later epoch
    began (more than the clock-skew tolerance after), and no epoch is claimed by two controllers.
    Checks the controllers table (and the first late action in the events) directly, independently
    of the replay's ``concurrent_controllers`` rule. Build with ``with_skew``."""

    rule: ClassVar[str] = "concurrent_controllers"
    description: str = (
        "No concurrent controllers: no controller acts after a later epoch began, no epoch is claimed twice."
    )
    unexpected_rows_query: Union[str, SuiteParameterDict] = _CONCURRENT_QUERY.replace("SKEW_MS", "2000")

    @classmethod
    def with_skew(cls, skew_seconds: float, **kwargs) -> "ExpectNoConcurrentControllers":
        millis = str(round(skew_seconds * 1000))
        return cls(unexpected_rows_query=_CONCURRENT_QUERY.replace("SKEW_MS", millis), **kwargs)


class ExpectNoStaleEpochRejections(KafkaRowsExpectation):
    """No broker refused a request for a stale controller epoch, and no controller got
    STALE_CONTROLLER_EPOCH (error 11) back: either means a deposed controller was still sending.
    Checks the events table directly, independently of the replay's ``stale_epoch_rejected`` findings,
    and counts as they do one row per episode: one deposed controller's stale epoch
    (``replay.stale_epochs.group_key``), whichever brokers refused it and however often, citing its
    first line."""

    rule: ClassVar[str] = "stale_epoch_rejected"
    description: str = (
        "No stale controller-epoch rejections: no broker refused a request from a "
        "deposed controller (nor answered one with error 11)."
    )
    unexpected_rows_query: Union[str, SuiteParameterDict] = f"""
        WITH kf_unused AS (SELECT 1 FROM {{batch}} LIMIT 0),
        r AS (
          SELECT controller_id, controller_epoch, ts, source_file, line_no,
                 CASE WHEN event_type = '{REJECTED}' THEN broker ELSE target_broker END AS kf_broker
          FROM {views.EVENTS}
          WHERE (event_type = '{REJECTED}'
                 OR (event_type = 'controller_response' AND attrs['response'] RLIKE {_sql_literal(TOP_LEVEL_ERROR_11)}))),
        g AS (
          SELECT controller_id, controller_epoch, min(struct(ts, source_file, line_no)) AS kf_first, count(*) AS kf_lines,
                 array_join(sort_array(collect_set(CAST(kf_broker AS STRING))), ', ') AS kf_brokers
          FROM r GROUP BY controller_id, controller_epoch)
        SELECT CAST(NULL AS STRING) AS topic, CAST(NULL AS INT) AS partition, CAST(NULL AS INT) AS replica,
               {ts_text("kf_first.ts")} AS ts, concat(kf_first.source_file, ':', kf_first.line_no) AS evidence,
               concat('controller ', coalesce(CAST(controller_id AS STRING), '?'), ' with stale epoch ',
                      coalesce(CAST(controller_epoch AS STRING), '?'), ': ', kf_lines,
                      ' refused request(s) or error-11 answer(s), brokers ', kf_brokers) AS detail
        FROM g
        ORDER BY kf_first.ts, evidence"""


# ---- impact -----------------------------------------------------------------------------------
_IMPACT_QUERY = f"""
        SELECT topic, partition, CAST(NULL AS INT) AS replica, {ts_text("ts_start")} AS ts, start_evidence AS evidence,
               concat(topic, '-', partition, ' ', replace(kind, '_', ' '), ' for ', format_number(known_seconds, 3),
                      ' s', CASE WHEN open THEN ' at least (still so when the logs end)' ELSE '' END,
                      ' > MAX_SECONDS s', coalesce(concat(', ended by ', ended_by, ' at ', end_evidence), '')) AS detail
        FROM {{batch}}
        WHERE kind = 'KIND' AND known_seconds > MAX_SECONDS
        ORDER BY known_seconds DESC, cluster, topic, partition, episode"""


class _ImpactBound(KafkaRowsExpectation):
    """Base of the impact bounds: every episode of one kind of the ``impact`` table (replay/impact.py) longer than
    a threshold is an offending row; an open episode counts up to the last line of the logs (a lower bound, so
    one already longer offends). Build with ``with_max_seconds``."""

    kind: ClassVar[str] = ""
    what: ClassVar[str] = ""

    @classmethod
    def query(cls, max_seconds: float) -> str:
        return _IMPACT_QUERY.replace("MAX_SECONDS", repr(float(max_seconds))).replace("KIND", cls.kind)

    @classmethod
    def with_max_seconds(cls, max_seconds: float, **kwargs):
        return cls(
            unexpected_rows_query=cls.query(max_seconds),
            description=f"No partition {cls.what} longer than {float(max_seconds):g} s at a stretch (impact table).",
            **kwargs,
        )


class ExpectNoPartitionUnavailableLongerThan(_ImpactBound):
    """No partition was unavailable (no leader, or its leader's broker dead or fenced: kafka-topics
    --unavailable-partitions) longer than ``thresholds.max_unavailable_seconds`` at a stretch. Reads the
    ``impact`` table's ``unavailable`` episodes."""

    kind: ClassVar[str] = "unavailable"
    what: ClassVar[str] = "unavailable"
    description: str = "No partition unavailable longer than 60 s at a stretch (impact table)."
    unexpected_rows_query: Union[str, SuiteParameterDict] = _IMPACT_QUERY.replace("MAX_SECONDS", "60.0").replace(
        "KIND", "unavailable"
    )


class ExpectNoPartitionUnderMinIsrLongerThan(_ImpactBound):
    """No partition ran under min.insync.replicas (acks=all writes fail: kafka-topics --under-min-isr-partitions)
    longer than ``thresholds.max_under_min_isr_seconds`` at a stretch, where min.insync.replicas is known (the
    brokers' config dump, 'Created log' lines, KRaft config records, or --min-isr). Reads the ``impact`` table's
    ``under_min_isr`` episodes."""

    kind: ClassVar[str] = "under_min_isr"
    what: ClassVar[str] = "under min.insync.replicas"
    description: str = "No partition under min.insync.replicas longer than 60 s at a stretch (impact table)."
    unexpected_rows_query: Union[str, SuiteParameterDict] = _IMPACT_QUERY.replace("MAX_SECONDS", "60.0").replace(
        "KIND", "under_min_isr"
    )


CUSTOM_EXPECTATIONS = (
    ExpectStateNamesToExistInTheirEra,
    ExpectIdsAndEpochsToBeNonNegative,
    ExpectTimestampsToBeParsed,
    ExpectQuarantineRateToBeBelow,
    ExpectTimelineTransitionsToBeLegalForTheirEra,
    ExpectLeaderToBeInIsr,
    ExpectIsrToBeWithinReplicas,
    ExpectLeaderEpochToNeverDecrease,
    ExpectPartitionEpochToNeverDecrease,
    ExpectControllerEpochToNeverDecrease,
    ExpectNoLeaderIsrMismatchAfterFailover,
    ExpectNoConcurrentControllers,
    ExpectNoStaleEpochRejections,
    ExpectNoOfflinePartitionWithLiveReplicas,
    ExpectNoPartitionUnavailableLongerThan,
    ExpectNoPartitionUnderMinIsrLongerThan,
)
