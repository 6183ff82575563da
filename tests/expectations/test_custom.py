"""Each custom expectation fires on a bad row and stays silent on a good one.

Small tables with the real schemas (core/tables.py) are built in the
test and validated through GX on the shared Spark session, in one ephemeral context.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from pyspark.sql.pandas.types import from_arrow_schema

from kafka_forensics.core.tables import (
    CONTROLLERS_SCHEMA,
    EVENTS_SCHEMA,
    FILE_SCHEMA,
    FINDINGS_SCHEMA,
    PARTITION_TIMELINE_SCHEMA,
    QUARANTINE_SCHEMA,
    REPLICA_TIMELINE_SCHEMA,
)
from kafka_forensics.expectations import custom, gx_run
from kafka_forensics.expectations.suites import SUITES, SuiteSettings, expectations_for
from kafka_forensics.expectations.views import register_views

pytestmark = pytest.mark.spark
T0 = datetime(2024, 3, 4, 10, 0, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def context():
    with gx_run.quiet_gx():
        yield gx_run.ephemeral_context()


def frame(spark, schema, rows: list[dict]):
    defaults = {"n_continuation": 0}
    data = [tuple({**defaults, **r}.get(f.name) for f in schema) for r in rows]
    return spark.createDataFrame(data, from_arrow_schema(schema))


def event(line_no: int, event_type: str, **fields) -> dict:
    return {
        "source_file": "b1/state-change.log",
        "line_no": line_no,
        "event_type": event_type,
        "ts": T0,
        "ts_raw": "2024-03-04 10:00:00,000",
        "level": "TRACE",
        "dialect": "zk-1.1",
        **fields,
    }


def interval(seq: int, state: str, **fields) -> dict:
    return {
        "cluster": "",
        "topic": "orders",
        "partition": 0,
        "seq": seq,
        "ts_start": T0 + timedelta(seconds=seq),
        "state": state,
        "cause": f"b1/state-change.log:{seq + 1}",
        "cause_event_type": "partition_state_change",
        "source": "decision",
        **fields,
    }


def run(spark, context, expectation, batch_table: str, batch, **views):
    """Register the views the expectation reads (empty ones by default) and validate ``batch``."""
    empty = {
        "events": EVENTS_SCHEMA,
        "quarantine": QUARANTINE_SCHEMA,
        "files": FILE_SCHEMA,
        "replica_timeline": REPLICA_TIMELINE_SCHEMA,
        "controllers": CONTROLLERS_SCHEMA,
    }
    tables = {name: frame(spark, schema, []) for name, schema in empty.items()}
    tables.update(views)
    register_views(spark, tables)
    with gx_run.quiet_gx():
        return gx_run.validate_one(context, batch, expectation, name=batch_table)


def offending(result) -> list[dict]:
    return result["result"]["details"]["unexpected_rows"]


def assert_fires(result, evidence: str, count: int = 1):
    assert result["success"] is False, result
    assert result["result"]["observed_value"] == count
    assert offending(result)[0]["evidence"] == evidence
    assert offending(result)[0]["detail"]
    assert tuple(offending(result)[0]) == custom.OUTPUT_COLUMNS  # the columns the verdict shows


def assert_silent(result):
    assert result["success"] is True, result
    assert result["result"]["observed_value"] == 0


# ---- events -------------------------------------------------------------------------------------------
def test_state_names_fire_on_a_state_of_the_other_machine(spark, context):
    bad = frame(
        spark,
        EVENTS_SCHEMA,
        [
            event(
                7,
                "replica_state_change",
                topic="orders",
                partition=0,
                replica=2,
                from_state="OnlineReplica",
                to_state="OnlinePartition",
            )
        ],
    )
    result = run(spark, context, custom.ExpectStateNamesToExistInTheirEra(), "events", bad)
    assert_fires(result, "b1/state-change.log:7")
    assert "OnlinePartition" in offending(result)[0]["detail"] and offending(result)[0]["topic"] == "orders"


def test_state_names_silent_on_kafka_states(spark, context):
    good = frame(
        spark,
        EVENTS_SCHEMA,
        [
            event(1, "replica_state_change", from_state="OnlineReplica", to_state="ReplicaDeletionStarted"),
            event(2, "partition_state_change", from_state="NewPartition", to_state="OnlinePartition", dialect=None),
        ],
    )
    assert_silent(run(spark, context, custom.ExpectStateNamesToExistInTheirEra(), "events", good))


def test_ids_and_epochs_fire_on_a_negative_epoch_but_allow_no_leader(spark, context):
    bad = frame(
        spark,
        EVENTS_SCHEMA,
        [
            event(3, "send_leader_and_isr", controller_epoch=-4, leader=-1),
            event(4, "send_leader_and_isr", controller_epoch=4, leader=-1),
        ],
    )
    result = run(spark, context, custom.ExpectIdsAndEpochsToBeNonNegative(), "events", bad)
    assert_fires(result, "b1/state-change.log:3")
    assert offending(result)[0]["detail"] == "controller_epoch=-4"
    good = frame(spark, EVENTS_SCHEMA, [event(4, "send_leader_and_isr", controller_epoch=4, leader=-2, partition=0)])
    assert_silent(run(spark, context, custom.ExpectIdsAndEpochsToBeNonNegative(), "events", good))


def test_timestamps_fire_on_unparsed_text(spark, context):
    bad = frame(spark, EVENTS_SCHEMA, [event(9, "other", ts=None, ts_raw="2024-13-45 99:00:00,000")])
    assert_fires(run(spark, context, custom.ExpectTimestampsToBeParsed(), "events", bad), "b1/state-change.log:9")
    good = frame(spark, EVENTS_SCHEMA, [event(9, "other"), event(10, "other", ts=None, ts_raw=None)])
    assert_silent(run(spark, context, custom.ExpectTimestampsToBeParsed(), "events", good))


def test_quarantine_rate_fires_above_the_threshold_only(spark, context):
    events = frame(spark, EVENTS_SCHEMA, [event(1, "other")])
    files = frame(
        spark,
        FILE_SCHEMA,
        [
            {
                "source_file": "b1/server.log",
                "lines_read": 100,
                "records": 95,
                "continuation_lines": 0,
                "quarantined": 5,
                "out_of_order": 0,
            }
        ],
    )
    quarantine = frame(
        spark,
        QUARANTINE_SCHEMA,
        [
            {"source_file": "b1/server.log", "line_no": 12, "reason": "no template"},
            {"source_file": "b1/server.log", "line_no": 40, "reason": "no template"},
        ],
    )
    strict = custom.ExpectQuarantineRateToBeBelow.with_max_rate(0.01)
    result = run(spark, context, strict, "events", events, files=files, quarantine=quarantine)
    assert_fires(result, "b1/server.log:12")
    assert "5 of 100" in offending(result)[0]["detail"]
    lenient = custom.ExpectQuarantineRateToBeBelow.with_max_rate(0.05)
    assert_silent(run(spark, context, lenient, "events", events, files=files, quarantine=quarantine))


# ---- timelines ----------------------------------------------------------------------------------------
def test_transition_legality_fires_on_a_transition_the_era_forbids(spark, context):
    timeline = frame(spark, PARTITION_TIMELINE_SCHEMA, [interval(0, "OnlinePartition", cause="b1/state-change.log:5")])
    # NonExistentPartition -> OnlinePartition: OnlinePartition's valid previous states are New/Online/Offline
    events = frame(
        spark,
        EVENTS_SCHEMA,
        [
            event(
                5,
                "partition_state_change",
                topic="orders",
                partition=0,
                from_state="NonExistentPartition",
                to_state="OnlinePartition",
            )
        ],
    )
    result = run(
        spark,
        context,
        custom.ExpectTimelineTransitionsToBeLegalForTheirEra(),
        "partition_timeline",
        timeline,
        events=events,
    )
    assert_fires(result, "b1/state-change.log:5")
    assert offending(result)[0]["partition"] == 0 and offending(result)[0]["ts"] == "2024-03-04T10:00:00.000Z"


def test_transition_legality_silent_on_legal_transitions_and_checks_replicas(spark, context):
    timeline = frame(spark, PARTITION_TIMELINE_SCHEMA, [interval(0, "OnlinePartition", cause="b1/state-change.log:5")])
    replicas = frame(
        spark,
        REPLICA_TIMELINE_SCHEMA,
        [
            {
                **interval(0, "OnlineReplica", cause="b1/state-change.log:6", cause_event_type="replica_state_change"),
                "replica": 2,
            }
        ],
    )
    events = frame(
        spark,
        EVENTS_SCHEMA,
        [
            event(5, "partition_state_change", from_state="NewPartition", to_state="OnlinePartition"),
            event(6, "replica_state_change", from_state="NewReplica", to_state="OnlineReplica"),
        ],
    )
    expectation = custom.ExpectTimelineTransitionsToBeLegalForTheirEra()
    assert_silent(
        run(spark, context, expectation, "partition_timeline", timeline, events=events, replica_timeline=replicas)
    )
    # NonExistentReplica -> OnlineReplica is illegal for a replica
    bad_events = frame(
        spark,
        EVENTS_SCHEMA,
        [
            event(5, "partition_state_change", from_state="NewPartition", to_state="OnlinePartition"),
            event(6, "replica_state_change", from_state="NonExistentReplica", to_state="OnlineReplica"),
        ],
    )
    result = run(
        spark, context, expectation, "partition_timeline", timeline, events=bad_events, replica_timeline=replicas
    )
    assert_fires(result, "b1/state-change.log:6")
    assert offending(result)[0]["replica"] == 2


def cause_lines(spark, *line_nos: int, **carried):
    """The events that opened timeline intervals (``interval`` causes are b1/state-change.log:seq+1)."""
    return frame(spark, EVENTS_SCHEMA, [event(n, "send_leader_and_isr", **carried) for n in line_nos])


def test_leader_in_isr(spark, context):
    carried = cause_lines(spark, 1, 2, leader=0, isr=[0], replicas=[0])
    bad = frame(
        spark, PARTITION_TIMELINE_SCHEMA, [interval(0, "OnlinePartition", leader=3, isr=[1, 2], replicas=[1, 2, 3])]
    )
    assert_fires(
        run(spark, context, custom.ExpectLeaderToBeInIsr(), "partition_timeline", bad, events=carried),
        "b1/state-change.log:1",
    )
    good = frame(
        spark,
        PARTITION_TIMELINE_SCHEMA,
        [
            interval(0, "OnlinePartition", leader=1, isr=[1, 2], replicas=[1, 2, 3]),
            interval(1, "OfflinePartition", leader=-1, isr=[3], replicas=[1, 2, 3]),
        ],
    )
    assert_silent(run(spark, context, custom.ExpectLeaderToBeInIsr(), "partition_timeline", good, events=carried))


def test_leader_in_isr_does_not_judge_an_isr_the_cause_line_did_not_carry(spark, context):
    # an election line names the new leader; the ISR is the previous one until LeaderAndIsr is logged
    election = cause_lines(spark, 1, leader=2)
    carried_over = frame(
        spark, PARTITION_TIMELINE_SCHEMA, [interval(0, "OnlinePartition", leader=2, isr=[1], replicas=[1, 2, 3])]
    )
    assert_silent(
        run(spark, context, custom.ExpectLeaderToBeInIsr(), "partition_timeline", carried_over, events=election)
    )


def test_isr_within_replicas(spark, context):
    carried = cause_lines(spark, 1, leader=0, isr=[0], replicas=[0])
    bad = frame(
        spark, PARTITION_TIMELINE_SCHEMA, [interval(0, "OnlinePartition", leader=1, isr=[1, 4], replicas=[1, 2, 3])]
    )
    result = run(spark, context, custom.ExpectIsrToBeWithinReplicas(), "partition_timeline", bad, events=carried)
    assert_fires(result, "b1/state-change.log:1")
    assert "1,4" in offending(result)[0]["detail"]
    good = frame(spark, PARTITION_TIMELINE_SCHEMA, [interval(0, "OnlinePartition", leader=1, isr=[1], replicas=[1, 2])])
    assert_silent(run(spark, context, custom.ExpectIsrToBeWithinReplicas(), "partition_timeline", good, events=carried))


@pytest.mark.parametrize(
    "column, expectation",
    [
        ("leader_epoch", custom.ExpectLeaderEpochToNeverDecrease),
        ("partition_epoch", custom.ExpectPartitionEpochToNeverDecrease),
    ],
)
def test_epochs_never_decrease_within_an_incarnation(spark, context, column, expectation):
    bad = frame(
        spark,
        PARTITION_TIMELINE_SCHEMA,
        [
            interval(0, "OnlinePartition", **{column: 5}),
            interval(1, "OnlinePartition", **{column: 6}),
            interval(2, "OnlinePartition", **{column: 4}),
        ],
    )
    result = run(spark, context, expectation(), "partition_timeline", bad)
    assert_fires(result, "b1/state-change.log:3")
    assert "after 6" in offending(result)[0]["detail"]
    # deleted and re-created: the new incarnation starts again at 0
    good = frame(
        spark,
        PARTITION_TIMELINE_SCHEMA,
        [
            interval(0, "OnlinePartition", **{column: 5}),
            interval(1, "NonExistentPartition"),
            interval(2, "NewPartition"),
            interval(3, "OnlinePartition", **{column: 0}),
        ],
    )
    assert_silent(run(spark, context, expectation(), "partition_timeline", good))


def controller(cid: int, epoch: int, start_s: float, last_action_s: float | None = None, **fields) -> dict:
    return {
        "cluster": "",
        "controller_id": cid,
        "controller_epoch": epoch,
        "ts_start": T0 + timedelta(seconds=start_s),
        "evidence": [f"b{cid}/controller.log:{epoch}"],
        "elected": True,
        "last_action_ts": None if last_action_s is None else T0 + timedelta(seconds=last_action_s),
        **fields,
    }


def test_controller_epoch_never_decreases(spark, context):
    timeline = frame(spark, PARTITION_TIMELINE_SCHEMA, [])
    bad = frame(spark, CONTROLLERS_SCHEMA, [controller(1, 5, 0), controller(2, 4, 60)])
    result = run(
        spark, context, custom.ExpectControllerEpochToNeverDecrease(), "partition_timeline", timeline, controllers=bad
    )
    assert_fires(result, "b2/controller.log:4")
    good = frame(spark, CONTROLLERS_SCHEMA, [controller(1, 5, 0), controller(2, 6, 60)])
    assert_silent(
        run(
            spark,
            context,
            custom.ExpectControllerEpochToNeverDecrease(),
            "partition_timeline",
            timeline,
            controllers=good,
        )
    )


# ---- failover -----------------------------------------------------------------------------------------
def finding(rule: str, line: int) -> dict:
    return {
        "finding_id": f"id{line}",
        "rule": rule,
        "severity": "error",
        "kind": "",
        "cluster": "",
        "topic": "orders",
        "partition": 1,
        "ts": T0,
        "summary": f"{rule} here",
        "evidence": [f"b2/state-change.log:{line}"],
        "evidence_count": 1,
    }


@pytest.mark.parametrize(
    "expectation",
    [
        custom.ExpectNoLeaderIsrMismatchAfterFailover,
        custom.ExpectNoOfflinePartitionWithLiveReplicas,
        custom.ExpectNoUncleanElections,
        custom.ExpectNoLeaderOnFencedBroker,
        custom.ExpectNoPartitionEpochGaps,
        custom.ExpectBrokerViewsToMatchMetadata,
    ],
)
def test_findings_based_expectations_read_their_rule_only(spark, context, expectation):
    rule = expectation.rule
    other = "state_gap"  # a finding of another rule must not make it fire
    bad = frame(spark, FINDINGS_SCHEMA, [finding(rule, 40), finding(other, 41)])
    result = run(spark, context, expectation(), "findings", bad)
    assert_fires(result, "b2/state-change.log:40")
    assert offending(result)[0]["partition"] == 1
    good = frame(spark, FINDINGS_SCHEMA, [finding(other, 41)])
    assert_silent(run(spark, context, expectation(), "findings", good))


def test_concurrent_controllers_fire_on_a_zombie_and_on_an_epoch_claimed_twice(spark, context):
    findings = frame(spark, FINDINGS_SCHEMA, [])
    zombie = frame(spark, CONTROLLERS_SCHEMA, [controller(1, 1, 0, last_action_s=70), controller(2, 2, 60, 90)])
    acts = frame(
        spark,
        EVENTS_SCHEMA,
        [
            event(30, "send_leader_and_isr", controller_id=1, controller_epoch=1, ts=T0 + timedelta(seconds=59)),
            event(31, "send_leader_and_isr", controller_id=1, controller_epoch=1, ts=T0 + timedelta(seconds=70)),
        ],
    )
    expectation = custom.ExpectNoConcurrentControllers.with_skew(2.0)
    result = run(spark, context, expectation, "findings", findings, controllers=zombie, events=acts)
    assert_fires(result, "b1/state-change.log:31")
    assert "zombie" in offending(result)[0]["detail"]
    twice = frame(spark, CONTROLLERS_SCHEMA, [controller(1, 3, 0, 10), controller(2, 3, 5, 20)])
    result = run(spark, context, expectation, "findings", findings, controllers=twice)
    assert_fires(result, "b1/controller.log:3")
    assert "claimed by controllers 1, 2" in offending(result)[0]["detail"]


def test_concurrent_controllers_silent_within_the_clock_skew(spark, context):
    findings = frame(spark, FINDINGS_SCHEMA, [])
    handover = frame(spark, CONTROLLERS_SCHEMA, [controller(1, 1, 0, last_action_s=61), controller(2, 2, 60, 90)])
    acts = frame(
        spark,
        EVENTS_SCHEMA,
        [event(31, "send_leader_and_isr", controller_id=1, controller_epoch=1, ts=T0 + timedelta(seconds=61))],
    )
    result = run(
        spark,
        context,
        custom.ExpectNoConcurrentControllers.with_skew(2.0),
        "findings",
        findings,
        controllers=handover,
        events=acts,
    )
    assert_silent(result)


def test_stale_epoch_rejections(spark, context):
    findings = frame(spark, FINDINGS_SCHEMA, [])
    bad = frame(
        spark,
        EVENTS_SCHEMA,
        [
            # one zombie episode (controller 1, epoch 7): two brokers refuse it, it logs one error-11 answer
            event(70, "stale_controller_epoch_rejected", broker=2, controller_id=1, controller_epoch=7),
            event(
                71,
                "controller_response",
                controller_id=1,
                controller_epoch=7,
                target_broker=3,
                attrs={"response": "{error_code=11,partition_errors=[]}"},
            ),
            event(
                72,
                "controller_response",
                controller_id=1,
                target_broker=3,
                attrs={"response": "{error_code=0,partition_errors=[]}"},
            ),
            event(73, "stale_controller_epoch_rejected", broker=3, controller_id=1, controller_epoch=7),
            # another episode: controller 4 with epoch 9
            event(74, "stale_controller_epoch_rejected", broker=2, controller_id=4, controller_epoch=9),
        ],
    )
    result = run(spark, context, custom.ExpectNoStaleEpochRejections(), "findings", findings, events=bad)
    assert_fires(result, "b1/state-change.log:70", count=2)
    rows = offending(result)
    assert [r["evidence"] for r in rows] == ["b1/state-change.log:70", "b1/state-change.log:74"]
    assert "3 refused request(s) or error-11 answer(s), brokers 2, 3" in rows[0]["detail"]
    good = frame(
        spark,
        EVENTS_SCHEMA,
        [
            event(
                72,
                "controller_response",
                controller_id=1,
                target_broker=3,
                attrs={"response": "{error_code=0,partition_errors=[]}"},
            )
        ],
    )
    assert_silent(run(spark, context, custom.ExpectNoStaleEpochRejections(), "findings", findings, events=good))


# ---- suites -------------------------------------------------------------------------------------------
def test_every_custom_expectation_is_in_a_suite_with_a_description():
    in_suites = {type(e) for s in SUITES for e in expectations_for(s, SuiteSettings())}
    assert set(custom.CUSTOM_EXPECTATIONS) <= in_suites
    for cls in custom.CUSTOM_EXPECTATIONS:
        instance = cls()
        assert instance.description and cls.__doc__, cls.__name__
        assert "{batch}" in instance.unexpected_rows_query.replace("{{", "{").replace("}}", "}")


# ---- impact -------------------------------------------------------------------------------------------
def _impact_frame(spark, sample: str):
    """The impact rows of a recorded incident (replay/impact.py, the pure twin of the job's table)."""
    from kafka_forensics.core.tables import IMPACT_SCHEMA
    from tests.support.paths import SAMPLES
    from tests.support.recorded import replayed

    return frame(spark, IMPACT_SCHEMA, replayed(SAMPLES / sample).impact)


def test_unavailable_longer_than_the_bound_fires_with_the_episode_lines(spark, context):
    # real Kafka 3.9 (KRaft): fragile-0 (replication factor 1) had no leader from its broker's fencing until the
    # unclean election the lab asked for, about 23 s later (truth.json's action log)
    rows = _impact_frame(spark, "real-3.9-kraft-unclean-election-tool")
    cls = custom.ExpectNoPartitionUnavailableLongerThan
    result = run(spark, context, cls.with_max_seconds(20), "impact", rows)
    assert result["success"] is False and result["result"]["observed_value"] == 1
    (row,) = offending(result)
    assert (row["topic"], row["partition"]) == ("fragile", 0) and row["evidence"].endswith(tuple("0123456789"))
    assert "unavailable for 23." in row["detail"] and "> 20.0 s, ended by unclean_election at " in row["detail"]
    assert_silent(run(spark, context, cls.with_max_seconds(30), "impact", rows))


def test_an_open_episode_counts_to_the_end_of_the_logs(spark, context):
    # KAFKA-3143 (simulated 1.1): the partition stays without a leader until the logs end, 110 s after it began
    rows = _impact_frame(spark, "sim-1.1-kafka-3143")
    result = run(spark, context, custom.ExpectNoPartitionUnavailableLongerThan.with_max_seconds(100), "impact", rows)
    (row,) = offending(result)
    assert "at least (still so when the logs end)" in row["detail"]
    under = run(spark, context, custom.ExpectNoPartitionUnderMinIsrLongerThan.with_max_seconds(0), "impact", rows)
    assert_silent(under)  # min.insync.replicas is not known from these logs: no under_min_isr episode
