"""The incident story (``replay.story``) told on the recorded real incidents (sample_logs/real-*/), judged
against what the lab did (truth.json's actions, never this tool) and the lines it cites."""

from __future__ import annotations

import datetime as dt
import functools
import gzip
from pathlib import Path

import pytest

from kafka_forensics.lab.truth import load_truth
from kafka_forensics.parsers.records import parse_file
from kafka_forensics.replay.cluster import ClusterContext
from kafka_forensics.replay.local import replay_all, replay_event
from kafka_forensics.replay.story import CAPS, ELECTION, Story, election_kind, tell, tell_local
from tests.support.paths import REPO

SAMPLES = REPO / "sample_logs"
INCIDENTS = sorted(p.parent.name for p in SAMPLES.glob("real-*/truth.json"))


def _events(folder: Path, files: list[str]) -> list[dict]:
    out = []
    for name in files:
        out += map(replay_event, parse_file((folder / name).read_bytes(), name).events)
    return out


@functools.lru_cache(maxsize=None)
def _told(name: str) -> tuple[dict, Story]:
    folder = SAMPLES / name
    truth = load_truth(folder)
    result = replay_all(_events(folder, truth["files"]))
    stories = tell_local(result.contexts, result.partition_intervals, [f.to_row() for f in result.findings])
    assert len(stories) == 1
    return truth, stories[0]


@functools.lru_cache(maxsize=None)
def _lines(folder: Path, name: str) -> list[str]:
    raw = (folder / name).read_bytes()
    if name.endswith(".gz"):
        raw = gzip.decompress(raw)
    return raw.decode("utf-8", "replace").splitlines()


def _line(name: str, ref: str) -> str:
    path, number = ref.rsplit(":", 1)
    return _lines(SAMPLES / name, path)[int(number) - 1]


def _action(truth: dict, action: str, nth: int = 0) -> dict:
    return [a for a in truth["actions"] if a["action"] == action][nth]


def _at(action: dict) -> dt.datetime:
    return dt.datetime.fromisoformat(action["at"].replace("Z", "+00:00"))


def _session_timeout(truth: dict) -> float:
    broker = next(iter(truth["configs"]["brokers"].values()))
    return int(broker.get("zookeeper.session.timeout.ms", 18000)) / 1000


@pytest.mark.parametrize("name", INCIDENTS)
def test_every_sentence_cites_real_lines_in_order(name):
    _, story = _told(name)
    assert story.sentences, name
    times = [s.ts for s in story.sentences if s.ts is not None]
    assert times == sorted(times)
    for s in story.sentences:
        assert s.evidence, s.text
        for ref in s.evidence:
            assert _line(name, ref).strip(), ref  # the cited line exists and is not blank


@pytest.mark.parametrize(
    "name", [n for n in INCIDENTS if n.endswith("zk-controller-kill") or "zk-controller-kill-" in n]
)
def test_a_killed_zookeeper_controller_is_replaced_after_its_session_times_out(name):
    truth, story = _told(name)
    kill = _action(truth, "kill -9")
    changes = [s for s in story.sentences if s.kind == "controller"][1:]
    assert len(changes) == 1, [s.text for s in changes]
    change = changes[0]
    assert f"taking over from broker {kill['broker']}" in change.text
    # ZooKeeper deletes /controller when the dead controller's session expires (zookeeper.session.timeout.ms)
    assert _at(kill) < change.ts < _at(kill) + dt.timedelta(seconds=_session_timeout(truth) + 5)
    election = _line(name, change.evidence[0])  # K:controller/KafkaController.scala@2.4.1:1396, @0.10.2.2:731
    assert "successfully elected as the controller" in election or "incremented epoch to" in election, election
    # kill -9 leaves no resignation line: the reason given is the dead broker leaving the live brokers
    assert f"no reason from broker {kill['broker']}" in change.text
    assert any(
        f"broker {kill['broker']} left the live brokers" in s.text for s in story.sentences if s.kind == "broker"
    )
    back = [s for s in story.sentences if s.kind == "broker" and f"broker {kill['broker']} came back" in s.text]
    assert back and back[0].ts > _at(_action(truth, "start"))


@pytest.mark.parametrize("name", [n for n in INCIDENTS if "kraft-controller-kill" in n])
def test_a_killed_kraft_controller_is_replaced_by_a_quorum_election(name):
    truth, story = _told(name)
    kill = _action(truth, "kill -9")
    change = [s for s in story.sentences if s.kind == "controller"][1]
    assert _at(kill) < change.ts < _at(kill) + dt.timedelta(seconds=30)
    assert f"taking over from broker {kill['broker']}" in change.text and "KRaft quorum election" in change.text
    assert any("In the new epoch" in _line(name, ref) for ref in change.evidence)  # QuorumController@3.9.0-rc3:1185
    # the restarted broker registers fenced and is unfenced when caught up: one return, after the restart
    back = [s for s in story.sentences if s.kind == "broker" and f"broker {kill['broker']} came back" in s.text]
    assert len(back) == 1 and back[0].ts > _at(_action(truth, "start"))


@pytest.mark.parametrize("name", [n for n in INCIDENTS if "zombie-controller" in n])
def test_a_paused_controller_is_deposed_when_its_zookeeper_session_expires(name):
    truth, story = _told(name)
    paused = _action(truth, "SIGSTOP")
    change = [s for s in story.sentences if s.kind == "controller"][1]
    assert f"taking over from broker {paused['broker']}" in change.text
    assert _at(paused) < change.ts < _at(_action(truth, "SIGCONT"))
    assert f"broker {paused['broker']} logged that its ZooKeeper session expired" in change.text
    said = [_line(name, ref) for ref in change.evidence]
    assert any("Session expired" in line or "ZK expired" in line or "(Expired)" in line for line in said), said


@pytest.mark.parametrize("name", [n for n in INCIDENTS if "unclean-election" in n])
def test_an_unclean_election_is_told_as_one(name):
    truth, story = _told(name)
    unclean = [s for s in story.sentences if s.kind == "election:unclean"]
    assert len(unclean) == 1, [s.text for s in story.sentences]
    sentence = unclean[0]
    assert "UNCLEAN" in sentence.text and "fragile-0 ->" in sentence.text
    # after the fragile leader (its last ISR member) was killed
    assert sentence.ts > _at(_action(truth, "kill -9", 1))
    critical = [s for s in story.sentences if s.kind == "finding" and "unclean_election" in s.text]
    assert critical, "the unclean_election finding is told too"


@pytest.mark.parametrize("name", [n for n in INCIDENTS if "controlled-shutdown" in n])
def test_a_controlled_shutdown_moves_leaders_off_the_broker(name):
    truth, story = _told(name)
    term = _action(truth, "SIGTERM")
    began = [s for s in story.sentences if s.kind == "controlled_shutdown"]
    assert len(began) == 1 and f"broker {term['broker']} began a controlled shutdown" in began[0].text
    assert _at(term) <= began[0].ts < _at(term) + dt.timedelta(seconds=10)
    moved = [s for s in story.sentences if s.kind == "election:controlled_shutdown"]
    assert moved and f"(was {term['broker']})" in moved[0].text


@pytest.mark.parametrize("name", [n for n in INCIDENTS if "follower-pause" in n or "reassignment" in n])
def test_no_broker_death_or_unclean_election_where_none_happened(name):
    _, story = _told(name)
    assert not [s for s in story.sentences if s.kind in ("broker", "election:unclean", "election:offline")]


def test_each_kind_is_capped_and_what_is_left_out_is_counted():
    ctx = ClusterContext()
    start = dt.datetime(2024, 3, 4, 10, 0, tzinfo=dt.timezone.utc)
    rounds = [
        {
            "cluster": "",
            "kind": "offline",
            "controller_epoch": 1,
            "ts": start + dt.timedelta(minutes=i),
            "ts_end": start + dt.timedelta(minutes=i),
            "n": 1,
            "first_ref": f"broker-1/state-change.log:{i + 1}",
            "last_ref": f"broker-1/state-change.log:{i + 1}",
            "sample": [{"topic": "t", "partition": i, "leader": 2, "prev_leader": -1}],
        }
        for i in range(CAPS[ELECTION] + 3)
    ]
    story = tell(ctx, rounds, [], left_out={"election:offline": 4})
    assert len([s for s in story.sentences if s.kind == "election:offline"]) == CAPS[ELECTION]
    assert story.left_out == {"election:offline": 7}
    assert story.notes() == [f"7 more election:offline sentence(s) left out (at most {CAPS[ELECTION]})"]


def test_election_kinds_follow_kafkas_strategies():
    online = {"state": "OnlinePartition", "leader": 1, "isr": [1, 2, 3], "replicas": [1, 2, 3]}
    assert election_kind(None, {"leader": 1, "replicas": [1, 2]}, None) == "new_partition"
    assert election_kind(online, {**online, "leader": 1}, None) is None
    assert election_kind(online, {**online, "leader": 4}, None) == "unclean"
    assert election_kind({**online, "leader": 2}, {**online, "leader": 1}, None) == "preferred"
    assert election_kind({**online, "state": "OfflinePartition"}, {**online, "leader": 2}, None) == "offline"
    assert election_kind(online, {**online, "leader": 2, "replicas": [2, 3, 4]}, None) == "reassignment"
    empty = {**online, "isr": [], "leader": -1, "state": "OfflinePartition"}
    assert election_kind(empty, {**online, "leader": 2, "source": "decision"}, None) == "unclean"  # ZooKeeper
    assert election_kind(empty, {**online, "leader": 2, "source": "metadata"}, None) == "offline"  # KRaft: ELR
    recovering = {**online, "leader": 2, "source": "metadata", "state": "RecoveringPartition"}
    assert election_kind(empty, recovering, None) == "unclean"
