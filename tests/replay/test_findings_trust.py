"""Issue 14, class by class, on lines Kafka prints (each cited ``path@tag:line``; ``K:`` =
``core/src/main/scala/kafka/``): the right rule, the right severity for the strength of the
evidence, one finding per anomaly with every line of it. Pure Python, no simulator.
"""

from __future__ import annotations

import re

import pytest

from tests.support.replay import ctrl, replay_files, rules, sc, server

# ---- lines -----------------------------------------------------------------------------------------
# K:controller/KafkaController.scala@2.2.2:1268
ELECTED_22 = "[Controller id={c}] {c} successfully elected as the controller. Epoch incremented to {e} and epoch zk version is now {e}"
# K:controller/KafkaController.scala@2.2.2:686
ACTIVE = "[Controller id={c}] Currently active brokers in the cluster: Set({live})"
# K:controller/KafkaController.scala@2.2.2:1307
BROKER_CHANGE_22 = (
    "[Controller id={c}] Newly added brokers: {added}, deleted brokers: {deleted}, bounced brokers: , "
    "all live brokers: {live}"
)
# K:controller/ControllerChannelManager.scala@2.2.2:432 (state: C:.../UpdateMetadataRequest.java@2.2.2:264-272)
UM_22 = (
    "[Controller id={c} epoch={e}] Sending UpdateMetadata request PartitionState(controllerEpoch={ce}, "
    "leader={leader}, leaderEpoch={le}, isr=[{isr}], zkVersion={zk}, replicas=[1, 2, 3], offlineReplicas=[]) "
    "to brokers Set(1, 2) for partition orders-0"
)
# K:controller/ControllerChannelManager.scala@2.2.2:416 (state: C:.../LeaderAndIsrRequest.java@2.2.2:336-344)
LAI_22 = (
    "[Controller id={c} epoch={e}] Sending become-leader LeaderAndIsr request PartitionState(controllerEpoch={ce}, "
    "leader={leader}, leaderEpoch={le}, isr={isr_plain}, zkVersion={zk}, replicas=1,2,3, isNew=false) to broker "
    "{leader} for partition orders-0"
)
# K:controller/PartitionStateMachine.scala@2.2.2:219 (LeaderAndIsr.toString @2.2.2)
CHANGED_22 = (
    "[Controller id={c} epoch={e}] Changed partition orders-0 from {src} to OnlinePartition with state "
    "LeaderAndIsr(leader={leader}, leaderEpoch={le}, isr=List({isr}), zkVersion={zk})"
)
# K:server/ReplicaManager.scala@2.2.2:1089-1093
IGNORING_22 = (
    "[Broker id={b}] Ignoring LeaderAndIsr request from controller {c} with correlation id 1 epoch {e} for "
    "partition orders-0 since its associated leader epoch {le} is not higher than the current leader epoch {cur}"
)


def um22(c, e, leader, le, isr, zk, ce=None):
    return UM_22.format(c=c, e=e, ce=ce or e, leader=leader, le=le, isr=isr, zk=zk)


def lai22(c, e, leader, le, isr, zk, ce=None):
    return LAI_22.format(c=c, e=e, ce=ce or e, leader=leader, le=le, isr_plain=isr.replace(" ", ""), zk=zk)


def stale_failover(old_controller_dies: bool = False) -> dict:
    """Controller 1 (epoch 5) shrinks orders-0's ISR after broker 3 dies (leaderEpoch 5, zkVersion 8);
    controller 2 (epoch 6) then reads the older znode (leaderEpoch 4, zkVersion 7, ISR with dead 3)."""
    live = "2" if old_controller_dies else "1, 2"
    return {
        "b1/controller.log": [
            ctrl("10:00:00,000", BROKER_CHANGE_22.format(c=1, added="", deleted=3, live="1,2")),
        ],
        "b1/state-change.log": [
            sc("10:00:00,100", lai22(1, 5, 1, 5, "1, 2", 8)),
            sc("10:00:00,200", um22(1, 5, 1, 5, "1, 2", 8)),
        ],
        "b2/controller.log": [
            ctrl("10:05:00,000", ELECTED_22.format(c=2, e=6)),
            ctrl("10:05:00,010", ACTIVE.format(c=2, live=live)),
        ],
        "b2/state-change.log": [
            sc("10:05:00,020", um22(2, 6, 1, 4, "1, 2, 3", 7, ce=5)),
            sc("10:05:00,030", lai22(2, 6, 1, 4, "1, 2, 3", 7, ce=5)),
            sc("10:05:00,040", um22(2, 6, 1, 4, "1, 2, 3", 7, ce=5)),
        ],
        "b1/state-change.log.1": [
            sc("10:05:00,050", IGNORING_22.format(b=1, c=2, e=6, le=4, cur=5), level="WARN"),
        ],
    }


# ---- class 1: leader/ISR mismatch after failover ---------------------------------------------------
@pytest.mark.parametrize("old_controller_dies", [False, True], ids=["old-alive", "old-crashed"])
def test_stale_read_after_failover_is_one_mismatch_finding(old_controller_dies):
    result = replay_files(stale_failover(old_controller_dies))
    found = rules(result, "leader_isr_mismatch_after_failover")
    assert [(f.kind, f.severity, f.partition) for f in found] == [("stale_read", "error", 0)]
    f = found[0]
    # the new controller's line, the previous controller's last write, who was alive (K:...@2.2.2:686)
    assert {"b2/state-change.log:1", "b1/state-change.log:2", "b2/controller.log:2"} <= set(f.evidence)
    # every later line repeating the stale state, and broker 1's refusal, are evidence of it too
    assert {"b2/state-change.log:2", "b2/state-change.log:3", "b1/state-change.log.1:1"} <= set(f.evidence)
    assert "leader epoch 5 -> 4" in f.summary and "zkVersion 8 -> 7" in f.summary
    assert re.search(r"its ISR holds dead brokers? (\d, )*3\b", f.summary), f.summary
    # the epoch regressions of the same stale read are not findings beside it
    assert [x.rule for x in result.findings if "regression" in x.rule or x.rule == "leader_epoch_reused"] == []


def test_clean_failover_reports_nothing():
    files = stale_failover()
    files["b2/state-change.log"] = [sc("10:05:00,020", um22(2, 6, 1, 5, "1, 2", 8, ce=5))]
    del files["b1/state-change.log.1"]
    assert [f for f in replay_files(files).findings if f.severity != "info"] == []


def test_a_leader_write_racing_with_the_new_controllers_read_is_no_mismatch():
    """A leader shrinking its ISR just after the new controller started may or may not be in the new
    controller's first read (initializeControllerContext, K:controller/KafkaController.scala@2.2.2:237-262); its
    ISR change notification reaches the controller later. Recorded from real 0.10.2 (lab
    real-0.10-zk-controller-kill). The shrink line: K:cluster/Partition.scala@2.2.2:642."""
    files = stale_failover()
    files["b2/state-change.log"] = [sc("10:05:00,020", um22(2, 6, 1, 5, "1, 2", 8, ce=5))]
    del files["b1/state-change.log.1"]
    files["b1/server.log"] = [
        server(
            "10:05:00,010",
            "[Partition orders-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: (highWatermark: 5, endOffset: 9). "
            "Out of sync replicas: (brokerId: 2, endOffset: 5).",
        )
    ]
    assert [f for f in replay_files(files).findings if f.severity != "info"] == []


def test_update_metadata_for_a_topic_being_deleted_is_no_regression():
    """LeaderAndIsr.duringDelete(isr) = LeaderAndIsr(-2, isr) with the initial leader epoch and zkVersion 0
    (K:api/LeaderAndIsr.scala@1.1.1:26-29, K:controller/ControllerChannelManager.scala@2.2.2:374-376,
    @2.4.1:422-424, @3.9.0-rc3:476-478)."""
    files = {
        "b1/state-change.log": [
            sc("10:00:00,000", um22(1, 5, 1, 3, "1, 2", 4)),
            sc("10:00:01,000", um22(1, 5, -2, 0, "1, 2", 0)),
        ]
    }
    assert [f.rule for f in replay_files(files).findings] == []


def test_a_cached_controller_epoch_for_an_unwritten_znode_is_no_regression():
    """2.3+ removeReplicasFromIsr caches LeaderIsrAndControllerEpoch(leaderAndIsr, <new epoch>) for partitions
    whose ISR lacks the replica, without writing them (K:controller/ReplicaStateMachine.scala@2.4.1:350-355);
    a later UpdateMetadata carries the znode's own controller epoch for the same zkVersion (recorded by the lab,
    real-2.4-zk-controller-kill), and the leader's next ISR write carries the controller epoch of the request
    that made it leader (K:cluster/Partition.scala@2.4.1:499,1168). Only a controller decision (leader epoch + 1)
    written with an older controller epoch is one (I10)."""
    files = {
        "b3/state-change.log": [
            sc("10:00:00,000", um22(3, 2, 3, 0, "3, 2", 1, ce=2)),
            sc("10:00:05,000", um22(3, 2, 3, 0, "3, 2", 1, ce=1)),
        ]
    }
    assert rules(replay_files(files), "controller_epoch_regression") == []
    files["b3/state-change.log"].append(sc("10:00:09,000", um22(3, 2, 3, 0, "3, 2, 1", 2, ce=1)))  # the leader's write
    assert rules(replay_files(files), "controller_epoch_regression") == []
    del files["b3/state-change.log"][2]
    # a newer decision (leader epoch + 1) written with an older controller epoch is still one (I10)
    files["b3/state-change.log"][1] = sc("10:00:05,000", um22(3, 2, 3, 1, "3, 2", 2, ce=1))
    assert [f.rule for f in rules(replay_files(files), "controller_epoch_regression")] == [
        "controller_epoch_regression"
    ]


# ---- class 2: logged replica transitions the era forbids -------------------------------------------
def deletion_11(bounced: bool) -> dict:
    change = (
        BROKER_CHANGE_22.format(c=1, added="", deleted=3, live="1,2")
        if bounced
        else "[Controller id=1] Newly added brokers: , deleted brokers: 3, all live brokers: 1,2"
    )
    return {
        "b1/controller.log": [ctrl("10:00:00,000", change)],
        "b1/state-change.log": [
            sc(
                "10:00:00,100",
                "[Controller id=1 epoch=5] Changed state of replica 3 for partition orders-0 from OnlineReplica to OfflineReplica",
            ),
            sc(
                "10:01:00,000",
                "[Controller id=1 epoch=5] Changed state of replica 3 for partition orders-0 from OfflineReplica to ReplicaDeletionIneligible",
            ),
        ],
    }


def test_offline_to_ineligible_in_a_log_its_own_lines_date_before_2_3():
    """ReplicaDeletionIneligible.validPreviousStates = Set(ReplicaDeletionStarted) up to 2.2
    (K:controller/ReplicaStateMachine.scala@1.1.1:428, @2.2.2:440); OfflineReplica added in 2.3.0 (@2.3.1:433,
    KAFKA-8237). The broker-change line without ``bounced brokers`` exists only to 2.1 (K:...@1.1.1:1238 vs
    @2.2.2:1307), so this broker's lines date its release and the transition is illegal."""
    found = rules(replay_files(deletion_11(bounced=False)), "illegal_transition")
    assert [(f.kind, f.severity, f.replica) for f in found] == [("logged_pair_invalid", "error", 3)]
    assert found[0].evidence == ("b1/state-change.log:2",)
    # with the 2.2+ broker-change line the same broker may be 2.3+: not illegal
    assert rules(replay_files(deletion_11(bounced=True)), "illegal_transition") == []


# ---- classes 3 and 4: unclean elections, and what the new state itself proves -----------------------
# (previous-ISR line showing ISR [1] at version 4, election line: leader 2, ISR [2], version 5) per era.
CHANGED_35 = (
    "[Controller id=3 epoch=7] Changed partition orders-0 from OfflinePartition to OnlinePartition with state "
    "LeaderAndIsr(leader=2, leaderEpoch=4, isrWithBrokerEpoch=List(BrokerState(brokerId=2, brokerEpoch=-1)), "
    "leaderRecoveryState={lrs}, partitionEpoch={v})"
)  # K:controller/PartitionStateMachine.scala@3.5.0:233, K:api/LeaderAndIsr.scala@3.5.0:102
CHANGED_33 = (
    "[Controller id=3 epoch=7] Changed partition orders-0 from OfflinePartition to OnlinePartition with state "
    "LeaderAndIsr(leader=2, leaderEpoch=4, isr=List(2), leaderRecoveryState=RECOVERED, partitionEpoch={v})"
)  # K:api/LeaderAndIsr.scala@3.3.1:80
CHANGED_28 = (
    "[Controller id=3 epoch=7] Changed partition orders-0 from OfflinePartition to OnlinePartition with state "
    "LeaderAndIsr(leader=2, leaderEpoch=4, isr=List(2), zkVersion={v})"
)  # K:controller/PartitionStateMachine.scala@2.8.2:229
CHANGED_24 = CHANGED_28  # @2.4.1:227 (TRACE)

RENDERINGS = {
    # K:controller/ControllerChannelManager.scala@2.2.2:432 + C:.../UpdateMetadataRequest.java@2.2.2:264-272
    "1.1-2.3 UpdateMetadata PartitionState": (
        "2.2",
        [sc("10:00:00,000", um22(3, 7, 1, 3, "1", 4))],
        CHANGED_24,
        "TRACE",
    ),
    # K:controller/ControllerChannelManager.scala@2.2.2:416 + C:.../LeaderAndIsrRequest.java@2.2.2:336-344
    "1.1-2.3 LeaderAndIsr PartitionState": (
        "2.2",
        [sc("10:00:00,000", lai22(3, 7, 1, 3, "1", 4))],
        CHANGED_24,
        "TRACE",
    ),
    # K:server/MetadataCache.scala@2.2.2:270 (a broker's copy of the controller's UpdateMetadata state)
    "1.1-2.3 broker Cached leader info": (
        "2.2",
        [
            sc(
                "10:00:00,000",
                "[Broker id=1] Cached leader info PartitionState(controllerEpoch=7, leader=1, leaderEpoch=3, "
                "isr=[1], zkVersion=4, replicas=[1, 2, 3], offlineReplicas=[]) for partition orders-0 in response "
                "to UpdateMetadata request sent by controller 3 epoch 7 with correlation id 11",
            )
        ],
        CHANGED_24,
        "TRACE",
    ),
    # K:cluster/Partition.scala@2.4.1:1183 (server.log, INFO)
    "2.4-2.7 server.log ISR updated ... zkVersion": (
        "2.4.1",
        [server("10:00:00,000", "[Partition orders-0 broker=1] ISR updated to [1] and zkVersion updated to [4]")],
        CHANGED_24,
        "TRACE",
    ),
    # K:controller/KafkaController.scala@2.8.2:2344 (controller.log, DEBUG)
    "2.7-3.2 controller.log ISR for partition ... [..]": (
        "2.8.2",
        [
            ctrl(
                "10:00:00,000",
                "[Controller id=3] ISR for partition orders-0 updated to [1] and zkVersion updated to [4]",
                level="DEBUG",
            )
        ],
        CHANGED_28,
        "INFO",
    ),
    # K:cluster/Partition.scala@2.8.2:1431 (server.log, INFO)
    "2.8-3.4 server.log ISR updated ... version [v]": (
        "2.8.2",
        [server("10:00:00,000", "[Partition orders-0 broker=1] ISR updated to 1 and version updated to [4]")],
        CHANGED_28,
        "INFO",
    ),
    # K:controller/ReplicaStateMachine.scala@2.8.2:229 with LeaderIsrAndControllerEpoch @2.8.2:2581-2588
    "2.7.2-3.1 (Leader:..,ZkVersion:..) after removing replica": (
        "2.8.2",
        [
            sc(
                "10:00:00,000",
                "[Controller id=3 epoch=7] Partition orders-0 state changed to (Leader:1,ISR:1,LeaderEpoch:3,"
                "ZkVersion:4,ControllerEpoch:7) after removing replica 2 from the ISR as part of transition to "
                "OfflineReplica",
                level="INFO",
            )
        ],
        CHANGED_28,
        "INFO",
    ),
    # K:controller/KafkaController.scala@3.3.1:2407, K:api/LeaderAndIsr.scala@3.3.1:80
    "3.3-3.4 controller.log ISR for partition ... LeaderAndIsr(isr=List)": (
        "3.3.1",
        [
            ctrl(
                "10:00:00,000",
                "[Controller id=3] ISR for partition orders-0 updated to LeaderAndIsr(leader=1, leaderEpoch=3, "
                "isr=List(1), leaderRecoveryState=RECOVERED, partitionEpoch=4).",
                level="DEBUG",
            )
        ],
        CHANGED_33,
        "INFO",
    ),
    # K:controller/KafkaController.scala@3.5.0:2420, K:api/LeaderAndIsr.scala@3.5.0:102
    "3.5-3.9 controller.log ISR for partition ... isrWithBrokerEpoch": (
        "3.5.0",
        [
            ctrl(
                "10:00:00,000",
                "[Controller id=3] ISR for partition orders-0 updated to LeaderAndIsr(leader=1, leaderEpoch=3, "
                "isrWithBrokerEpoch=List(BrokerState(brokerId=1, brokerEpoch=-1)), leaderRecoveryState=RECOVERED, "
                "partitionEpoch=4).",
                level="DEBUG",
            )
        ],
        CHANGED_35.replace("{lrs}", "RECOVERED"),
        "INFO",
    ),
    # K:cluster/Partition.scala@3.5.0:1871-1872 (two spaces when not under min ISR)
    "3.5-3.9 server.log ISR updated ... version v": (
        "3.5.0",
        [server("10:00:00,000", "[Partition orders-0 broker=1] ISR updated to 1  and version updated to 4")],
        CHANGED_35.replace("{lrs}", "RECOVERED"),
        "INFO",
    ),
    "3.5-3.9 server.log ISR updated (under-min-isr)": (
        "3.5.0",
        [
            server(
                "10:00:00,000",
                "[Partition orders-0 broker=1] ISR updated to 1 (under-min-isr) and version updated to 4",
            )
        ],
        CHANGED_35.replace("{lrs}", "RECOVERED"),
        "INFO",
    ),
}


def _unclean_files(version: str, previous: list[str], election: str, level: str, v: int) -> dict:
    files = {
        "b1/server.log": [
            server("09:00:00,000", f"Kafka version: {version}", logger="org.apache.kafka.common.utils.AppInfoParser"),
            *[line for line in previous if "kafka.cluster.Partition" in line],
        ],
        "b3/controller.log": [line for line in previous if "KafkaController" in line],
        "b3/state-change.log": [
            *[line for line in previous if "state.change.logger" in line],
            sc("10:00:10,000", election.format(v=v), level=level),
        ],
    }
    return {path: lines for path, lines in files.items() if lines}


@pytest.mark.parametrize("name", sorted(RENDERINGS))
def test_every_isr_rendering_feeds_the_previous_isr(name):
    """Kafka's unclean election writes ISR = [leader] from outside the old ISR (Election.leaderForOffline,
    K:controller/Election.scala@3.9.0-rc3:40-52; PartitionStateMachine.scala@2.2.2:384-393). With the old ISR
    seen at the version just before the election (each write is version+1, K:zk/KafkaZkClient.scala
    updateLeaderAndIsr) that is direct evidence: critical. A version gap between them: a warning at most."""
    version, previous, election, level = RENDERINGS[name]
    direct = rules(replay_files(_unclean_files(version, previous, election, level, 5)), "unclean_election")
    assert [(f.severity, f.partition) for f in direct] == [("critical", 0)], name
    assert len(direct[0].evidence) == 2  # the previous ISR's line and the election's
    gap = rules(replay_files(_unclean_files(version, previous, election, level, 6)), "unclean_election")
    assert [f.severity for f in gap] == ["warning"], name
    assert "version 5" in gap[0].summary  # names the write that is not in the logs


def test_recovering_is_direct_evidence_and_cites_the_previous_isr():
    """3.2+ with IBP >= 3.2: an election from outside the ISR marks the leader RECOVERING
    (K:controller/Election.scala@3.9.0-rc3:44-51)."""
    previous = RENDERINGS["3.5-3.9 controller.log ISR for partition ... isrWithBrokerEpoch"][1]
    files = _unclean_files("3.5.0", previous, CHANGED_35.replace("{lrs}", "RECOVERING"), "INFO", 9)
    [found] = rules(replay_files(files), "unclean_election")
    assert found.severity == "critical" and found.kind == "recovering"
    assert found.evidence == ("b3/controller.log:1", "b3/state-change.log:1")


@pytest.mark.parametrize(
    "election",
    [
        # PREFERRED: replicas.head if live and in the ISR, ISR unchanged (Election.scala@3.9.0-rc3:109-118)
        "LeaderAndIsr(leader=1, leaderEpoch=6, isr=List(2, 3, 1), zkVersion=11)",
        # CONTROLLED_SHUTDOWN: ISR minus the shutting-down brokers (Election.scala@3.9.0-rc3:136-149)
        "LeaderAndIsr(leader=3, leaderEpoch=6, isr=List(2, 3), zkVersion=11)",
        # REASSIGN: a target replica in the ISR, ISR unchanged (Election.scala@3.9.0-rc3:82-91)
        "LeaderAndIsr(leader=4, leaderEpoch=6, isr=List(1, 2, 3, 4), zkVersion=11)",
    ],
    ids=["preferred", "controlled-shutdown", "reassignment"],
)
def test_a_leader_inside_its_own_isr_is_no_unclean_election(election):
    """Only an unclean election writes ISR = [leader]; a new state whose own ISR holds its leader and
    another replica was elected from the ISR, whatever the replay last saw (2.6+ logs at INFO: ISR
    expansions are not in state-change.log)."""
    files = {
        "b2/state-change.log": [
            sc(
                "10:00:00,000",
                "[Controller id=2 epoch=4] Partition orders-0 state changed to (Leader:2,ISR:2,LeaderEpoch:5,"
                "ZkVersion:9,ControllerEpoch:4) after removing replica 1 from the ISR as part of transition to "
                "OfflineReplica",
                level="INFO",
            ),
            sc(
                "10:30:00,000",
                f"[Controller id=2 epoch=4] Changed partition orders-0 from OnlinePartition to OnlinePartition with "
                f"state {election}",
                level="INFO",
            ),
        ]
    }
    assert [f for f in replay_files(files, kafka_version="2.8").findings if f.severity != "info"] == []


# ---- class 5: a zombie needs an action ---------------------------------------------------------------
def _late_resign(zombie_acts: bool) -> dict:
    files = {
        "b1/controller.log": [ctrl("10:00:30,000", "[Controller id=1] Resigned")],  # K:...@2.4.1:377
        "b1/state-change.log": [sc("10:00:00,000", um22(1, 7, 1, 3, "1, 2, 3", 5))],
        "b2/controller.log": [ctrl("10:00:10,000", ELECTED_22.format(c=2, e=8))],
    }
    if zombie_acts:
        files["b1/state-change.log"].append(sc("10:00:25,000", um22(1, 7, 1, 3, "1, 2, 3", 5)))
    return files


def test_late_resignation_without_an_action_is_not_a_zombie():
    """A paused controller notices its expired session late (processExpire -> onControllerResignation,
    K:controller/KafkaController.scala@2.4.1:1849-1852): without a line acting with the old epoch after the
    new one began, two controllers never acted at once."""
    assert rules(replay_files(_late_resign(zombie_acts=False)), "concurrent_controllers") == []
    [found] = rules(replay_files(_late_resign(zombie_acts=True)), "concurrent_controllers")
    assert (found.kind, found.severity) == ("zombie", "error")
    assert found.evidence == ("b2/controller.log:1", "b1/state-change.log:2", "b1/controller.log:1")


# ---- class 6: Kafka's own order is not a gap ---------------------------------------------------------
def test_isr_removal_line_before_the_replica_line_is_one_transition():
    """ReplicaStateMachine.doHandleStateChanges, OfflineReplica: INFO 'Partition P state changed to (...) after
    removing replica R ...' (K:controller/ReplicaStateMachine.scala@3.9.0-rc3:229), then TRACE 'Changed state of
    replica R ... from <state before> to OfflineReplica' (:238-240); the same at @2.6.0:228-240."""
    files = {
        "b2/state-change.log": [
            sc(
                "10:00:00,000",
                "[Controller id=2 epoch=12] Changed state of replica 3 for partition orders-0 from NewReplica to OnlineReplica",
            ),
            sc(
                "10:00:01,000",
                "[Controller id=2 epoch=12] Partition orders-0 state changed to (Leader:1,ISR:1,2,"
                "LeaderRecoveryState:RECOVERED,LeaderEpoch:1,ZkVersion:1,ControllerEpoch:12) after removing replica "
                "3 from the ISR as part of transition to OfflineReplica",
                level="INFO",
            ),
            sc(
                "10:00:01,001",
                "[Controller id=2 epoch=12] Changed state of replica 3 for partition orders-0 from OnlineReplica to OfflineReplica",
            ),
        ]
    }
    result = replay_files(files, kafka_version="3.9")
    assert rules(result, "state_gap") == []
    states = [(r["replica"], r["state"]) for r in result.replica_intervals]
    assert states == [(3, "OnlineReplica"), (3, "OfflineReplica")]


# ---- class 7: one anomaly, one finding ----------------------------------------------------------------
FAILED_24 = [
    "[Controller id=2 epoch=8] Controller 2 epoch 8 failed to change state for partition orders-0 from "
    "OfflinePartition to OnlinePartition",  # K:controller/PartitionStateMachine.scala@2.4.1:513
    "kafka.common.StateChangeFailedException: Failed to elect leader for partition orders-0 under strategy "
    "OfflinePartitionLeaderElectionStrategy(false)",
]


def test_repeated_failed_elections_are_one_episode():
    """Every broker change re-tries all offline partitions and logs the same ERROR
    (KafkaController.onBrokerStartup/onReplicasBecomeOffline, K:controller/KafkaController.scala@2.4.1:407-430)."""
    lines = []
    for clock in ("10:00:03,321", "10:07:41,080", "10:07:41,084", "10:31:55,404"):
        lines += [sc(clock, FAILED_24[0], level="ERROR"), FAILED_24[1]]
    result = replay_files({"b2/state-change.log": lines})
    [found] = rules(result, "illegal_transition")
    assert found.evidence == tuple(f"b2/state-change.log:{n}" for n in (1, 3, 5, 7))
    assert found.evidence_count == 4 and "4 lines" in found.summary
    row = found.to_row()
    assert row["ts"].strftime("%H:%M:%S") == "10:00:03" and row["ts_end"].strftime("%H:%M:%S") == "10:31:55"
    assert row["controller_epoch"] == row["controller_epoch_end"] == 8
    # the id is the episode's: the same whether the log ends after the first or the last line
    first = rules(replay_files({"b2/state-change.log": lines[:2]}), "illegal_transition")[0]
    assert first.finding_id == found.finding_id


def test_refusals_of_one_zombie_by_several_brokers_are_one_finding():
    """Each broker that knows the newer epoch refuses each request of the deposed controller
    (K:server/ReplicaManager.scala@2.0.1: 'Received update metadata request with correlation id N from an old
    controller C with epoch E. Latest known controller epoch is E''); one zombie, one finding."""
    refusal = (
        "[Broker id={b}] Received update metadata request with correlation id 58 from an old controller 1 with "
        "epoch 7. Latest known controller epoch is 8"
    )
    files = {f"b{b}/state-change.log": [sc("10:00:00,000", refusal.format(b=b), level="WARN")] for b in (2, 3)}
    [found] = rules(replay_files(files), "stale_epoch_rejected")
    assert found.evidence_count == 2 and found.controller_epoch == 7 and "brokers 2, 3" in found.summary


# ---- class 11: what the six templates mean ----------------------------------------------------------------
def test_marked_offline_replicas_are_offline_in_the_replay():
    """``Mark replicas t-p,... on broker B as offline`` (K:controller/KafkaController.scala@2.4.1:1257, after a
    LeaderAndIsr response with KAFKA_STORAGE_ERROR) is followed by onReplicasBecomeOffline: replica B of each
    partition goes OfflineReplica, and its TRACE line, when logged, confirms it (no gap)."""
    files = {
        "b1/state-change.log": [
            sc(
                "10:00:00,000",
                "[Controller id=1 epoch=6] Changed state of replica 2 for partition orders-0 from NewReplica to OnlineReplica",
            ),
            sc(
                "10:00:00,001",
                "[Controller id=1 epoch=6] Changed state of replica 2 for partition orders-1 from NewReplica to OnlineReplica",
            ),
            sc(
                "10:05:00,000", "[Controller id=1] Mark replicas orders-0,orders-1 on broker 2 as offline", level="INFO"
            ),
            sc(
                "10:05:00,001",
                "[Controller id=1 epoch=6] Changed state of replica 2 for partition orders-0 from OnlineReplica to OfflineReplica",
            ),
        ]
    }
    result = replay_files(files, kafka_version="2.4")
    states = {(r["partition"], r["state"]): r["cause"] for r in result.replica_intervals}
    assert (
        states[(0, "OfflineReplica")] == "b1/state-change.log:3"
        and states[(1, "OfflineReplica")] == "b1/state-change.log:3"
    )
    assert rules(result, "state_gap") == []


def test_a_local_removal_is_not_a_leader_change():
    """RaftReplicaManager 'Metadata batch N: locally removed: MetadataPartition(...)' (K:server/RaftReplicaManager
    .scala@2.8.2:226) deletes the broker's replica; the partition's leader and ISR do not change."""
    mp = "MetadataPartition(orders,0,{leader},{le},[1, 2, 3],[{isr}],{pe},[],[],[])"
    files = {
        "b1/state-change.log": [
            sc(
                "10:00:00,000",
                "[Broker id=1] Metadata batch 10: locally changed: " + mp.format(leader=1, le=4, isr="1, 2", pe=9),
            ),
            sc(
                "10:00:01,000",
                "[Broker id=1] Metadata batch 11: locally removed: " + mp.format(leader=3, le=2, isr="3", pe=5),
            ),
        ]
    }
    result = replay_files(files)
    assert [(r["leader"], r["leader_epoch"]) for r in result.partition_intervals] == [(1, 4)]
    assert [f for f in result.findings if f.severity != "info"] == []
