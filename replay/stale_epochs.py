"""Requests refused for a stale controller epoch: the visible trace of a zombie controller (I6).

A broker remembers the highest controller epoch it has seen and ignores LeaderAndIsr,
UpdateMetadata and StopReplica requests from lower ones (K:server/ReplicaManager.scala@0.8.2.2:
``stateChangeLogger.warn("Broker %d ignoring LeaderAndIsr request from controller %d with
correlation id %d since its controller epoch %d is old. Latest known controller epoch is %d")``,
@3.9.0-rc3:499-504,1918-1923), answering STALE_CONTROLLER_EPOCH (error code 11,
``Errors.STALE_CONTROLLER_EPOCH``), which the old controller may log as a response. Refusing is
correct behaviour; what it proves is that a deposed controller was still sending requests.
Identical refusals (same broker, controller, epochs) are one finding citing every line.
"""

from __future__ import annotations

import re
from typing import Optional

from .findings import WARNING, Finding, ref_of

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


def is_stale_epoch_event(event: dict) -> bool:
    """A broker's refusal line, or a controller's response line carrying error code 11."""
    if event["event_type"] == REJECTED:
        return True
    if event["event_type"] == RESPONSE:
        return bool(_ERROR_11.search((event.get("attrs") or {}).get("response") or ""))
    return False


def group_key(event: dict) -> tuple:
    """(kind, refusing broker, controller id, stale epoch, latest epoch) of one refusal line."""
    attrs = event.get("attrs") or {}
    if event["event_type"] == REJECTED:
        return (
            "broker_refused",
            event.get("broker"),
            event.get("controller_id"),
            event.get("controller_epoch"),
            _int(attrs.get("latest_controller_epoch")),
        )
    return (
        "controller_got_error_11",
        event.get("target_broker"),
        event.get("controller_id"),
        event.get("controller_epoch"),
        None,
    )


def _int(text: Optional[str]) -> Optional[int]:
    try:
        return None if text is None else int(text)
    except ValueError:
        return None


def stale_epoch_finding(cluster: str, events: list[dict]) -> Finding:
    """One finding for a group of identical refusals (``events`` share ``group_key``)."""
    events = sorted(events, key=lambda e: (e.get("ts") is None, e.get("ts") or 0, e["source_file"], e["line_no"]))
    kind, broker, controller, epoch, latest = group_key(events[0])
    n = len(events)
    times = f" ({n} lines)" if n > 1 else ""
    who = f"controller {controller}" if controller is not None else "a controller"
    if kind == "broker_refused":
        newer = f"; it already knew epoch {latest}" if latest is not None else ""
        summary = (
            f"broker {broker} ignored a request from {who} with stale controller epoch {epoch}{newer}{times}: "
            f"that controller was deposed but still sending requests (zombie controller, I6)"
        )
    else:
        summary = (
            f"{who} (epoch {epoch}) got STALE_CONTROLLER_EPOCH (error 11) from broker {broker}{times}: "
            f"a newer controller exists and this one is a zombie (I6)"
        )
    return Finding.make(
        "stale_epoch_rejected",
        WARNING,
        summary,
        [ref_of(e) for e in events],
        cluster=cluster,
        controller_epoch=epoch,
        ts=events[0].get("ts"),
        kind=kind,
        broker=broker,
    )
