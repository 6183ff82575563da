"""Requests refused for a stale controller epoch: the visible trace of a zombie controller (I6).

A broker remembers the highest controller epoch it has seen and ignores LeaderAndIsr,
UpdateMetadata and StopReplica requests from lower ones (K:server/ReplicaManager.scala@0.8.2.2:
``stateChangeLogger.warn("Broker %d ignoring LeaderAndIsr request from controller %d with
correlation id %d since its controller epoch %d is old. Latest known controller epoch is %d")``,
@3.9.0-rc3:499-504,1918-1923), answering STALE_CONTROLLER_EPOCH (error code 11,
``Errors.STALE_CONTROLLER_EPOCH``), which the old controller may log as a response. Refusing is
correct behaviour; what it proves is that a deposed controller was still sending requests.
All refusals of one deposed controller's epoch (by every broker, and its own error-11 responses) are
one finding citing every line: one zombie episode.
"""

from __future__ import annotations

import re
from typing import Optional

from .events import attr
from .findings import WARNING, Finding, consolidate, ref_of

STALE_CONTROLLER_EPOCH_CODE = 11
# Only the response's top-level error code: per-partition error 11 in a LeaderAndIsr response is
# the benign "leader epoch matches the current leader epoch" answer every failover produces
# (K:server/ReplicaManager.scala@2.4.1 becomeLeaderOrFollower; reference §2.1). Shapes:
# ``{error_code=11}`` / ``{error_code=11,partition_errors=[…]}`` (0.9+), and 0.8's
# ``LeaderAndIsrResponse(corr,Map(…),11)`` / ``UpdateMetadataResponse(corr,11)``.
TOP_LEVEL_ERROR_11 = r"^\{error_code=11\b|^\w+Response\(.*,\s*11\)$"
_ERROR_11 = re.compile(TOP_LEVEL_ERROR_11)

REJECTED = "stale_controller_epoch_rejected"
RESPONSE = "controller_response"
RESPONSE_ATTR = "response"  # the response a controller logged, as text


def is_stale_epoch_event(event: dict) -> bool:
    """A broker's refusal line, or a controller's response line carrying error code 11."""
    if event["event_type"] == REJECTED:
        return True
    if event["event_type"] == RESPONSE:
        return bool(_ERROR_11.search(attr(event, RESPONSE_ATTR) or ""))
    return False


def group_key(event: dict) -> tuple:
    """(controller id, stale controller epoch) of one refusal or error-11 line: one zombie episode.

    Every broker that knows the newer epoch refuses every request of the deposed controller, and the
    controller may log each refusal as an error-11 response: all of them are one anomaly."""
    return (event.get("controller_id"), event.get("controller_epoch"))


def _int(text: Optional[str]) -> Optional[int]:
    try:
        return None if text is None else int(text)
    except ValueError:
        return None


def _brokers(values) -> str:
    known = sorted({b for b in values if b is not None})
    if not known:
        return "a broker"
    return f"broker{'s' if len(known) > 1 else ''} {', '.join(map(str, known))}"


def stale_epoch_finding(cluster: str, events: list[dict]) -> Finding:
    """One finding for one zombie episode: every refusal of, and error-11 answer to, the requests of one
    controller with one stale epoch (``events`` share ``group_key``)."""
    events = sorted(events, key=lambda e: (e.get("ts") is None, e.get("ts") or 0, e["source_file"], e["line_no"]))
    controller, epoch = group_key(events[0])
    refused = [e for e in events if e["event_type"] == REJECTED]
    answered = [e for e in events if e["event_type"] != REJECTED]
    latest = sorted({v for v in (_int(attr(e, "latest_controller_epoch")) for e in refused) if v is not None})
    who = f"controller {controller}" if controller is not None else "a controller"
    parts = []
    if refused:
        newer = f" (they already knew epoch {', '.join(map(str, latest))})" if latest else ""
        parts.append(f"{_brokers(e.get('broker') for e in refused)} ignored its requests{newer}")
    if answered:
        parts.append(
            f"it got STALE_CONTROLLER_EPOCH (error 11) from {_brokers(e.get('target_broker') for e in answered)}"
        )
    summary = (
        f"{who} sent requests with stale controller epoch {epoch}: {'; '.join(parts)}; that controller was deposed "
        f"but still sending (zombie controller, I6)"
    )
    partitions = {(e.get("topic"), e.get("partition")) for e in events if e.get("topic") is not None}
    brokers = {e.get("broker") if e["event_type"] == REJECTED else e.get("target_broker") for e in events}
    finding = Finding.make(
        "stale_epoch_rejected",
        WARNING,
        summary,
        [ref_of(e) for e in events],
        cluster=cluster,
        controller_epoch=epoch,
        controller_epoch_end=max(latest) if latest else epoch,
        ts=events[0].get("ts"),
        ts_end=events[-1].get("ts"),
        kind="broker_refused" if refused else "controller_got_error_11",
        broker=brokers.pop() if len(brokers) == 1 else None,
        episode=("zombie", controller, epoch),
        partitions=len(partitions),
    )
    return consolidate([finding], {ref_of(e): e.get("ts") for e in events}.get)[0]
