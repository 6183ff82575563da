"""``lab record``: run one scenario on a real cluster and write the incident folder.

The folder holds ``broker-N/{state-change,controller,server}.log.gz``, the
KRaft metadata log dumped by Kafka's own ``kafka-dump-log --cluster-metadata-decoder``
(``metadata/__cluster_metadata-0/*.log.dump``), ``describe/NN-label.txt``, ``truth.json`` and a
``README.md`` saying how it was recorded. The cluster's working directory (data, every log file,
client output) is kept only with ``keep_work``.
"""

from __future__ import annotations

import datetime as dt
import json
import platform
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from kafka_forensics.core.errors import LabError

from . import oracle
from .cluster import Cluster
from .curate import curate_broker, cut_metadata_dump, write_text
from .describe import partitions
from .jars import resolve_jars
from .releases import KRAFT, ZOOKEEPER, Target, java_binary, resolve
from .run import Run, iso_ms
from .scenarios import EVENTS, FRAGILE, SCENARIOS, Outcome, Scenario
from .truth import FORMAT, complete_must_not, expect, validate, write_truth


@dataclass
class Recorded:
    folder: Path
    truth: dict
    seconds: float
    jar_seconds: float
    lines: int


def folder_name(target: Target, scenario: str, trace: bool) -> str:
    mode = "zk" if target.mode == "zookeeper" else "kraft"
    line = target.release.line
    return f"real-{line}-{mode}-{scenario}" + ("-trace" if trace else "")


def java_version() -> str:
    done = subprocess.run([java_binary(), "-version"], capture_output=True, text=True)
    return (done.stderr or done.stdout).splitlines()[0].strip() if (done.stderr or done.stdout) else "unknown"


def record(
    scenario_name: str,
    kafka: str,
    mode: Optional[str],
    out: Path,
    trace: bool = False,
    keep_work: bool = False,
    consume: bool = True,
    command: str = "",
) -> Recorded:
    scenario = SCENARIOS.get(scenario_name)
    if scenario is None:
        raise LabError(f"unknown scenario {scenario_name!r}; known: {', '.join(SCENARIOS)}")
    target = resolve(kafka, mode)
    if target.mode not in scenario.modes:
        raise LabError(f"scenario {scenario_name} runs in {' or '.join(scenario.modes)} mode, not {target.mode}")
    if scenario.needs_election_tool and not target.release.has_leader_election_tool:
        raise LabError(f"scenario {scenario_name} needs kafka-leader-election (Kafka 2.4+)")
    started = time.monotonic()
    jars = resolve_jars(target)
    work = Path(tempfile.mkdtemp(prefix=f"kf-lab-{target.name}-"))
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    cluster = Cluster(
        target,
        jars,
        work,
        overrides=scenario.settings(target.mode),
        trace=trace,
        broker_only=scenario.broker_only if target.mode == KRAFT else 0,
    )
    from .tools import Tools

    run: Optional[Run] = None
    done = False
    try:
        cluster.start()
        run = Run(cluster, Tools(cluster), out)
        outcome = scenario.script(run)
        for child in run.background:
            child.kill()
        traffic = _traffic(run, consume)
        end_ms = run.last["at_ms"]
        dump = _metadata_dump(run, end_ms) if target.mode == KRAFT else None
        cluster.kill_all()
        truth = _write(run, scenario, outcome, target, trace, end_ms, dump, traffic, command)
        done = True
    finally:
        if run is not None:
            for child in run.background:
                if child.alive():
                    child.kill()
        cluster.kill_all()
        if keep_work:
            shutil.copytree(work, out / "work", dirs_exist_ok=True)
        elif not done:
            shutil.rmtree(out, ignore_errors=True)  # no half-written incident folder
        shutil.rmtree(work, ignore_errors=True)
    lines = sum(_count_lines(out / f) for f in truth["files"])
    return Recorded(out, truth, time.monotonic() - started, jars.seconds, lines)


def _traffic(run: Run, consume: bool) -> dict:
    """What the clients saw: the producers' last progress lines, and (optionally) what a consumer reads back."""
    out: dict = {"producers": {}}
    for path in sorted((run.out / "clients").glob("*.out")):
        lines = [ln for ln in path.read_text(errors="replace").splitlines() if "records sent" in ln]
        out["producers"][path.stem] = lines[-1] if lines else None
    if consume:
        topics = [t for t in (EVENTS, FRAGILE) if t in run.last["topics"]]
        out["consumed"] = {t: run.tools.consume(t, 10_000_000, timeout_ms=8000) for t in topics}
    shutil.rmtree(run.out / "clients", ignore_errors=True)
    return out


def _metadata_dump(run: Run, end_ms: int) -> Optional[tuple[str, str]]:
    """The active controller's ``__cluster_metadata`` segment(s), dumped by Kafka's own tool."""
    node = run.cluster.nodes[run.cluster.controller() or 1]
    segments = sorted((node.data / "__cluster_metadata-0").glob("*.log"))
    if not segments:
        return None
    texts = [run.tools.dump_metadata(seg) for seg in segments]
    return segments[-1].name + ".dump", cut_metadata_dump("".join(texts), end_ms)


def _write(
    run: Run,
    scenario: Scenario,
    outcome: Outcome,
    target: Target,
    trace: bool,
    end_ms: int,
    dump: Optional[tuple[str, str]],
    traffic: dict,
    command: str,
) -> dict:
    kafka_says(run, outcome, end_ms)
    files: list[str] = []
    renamed: dict[str, str] = {}
    for node_id, node in sorted(run.cluster.nodes.items()):
        names = curate_broker(node.logs, run.out / f"broker-{node_id}", end_ms)
        for original, written in names.items():
            renamed[f"broker-{node_id}/{original}"] = f"broker-{node_id}/{written}"
            files.append(f"broker-{node_id}/{written}")
    if dump is not None:
        name, text = dump
        path = write_text(run.out / "metadata" / "__cluster_metadata-0" / name, text.splitlines(), compress=True)
        files.append(str(path.relative_to(run.out)))
    evidence = []
    for ref in outcome.evidence:
        path, line = ref.rsplit(":", 1)
        evidence.append(f"{renamed.get(path, path)}:{line}")
    all_partitions = {(t, p) for snap in run.snapshots for t, p, _ in partitions({"topics": snap["topics"]})}
    truth = {
        "format": FORMAT,
        "scenario": scenario.name,
        "description": outcome.description,
        "kafka_version": target.version,
        "mode": target.mode,
        "trace": trace,
        "recorded": {
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d"),
            "command": command,
            "java": java_version(),
            "host": f"{platform.system()} {platform.machine()}",
            "traffic": traffic,
        },
        "configs": run.cluster.configs,
        "actions": run.actions,
        "describe": run.snapshots,
        "window": {
            "start_ms": run.actions[0]["at_ms"] if run.actions else end_ms,
            "end_ms": end_ms,
            "end": iso_ms(end_ms),
            "note": "logs kept from the cluster's start; cut after end_ms",
        },
        "files": sorted(files),
        "must": outcome.must,
        "may": outcome.may,
        "must_not": complete_must_not(
            outcome.must,
            outcome.may,
            all_partitions,
            f"nothing in the action log or the describe snapshots of {scenario.name} causes it",
        ),
        "evidence_contains": evidence,
    }
    problems = validate(truth)
    if problems:
        raise LabError(f"truth.json would be malformed: {problems}")
    write_truth(run.out, truth)
    (run.out / "README.md").write_text(readme(truth))
    return truth


def kafka_says(run: Run, outcome: Outcome, end_ms: int) -> None:
    """Add what Kafka's own lines state (``oracle``): deposed controllers that acted, refusals of their
    requests, and failed partition state changes (the rule's "Kafka's own failed state change")."""
    named = {(e["rule"], e["topic"], e["partition"]) for e in (*outcome.must, *outcome.may)}
    if run.cluster.mode == ZOOKEEPER:
        musts, evidence = oracle.deposed_controllers(run, end_ms)
        for rule, why in musts:
            if (rule, None, None) not in named:
                outcome.must.append(expect(rule, None, None, why))
        outcome.evidence += [r for r in evidence if r not in outcome.evidence]
    for topic, partition in sorted(oracle.failed_partition_changes(run, end_ms)):
        if ("illegal_transition", topic, partition) not in named:
            outcome.may.append(
                expect(
                    "illegal_transition",
                    topic,
                    partition,
                    "Kafka logged a failed state change of this partition (no replica it could elect)",
                )
            )


def readme(truth: dict) -> str:
    """The incident's README: what was done, with the clock, and how to record it again."""
    rows = "\n".join(
        f"| {a['seq']} | {a['at']} | {a['action']} | {a['broker'] if a['broker'] is not None else ''} | {a['detail']} |"
        for a in truth["actions"]
    )
    snaps = "\n".join(
        f"- `{d['file']}` ({iso_ms(d['at_ms'])}, after action {d['after_action']})" for d in truth["describe"]
    )
    must = (
        "\n".join(
            f"- `{e['rule']}` {e['topic'] or 'any topic'}"
            f"{'' if e['partition'] is None else '-' + str(e['partition'])}: {e['why']}"
            for e in truth["must"]
        )
        or "- nothing: no rule's finding is caused by what was done"
    )
    may = "\n".join(f"- `{e['rule']}`: {e['why']}" for e in truth["may"]) or "- nothing"
    rec = truth["recorded"]
    cfg = truth["configs"]
    gzipped = "the logs and the metadata dump are" if truth["mode"] == "kraft" else "the logs are"
    return f"""# {truth["scenario"]} on Kafka {truth["kafka_version"]} ({truth["mode"]}) - recorded from a real cluster

{truth["description"]}

Recorded on {rec["date"]} by `kafka-forensics lab` with real Kafka {truth["kafka_version"]} jars from Maven
Central ({cfg["topology"]}, loopback), {rec["java"]}, state.change.logger at {cfg["state_change_logger"]}
({cfg["log4j"]}). Command:

    {rec["command"]}

Settings beyond Kafka's defaults are in `truth.json` (`configs`). Logs are cut at the `end` snapshot
({truth["window"]["end"]}); {gzipped} gzipped (`zcat`, or the tool reads them as they are).

## What was done (UTC)

| # | at | action | broker | detail |
|---|---|---|---|---|
{rows}

## What Kafka said (`kafka-topics --describe`)

{snaps}

## Truth (`truth.json`)

Must find:
{must}

May find:
{may}

Must not find (warning or worse): every other rule ({len(truth["must_not"])} entries).
"""


def _count_lines(path: Path) -> int:
    import gzip

    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.count(b"\n")


def record_json(rec: Recorded) -> str:
    return json.dumps(
        {
            "folder": str(rec.folder),
            "seconds": round(rec.seconds, 1),
            "jar_seconds": round(rec.jar_seconds, 1),
            "lines": rec.lines,
            "must": rec.truth["must"],
        },
        indent=1,
    )
