"""Kafka's own command-line tools, run from the release's jars (what ``bin/kafka-*.sh`` would run).

Tool classes moved between packages across releases (``kafka.admin.TopicCommand`` became
``org.apache.kafka.tools.TopicCommand``...), so each is looked up among its known names in the
jars of the release. Clients are Kafka's Java ones: ``ProducerPerformance`` (kafka-producer-perf-
test) and ``ConsoleConsumer``. Tools log WARN and above to stderr only, so they never write into
the brokers' logs.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from kafka_forensics.core.errors import LabError

from . import processes
from .cluster import TOOL_OPTS, Cluster
from .releases import java_binary

TOPIC_COMMAND = ("org.apache.kafka.tools.TopicCommand", "kafka.admin.TopicCommand")
LEADER_ELECTION = ("org.apache.kafka.tools.LeaderElectionCommand", "kafka.admin.LeaderElectionCommand")
PREFERRED_ELECTION_OLD = ("kafka.admin.PreferredReplicaLeaderElectionCommand",)
REASSIGN = ("org.apache.kafka.tools.reassign.ReassignPartitionsCommand", "kafka.admin.ReassignPartitionsCommand")
DUMP_LOG = ("org.apache.kafka.tools.DumpLogSegments", "kafka.tools.DumpLogSegments")
PRODUCER_PERF = ("org.apache.kafka.tools.ProducerPerformance",)
ROUND_ROBIN = "org.apache.kafka.clients.producer.RoundRobinPartitioner"
CONSOLE_CONSUMER = ("org.apache.kafka.tools.consumer.ConsoleConsumer", "kafka.tools.ConsoleConsumer")

_TOOLS_LOG4J = (
    "log4j.rootLogger=WARN, stderr\nlog4j.appender.stderr=org.apache.log4j.ConsoleAppender\n"
    "log4j.appender.stderr.layout=org.apache.log4j.PatternLayout\n"
    "log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n\nlog4j.appender.stderr.Target=System.err\n"
)
_TOOLS_LOG4J2 = (
    "Configuration:\n  Appenders:\n    Console:\n      name: STDERR\n      target: SYSTEM_ERR\n"
    '      PatternLayout:\n        pattern: "[%d] %p %m (%c)%n"\n  Loggers:\n    Root:\n      level: WARN\n'
    "      AppenderRef:\n        - ref: STDERR\n"
)


@dataclass(frozen=True)
class ToolRun:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str


class Tools:
    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.jars = cluster.jars
        self.release = cluster.target.release
        cfg = self.cluster.root / "config"
        cfg.mkdir(parents=True, exist_ok=True)
        if cluster.log4j.flavor == "log4j2":
            path = cfg / "tools-log4j2.yaml"
            path.write_text(_TOOLS_LOG4J2)
            self.log_opt = f"-Dlog4j2.configurationFile={path}"
        else:
            path = cfg / "tools-log4j.properties"
            path.write_text(_TOOLS_LOG4J)
            self.log_opt = f"-Dlog4j.configuration=file:{path}"

    def command(self, candidates: Sequence[str], args: Sequence[str]) -> list[str]:
        main = self.jars.first_class(candidates)
        return [java_binary(), *TOOL_OPTS, self.log_opt, "-cp", self.jars.classpath, main, *args]

    def run(self, candidates: Sequence[str], args: Sequence[str], timeout: float = 120, check: bool = True) -> ToolRun:
        cmd = self.command(candidates, args)
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as err:
            raise LabError(f"{cmd[-len(args) - 1]} timed out after {timeout:.0f} s") from err
        run = ToolRun(list(args), done.returncode, done.stdout, done.stderr)
        if check and done.returncode != 0:
            raise LabError(
                f"{cmd[-len(args) - 1]} {' '.join(args)} exited {done.returncode}: "
                f"{(done.stderr or done.stdout).strip()[-600:]}"
            )
        return run

    # ---- connection options ------------------------------------------------------------------
    def _where(self, via_zookeeper: bool) -> list[str]:
        if via_zookeeper:
            return ["--zookeeper", f"127.0.0.1:{self.cluster.zk_port}"]
        return ["--bootstrap-server", self._live_bootstrap(), "--command-config", str(self.admin_config)]

    @property
    def admin_config(self) -> Path:
        """Short admin-client timeouts: a stopped broker still in the metadata must not hold a tool for
        minutes (the least-loaded node the client picks may be the paused one); the caller asks again."""
        path = self.cluster.root / "config" / "admin.properties"
        if not path.is_file():
            path.write_text("request.timeout.ms=5000\ndefault.api.timeout.ms=10000\n")
        return path

    def _live_bootstrap(self) -> str:
        live = [
            n
            for n in self.cluster.nodes.values()
            if self.cluster.running(n.node_id) and not (n.child and n.child.paused)
        ]
        return ",".join(f"127.0.0.1:{n.port}" for n in live) or self.cluster.bootstrap

    # ---- topics --------------------------------------------------------------------------------
    def create_topic(
        self,
        topic: str,
        partitions: int = 1,
        replication: int = 3,
        configs: Optional[dict] = None,
        assignment: Optional[list[list[int]]] = None,
    ) -> None:
        args = [*self._where(self.release.topics_via_zookeeper), "--create", "--topic", topic]
        if assignment:
            args += ["--replica-assignment", ",".join(":".join(str(b) for b in r) for r in assignment)]
        else:
            args += ["--partitions", str(partitions), "--replication-factor", str(replication)]
        for key, value in (configs or {}).items():
            args += ["--config", f"{key}={value}"]
        self.run(TOPIC_COMMAND, args)

    def delete_topic(self, topic: str) -> ToolRun:
        return self.run(TOPIC_COMMAND, [*self._where(self.release.topics_via_zookeeper), "--delete", "--topic", topic])

    def describe(self) -> str:
        """The text of ``kafka-topics --describe`` for every topic."""
        return self.run(
            TOPIC_COMMAND, [*self._where(self.release.topics_via_zookeeper), "--describe"], timeout=45
        ).stdout

    # ---- elections and reassignment -------------------------------------------------------------
    def elect(self, election_type: str, topic: str, partition: int, check: bool = True) -> ToolRun:
        """``kafka-leader-election --election-type PREFERRED|UNCLEAN`` (2.4+; preferred only before)."""
        if self.release.has_leader_election_tool:
            return self.run(
                LEADER_ELECTION,
                [
                    "--bootstrap-server",
                    self._live_bootstrap(),
                    "--election-type",
                    election_type,
                    "--topic",
                    topic,
                    "--partition",
                    str(partition),
                ],
                check=check,
            )
        if election_type.upper() != "PREFERRED":
            raise LabError(f"Kafka {self.release.line} has no tool for {election_type} elections (KIP-460 is 2.4)")
        plan = self.cluster.root / "config" / "preferred.json"
        plan.write_text(json.dumps({"partitions": [{"topic": topic, "partition": partition}]}))
        return self.run(PREFERRED_ELECTION_OLD, [*self._where(True), "--path-to-json-file", str(plan)], check=check)

    def elect_all_preferred(self) -> ToolRun:
        """``kafka-leader-election --election-type PREFERRED --all-topic-partitions`` (2.4+)."""
        return self.run(
            LEADER_ELECTION,
            ["--bootstrap-server", self._live_bootstrap(), "--election-type", "PREFERRED", "--all-topic-partitions"],
            check=False,
            timeout=300,
        )

    def reassign(self, moves: dict[tuple[str, int], list[int]], wait: float = 120) -> list[ToolRun]:
        plan = {
            "version": 1,
            "partitions": [{"topic": t, "partition": p, "replicas": r} for (t, p), r in sorted(moves.items())],
        }
        path = self.cluster.root / "config" / "reassignment.json"
        path.write_text(json.dumps(plan))
        where = self._where(self.release.reassign_via_zookeeper)
        runs = [self.run(REASSIGN, [*where, "--reassignment-json-file", str(path), "--execute"])]
        import time

        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            run = self.run(REASSIGN, [*where, "--reassignment-json-file", str(path), "--verify"], check=False)
            runs.append(run)
            if not re.search(r"in progress|still in progress", run.stdout, re.I) and run.returncode == 0:
                return runs
            time.sleep(2)
        raise LabError(f"reassignment not complete after {wait:.0f} s: {runs[-1].stdout.strip()[-400:]}")

    # ---- clients --------------------------------------------------------------------------------
    def producer(self, topic: str, records: int, per_second: int, out: Path, acks: str = "1") -> processes.Child:
        """kafka-producer-perf-test in the background (a steady stream while the scenario runs).

        Records go round-robin over the partitions where the client has that partitioner (2.4+), so
        that every leader's log end moves and a stopped follower falls out of sync."""
        props = [
            f"bootstrap.servers={self.cluster.bootstrap}",
            f"acks={acks}",
            "linger.ms=5",
            "request.timeout.ms=10000",
            "retries=2147483647",
        ]
        if self.jars.has_class(ROUND_ROBIN):
            props.append(f"partitioner.class={ROUND_ROBIN}")
        args = [
            "--topic",
            topic,
            "--num-records",
            str(records),
            "--record-size",
            "100",
            "--throughput",
            str(per_second),
            "--producer-props",
            *props,
        ]
        return processes.spawn(f"producer-{topic}", self.command(PRODUCER_PERF, args), out)

    def consume(self, topic: str, max_messages: int, timeout_ms: int = 15000) -> int:
        """Read a topic from the beginning with kafka-console-consumer; the number of messages read."""
        args = [
            "--bootstrap-server",
            self._live_bootstrap(),
            "--topic",
            topic,
            "--from-beginning",
            "--max-messages",
            str(max_messages),
            "--timeout-ms",
            str(timeout_ms),
        ]
        run = self.run(CONSOLE_CONSUMER, args, timeout=timeout_ms / 1000 + 90, check=False)
        m = re.search(r"Processed a total of (\d+) messages", run.stderr + run.stdout)
        return int(m.group(1)) if m else sum(1 for line in run.stdout.splitlines() if line.strip())

    # ---- KRaft metadata log -----------------------------------------------------------------------
    def dump_metadata(self, segment: Path) -> str:
        """``kafka-dump-log --cluster-metadata-decoder --files SEGMENT`` (the real tool's text)."""
        return self.run(DUMP_LOG, ["--cluster-metadata-decoder", "--files", str(segment)], timeout=180).stdout
