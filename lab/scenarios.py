"""The scenarios: scripts of actions on a real cluster, each deriving its truth from what it did.

Every script starts from a cluster in sync (the ``before`` snapshot, with a producer writing to
``events``), breaks something, waits on ``kafka-topics --describe`` for the state the action leads
to, and ends with every broker back and the ``end`` snapshot. It returns its ``must``/``may``
lists; ``must`` entries come from the action log and the snapshots (an unclean election is a new
leader outside the ISR the previous snapshot showed) or from Kafka's own statement of a refusal.
Everything else is ``must_not`` (``truth.complete_must_not``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from kafka_forensics.core.errors import LabError

from .releases import KRAFT, ZOOKEEPER
from .run import Run, all_of, fully_in_sync, state, without
from .truth import expect

EVENTS = "events"
FRAGILE = "fragile"


@dataclass
class Outcome:
    description: str
    must: list[dict] = field(default_factory=list)
    may: list[dict] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str
    modes: tuple[str, ...]
    script: Callable[[Run], Outcome]
    overrides: dict = field(default_factory=dict)  # broker settings for both modes
    mode_overrides: dict = field(default_factory=dict)  # mode -> broker settings
    broker_only: int = 0  # KRaft: extra broker-only nodes
    needs_election_tool: bool = False

    def settings(self, mode: str) -> dict:
        return {**self.overrides, **self.mode_overrides.get(mode, {})}


# ---- shared steps ---------------------------------------------------------------------------------
def setup(run: Run, fragile: Optional[list[int]] = None, fragile_configs: Optional[dict] = None) -> None:
    """Topic ``events`` (3 partitions, RF 3) with a steady producer; optionally ``fragile`` (RF 2 on
    the given brokers). Ends with the ``before`` snapshot, every partition in sync."""
    run.act("kafka-topics --create", None, f"{EVENTS}: 3 partitions, replication factor 3")
    run.tools.create_topic(EVENTS, partitions=3, replication=3)
    topics = [EVENTS]
    if fragile:
        configs = dict(fragile_configs or {})
        run.act("kafka-topics --create", None, f"{FRAGILE}: replicas {fragile}, configs {configs or 'default'}")
        run.tools.create_topic(FRAGILE, assignment=[fragile], configs=configs)
        topics.append(FRAGILE)
    run.act(
        "kafka-producer-perf-test", None, f"{EVENTS}: 20 records/s of 100 bytes, acks=1, round-robin, in the background"
    )
    run.background.append(run.tools.producer(EVENTS, 20 * 3600, 20, run.out / "clients" / "producer-events.out"))
    run.settle("before", fully_in_sync(topics), "every partition in sync before the fault")


def controller(run: Run) -> int:
    return run.cluster.wait_controller()


def last_state(run: Run, topic: str, partition: int) -> dict:
    """A partition in the latest snapshot."""
    return state({"topics": run.last["topics"]}, topic, partition)


def other_brokers(run: Run, *exclude: int) -> list[int]:
    return [n for n in sorted(run.cluster.nodes) if n not in exclude]


def bounded_produce(run: Run, topic: str, records: int, acks: str, why: str) -> None:
    run.act("kafka-producer-perf-test", None, f"{topic}: {records} records, acks={acks}, {why}")
    child = run.tools.producer(
        topic, records, 500, run.out / "clients" / f"producer-{topic}-{len(run.actions)}.out", acks=acks
    )
    try:
        child.popen.wait(120)
    except Exception as err:
        child.kill()
        raise LabError(f"the bounded producer did not finish: {err}") from err


def kill(run: Run, broker: int, why: str) -> None:
    run.act("kill -9", broker, why)
    run.cluster.kill(broker)


def start(run: Run, broker: int) -> None:
    run.act("start", broker, "kafka.Kafka server.properties")
    run.cluster.start_node(broker)


END_STABLE_FOR = 4.0  # seconds the end state must hold before the logs are cut there


def finish(run: Run, topics=None) -> None:
    run.settle("end", fully_in_sync(topics), "every broker back and every partition in sync", stable_for=END_STABLE_FOR)


# ---- scenarios --------------------------------------------------------------------------------------
def controller_kill(run: Run) -> Outcome:
    setup(run)
    c = controller(run)
    kill(run, c, "the active controller")
    new = run.cluster.wait_controller(other_than=c)
    run.settle("after-kill", without(c), f"no leadership or ISR membership left on broker {c}")
    start(run, c)
    finish(run)
    return Outcome(
        f"kill -9 of the active controller (broker {c}); broker {new} took over; broker {c} restarted. "
        "A clean failover: every partition kept an in-sync leader."
    )


def zombie_controller(run: Run) -> Outcome:
    setup(run)
    c = controller(run)
    timeout = run.cluster.broker_settings(run.cluster.nodes[c])["zookeeper.session.timeout.ms"]
    run.act("SIGSTOP", c, f"the active controller, paused past zookeeper.session.timeout.ms={timeout}")
    run.cluster.pause(c)
    new = run.cluster.wait_controller(other_than=c, timeout=90)
    run.settle("after-expiry", without(c), f"no leadership or ISR membership left on broker {c}")
    run.act("SIGCONT", c, "the old controller resumes (its ZooKeeper session has expired)")
    run.cluster.resume(c)
    run.cluster.wait_registered(c)
    finish(run)
    return Outcome(
        f"SIGSTOP of the active controller (broker {c}) past the ZooKeeper session timeout; broker "
        f"{new} became controller; SIGCONT resumed broker {c}, a deposed controller until it resigned."
    )


def follower_pause(run: Run) -> Outcome:
    setup(run)
    c = controller(run)
    f = other_brokers(run, c)[0]
    lag = run.cluster.broker_settings(run.cluster.nodes[f])["replica.lag.time.max.ms"]
    settings = run.cluster.broker_settings(run.cluster.nodes[f])
    session = int(settings.get("zookeeper.session.timeout.ms") or settings["broker.session.timeout.ms"]) / 1000

    def shrunk(parsed: dict) -> bool:
        followed = [p for p in range(3) if state(parsed, EVENTS, p)["leader"] != f]
        return all(f not in state(parsed, EVENTS, p)["isr"] for p in followed)

    paused_at = time.monotonic()
    run.act("SIGSTOP", f, f"a follower, paused past replica.lag.time.max.ms={lag} (not past the session timeout)")
    run.cluster.pause(f)
    run.settle("after-pause", shrunk, f"broker {f} out of the ISR of the partitions it follows", timeout=session / 2)
    paused_for = time.monotonic() - paused_at
    if paused_for >= session - 3:  # the broker would be declared dead: not the incident this scenario is
        raise LabError(f"broker {f} stayed paused {paused_for:.0f} s, too close to the {session:.0f} s session timeout")
    run.act("SIGCONT", f, f"the follower resumes after {paused_for:.1f} s")
    run.cluster.resume(f)
    finish(run)
    return Outcome(
        f"SIGSTOP of follower broker {f} for {paused_for:.0f} s (longer than replica.lag.time.max.ms, "
        "shorter than the session timeout): the leaders shrank their ISR and expanded it when it caught up."
    )


def _unclean_brokers(run: Run) -> tuple[int, int]:
    """Two brokers, neither the active controller, whose loss keeps a controller (and a KRaft quorum)."""
    c = controller(run)
    if run.cluster.mode == KRAFT:
        voters = [n for n in sorted(run.cluster.nodes) if run.cluster.nodes[n].voter and n != c]
        extra = [n for n in sorted(run.cluster.nodes) if not run.cluster.nodes[n].voter]
        return voters[0], extra[0]  # leader on a voter; follower a broker-only node
    others = other_brokers(run, c)
    return others[0], others[1]


def unclean_election(run: Run) -> Outcome:
    """The leader and follower of RF-2 ``fragile`` die follower-first; the follower comes back alone
    and, with unclean.leader.election.enable=true, is elected from outside the ISR."""
    run.cluster.wait_controller()
    leader, follower = _unclean_brokers(run)
    setup(run, fragile=[leader, follower], fragile_configs={"unclean.leader.election.enable": "true"})
    kill(run, follower, f"follower of {FRAGILE}-0")
    run.settle(
        "after-follower-kill",
        lambda p: state(p, FRAGILE, 0)["isr"] == [leader],
        f"ISR of {FRAGILE}-0 down to [{leader}]",
    )
    bounded_produce(run, FRAGILE, 2000, "1", f"while the ISR of {FRAGILE}-0 is [{leader}]")
    kill(run, leader, f"leader of {FRAGILE}-0, its last ISR member")
    run.settle("after-leader-kill", lambda p: state(p, FRAGILE, 0)["leader"] is None, f"{FRAGILE}-0 offline")
    isr_before = last_state(run, FRAGILE, 0)["isr"]
    start(run, follower)
    run.settle(
        "after-unclean-election",
        lambda p: state(p, FRAGILE, 0)["leader"] == follower,
        f"broker {follower} elected leader of {FRAGILE}-0",
    )
    start(run, leader)
    finish(run)
    return Outcome(
        f"{FRAGILE}-0 (replicas [{leader}, {follower}], unclean.leader.election.enable=true): follower "
        f"{follower} killed, 2000 records written with acks=1 to leader {leader} alone, leader killed, "
        f"follower restarted: Kafka elected it from outside the ISR {isr_before} (unclean), losing those "
        "records.",
        must=[
            expect(
                "unclean_election",
                FRAGILE,
                0,
                f"describe: leader {follower} after the ISR was {isr_before} (snapshot after-leader-kill)",
            )
        ],
    )


def unclean_election_tool(run: Run) -> Outcome:
    """As ``unclean-election`` with unclean elections disabled: the partition stays offline with a live
    replica until ``kafka-leader-election --election-type UNCLEAN`` elects it."""
    run.cluster.wait_controller()
    leader, follower = _unclean_brokers(run)
    setup(run, fragile=[leader, follower])
    kill(run, follower, f"follower of {FRAGILE}-0")
    run.settle(
        "after-follower-kill",
        lambda p: state(p, FRAGILE, 0)["isr"] == [leader],
        f"ISR of {FRAGILE}-0 down to [{leader}]",
    )
    bounded_produce(run, FRAGILE, 2000, "1", f"while the ISR of {FRAGILE}-0 is [{leader}]")
    kill(run, leader, f"leader of {FRAGILE}-0, its last ISR member")
    run.settle("after-leader-kill", lambda p: state(p, FRAGILE, 0)["leader"] is None, f"{FRAGILE}-0 offline")
    isr_before = last_state(run, FRAGILE, 0)["isr"]
    start(run, follower)
    time.sleep(5)  # let the controller see the broker and try (and fail) a clean election
    run.settle(
        "after-restart",
        lambda p: state(p, FRAGILE, 0)["leader"] is None,
        f"{FRAGILE}-0 still offline with broker {follower} alive",
    )
    run.act("kafka-leader-election", None, f"--election-type UNCLEAN --topic {FRAGILE} --partition 0")
    run.tools.elect("UNCLEAN", FRAGILE, 0)
    run.settle(
        "after-unclean-election",
        lambda p: state(p, FRAGILE, 0)["leader"] == follower,
        f"broker {follower} elected leader of {FRAGILE}-0",
    )
    start(run, leader)
    finish(run)
    return Outcome(
        f"{FRAGILE}-0 (replicas [{leader}, {follower}], unclean elections disabled): follower killed, records written "
        f"to the leader alone, leader killed, follower restarted: the partition stayed offline with a live replica "
        f"until kafka-leader-election --election-type UNCLEAN elected broker {follower} from outside the ISR "
        f"{isr_before}.",
        must=[
            expect(
                "offline_with_live_replicas",
                FRAGILE,
                0,
                f"describe after-restart: no leader while replica {follower} was running",
            ),
            expect("unclean_election", FRAGILE, 0, f"describe: leader {follower} after the ISR was {isr_before}"),
        ],
    )


def controlled_shutdown(run: Run) -> Outcome:
    setup(run)
    c = controller(run)
    b = other_brokers(run, c)[0]
    run.act("SIGTERM", b, "controlled shutdown (controlled.shutdown.enable=true, the default)")
    clean = run.cluster.controlled_shutdown(b)
    if not clean:
        raise LabError(f"broker {b} did not finish its controlled shutdown in time")
    run.settle("after-shutdown", without(b), f"no leadership or ISR membership left on broker {b}")
    start(run, b)
    finish(run)
    return Outcome(
        f"controlled shutdown (SIGTERM) of broker {b} and its restart: a clean operation, nothing to report above info."
    )


def preferred_election(run: Run) -> Outcome:
    setup(run)
    c = controller(run)
    before = run.last["topics"][EVENTS]["partitions"]
    b, p = next((r["replicas"][0], int(k)) for k, r in sorted(before.items()) if r["replicas"][0] != c)
    run.act("SIGTERM", b, f"controlled shutdown of the preferred leader of {EVENTS}-{p}")
    run.cluster.controlled_shutdown(b)
    run.settle("after-shutdown", without(b), f"no leadership left on broker {b}")
    start(run, b)
    run.settle("after-restart", fully_in_sync(), "every partition in sync again")
    run.act("kafka-leader-election", None, f"--election-type PREFERRED --topic {EVENTS} --partition {p}")
    run.tools.elect("PREFERRED", EVENTS, p)
    run.settle(
        "end",
        all_of(fully_in_sync(), lambda q: state(q, EVENTS, p)["leader"] == b),
        f"broker {b} leads {EVENTS}-{p} again",
        stable_for=END_STABLE_FOR,
    )
    return Outcome(
        f"broker {b} (preferred leader of {EVENTS}-{p}) shut down and restarted, then "
        f"kafka-leader-election --election-type PREFERRED gave it back its leadership: a clean operation."
    )


def reassignment(run: Run) -> Outcome:
    setup(run)
    moves = {}
    for k, r in sorted(run.last["topics"][EVENTS]["partitions"].items()):
        if int(k) < 2:  # rotate the replica list of two partitions: the leader moves in one of them
            rotated = r["replicas"][1:] + r["replicas"][:1]
            moves[(EVENTS, int(k))] = rotated if int(k) == 0 else list(reversed(r["replicas"]))
    run.act(
        "kafka-reassign-partitions --execute", None, "; ".join(f"{t}-{p} -> {r}" for (t, p), r in sorted(moves.items()))
    )
    run.tools.reassign(moves)
    run.act("kafka-leader-election", None, f"--election-type PREFERRED --topic {EVENTS} --partition 0")
    run.tools.elect("PREFERRED", EVENTS, 0, check=False)

    def done(parsed: dict) -> bool:
        return fully_in_sync()(parsed) and all(state(parsed, t, p)["replicas"] == r for (t, p), r in moves.items())

    run.settle("end", done, "the new replica lists in place and in sync", stable_for=END_STABLE_FOR)
    return Outcome(
        "kafka-reassign-partitions reordered the replicas of two partitions (the preferred leader changes), "
        "then a preferred election moved one leader: a clean operation.",
        may=[expect("isr_not_subset_of_replicas", None, None, "transient during a reassignment (KAFKA-9672)")],
    )


def topic_deletion(run: Run) -> Outcome:
    setup(run)
    run.act("kafka-topics --create", None, "doomed: 2 partitions, replication factor 3")
    run.tools.create_topic("doomed", partitions=2, replication=3)
    run.settle("after-create", fully_in_sync(), "doomed in sync")
    c = controller(run)
    b = other_brokers(run, c)[0]
    kill(run, b, "a replica of every doomed partition")
    run.settle("after-kill", without(b), f"no leadership left on broker {b}")
    run.act("kafka-topics --delete", None, "doomed, while broker %d is down" % b)
    run.tools.delete_topic("doomed")
    time.sleep(5)
    run.settle("after-delete", lambda p: True, "the describe after the delete request")
    start(run, b)
    run.settle(
        "end",
        all_of(fully_in_sync(), lambda p: "doomed" not in p["topics"]),
        "doomed gone and every partition in sync",
        stable_for=END_STABLE_FOR,
    )
    return Outcome(
        f"topic doomed deleted while broker {b} (one of its replicas) was down; the deletion completed "
        f"once broker {b} came back: a clean operation."
    )


def broker_fencing(run: Run) -> Outcome:
    setup(run)
    c = controller(run)
    b = other_brokers(run, c)[0]
    timeout = run.cluster.broker_settings(run.cluster.nodes[b])["broker.session.timeout.ms"]
    run.act("SIGSTOP", b, f"a broker (and follower voter), paused past broker.session.timeout.ms={timeout}")
    run.cluster.pause(b)
    run.settle("after-fence", without(b), f"broker {b} fenced: no leadership or ISR membership left")
    run.act("SIGCONT", b, "the broker resumes, heartbeats and is unfenced")
    run.cluster.resume(b)
    finish(run)
    return Outcome(
        f"SIGSTOP of broker {b} past the broker session timeout: the active controller (node {c}) fenced "
        "it and moved its leaderships; SIGCONT: it was unfenced and caught up. A clean recovery."
    )


LAG = {"replica.lag.time.max.ms": "4000"}
SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "controller-kill", "kill -9 of the active controller, then its restart", (ZOOKEEPER, KRAFT), controller_kill
        ),
        Scenario(
            "zombie-controller",
            "SIGSTOP of the controller past the ZooKeeper session timeout, then SIGCONT",
            (ZOOKEEPER,),
            zombie_controller,
        ),
        Scenario(
            "follower-pause",
            "SIGSTOP of a follower past replica.lag.time.max.ms: ISR shrink and expand",
            (ZOOKEEPER, KRAFT),
            follower_pause,
            overrides=LAG,
            mode_overrides={
                ZOOKEEPER: {"zookeeper.session.timeout.ms": "40000"},
                KRAFT: {"broker.session.timeout.ms": "40000"},
            },
        ),
        Scenario(
            "unclean-election",
            "follower then leader killed, follower back alone: unclean election (enabled)",
            (ZOOKEEPER, KRAFT),
            unclean_election,
            broker_only=1,
            mode_overrides={KRAFT: {"unclean.leader.election.interval.ms": "2000"}},
        ),
        Scenario(
            "unclean-election-tool",
            "as unclean-election with it disabled: offline until kafka-leader-election --election-type UNCLEAN",
            (ZOOKEEPER, KRAFT),
            unclean_election_tool,
            broker_only=1,
            needs_election_tool=True,
        ),
        Scenario(
            "controlled-shutdown",
            "controlled shutdown (SIGTERM) of a broker and its restart (clean)",
            (ZOOKEEPER, KRAFT),
            controlled_shutdown,
        ),
        Scenario(
            "preferred-election",
            "a broker restarted, then kafka-leader-election --election-type PREFERRED",
            (ZOOKEEPER, KRAFT),
            preferred_election,
        ),
        Scenario(
            "reassignment",
            "kafka-reassign-partitions on two partitions, then a preferred election",
            (ZOOKEEPER, KRAFT),
            reassignment,
        ),
        Scenario(
            "topic-deletion",
            "a topic deleted while one of its replicas' brokers is down, then the broker back",
            (ZOOKEEPER, KRAFT),
            topic_deletion,
        ),
        Scenario(
            "broker-fencing",
            "KRaft: SIGSTOP of a broker past broker.session.timeout.ms (fenced), then SIGCONT",
            (KRAFT,),
            broker_fencing,
        ),
    )
}
