"""A real 3-broker Kafka cluster on loopback: ZooKeeper mode with a real ZooKeeper, or KRaft.

Each broker gets free ports, its own home (``broker-N/``) with ``logs/`` (the stock log4j file
names) and ``data/``, and is started the way ``bin/kafka-server-start.sh`` starts it:
``java ... -Dkafka.logs.dir=... -Dlog4j.configuration=... kafka.Kafka server.properties``. KRaft
nodes are combined (``process.roles=broker,controller``) so three JVMs make both the quorum and
the brokers on a 2-core machine. Every config value the lab sets beyond Kafka's defaults is in
``Cluster.configs`` (it goes into truth.json).
"""

from __future__ import annotations

import base64
import json
import re
import socket
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from kafka_forensics.core.errors import LabError

from . import log4j, processes
from .jars import Jars
from .releases import KRAFT, ZOOKEEPER, Target, java_binary

# Shorter than Kafka's defaults so that a scenario takes a minute, not five (recorded in truth.json).
ZK_TIMEOUTS = {"zookeeper.session.timeout.ms": "6000", "replica.lag.time.max.ms": "5000"}
KRAFT_TIMEOUTS = {
    "broker.session.timeout.ms": "6000",
    "broker.heartbeat.interval.ms": "1000",
    "replica.lag.time.max.ms": "5000",
}
# Internal topics small, so their partitions do not bury the incident in the logs.
COMMON = {
    "num.partitions": "1",
    "offsets.topic.num.partitions": "3",
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "group.initial.rebalance.delay.ms": "0",
    "delete.topic.enable": "true",
}
JVM_HEAP = "-Xmx320m"
# bin/kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS (G1) with a small heap; UTC so that the logged
# local time is the UTC the parser assumes by default.
JVM_OPTS = (
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-Djava.awt.headless=true",
    "-Duser.timezone=UTC",
)
TOOL_OPTS = ("-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Duser.timezone=UTC")


def free_ports(n: int) -> list[int]:
    """``n`` distinct ports the kernel says are free now (bound together, then released)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def wait_for(what: str, check: Callable[[], bool], timeout: float, every: float = 0.5) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(every)
    raise LabError(f"timed out after {timeout:.0f} s waiting for {what}")


def four_letter(port: int, word: str, timeout: float = 3.0) -> str:
    """A ZooKeeper four-letter command (``dump``, ``ruok``...) over a plain socket."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(word.encode())
            chunks = []
            while True:
                data = s.recv(65536)
                if not data:
                    break
                chunks.append(data)
        return b"".join(chunks).decode("utf-8", "replace")
    except OSError:
        return ""


def ephemerals(dump: str) -> dict[str, list[str]]:
    """ZooKeeper ``dump``: session -> its ephemeral znodes."""
    out: dict[str, list[str]] = {}
    session = None
    for line in dump.splitlines():
        if re.match(r"^0x[0-9a-f]+:?\s*$", line.strip()):
            session = line.strip().rstrip(":")
            out[session] = []
        elif session and line.strip().startswith("/"):
            out[session].append(line.strip())
    return out


@dataclass
class Node:
    node_id: int
    port: int
    controller_port: Optional[int]
    home: Path
    child: Optional[processes.Child] = None
    starts: int = 0
    voter: bool = False  # KRaft: also a controller (process.roles=broker,controller)

    @property
    def logs(self) -> Path:
        return self.home / "logs"

    @property
    def data(self) -> Path:
        return self.home / "data"

    @property
    def config(self) -> Path:
        return self.home / "server.properties"


@dataclass
class Cluster:
    target: Target
    jars: Jars
    root: Path
    brokers: int = 3
    broker_only: int = 0  # KRaft: extra nodes with process.roles=broker (ids after the combined ones)
    overrides: dict = field(default_factory=dict)
    trace: bool = False
    nodes: dict[int, Node] = field(default_factory=dict)
    zk_port: Optional[int] = None
    zk: Optional[processes.Child] = None
    cluster_id: str = ""

    # ---- configuration -------------------------------------------------------------------
    @property
    def mode(self) -> str:
        return self.target.mode

    @property
    def log4j(self) -> log4j.StockConfig:
        cfg = self.target.release.log4j
        return cfg.with_trace() if self.trace else cfg

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{n.port}" for n in self.nodes.values())

    def broker_settings(self, node: Node) -> dict[str, str]:
        if self.mode == ZOOKEEPER:
            base = {
                "broker.id": str(node.node_id),
                "listeners": f"PLAINTEXT://127.0.0.1:{node.port}",
                "zookeeper.connect": f"127.0.0.1:{self.zk_port}",
                **ZK_TIMEOUTS,
            }
        else:
            voters = ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in self.nodes.values() if n.voter)
            listeners = f"PLAINTEXT://127.0.0.1:{node.port}"
            if node.voter:
                listeners += f",CONTROLLER://127.0.0.1:{node.controller_port}"
            base = {
                "process.roles": "broker,controller" if node.voter else "broker",
                "node.id": str(node.node_id),
                "controller.quorum.voters": voters,
                "listeners": listeners,
                "advertised.listeners": f"PLAINTEXT://127.0.0.1:{node.port}",
                "controller.listener.names": "CONTROLLER",
                "inter.broker.listener.name": "PLAINTEXT",
                "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                **KRAFT_TIMEOUTS,
            }
        return {**base, "log.dirs": str(node.data), **COMMON, **{k: str(v) for k, v in self.overrides.items()}}

    @property
    def configs(self) -> dict:
        """What truth.json records: every broker setting with the lab's ports and paths generalised."""
        shown: dict[str, dict] = {}
        for node in self.nodes.values():
            settings = {}
            for key, value in sorted(self.broker_settings(node).items()):
                if key == "log.dirs":
                    value = f"broker-{node.node_id}/data"
                settings[key] = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", value)
            shown[f"broker-{node.node_id}"] = settings
        topology = f"{self.brokers} brokers + 1 standalone ZooKeeper"
        if self.mode == KRAFT:
            topology = f"{self.brokers} combined broker+controller nodes" + (
                f" + {self.broker_only} broker-only node(s)" if self.broker_only else ""
            )
        return {
            "brokers": shown,
            "log4j": f"{self.log4j.path}@{self.log4j.tag} (lab/log4j.py)",
            "state_change_logger": self.log4j.level_of(log4j.STATE_CHANGE_LOGGER),
            "jvm": [JVM_HEAP, *JVM_OPTS],
            "topology": topology,
        }

    # ---- lifecycle -------------------------------------------------------------------------
    def prepare(self) -> None:
        extra = self.broker_only if self.mode == KRAFT else 0
        ports = free_ports(2 * self.brokers + extra + 1)
        self.zk_port = ports.pop() if self.mode == ZOOKEEPER else None
        for i in range(1, self.brokers + extra + 1):
            voter = self.mode == KRAFT and i <= self.brokers
            self.nodes[i] = Node(i, ports.pop(), ports.pop() if voter else None, self.root / f"broker-{i}", voter=voter)
        name, text = log4j.render(self.log4j)
        (self.root / "config").mkdir(parents=True, exist_ok=True)
        (self.root / "config" / name).write_text(text)
        for node in self.nodes.values():
            node.logs.mkdir(parents=True, exist_ok=True)
            node.data.mkdir(parents=True, exist_ok=True)
            lines = [f"{k}={v}" for k, v in sorted(self.broker_settings(node).items())]
            node.config.write_text("# written by kafka-forensics lab (cluster.py)\n" + "\n".join(lines) + "\n")
        if self.mode == KRAFT:
            self.cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
            for node in self.nodes.values():
                self._format(node)

    def _java(self, main: str, args: list[str], logs: Path, heap: str = JVM_HEAP) -> list[str]:
        cfg_name, _ = log4j.render(self.log4j)
        return [
            java_binary(),
            heap,
            *JVM_OPTS,
            f"-Dkafka.logs.dir={logs}",
            log4j.jvm_option(self.log4j, str(self.root / "config" / cfg_name)),
            "-cp",
            self.jars.classpath,
            main,
            *args,
        ]

    def _format(self, node: Node) -> None:
        """``kafka-storage format``: KRaft log dirs need a cluster id and meta.properties first."""
        import subprocess

        args = ["format", "-t", self.cluster_id, "-c", str(node.config)]
        cmd = [java_binary(), *TOOL_OPTS, "-cp", self.jars.classpath, "kafka.tools.StorageTool", *args]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise LabError(f"kafka-storage format failed on node {node.node_id}: {done.stdout}{done.stderr}")

    def start(self, timeout: float = 120) -> None:
        self.prepare()
        if self.mode == ZOOKEEPER:
            self._start_zookeeper()
        for node in self.nodes.values():
            self.start_node(node.node_id, wait=False)
        for node in self.nodes.values():
            self.wait_registered(node.node_id, timeout)

    def _start_zookeeper(self) -> None:
        home = self.root / "zookeeper"
        (home / "data").mkdir(parents=True, exist_ok=True)
        # config/zookeeper.properties of the release (dataDir, clientPort, maxClientCnxns=0,
        # admin.enableServer=false) plus the four-letter words the lab reads the controller with.
        props = {
            "dataDir": str(home / "data"),
            "clientPort": str(self.zk_port),
            "maxClientCnxns": "0",
            "admin.enableServer": "false",
            "4lw.commands.whitelist": "*",
        }
        (home / "zookeeper.properties").write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        cmd = self._java(
            "org.apache.zookeeper.server.quorum.QuorumPeerMain",
            [str(home / "zookeeper.properties")],
            home / "logs",
            heap="-Xmx128m",
        )
        self.zk = processes.spawn("zookeeper", cmd, home / "logs" / "zookeeper.out")
        wait_for("ZooKeeper to answer", lambda: four_letter(self.zk_port, "ruok") == "imok", 60)

    def start_node(self, node_id: int, wait: bool = True, timeout: float = 120) -> None:
        node = self.nodes[node_id]
        if node.child is not None and node.child.alive():
            raise LabError(f"broker {node_id} is already running")
        cmd = self._java("kafka.Kafka", [str(node.config)], node.logs)
        node.child = processes.spawn(f"broker-{node_id}", cmd, node.logs / "kafkaServer.out")
        node.starts += 1
        if wait:
            self.wait_registered(node_id, timeout)

    def kill_all(self) -> None:
        """Teardown once the incident is recorded: kill -9 every JVM (brokers first, ZooKeeper last).
        Whatever Kafka logs after the end snapshot is cut from the incident anyway."""
        for node in self.nodes.values():
            if node.child is not None and node.child.alive():
                node.child.kill()
        if self.zk is not None and self.zk.alive():
            self.zk.kill()

    def stop(self) -> None:
        """Brokers first (SIGTERM, SIGKILL after 30 s), ZooKeeper last; never leaves a JVM behind."""
        for node in self.nodes.values():
            if node.child is not None and node.child.alive():
                node.child.terminate(30)
        if self.zk is not None and self.zk.alive():
            self.zk.terminate(10)

    # ---- faults ------------------------------------------------------------------------------
    def child(self, node_id: int) -> processes.Child:
        node = self.nodes[node_id]
        if node.child is None or not node.child.alive():
            raise LabError(f"broker {node_id} is not running")
        return node.child

    def kill(self, node_id: int) -> None:
        self.child(node_id).kill()

    def controlled_shutdown(self, node_id: int, timeout: float = 60) -> bool:
        return self.child(node_id).terminate(timeout)

    def pause(self, node_id: int) -> None:
        self.child(node_id).pause()

    def resume(self, node_id: int) -> None:
        self.child(node_id).resume()

    def running(self, node_id: int) -> bool:
        child = self.nodes[node_id].child
        return child is not None and child.alive()

    # ---- what the cluster says ---------------------------------------------------------------
    def registered(self) -> set[int]:
        """ZooKeeper: brokers with a /brokers/ids znode. KRaft: nodes whose last start completed."""
        if self.mode == ZOOKEEPER:
            found = set()
            for paths in ephemerals(four_letter(self.zk_port, "dump")).values():
                for p in paths:
                    m = re.fullmatch(r"/brokers/ids/(\d+)", p)
                    if m:
                        found.add(int(m.group(1)))
            return found
        return {n.node_id for n in self.nodes.values() if self.running(n.node_id) and self._kraft_started(n)}

    def _kraft_started(self, node: Node) -> bool:
        text = "".join(_read(p) for p in node.logs.glob("server.log*"))  # hourly rotation
        return text.count("Kafka Server started") >= node.starts

    def wait_registered(self, node_id: int, timeout: float = 120) -> None:
        def check() -> bool:
            if not self.running(node_id):
                out = self.nodes[node_id].logs / "kafkaServer.out"
                raise LabError(f"broker {node_id} exited while starting: see {out}")
            return node_id in self.registered()

        wait_for(f"broker {node_id} to register", check, timeout)

    def controller(self) -> Optional[int]:
        """The active controller: the broker owning /controller (ZooKeeper) or the Raft leader (KRaft)."""
        if self.mode == ZOOKEEPER:
            for paths in ephemerals(four_letter(self.zk_port, "dump")).values():
                if "/controller" in paths:
                    ids = [int(p.rsplit("/", 1)[1]) for p in paths if p.startswith("/brokers/ids/")]
                    return ids[0] if ids else None
            return None
        best: tuple[int, Optional[int]] = (-1, None)
        for node in self.nodes.values():
            if not node.voter or not self.running(node.node_id) or (node.child and node.child.paused):
                continue
            state = quorum_state(node)
            if state and state.get("leaderId", -1) >= 0 and state.get("leaderEpoch", -1) > best[0]:
                best = (state["leaderEpoch"], state["leaderId"])
        return best[1]

    def wait_controller(self, timeout: float = 60, other_than: Optional[int] = None) -> int:
        found: list[int] = []

        def check() -> bool:
            c = self.controller()
            if c is not None and c != other_than:
                found.append(c)
                return True
            return False

        wait_for("a controller" + (f" other than {other_than}" if other_than else ""), check, timeout)
        return found[-1]


def quorum_state(node: Node) -> Optional[dict]:
    """KRaft: the node's ``__cluster_metadata-0/quorum-state`` (leader id and epoch it knows)."""
    path = node.data / "__cluster_metadata-0" / "quorum-state"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
