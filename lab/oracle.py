"""Kafka's own statements that the truth may rely on, beside the action log and the describes.

Only lines in which Kafka itself *says* what happened, across every release the lab runs, each
pattern with the source lines that print it:

- a broker refusing a request from a deposed controller (stale controller epoch):
  ``core/src/main/scala/kafka/server/ReplicaManager.scala`` @0.10.2.2:254,631,656 @1.1.1:361,1006,1029
  @2.4.1:393,1161,1186 @2.8.2:370,1302,1334 @3.9.0-rc3:502,1880,1921;
- a controller taking office: ``KafkaController.scala`` @0.10.2.2:731 ("Controller N incremented epoch
  to E"), @1.1.1:641 ("Epoch incremented to E"), @2.4.1:1396 ("N successfully elected as the controller.
  Epoch incremented to E");
- a request sent or received with a given controller id and epoch (``[Controller id=C epoch=E]`` prefixes
  of the controller's state-change lines from 1.1, ``Controller C epoch E`` in 0.10, ``from controller C
  epoch E`` / ``sent by controller C epoch E`` / ``old controller C with epoch E`` on the brokers);
- the controller's failed partition state change (``PartitionStateMachine.scala`` @0.10.2.2:178,228
  "initiated state change for partition [t,0] ... failed"; @1.1.1:432 @2.4.1:513 @2.8.2:517
  @3.9.0-rc3:526 "failed to change state for partition t-0", the StateChangeFailedException after it).

The truth uses them only as facts (who did what when); it never runs the project's rules.
"""

from __future__ import annotations

import re

from .run import Run, line_ms

STALE_EPOCH_REFUSAL = r"old controller|controller epoch \d+ is old"
_ELECTED = re.compile(
    r"(?:\[Controller id=(\d+)\].*(?:Epoch incremented to|incremented epoch to) (\d+))"
    r"|(?:Controller (\d+) incremented epoch to (\d+))"
)
FAILED_PARTITION_CHANGE = re.compile(
    r"(?:failed to change state|initiated state change) for partition "
    r"(?:\[([^,\]]+),(\d+)\]|(\S+)-(\d+)\b)",
    re.IGNORECASE,
)


def elections(run: Run, until_ms: int) -> list[tuple[int, int, int]]:
    """``(at_ms, controller, epoch)`` of every controller election Kafka logged (ZooKeeper mode)."""
    out = []
    for ref in run.kafka_lines(_ELECTED.pattern, files=("controller.log", "server.log"), until_ms=until_ms):
        line = _line(run, ref)
        m = _ELECTED.search(line)
        at = line_ms(line)
        if m and at is not None:
            c, e = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            out.append((at, int(c), int(e)))
    return sorted(set(out))


def acts_with_epoch(run: Run, controller: int, epoch: int, after_ms: int, until_ms: int) -> list[str]:
    """Refs of lines stating a request of ``controller`` with ``epoch`` logged after ``after_ms``."""
    pattern = rf"[Cc]ontroller(?: id=| ){controller}(?:,? | with )epoch[ =]{epoch}\b"
    return [
        ref
        for ref in run.kafka_lines(pattern, files=("state-change.log", "controller.log"), until_ms=until_ms)
        if (line_ms(_line(run, ref)) or 0) > after_ms
    ]


def stale_refusals(run: Run, after_ms: int, until_ms: int) -> list[str]:
    return [
        ref
        for ref in run.kafka_lines(STALE_EPOCH_REFUSAL, files=("state-change.log", "server.log"), until_ms=until_ms)
        if (line_ms(_line(run, ref)) or 0) >= after_ms
    ]


def failed_partition_changes(run: Run, until_ms: int) -> set[tuple[str, int]]:
    out = set()
    for ref in run.kafka_lines(
        FAILED_PARTITION_CHANGE.pattern, files=("state-change.log", "controller.log"), until_ms=until_ms
    ):
        m = FAILED_PARTITION_CHANGE.search(_line(run, ref))
        if m:
            out.add((m.group(1), int(m.group(2))) if m.group(1) else (m.group(3), int(m.group(4))))
    return out


def _line(run: Run, ref: str) -> str:
    path, number = ref.rsplit(":", 1)
    broker, name = path.split("/", 1)
    node = run.cluster.nodes[int(broker.split("-")[1])]
    lines = (node.logs / name).read_text(encoding="utf-8", errors="replace").splitlines()
    return lines[int(number) - 1]


def deposed_controllers(run: Run, until_ms: int) -> tuple[list[tuple[str, str]], list[str]]:
    """Zombie controllers in Kafka's own words: ``([(rule, why)], evidence refs)``.

    A controller elected with epoch E is deposed once Kafka logs an election with a higher epoch; it
    is a zombie only if it still acted (logged a request or state change with epoch E) after that
    (a controller that resigns late without acting is not one). Brokers refusing a deposed
    controller's request are ``stale_epoch_rejected``."""
    elected = elections(run, until_ms)
    musts: list[tuple[str, str]] = []
    evidence: list[str] = []
    for at, controller, epoch in elected:
        newer = [e for e in elected if e[2] > epoch and e[0] >= at]
        if not newer:
            continue
        acts = acts_with_epoch(run, controller, epoch, newer[0][0], until_ms)
        if acts:
            musts.append(
                (
                    "concurrent_controllers",
                    f"controller {controller} logged requests with epoch {epoch} "
                    f"after epoch {newer[0][2]} began ({len(acts)} lines)",
                )
            )
            evidence += acts[:3]
    first_new = min((e[0] for e in elected if any(f[2] < e[2] for f in elected)), default=None)
    refusals = stale_refusals(run, first_new, until_ms) if first_new is not None else []
    if refusals:
        musts.append(
            ("stale_epoch_rejected", f"brokers logged {len(refusals)} refusals of requests from a deposed controller")
        )
        evidence = refusals[:5] + evidence
    return musts, evidence
