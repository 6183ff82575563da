"""The live lab tier (``pytest -m lab``): real Kafka clusters from Maven Central jars.

One short scenario per mode - a kill -9 of the active controller on ZooKeeper-mode and KRaft Kafka
3.9 - recorded end to end: jars resolved (or cached), a 3-broker cluster started with the stock
log4j file, the fault injected, describe snapshots taken, the incident folder cut and written.
Checked: truth.json well formed, the end snapshot in sync, the logs Kafka wrote reconciled line by
line. Every process started is gone afterwards.
"""

from __future__ import annotations

import shutil

import pytest

from kafka_forensics.lab import processes
from kafka_forensics.lab.describe import partitions
from kafka_forensics.lab.evaluate import evaluate
from kafka_forensics.lab.truth import validate

pytestmark = pytest.mark.lab


@pytest.fixture(autouse=True)
def _needs_java_and_maven():
    if shutil.which("mvn") is None or shutil.which("java") is None:
        pytest.skip("the lab needs java and mvn on PATH")
    yield
    assert processes.live() == [], "the lab left processes running"


@pytest.mark.parametrize("mode", ["zookeeper", "kraft"])
def test_controller_kill_is_recorded(tmp_path, mode):
    from kafka_forensics.lab.record import record

    rec = record(
        "controller-kill",
        "3.9",
        mode,
        tmp_path / "incident",
        consume=False,
        command=f"pytest -m lab (controller-kill, {mode})",
    )
    truth = rec.truth
    assert validate(truth) == []
    assert [a["action"] for a in truth["actions"]][-2:] == ["kill -9", "start"]
    killed = truth["actions"][-2]["broker"]
    after_kill = next(s for s in truth["describe"] if s["label"] == "after-kill")
    assert all(p["leader"] != killed for _, _, p in partitions({"topics": after_kill["topics"]}))
    end = truth["describe"][-1]
    assert all(
        p["leader"] is not None and set(p["isr"]) == set(p["replicas"])
        for _, _, p in partitions({"topics": end["topics"]})
    )
    names = {f.split("/")[-1].split(".log")[0] for f in truth["files"]}
    assert {"state-change", "controller", "server"} <= names
    if mode == "kraft":
        assert any(f.startswith("metadata/__cluster_metadata-0/") for f in truth["files"])
    ev = evaluate(rec.folder)
    assert ev.unreconciled == [] and ev.lines > 500
