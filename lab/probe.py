"""``lab probe``: does a release run on this machine? Start a cluster, create a topic, describe, stop.

The answer is one line: the release, its mode, how long the cluster took to start and the describe
Kafka printed - or the exception the broker died with (from its ``kafkaServer.out``), which is how
lab/README.md's table of releases was measured.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Optional

from kafka_forensics.core.errors import LabError

from .cluster import Cluster
from .jars import resolve_jars
from .releases import resolve
from .tools import Tools

_FATAL = re.compile(r"^(?:\S*(?:Exception|Error)\b.*)$", re.M)


def probe(kafka: str, mode: Optional[str]) -> str:
    target = resolve(kafka, mode)
    jars = resolve_jars(target)
    work = Path(tempfile.mkdtemp(prefix=f"kf-lab-probe-{target.name}-"))
    cluster = Cluster(target, jars, work)
    started = time.monotonic()
    try:
        cluster.start(timeout=90)
        took = time.monotonic() - started
        tools = Tools(cluster)
        tools.create_topic("probe", partitions=1, replication=3)
        time.sleep(2)
        return f"Kafka {target.version} ({target.mode}) ran: 3 brokers up in {took:.0f} s\n{tools.describe()}"
    except LabError as err:
        causes = []
        for node in cluster.nodes.values():
            out = node.logs / "kafkaServer.out"
            if out.is_file():
                causes += _FATAL.findall(out.read_text(errors="replace"))
        first = causes[0] if causes else str(err)
        return f"Kafka {target.version} ({target.mode}) did not run: {first}"
    finally:
        cluster.kill_all()
        shutil.rmtree(work, ignore_errors=True)
