"""One simulation: the seeded RNG, clock, model, templates of the chosen release, output and truth.

Everything random comes from ``random.Random(seed)`` created here, and nothing iterates over an
unordered container while drawing from it, so the same seed writes byte-identical files.
"""

from __future__ import annotations

import base64
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from .clock import DEFAULT_START, SimClock
from .legality import Legality
from .model import Cluster
from .profile import Profile, profile_for
from .requests import RequestFlow
from .truth import Truth, write_truth
from .writer import LogOutput

# Observations operations report; faults and truth read them (scale mode watches none).
ALL_NOTES = frozenset(
    {
        "unclean",
        "stale_controller",
        "election_failed",
        "controller_elected",
        "isr_change",
        "isr_removed",
        "replica_refused",
        "deletion_stuck",
        "failover_offline_suppressed",
    }
)


def templates_for(prof: Profile, out: LogOutput):
    """The template class of the profile's log-format era (``core.eras`` dialect)."""
    if prof.dialect == "zk-0.8":
        from .templates_zk_0_10 import Zk010Templates as cls
    elif prof.dialect == "zk-1.1":
        from .templates_zk_1_1 import Zk11Templates as cls
    elif prof.dialect == "zk-2.4":
        from .templates_zk_2_4 import Zk24Templates as cls
    elif prof.dialect == "zk-2.6":
        from .templates_zk_2_6 import Zk26Templates as cls
    elif prof.dialect == "zk-3.x":
        from .templates_zk_3_x import Zk3xTemplates as cls
    elif prof.dialect == "kraft":
        from .templates_kraft import KraftTemplates as cls
    else:
        raise AssertionError(f"no templates for dialect {prof.dialect}")
    return cls(out, prof)


@dataclass
class SimResult:
    out_dir: Path
    files: list[str]
    records: int
    lines: int
    truth: dict
    manifest: Optional[list] = None  # (file:line, expected event_type, fields, kind, broker) when expect=True
    extra: dict = field(default_factory=dict)


class Simulation:
    """Wires the parts together; scenarios drive ``self.ops`` and ``faults``."""

    def __init__(
        self,
        out_dir: Path,
        kafka_version: str,
        *,
        seed: int = 0,
        trace: bool = False,
        gzip: bool = False,
        expect: bool = False,
        brokers: Iterable[int] = (1, 2, 3),
        watch: Iterable[str] = ALL_NOTES,
    ) -> None:
        self.prof = profile_for(kafka_version)
        self.seed = seed
        self.trace = trace
        self.gzip = gzip
        self.rng = random.Random(seed)
        self.clock = SimClock(self.rng, DEFAULT_START)
        self.out = LogOutput(Path(out_dir), self.prof, self.clock, trace=trace, gzip=gzip, expect=expect)
        self.cluster = Cluster(list(brokers))
        self.legal = Legality(self.prof)
        self.T = templates_for(self.prof, self.out)
        self.T.cluster = self.cluster
        self.flow = RequestFlow(self)
        self.watch = frozenset(watch)
        self.notes: list[tuple[str, dict]] = []
        self.truth = Truth()
        self.stale_candidates: list[dict] = []  # KAFKA-3143 states, kept unless the broker returns in-epoch
        self.extra_files: list[str] = []  # files written outside LogOutput (the KRaft metadata dump)
        if self.prof.kraft:
            from .kraft_ops import KraftOps

            self.ops = KraftOps(self)
        else:
            from .operations import ZkOps

            self.ops = ZkOps(self)

    # ---- services for operations ---------------------------------------------------------------
    def note(self, kind: str, **detail) -> None:
        if kind in self.watch:
            self.notes.append((kind, detail))

    def notes_of(self, kind: str, since: int = 0) -> list[dict]:
        return [d for k, d in self.notes[since:] if k == kind]

    def broker_returned(self, broker: int) -> None:
        """A dead broker is back: stale failover state about it heals if no new controller came since."""
        epoch = self.cluster.controller.epoch if self.cluster.controller else None
        for cand in self.stale_candidates:
            if cand["broker"] == broker and cand["epoch"] == epoch:
                cand["resolved"] = True

    def new_uuid(self) -> str:
        """A topic id: 16 seeded bytes, url-safe base64 without padding (22 chars, like ``Uuid``)."""
        raw = bytes(self.rng.getrandbits(8) for _ in range(16))
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    def after_recovering_leader(self, b: int, s) -> None:
        """KIP-704 (3.2+): the unclean leader recovers its log and reports RECOVERED (AlterPartition)."""
        topic = self.cluster.topics.get(s[0])
        if topic is None:
            return
        p = topic.partitions[s[1]]
        self.clock.tick(5, 50)
        self.T.sc_b_recovered(b, p)
        p.recovering = False
        p.zk_version += 1

    def write_metadata_dump(self) -> dict:
        """KRaft: write the ``kafka-dump-log --cluster-metadata-decoder`` view of the simulated
        ``__cluster_metadata`` log; returns {offset: line number} for evidence."""
        name, records, lines, line_of = self.ops.mlog.write(self.out.root, self.out.manifest)
        self.extra_files.append(name)
        self.out.records += records
        self.out.lines += lines
        return line_of

    # ---- lifecycle -------------------------------------------------------------------------------
    def boot(self, controller: Optional[int] = None) -> None:
        """Start every broker; ``controller`` (default: the lowest id) wins the first election."""
        ids = sorted(self.cluster.brokers)
        for b in ids:
            self.ops.broker_start(b)
        self.ops.elect(ids[0] if controller is None else controller)

    def finish(self, scenario: str, description: str = "") -> SimResult:
        for cand in self.stale_candidates:
            if not cand["resolved"]:
                f = cand["finding"]
                self.truth.add(f.pop("rule"), **f)
        files = sorted(self.out.close() + self.extra_files)
        meta = {
            "scenario": scenario,
            "description": description,
            "kafka_version": self.prof.tag,
            "mode": "kraft" if self.prof.kraft else "zookeeper",
            "seed": self.seed,
            "trace": self.trace,
            "gzip": self.gzip,
            "state_change_level": "TRACE" if self.out.sc_min == 0 else "INFO",
            "brokers": sorted(self.cluster.brokers),
            "files": files,
            "records": self.out.records,
            "lines": self.out.lines,
        }
        doc = self.truth.to_dict(meta)
        write_truth(self.out.root, doc)
        manifest = None
        if self.out.manifest is not None:
            manifest = [
                (LogOutput.ref_text(ref), ev, fields, kind, broker)
                for ref, ev, fields, kind, broker in self.out.manifest
            ]
        return SimResult(self.out.root, files, self.out.records, self.out.lines, doc, manifest)
