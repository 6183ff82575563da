"""Each finding rule on a small scenario log: a case that must fire and a near miss that must not.

Pure Python (the same replay the Spark job runs, without Spark), so these are fast.
"""

from __future__ import annotations

from tests.support.kafka_lines import line
from tests.support.replay import ctrl, replay_files, rules, sc, server

LAI_24 = (
    "LeaderAndIsrPartitionState(topicName='t', partitionIndex=0, controllerEpoch={ce}, leader={leader}, "
    "leaderEpoch={le}, isr=[{isr}], zkVersion={zk}, replicas=[{replicas}], addingReplicas=[], "
    "removingReplicas=[], isNew=false)"
)
UM_24 = (
    "UpdateMetadataPartitionState(topicName='t', partitionIndex=0, controllerEpoch={ce}, leader={leader}, "
    "leaderEpoch={le}, isr=[{isr}], zkVersion={zk}, replicas=[{replicas}], offlineReplicas=[])"
)


def changed(epoch: int, src: str, dst: str, leader=None, le=None, isr="", zk=None, controller=1) -> str:
    """1.1+ wording: ``… from X to OnlinePartition with state …``, ``… state from X to OfflinePartition``."""
    if leader is None:
        return f"[Controller id={controller} epoch={epoch}] Changed partition t-0 state from {src} to {dst}"
    tail = f" with state LeaderAndIsr(leader={leader}, leaderEpoch={le}, isr=List({isr}), zkVersion={zk})"
    return f"[Controller id={controller} epoch={epoch}] Changed partition t-0 from {src} to {dst}{tail}"


def created(epoch: int, replicas: str = "1, 2, 3", controller: int = 1) -> list[str]:
    return [
        f"[Controller id={controller} epoch={epoch}] Changed partition t-0 state from NonExistentPartition to "
        f"NewPartition with assigned replicas {replicas.replace(' ', '')}",
    ]


def replica(epoch: int, r: int, src: str, dst: str, controller: int = 1) -> str:
    return (
        f"[Controller id={controller} epoch={epoch}] Changed state of replica {r} for partition t-0 from {src} to {dst}"
    )


def update_metadata(
    epoch: int, controller: int, leader: int, le: int, isr: str, zk: int, ce: int, replicas: str = "1, 2, 3"
) -> str:
    state = UM_24.format(ce=ce, leader=leader, le=le, isr=isr, zk=zk, replicas=replicas)
    return f"[Controller id={controller} epoch={epoch}] Sending UpdateMetadata request {state} to brokers Set(2, 3) for partition t-0"


def elected(controller: int, epoch: int) -> str:
    return (
        f"[Controller id={controller}] {controller} successfully elected as the controller. Epoch incremented to "
        f"{epoch} and epoch zk version is now {epoch - 1}"
    )


# ---- illegal_transition ----------------------------------------------------------------------
def test_logged_pair_the_era_forbids_is_illegal():
    result = replay_files(
        {
            "b1/state-change.log": [
                sc("10:00:00,000", changed(5, "NonExistentPartition", "OnlinePartition", 1, 0, "1, 2", 0)),
            ]
        }
    )
    found = rules(result, "illegal_transition")
    assert [(f.kind, f.severity) for f in found] == [("logged_pair_invalid", "error")]
    assert found[0].evidence == ("b1/state-change.log:1",)
    assert "NewPartition, OnlinePartition, OfflinePartition" in found[0].summary


def test_offline_to_ineligible_is_judged_per_era():
    lines = {
        "b1/state-change.log": [
            sc("10:00:00,000", replica(5, 2, "OnlineReplica", "OfflineReplica")),
            sc("10:00:00,100", replica(5, 2, "OfflineReplica", "ReplicaDeletionIneligible")),
        ]
    }
    # 2.3+ (KAFKA-8237): valid. The 1.1-2.3 dialect contains 2.3, so the line is not called illegal.
    assert rules(replay_files(lines), "illegal_transition") == []
    # Pinned to 2.2 it is a transition that era's controller refuses to make.
    found = rules(replay_files(lines, kafka_version="2.2"), "illegal_transition")
    assert [f.kind for f in found] == ["logged_pair_invalid"] and found[0].replica == 2


def test_kafka_refusals_and_failures_are_illegal_transitions():
    failed = [
        sc(
            "10:00:00,000",
            "[Controller id=2 epoch=5] Controller 2 epoch 5 failed to change state for partition t-0 "
            "from OfflinePartition to OnlinePartition",
            level="ERROR",
        ),
        "kafka.common.StateChangeFailedException: Failed to elect leader for partition t-0 under strategy "
        "OfflinePartitionLeaderElectionStrategy(false)",
        "\tat kafka.controller.ZkPartitionStateMachine.doElectLeaderForPartitions(PartitionStateMachine.scala:424)",
    ]
    refused = [
        sc(
            "10:00:01,000",
            "[Controller id=2 epoch=5] Controller 2 epoch 5 initiated state change of replica 3 for "
            "partition t-0 from OfflineReplica to ReplicaDeletionIneligible failed",
            level="ERROR",
        ),
        "java.lang.IllegalStateException: Replica [Topic=t,Partition=0,Replica=3] should be in the "
        "ReplicaDeletionStarted states before moving to ReplicaDeletionIneligible state. Instead it is in "
        "OfflineReplica state",
    ]
    result = replay_files({"b2/state-change.log": failed + refused}, kafka_version="2.4")
    found = {f.kind: f for f in rules(result, "illegal_transition")}
    assert found["failed"].severity == "error" and "Failed to elect leader" in found["failed"].summary
    assert found["failed"].evidence == ("b2/state-change.log:1",)
    assert found["refused"].severity == "error" and found["refused"].replica == 3
    # Before 2.3 the same refusal is what TopicDeletionManager always triggers (KAFKA-8237): info.
    old = replay_files({"b2/state-change.log": refused}, kafka_version="2.2")
    assert [f.severity for f in rules(old, "illegal_transition")] == ["info"]


def test_failed_election_that_recovers_is_downgraded():
    result = replay_files(
        {
            "b2/state-change.log": [
                sc(
                    "10:00:00,000",
                    "[Controller id=2 epoch=5] Controller 2 epoch 5 failed to change state for partition t-0 "
                    "from OfflinePartition to OnlinePartition",
                    level="ERROR",
                ),
                sc("10:00:05,000", changed(5, "OfflinePartition", "OnlinePartition", 2, 3, "2", 4, controller=2)),
            ]
        }
    )
    [finding] = rules(result, "illegal_transition")
    assert finding.severity == "warning" and finding.evidence[-1] == "b2/state-change.log:2"


# ---- state_gap -------------------------------------------------------------------------------
def test_missing_lines_are_a_gap_not_an_illegal_transition():
    result = replay_files(
        {
            "b1/state-change.log": [
                *[sc("10:00:00,000", x) for x in created(5)],
                sc("10:00:00,100", changed(5, "NewPartition", "OnlinePartition", 1, 0, "1, 2, 3", 0)),
                # the Online -> Offline line is missing (rotation loss)
                sc("10:00:09,000", changed(5, "OfflinePartition", "OnlinePartition", 2, 1, "2, 3", 1)),
            ]
        }
    )
    assert rules(result, "illegal_transition") == []
    [gap] = [f for f in rules(result, "state_gap") if f.kind == "from_state_mismatch"]
    assert gap.severity == "warning"
    assert gap.evidence == ("b1/state-change.log:2", "b1/state-change.log:3")


def test_info_level_log_without_replica_lines_yields_info_gaps_only():
    # Kafka 2.8 at its default INFO level: no replica lines, no Online -> Offline line.
    result = replay_files(
        {
            "b0/state-change.log": [
                sc(
                    "10:00:00,000",
                    "[Controller id=0 epoch=1] Changed partition t-0 state from NonExistentPartition to "
                    "NewPartition with assigned replicas 0,1",
                    level="INFO",
                ),
                sc(
                    "10:00:00,100",
                    "[Controller id=0 epoch=1] Changed partition t-0 from NewPartition to OnlinePartition with "
                    "state LeaderAndIsr(leader=0, leaderEpoch=0, isr=List(0, 1), zkVersion=0)",
                    level="INFO",
                ),
                sc(
                    "10:00:09,000",
                    "[Controller id=0 epoch=1] Changed partition t-0 from OfflinePartition to OnlinePartition "
                    "with state LeaderAndIsr(leader=1, leaderEpoch=1, isr=List(1), zkVersion=1)",
                    level="INFO",
                ),
            ]
        },
        kafka_version="2.8",
    )
    assert {f.rule for f in result.findings} == {"state_gap"}
    assert {(f.kind, f.severity) for f in result.findings} == {
        ("from_state_mismatch", "info"),
        ("replica_transitions_not_logged", "info"),
    }


def test_failover_reinitialisation_is_not_a_gap():
    # A new controller re-derives states out of band (initializePartitionState): Offline is fine.
    result = replay_files(
        {
            "b1/state-change.log": [
                sc("10:00:00,100", changed(5, "NewPartition", "OnlinePartition", 1, 0, "1, 2, 3", 0)),
                sc("10:00:00,200", replica(5, 2, "NewReplica", "OnlineReplica")),
            ],
            "b2/state-change.log": [
                sc("10:01:00,000", changed(6, "OfflinePartition", "OnlinePartition", 2, 1, "2, 3", 1, controller=2)),
                sc("10:01:00,100", replica(6, 2, "ReplicaDeletionIneligible", "OnlineReplica", controller=2)),
            ],
        }
    )
    assert rules(result, "state_gap") == []


def test_replay_orders_by_controller_epoch_before_time():
    # Broker 2's clock is 30 s behind: by time its epoch-6 lines would come first.
    result = replay_files(
        {
            "b1/state-change.log": [
                sc("10:00:30,000", changed(5, "NewPartition", "OnlinePartition", 1, 0, "1, 2", 0)),
            ],
            "b2/state-change.log": [
                sc("10:00:10,000", changed(6, "OnlinePartition", "OfflinePartition", controller=2)),
                sc("10:00:10,010", changed(6, "OfflinePartition", "OnlinePartition", 2, 1, "2", 1, controller=2)),
            ],
        }
    )
    assert [f for f in rules(result, "state_gap") if f.kind == "from_state_mismatch"] == []
    assert rules(result, "leader_epoch_regression") == []
    assert [r["controller_epoch"] for r in result.partition_intervals] == [5, 6, 6]
    assert [r["leader"] for r in result.partition_intervals][-1] == 2


# ---- leader_isr_mismatch_after_failover --------------------------------------------------------
def _failover(ctrl2_lines: list[str], version: str = "2.2") -> dict:
    return {
        "b1/controller.log": [
            ctrl("10:00:00,000", elected(1, 5)),
            ctrl("10:00:00,100", "[Controller id=1] Currently active brokers in the cluster: Set(1, 2, 3)"),
        ],
        "b1/state-change.log": [
            sc("10:00:01,000", changed(5, "NewPartition", "OnlinePartition", 2, 0, "2, 1, 3", 0)),
        ],
        "b2/controller.log": [
            ctrl("10:05:00,000", elected(2, 6)),
            ctrl("10:05:00,100", "[Controller id=2] Currently active brokers in the cluster: Set(2, 3)"),
        ],
        "b2/state-change.log": ctrl2_lines,
        "b2/server.log": [
            server("09:59:00,000", f"Kafka version: {version}", logger="org.apache.kafka.common.utils.AppInfoParser")
        ],
    }


def test_dead_replica_kept_in_isr_after_failover_kafka_3143():
    result = replay_files(
        _failover(
            [
                sc("10:05:00,200", update_metadata(6, 2, 2, 0, "2, 1, 3", 0, 5, "2, 1, 3")),
                sc("10:05:01,000", update_metadata(6, 2, 2, 0, "2, 1, 3", 0, 5, "2, 1, 3")),
            ]
        )
    )
    [found] = rules(result, "leader_isr_mismatch_after_failover")
    assert found.kind == "dead_isr_members" and "KAFKA-3143" in found.summary
    assert "b2/controller.log:2" in found.evidence


def test_dead_leader_after_failover():
    result = replay_files(
        _failover(
            [
                sc("10:05:00,200", update_metadata(6, 2, 1, 3, "1, 2", 4, 5, "1, 2, 3")),
            ]
        )
    )
    found = rules(result, "leader_isr_mismatch_after_failover")
    assert [f.kind for f in found if f.kind != "unexplained_change"] == ["dead_leader"]
    assert found[-1].severity == "error"


def test_isr_shrunk_at_failover_is_fine():
    result = replay_files(
        _failover(
            [
                sc("10:05:00,200", update_metadata(6, 2, 2, 1, "2, 3", 1, 6, "2, 1, 3")),
            ],
            version="2.4.1",
        )
    )
    assert rules(result, "leader_isr_mismatch_after_failover") == []


def test_unexplained_change_across_failover():
    lines = _failover([sc("10:05:00,200", update_metadata(6, 2, 3, 4, "3, 2", 7, 5, "2, 1, 3"))])
    lines["b2/controller.log"][1] = ctrl(
        "10:05:00,100", "[Controller id=2] Currently active brokers in the cluster: Set(1, 2, 3)"
    )
    [found] = rules(replay_files(lines), "leader_isr_mismatch_after_failover")
    assert found.kind == "unexplained_change" and "leader 2 -> 3" in found.summary
    # near miss: a logged leader-driven ISR change explains an ISR difference
    lines["b2/state-change.log"] = [sc("10:05:00,200", update_metadata(6, 2, 2, 0, "2", 1, 5, "2, 1, 3"))]
    lines["b2/server.log"].append(
        server(
            "10:04:00,000",
            "[Partition t-0 broker=2] Shrinking ISR from 2,1,3 to 2. "
            "Leader: (highWatermark: 5, endOffset: 9). Out of sync "
            "replicas: (brokerId: 1, endOffset: 5).",
        )
    )
    assert rules(replay_files(lines), "leader_isr_mismatch_after_failover") == []


# ---- concurrent_controllers / stale_epoch_rejected --------------------------------------------
def test_zombie_controller_that_aborts_an_election():
    result = replay_files(
        {
            "b2/state-change.log": [
                sc(
                    "10:00:00,000",
                    "Controller 2 epoch 39 aborted leader election for partition [t,0] since the LeaderAndIsr "
                    "path was already written by another controller. This probably means that the current "
                    "controller 2 went through a soft failure and another controller was elected with epoch 40.",
                    level="ERROR",
                ),
            ]
        },
        kafka_version="0.9.0",
    )
    [found] = rules(result, "concurrent_controllers")
    assert found.controller_epoch == 39 and "40" in found.summary


def test_controller_acting_after_a_newer_election():
    def files(zombie_clock: str) -> dict:
        return {
            "b1/controller.log": [ctrl("10:00:00,000", elected(1, 5))],
            "b1/state-change.log": [
                sc(zombie_clock, changed(5, "OnlinePartition", "OnlinePartition", 1, 3, "1, 2", 3))
            ],
            "b2/controller.log": [ctrl("10:00:10,000", elected(2, 6))],
        }

    [found] = rules(replay_files(files("10:00:20,000")), "concurrent_controllers")
    assert found.kind == "zombie" and found.severity == "error" and found.controller_epoch == 5
    assert found.evidence == ("b2/controller.log:1", "b1/state-change.log:1")
    # within the tolerated clock skew (2 s) between two brokers: not proven
    assert rules(replay_files(files("10:00:11,000")), "concurrent_controllers") == []


def test_controller_that_resigns_long_after_a_newer_election():
    def files(resign_clock: str) -> dict:
        return {
            "b1/controller.log": [
                ctrl("10:00:00,000", elected(1, 5)),
                ctrl(resign_clock, "[Controller id=1] Resigned"),
            ],
            "b2/controller.log": [ctrl("10:00:10,000", elected(2, 6))],
        }

    # Resigning late is a paused controller noticing its expired session (K:controller/KafkaController.scala
    # @2.4.1:1849-1852): without an action after the newer epoch began it never acted beside it (issue 14
    # class 5; the action case is test_controller_acting_after_a_newer_election).
    assert rules(replay_files(files("10:00:24,000")), "concurrent_controllers") == []
    assert rules(replay_files(files("10:00:09,000")), "concurrent_controllers") == []


def test_one_epoch_two_controllers():
    result = replay_files(
        {
            "b1/controller.log": [ctrl("10:00:00,000", elected(1, 5))],
            "b2/controller.log": [ctrl("10:00:01,000", elected(2, 5))],
        }
    )
    assert [(f.kind, f.severity) for f in rules(result, "concurrent_controllers")] == [("same_epoch", "critical")]


def test_stale_controller_epoch_rejected_and_benign_error_11():
    lines = {
        "b3/state-change.log": [
            sc(
                "10:06:03,544",
                "[Broker id=3] Ignoring LeaderAndIsr request from controller 1 with correlation id 42 since "
                "its controller epoch 7 is old. Latest known controller epoch is 8",
                level="WARN",
            ),
            sc(
                "10:06:03,545",
                "[Broker id=3] Ignoring LeaderAndIsr request from controller 1 with correlation id 42 since "
                "its controller epoch 7 is old. Latest known controller epoch is 8",
                level="WARN",
            ),
        ],
        "b2/state-change.log": [
            # per-partition error 11 = "leader epoch matches": the normal answer after every failover
            sc(
                "10:05:24,555",
                "[Controller id=2 epoch=8] Received response {error_code=0,partition_errors=[{topic_name=t,"
                "partition_index=0,error_code=11,_tagged_fields={}}],_tagged_fields={}} for request "
                "LEADER_AND_ISR with correlation id 5 sent to broker kafka3:9092 (id: 3 rack: null)",
            ),
        ],
    }
    [found] = rules(replay_files(lines), "stale_epoch_rejected")
    assert found.broker == 3 and found.controller_epoch == 7 and found.evidence_count == 2
    assert "epoch 8" in found.summary


# ---- invariants -------------------------------------------------------------------------------
def test_leader_not_in_isr_and_near_miss():
    bad = replay_files(
        {
            "b1/state-change.log": [
                sc("10:00:00,000", changed(5, "OfflinePartition", "OnlinePartition", 3, 5, "1, 2", 7))
            ]
        }
    )
    assert [f.rule for f in bad.findings if f.rule == "leader_not_in_isr"] == ["leader_not_in_isr"]
    fine = replay_files(
        {
            "b1/state-change.log": [
                sc(
                    "10:00:00,000",
                    "[Controller id=1 epoch=5] Partition t-0 state changed to (Leader:-1,ISR:1,LeaderEpoch:3,"
                    "ControllerEpoch:5) after removing replica 1 from the ISR as part of transition to "
                    "OfflineReplica",
                    level="INFO",
                )
            ]
        },
        kafka_version="2.8",
    )
    assert rules(fine, "leader_not_in_isr") == []


def test_isr_not_subset_of_replicas():
    state = (
        "LeaderAndIsrPartitionState(topicName='t', partitionIndex=0, controllerEpoch=5, leader=1, leaderEpoch=2, "
        "isr=[1, 2, 3], zkVersion=2, replicas=[1, 2], addingReplicas=[], removingReplicas=[], isNew=false)"
    )
    result = replay_files(
        {
            "b1/state-change.log": [
                sc(
                    "10:00:00,000",
                    f"[Controller id=1 epoch=5] Sending become-leader LeaderAndIsr request {state} to broker 1 "
                    f"for partition t-0",
                )
            ]
        }
    )
    [found] = rules(result, "isr_not_subset_of_replicas")
    assert found.severity == "warning" and "KAFKA-9672" in found.summary


def test_empty_isr_depends_on_era():
    line = sc("10:00:00,000", changed(5, "OfflinePartition", "OnlinePartition", -1, 3, "", 4))
    assert [f.rule for f in replay_files({"b1/state-change.log": [line]}).findings] == ["empty_isr"]
    old = sc(
        "10:00:00,000",
        "Controller 0 epoch 4 sending UpdateMetadata request (Leader:-1,ISR:,LeaderEpoch:1,"
        "ControllerEpoch:3) with correlationId 11 to broker 0 for partition [t,0]",
    )
    # 0.8.0 - 0.8.1 empty the ISR on purpose (reference §2.0): not a violation for a 0.8 line
    assert rules(replay_files({"b0/state-change.log": [old]}), "empty_isr") == []


def test_epoch_regressions_from_the_controller_but_not_from_stale_echoes():
    result = replay_files(
        {
            "b1/state-change.log": [
                sc("10:00:00,000", changed(5, "OfflinePartition", "OnlinePartition", 1, 5, "1, 2", 7)),
                sc("10:00:01,000", changed(5, "OnlinePartition", "OnlinePartition", 2, 3, "1, 2", 5)),
            ]
        }
    )
    assert {f.rule for f in result.findings} >= {"leader_epoch_regression", "partition_epoch_regression"}
    echo = (
        "LeaderAndIsrPartitionState(topicName='t', partitionIndex=0, controllerEpoch=5, leader=1, leaderEpoch=4, "
        "isr=[1, 2], zkVersion=6, replicas=[1, 2], addingReplicas=[], removingReplicas=[], isNew=false)"
    )
    fine = replay_files(
        {
            "b1/state-change.log": [
                sc("10:00:00,000", changed(5, "OfflinePartition", "OnlinePartition", 1, 5, "1, 2", 7)),
                sc(
                    "10:00:02,000",
                    f"[Broker id=2] Received LeaderAndIsr request {echo} correlation id 3 from controller 1 epoch 5",
                ),
            ]
        }
    )
    assert [f.rule for f in fine.findings if "regression" in f.rule] == []
    assert fine.partition_intervals[-1]["leader_epoch"] == 5  # the echo does not move the timeline back


def test_controller_epoch_regression_on_election():
    result = replay_files(
        {
            "b0/controller.log": [
                ctrl("10:00:00,000", elected(0, 76)),
                ctrl("11:00:00,000", "[Controller id=0] Resigned"),
                ctrl("11:00:05,000", elected(0, 56)),
            ],
        }
    )
    [found] = rules(result, "controller_epoch_regression")
    assert found.controller_epoch == 56 and "76" in found.summary
    fine = replay_files(
        {"b0/controller.log": [ctrl("10:00:00,000", elected(0, 76)), ctrl("11:00:05,000", elected(0, 77))]}
    )
    assert rules(fine, "controller_epoch_regression") == []


def test_unclean_election_logged_and_inferred():
    logged = replay_files(
        {
            "b0/controller.log": [
                line08(
                    "10:00:00,000",
                    "[OfflinePartitionLeaderSelector]: No broker in ISR is alive for [t,0]. Elect leader 2 "
                    "from live brokers 2. There's potential data loss.",
                    "WARN",
                )
            ]
        },
        kafka_version="0.8.1",
    )
    assert [(f.kind, f.severity) for f in rules(logged, "unclean_election")] == [("logged", "critical")]
    inferred = replay_files(
        {
            "b1/state-change.log": [
                sc("10:00:00,000", changed(5, "OfflinePartition", "OnlinePartition", 1, 3, "1", 3)),
                sc("10:00:05,000", changed(5, "OfflinePartition", "OnlinePartition", 2, 4, "2", 4)),
            ]
        }
    )
    assert [f.kind for f in rules(inferred, "unclean_election")] == ["inferred"]
    clean = replay_files(
        {
            "b1/state-change.log": [
                sc("10:00:00,000", changed(5, "OfflinePartition", "OnlinePartition", 1, 3, "1, 2", 3)),
                sc("10:00:05,000", changed(5, "OnlinePartition", "OnlinePartition", 2, 4, "2", 4)),
            ]
        }
    )
    assert rules(clean, "unclean_election") == []


def line08(clock: str, message: str, level: str = "INFO") -> str:
    return f"[2021-03-04 {clock}] {level} {message} (kafka.controller.OfflinePartitionLeaderSelector)"


def _offline_case(live: str, isr: str) -> dict:
    return {
        "b2/controller.log": [
            ctrl("10:00:00,000", elected(2, 6)),
            ctrl("10:00:00,100", f"[Controller id=2] Currently active brokers in the cluster: Set({live})"),
        ],
        "b2/state-change.log": [
            sc("10:00:01,000", update_metadata(6, 2, -1, 3, isr, 4, 6, "1, 2")),
            sc("10:00:01,100", changed(6, "OnlinePartition", "OfflinePartition", controller=2)),
        ],
    }


def test_offline_with_live_replicas():
    [found] = rules(replay_files(_offline_case("2, 3", "1")), "offline_with_live_replicas")
    assert (found.kind, found.severity) == ("replica_live", "warning") and "[2]" in found.summary
    [found] = rules(replay_files(_offline_case("1, 2", "1")), "offline_with_live_replicas")
    assert (found.kind, found.severity) == ("isr_member_live", "error")
    # near miss: every replica's broker is dead
    assert rules(replay_files(_offline_case("3", "1")), "offline_with_live_replicas") == []


def test_deterministic_ids_and_order():
    files = _failover([sc("10:05:00,200", update_metadata(6, 2, 1, 3, "1, 2", 4, 5, "1, 2, 3"))])
    first = [(f.finding_id, f.to_row()["json"]) for f in replay_files(files).findings]
    second = [(f.finding_id, f.to_row()["json"]) for f in replay_files(dict(reversed(list(files.items())))).findings]
    assert first == second and first


def test_broker_leader_epoch_regression_and_kraft_stale_partition_epoch():
    def starts(clock: str, epoch: int) -> str:
        return sc(
            clock,
            f"[Broker id=0] Leader t-0 starts at leader epoch {epoch} from offset 0 with high watermark 0 "
            f"ISR [0] addingReplicas [] removingReplicas []. Previous leader epoch was -1.",
            level="INFO",
        )

    result = replay_files(
        {"b0/state-change.log": [starts("10:00:00,000", 5), starts("10:00:01,000", 3)]}, kafka_version="2.8"
    )
    [found] = rules(result, "leader_epoch_regression")
    assert found.kind == "broker_view" and found.broker == 0 and "5 to 3" in found.summary
    fine = replay_files(
        {"b0/state-change.log": [starts("10:00:00,000", 3), starts("10:00:01,000", 5)]}, kafka_version="2.8"
    )
    assert rules(fine, "leader_epoch_regression") == []
    kraft = replay_files(
        {
            "c2/controller.log": [
                line(
                    "[QuorumController id=2] Rejecting AlterPartition request from node 3 for t-1 because the current partition "
                    "epoch is 75, not 74.",
                    level="INFO",
                    logger="org.apache.kafka.controller.ReplicationControlManager",
                    ts="2025-02-07 11:01:57,978",
                )
            ]
        }
    )
    [found] = rules(kraft, "stale_epoch_rejected")
    assert (found.kind, found.severity, found.partition, found.broker) == ("stale_partition_epoch", "info", 1, 3)


def test_isr_not_subset_of_replicas_resolved_by_the_next_state_is_info():
    """KAFKA-9672: a reassignment's LeaderAndIsr carries the new replicas while the ISR still holds
    the removed one until the next step shrinks it; resolved a moment later, it is not a warning."""
    during = (
        "LeaderAndIsrPartitionState(topicName='t', partitionIndex=0, controllerEpoch=5, leader=1, leaderEpoch=2, "
        "isr=[1, 2, 3], zkVersion=2, replicas=[1, 2], addingReplicas=[], removingReplicas=[], isNew=false)"
    )
    after = during.replace("isr=[1, 2, 3], zkVersion=2", "isr=[1, 2], zkVersion=3").replace(
        "leaderEpoch=2", "leaderEpoch=3"
    )
    result = replay_files(
        {
            "b1/state-change.log": [
                sc(
                    "10:00:00,000",
                    f"[Controller id=1 epoch=5] Sending become-leader LeaderAndIsr request {during} to broker 1 "
                    f"for partition t-0",
                ),
                sc(
                    "10:00:01,000",
                    f"[Controller id=1 epoch=5] Sending become-leader LeaderAndIsr request {after} to broker 1 "
                    f"for partition t-0",
                ),
            ]
        }
    )
    [found] = rules(result, "isr_not_subset_of_replicas")
    assert found.severity == "info" and "transient: resolved by" in found.summary
