"""The report job: aggregate the replay's tables in Spark, collect only bounded results, render HTML.

The queries are PySpark DataFrame code, run on the session they are given: Spark's, or (the driver engine) SQLFrame's
on DuckDB. They take their functions module, ``Window``, table reads and small-file reads from ``frames``, the
only module that knows both engines; the results are equal field by field (tests/support/engines.py).

Everything that grows with the input is reduced in Spark first: counts per kind/rule/reason,
event rate in at most ``MAX_BUCKETS`` time buckets, the ``top_partitions`` most affected
partitions (``INTERVAL_BUDGET`` intervals shared among them), the ``max_findings`` most severe
findings with at most ``evidence_limit`` evidence lines each (their text fetched by a join with
the events on ``source_file`` + ``line_no``). The report says what it left out.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from types import ModuleType
from typing import Callable, Optional

from pyspark.sql import Column, DataFrame, SparkSession

from kafka_forensics.core.eras import range_for_dialect
from kafka_forensics.core.errors import InputError, JobError, KafkaForensicsError
from kafka_forensics.core.tables import IMPACT, IMPACT_TOTALS, QUARANTINE, TABLES
from kafka_forensics.core.verdict import VERDICT, VerdictSummary, summarize_verdict
from kafka_forensics.replay.findings import RULES, SEVERITIES
from kafka_forensics.replay.impact import KINDS, LEADER_LOST, UNAVAILABLE, UNDER_MIN_ISR, UNDER_REPLICATED
from kafka_forensics.reports.figures import OTHER_TYPES
from kafka_forensics.reports.html import render_report
from kafka_forensics.reports.model import (
    BrokerInterval,
    ControllerEpoch,
    Count,
    EvidenceLine,
    FindingRow,
    ImpactEpisode,
    ImpactPartition,
    ImpactTotal,
    PartitionMark,
    PartitionStory,
    RateSeries,
    Reconciliation,
    ReportData,
    StateInterval,
    StorySentence,
    TransitionCell,
    TransitionMatrix,
)
from kafka_forensics.statemachines.legality import is_forbidden
from kafka_forensics.statemachines.states import PartitionState, ReplicaState, UnknownStateError

from .frames import broadcast, functions_of, path_exists, read_table, read_text, unpersist, window_of, write_text
from .fs import absolute
from .replay_job import collect_arrow, severity_rank
from .spark_errors import short_error

REQUIRED_TABLES = tuple(t for t in TABLES if t != QUARANTINE)  # quarantine: shown when present
MAX_FINDINGS = 500
EVIDENCE_LIMIT = 5  # evidence lines shown per finding
EVIDENCE_TEXT_CHARS = 500  # of each evidence line (message + the start of its stack trace)
# Partition intervals plotted in all (shared by the plotted partitions, at least MIN_INTERVALS each;
# replica intervals: twice that). Sized so a 10 M-line input stays near 10 MB with plotly.js (4.8 MB).
INTERVAL_BUDGET = 2000
MIN_INTERVALS = 50
MAX_MARKS = 200  # findings marked on one partition's timeline
MAX_BUCKETS = 500
MAX_EVENT_TYPES = 12  # plotted separately; the rest are summed as "other types"
MAX_CONTROLLERS = 1000
MAX_BROKER_INTERVALS = 2000
MAX_BROKERS = 200
MAX_QUARANTINE_REASONS = 30
MAX_IMPACT_PARTITIONS = 20  # worst partitions in the Impact table and on its strip
MAX_IMPACT_EPISODES = 400  # episodes drawn on the strip (of those partitions, earliest first)
_BUCKET_STEPS = (
    1,
    2,
    5,
    10,
    15,
    30,
    60,
    120,
    300,
    600,
    900,
    1800,
    3600,
    7200,
    10800,
    21600,
    43200,
    86400,
    172800,
    604800,
)
_TRANSITION_TYPES = {"partition_state_change": "partition", "replica_state_change": "replica"}


@dataclass
class ReportSummary:
    path: str
    size_bytes: int
    findings_total: int
    findings_shown: int
    partitions_total: int
    partitions_shown: int
    left_out: list[str] = field(default_factory=list)


def build_report(
    spark: SparkSession,
    out_dir: str,
    out_html: str,
    *,
    top_partitions: int = 20,
    max_findings: int = MAX_FINDINGS,
    evidence_limit: int = EVIDENCE_LIMIT,
    verdict_ready: Optional[Callable[[], None]] = None,
) -> ReportSummary:
    """Read the replay tables under ``out_dir`` and write the self-contained HTML report ``out_html``.

    ``verdict_ready``: called (it may wait) just before the verdict is read, last: ``analyze`` builds the
    report beside the check that writes the verdict."""
    if top_partitions < 0 or max_findings < 0 or evidence_limit < 0:
        raise InputError("--top must not be negative")
    out_dir = absolute(out_dir)
    _require_tables(spark, out_dir)
    try:
        data = collect_report_data(
            spark,
            out_dir,
            top_partitions=top_partitions,
            max_findings=max_findings,
            evidence_limit=evidence_limit,
            verdict_ready=verdict_ready,
        )
        page = render_report(data, evidence_limit=evidence_limit)
    except KafkaForensicsError:
        raise
    except Exception as err:
        raise JobError(f"report job failed: {short_error(err, 300)}") from err
    encoded = page.encode("utf-8")
    _write(spark, out_html, page, encoded)
    return ReportSummary(
        path=out_html,
        size_bytes=len(encoded),
        findings_total=data.findings_total,
        findings_shown=len(data.findings),
        partitions_total=data.partitions_total,
        partitions_shown=len(data.partitions),
        left_out=list(data.left_out),
    )


def _require_tables(spark: SparkSession, out_dir: str) -> None:
    if not path_exists(spark, out_dir):
        raise InputError(f"{out_dir}: no such directory")
    missing = [t for t in REQUIRED_TABLES if not path_exists(spark, f"{out_dir}/{t}")]
    if missing:
        raise InputError(
            f"{out_dir} has no replay tables (missing {', '.join(missing)}): run "
            f"`kafka-forensics replay LOGS --out {out_dir}` first"
        )


def _write(spark: SparkSession, out_html: str, page: str, encoded: bytes) -> None:
    if "://" in out_html and not out_html.startswith("file://"):
        write_text(spark, out_html, page)
        return
    path = out_html.removeprefix("file://")
    parent = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(parent, exist_ok=True)
        tmp = f"{path}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(encoded)
        os.replace(tmp, path)
    except OSError as err:
        raise InputError(f"cannot write {out_html}: {err.strerror or err}") from err


# ---- collection --------------------------------------------------------------------------------
def collect_report_data(
    spark: SparkSession,
    out_dir: str,
    *,
    top_partitions: int,
    max_findings: int,
    evidence_limit: int,
    verdict_ready: Optional[Callable[[], None]] = None,
) -> ReportData:
    F = functions_of(spark)
    read = lambda name: read_table(spark, out_dir, name)  # noqa: E731
    events, findings = read("events"), read("findings")
    quarantine = read("quarantine") if path_exists(spark, f"{out_dir}/quarantine") else None
    left_out: list[str] = []

    overall = collect_arrow(
        events.agg(F.min("ts").alias("start"), F.max("ts").alias("end"), F.count(F.lit(1)).alias("n"))
    )[0]
    window_start, window_end = overall["start"], overall["end"]
    brokers_rows = collect_arrow(events.filter(F.col("broker").isNotNull()).groupBy("broker").count().orderBy("broker"))
    # brokers_rows is one row per broker: bounded by the cluster, not by the lines.
    brokers = [r["broker"] for r in brokers_rows]
    if len(brokers) > MAX_BROKERS:
        left_out.append(f"brokers: the summary lists {MAX_BROKERS:,} of {len(brokers):,}")
    data = ReportData(
        title="Kafka incident report",
        source_dir=out_dir,
        window_start=window_start,
        window_end=window_end,
        events=int(overall["n"] or 0),
        events_by_kind=_counts(events, "log_kind", 20),
        dialects=_counts(events, "dialect", 20),
        kafka_versions=_kafka_versions(events),
        brokers=brokers[:MAX_BROKERS],
        brokers_total=len(brokers),
        clusters=sorted(
            r["cluster"]
            for r in collect_arrow(
                read("controllers")
                .select("cluster")
                .union(read("brokers").select("cluster"))
                .union(findings.select("cluster"))
                .distinct()
                .limit(1000)
            )
        ),
        reconciliation=_reconciliation(read("files")),
        findings_total=0,
        findings_by_rule=_findings_by_rule(findings),
        rule_sentences=dict(RULES),
        verdict=VerdictSummary(status="not run"),  # read last (``verdict_ready``)
        controllers=[],
        controllers_total=0,
        broker_intervals=[],
        broker_intervals_total=0,
        findings=[],
        partitions=[],
        partitions_total=0,
        matrices=_matrices(events),
        rate_bucket_seconds=1,
        rates=[],
        quarantine=[],
        quarantine_total=0,
        left_out=left_out,
    )
    data.findings_total = sum(sum(v.values()) for v in data.findings_by_rule.values())
    data.controllers, data.controllers_total = _controllers(read("controllers"))
    if data.controllers_total > len(data.controllers):
        left_out.append(f"controllers: showing {len(data.controllers):,} of {data.controllers_total:,} epochs")
    data.broker_intervals, data.broker_intervals_total = _broker_intervals(read("brokers"))
    if data.broker_intervals_total > len(data.broker_intervals):
        left_out.append(
            f"broker liveness: showing {len(data.broker_intervals):,} of {data.broker_intervals_total:,} intervals"
        )
    data.findings = _top_findings(findings, events, quarantine, max_findings, evidence_limit)
    if data.findings_total > len(data.findings):
        left_out.append(
            f"findings: showing the {len(data.findings):,} most severe of {data.findings_total:,} "
            f"(findings.jsonl has them all)"
        )
    data.partitions, data.partitions_total = _partition_stories(
        read("partition_timeline"), read("replica_timeline"), findings, top_partitions
    )
    if data.partitions_total > len(data.partitions):
        left_out.append(
            f"partitions: showing {len(data.partitions):,} of {data.partitions_total:,} (the most findings first)"
        )
    for s in data.partitions:
        if s.intervals_total > len(s.intervals) or s.replica_intervals_total > len(s.replica_intervals):
            left_out.append(
                f"{s.label}: showing the first {len(s.intervals):,} of {s.intervals_total:,} partition "
                f"intervals and {len(s.replica_intervals):,} of {s.replica_intervals_total:,} replica "
                f"intervals"
            )
    data.story, data.story_notes = read_story(spark, out_dir)
    _impact(spark, data, read(IMPACT), read(IMPACT_TOTALS))
    if data.impact_partitions_total > len(data.impact_partitions):
        left_out.append(
            f"impact: the {len(data.impact_partitions):,} worst of {data.impact_partitions_total:,} partitions "
            f"(the impact table has them all)"
        )
    if data.impact_episodes_total > len(data.impact_episodes):
        left_out.append(
            f"impact strip: the first {len(data.impact_episodes):,} of {data.impact_episodes_total:,} episodes "
            f"of the partitions shown"
        )
    data.rate_bucket_seconds, data.rates, types_total = _rates(events, window_start, window_end)
    if types_total > MAX_EVENT_TYPES:
        left_out.append(
            f"event rate: {MAX_EVENT_TYPES} of {types_total} event types drawn separately, the rest "
            f'summed as "other types"'
        )
    if quarantine is not None:
        data.quarantine, data.quarantine_total, reasons = _quarantine(quarantine)
        if reasons > len(data.quarantine):
            left_out.append(f"quarantine: showing {len(data.quarantine)} of {reasons:,} reasons")
    if verdict_ready is not None:
        verdict_ready()
    data.verdict = read_verdict(spark, out_dir)
    return data


_LEADERLESS = (LEADER_LOST, UNAVAILABLE)


def _impact(spark: SparkSession, data: ReportData, impact: DataFrame, totals: DataFrame) -> None:
    """The cluster totals (clusters x kinds rows), the MAX_IMPACT_PARTITIONS worst partitions (longest without a
    leader, then under min ISR, then under-replicated) and at most MAX_IMPACT_EPISODES of their episodes."""
    F = functions_of(spark)
    data.impact_totals = [
        ImpactTotal(
            r["cluster"],
            r["kind"],
            int(r["partitions"]),
            int(r["episodes"]),
            int(r["open_episodes"]),
            float(r["seconds"]),
            float(r["longest_seconds"]),
            f"{r['longest_topic']}-{r['longest_partition']}",
        )
        for r in collect_arrow(totals.filter(F.col("topic").isNull()).orderBy("cluster", "kind"))
    ]
    key = ["cluster", "topic", "partition"]
    leaderless = F.col("kind").isin(*_LEADERLESS)
    per = impact.groupBy(*key).agg(
        *[F.sum(F.when(F.col("kind") == k, F.col("known_seconds")).otherwise(0.0)).alias(k) for k in KINDS],
        F.count(F.lit(1)).alias("episodes"),
        F.sum(F.col("open").cast("int")).alias("open_episodes"),
        # the longest leaderless episode; on a tie the later one (then by kind and number): a total order, so
        # the pick does not depend on the order rows reach the aggregate (or on the engine)
        F.max_by(
            F.struct("ts_start", "ts_end", "ended_by", "start_evidence", "end_evidence"),
            F.when(leaderless, F.struct("known_seconds", "ts_start", "kind", "episode")),
        ).alias("worst"),
    )
    data.impact_partitions_total = per.count()
    order = [
        F.desc(F.col(LEADER_LOST) + F.col(UNAVAILABLE)),
        F.desc(UNDER_MIN_ISR),
        F.desc(UNDER_REPLICATED),
        *key,
    ]
    worst = collect_arrow(per.orderBy(*order).limit(MAX_IMPACT_PARTITIONS))
    data.impact_partitions = [
        ImpactPartition(
            r["cluster"],
            r["topic"],
            r["partition"],
            {k: float(r[k] or 0.0) for k in KINDS},
            int(r["episodes"]),
            int(r["open_episodes"] or 0),
            (r["worst"] or {}).get("ts_start") if _leaderless_seconds(r) else None,
            (r["worst"] or {}).get("ts_end") if _leaderless_seconds(r) else None,
            (r["worst"] or {}).get("ended_by") if _leaderless_seconds(r) else None,
            tuple(
                ref
                for ref in ((r["worst"] or {}).get("start_evidence"), (r["worst"] or {}).get("end_evidence"))
                if ref and _leaderless_seconds(r)
            ),
        )
        for r in worst
    ]
    if not worst:
        return
    shown = broadcast(
        spark.createDataFrame(
            [(r["cluster"], r["topic"], r["partition"]) for r in worst], "cluster string, topic string, partition int"
        )
    )
    episodes = impact.join(shown, key)
    data.impact_episodes_total = episodes.count()
    data.impact_episodes = [
        ImpactEpisode(
            r["cluster"],
            r["topic"],
            r["partition"],
            r["kind"],
            r["ts_start"],
            r["ts_end"],
            float(r["known_seconds"] or 0.0),
            r["reason"],
            r["ended_by"],
            r["start_evidence"],
            r["end_evidence"],
        )
        for r in collect_arrow(episodes.orderBy("ts_start", *key, "kind", "episode").limit(MAX_IMPACT_EPISODES))
    ]


def _leaderless_seconds(row: dict) -> float:
    return float((row[LEADER_LOST] or 0.0) + (row[UNAVAILABLE] or 0.0))


def _counts(df: DataFrame, column: str, limit: int) -> list[Count]:
    F = functions_of(df)
    rows = collect_arrow(df.groupBy(column).count().orderBy(F.desc("count"), column).limit(limit))
    return [Count(label=str(r[column]) if r[column] is not None else "unknown", count=int(r["count"])) for r in rows]


def _kafka_versions(events: DataFrame) -> list[Count]:
    F = functions_of(events)
    version = F.col("attrs").getItem("kafka_version")
    rows = collect_arrow(
        events.filter((F.col("event_type") == "kafka_version") & version.isNotNull())
        .groupBy(version.alias("version"))
        .agg(F.count(F.lit(1)).alias("n"), F.sort_array(F.collect_set("broker")).alias("b"))
        .orderBy("version")
        .limit(20)
    )
    out = []
    for r in rows:
        brokers = [b for b in (r["b"] or []) if b is not None]
        who = f" (broker{'s' if len(brokers) > 1 else ''} {', '.join(map(str, brokers[:20]))})" if brokers else ""
        out.append(Count(label=f"{r['version']}{who}", count=int(r["n"])))
    return out


def _reconciliation(files: DataFrame) -> Reconciliation:
    F = functions_of(files)
    r = collect_arrow(
        files.agg(
            F.count(F.lit(1)).alias("files"),
            F.sum("lines_read").alias("lines_read"),
            F.sum("records").alias("records"),
            F.sum("continuation_lines").alias("continuation_lines"),
            F.sum("quarantined").alias("quarantined"),
            F.sum(F.when(F.col("read_error").isNotNull(), 1).otherwise(0)).alias("read_errors"),
        )
    )[0]
    return Reconciliation(**{k: int(v or 0) for k, v in r.items()})


def _findings_by_rule(findings: DataFrame) -> dict[str, dict[str, int]]:
    """Findings per rule and severity, the worst rule first, each rule's severities most severe first: the rows
    are ordered, so the dicts' order is the same on every engine and plan (the HTML does not depend on it)."""
    F = functions_of(findings)
    rows = collect_arrow(findings.groupBy("rule", "severity").count().orderBy("rule", severity_rank(F).asc()))
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        out.setdefault(r["rule"], {})[r["severity"]] = int(r["count"])

    def worst(item):
        rule, sev = item
        return (min(SEVERITIES.index(s) if s in SEVERITIES else 9 for s in sev), -sum(sev.values()), rule)

    return dict(sorted(out.items(), key=worst))


def _controllers(controllers: DataFrame) -> tuple[list[ControllerEpoch], int]:
    F = functions_of(controllers)
    total = controllers.count()
    rows = collect_arrow(
        controllers.orderBy("cluster", F.col("ts_start").asc_nulls_last(), "controller_epoch", "controller_id").limit(
            MAX_CONTROLLERS
        )
    )
    return [
        ControllerEpoch(
            cluster=r["cluster"] or "",
            controller_id=r["controller_id"],
            epoch=r["controller_epoch"],
            ts_start=r["ts_start"],
            ts_end=r["ts_end"],
            elected=bool(r["elected"]),
            n_actions=int(r["n_actions"] or 0),
            evidence=tuple((r["evidence"] or [])[:5]),
        )
        for r in rows
    ], total


def _broker_intervals(brokers: DataFrame) -> tuple[list[BrokerInterval], int]:
    F = functions_of(brokers)
    total = brokers.count()
    rows = collect_arrow(
        brokers.orderBy("cluster", "broker", F.col("ts_start").asc_nulls_last()).limit(MAX_BROKER_INTERVALS)
    )
    return [
        BrokerInterval(
            cluster=r["cluster"] or "",
            broker=r["broker"],
            state=r["state"],
            ts_start=r["ts_start"],
            ts_end=r["ts_end"],
            evidence=r["evidence"],
        )
        for r in rows
    ], total


def _line_text(F: ModuleType, stack_lines: int = 3) -> Column:
    """``[ts] LEVEL message (logger)`` - the line as Kafka's default layout printed it - and the first
    lines of its stack trace, cut to EVIDENCE_TEXT_CHARS (a null logger, as in metadata dumps, drops out)."""
    head = F.concat_ws(
        " ",
        F.concat(F.lit("["), F.coalesce(F.col("ts_raw"), F.lit("?")), F.lit("]")),
        F.col("level"),
        F.col("message"),
        F.concat(F.lit("("), F.col("logger"), F.lit(")")),
    )
    stack = F.array_join(F.slice(F.split(F.col("stack"), "\n"), 1, stack_lines), "\n")
    text = F.when(F.col("stack").isNotNull() & (F.col("stack") != ""), F.concat_ws("\n", head, stack)).otherwise(head)
    return F.substring(text, 1, EVIDENCE_TEXT_CHARS)


def _top_findings(
    findings: DataFrame, events: DataFrame, quarantine: Optional[DataFrame], limit: int, evidence_limit: int
) -> list[FindingRow]:
    if limit == 0:
        return []
    F = functions_of(findings)
    top = (
        findings.withColumn("_rank", severity_rank(F))
        .orderBy("_rank", F.col("ts").asc_nulls_last(), "finding_id")
        .limit(limit)
        .cache()
    )
    try:
        rows = collect_arrow(
            top.drop("_rank").orderBy(severity_rank(F).asc(), F.col("ts").asc_nulls_last(), "finding_id")
        )
        refs = (
            top.select("finding_id", F.posexplode(F.slice("evidence", 1, max(evidence_limit, 1))).alias("pos", "ref"))
            .withColumn("source_file", F.regexp_extract("ref", r"^(.*):(\d+)$", 1))
            .withColumn("line_no", F.regexp_extract("ref", r"^(.*):(\d+)$", 2).cast("long"))
        )
        cited = events.select("source_file", "line_no", "ts_raw", "level", "message", "logger", "stack")
        joined = (
            broadcast(refs)
            .join(cited, ["source_file", "line_no"], "left")
            .withColumn("ev_text", F.when(F.col("message").isNotNull() | F.col("level").isNotNull(), _line_text(F)))
        )
        if quarantine is not None:
            q_text = quarantine.select(
                "source_file", "line_no", F.substring(F.col("raw"), 1, EVIDENCE_TEXT_CHARS).alias("q_text")
            )
            joined = joined.join(q_text, ["source_file", "line_no"], "left")
            joined = joined.withColumn("text", F.coalesce("ev_text", "q_text"))
        else:
            joined = joined.withColumn("text", F.col("ev_text"))
        lines = collect_arrow(
            joined.select("finding_id", "pos", "ref", "text")
            .dropDuplicates(["finding_id", "pos"])
            .orderBy("finding_id", "pos")
        )
    finally:
        unpersist(top)
    evidence: dict[str, list[EvidenceLine]] = {}
    for r in lines:
        evidence.setdefault(r["finding_id"], []).append(EvidenceLine(ref=r["ref"], text=r["text"]))
    shown = evidence_limit if evidence_limit else 0
    return [
        FindingRow(
            finding_id=r["finding_id"],
            severity=r["severity"],
            rule=r["rule"],
            cluster=r["cluster"] or "",
            topic=r["topic"],
            partition=r["partition"],
            replica=r["replica"],
            broker=r["broker"],
            controller_epoch=r["controller_epoch"],
            ts=r["ts"],
            summary=r["summary"] or "",
            evidence=tuple(evidence.get(r["finding_id"], [])[:shown]),
            evidence_count=int(r["evidence_count"] or len(r["evidence"] or [])),
            ts_end=r.get("ts_end"),
            controller_epoch_end=r.get("controller_epoch_end"),
        )
        for r in rows
    ]


_PKEY = ("cluster", "topic", "partition")


def _partition_stories(
    timeline: DataFrame, replicas: DataFrame, findings: DataFrame, top: int
) -> tuple[list[PartitionStory], int]:
    F, Window = functions_of(timeline), window_of(timeline)
    intervals = timeline.groupBy(*_PKEY).agg(F.count(F.lit(1)).alias("n_intervals"))
    per_partition = (
        findings.filter(F.col("topic").isNotNull() & F.col("partition").isNotNull())
        .withColumn("_rank", severity_rank(F))
        .groupBy(*_PKEY)
        .agg(F.count(F.lit(1)).alias("n_findings"), F.min("_rank").alias("worst"))
    )
    ranked = intervals.join(per_partition, list(_PKEY), "full_outer").fillna(
        {"n_findings": 0, "n_intervals": 0, "worst": 99}
    )
    total = ranked.count()
    if top == 0 or total == 0:
        return [], total
    chosen = collect_arrow(ranked.orderBy(F.desc("n_findings"), "worst", F.desc("n_intervals"), *_PKEY).limit(top))
    keys = timeline.sparkSession.createDataFrame(
        [(r["cluster"], r["topic"], r["partition"], k) for k, r in enumerate(chosen)],
        "cluster string, topic string, partition int, _order int",
    )
    keys = broadcast(keys)

    def first_rows(df: DataFrame, order_cols: list, cap: int) -> list[dict]:
        w = Window.partitionBy(*_PKEY).orderBy(*order_cols)
        return collect_arrow(
            df.join(keys, list(_PKEY))
            .withColumn("_n", F.row_number().over(w))
            .filter(F.col("_n") <= cap)
            .orderBy("_order", *order_cols)
        )

    cap = max(MIN_INTERVALS, INTERVAL_BUDGET // len(chosen))
    p_rows = first_rows(timeline, ["seq"], cap)
    r_rows = first_rows(replicas, ["replica", "seq"], 2 * cap)
    r_totals = {
        (r["cluster"], r["topic"], r["partition"]): int(r["n"])
        for r in collect_arrow(replicas.join(keys, list(_PKEY)).groupBy(*_PKEY).agg(F.count(F.lit(1)).alias("n")))
    }
    w = Window.partitionBy(*_PKEY).orderBy(F.col("ts").asc_nulls_last(), "finding_id")
    marks = collect_arrow(
        findings.join(keys, list(_PKEY))
        .withColumn("_n", F.row_number().over(w))
        .filter(F.col("_n") <= MAX_MARKS)
        .select(*_PKEY, "ts", "severity", "rule", "summary", "_n")
        .orderBy(*_PKEY, "_n")
    )
    stories = []
    for r in chosen:
        key = (r["cluster"], r["topic"], r["partition"])
        stories.append(
            PartitionStory(
                cluster=key[0] or "",
                topic=key[1],
                partition=key[2],
                findings=int(r["n_findings"]),
                intervals=tuple(_interval(x) for x in _of_partition(p_rows, key)),
                intervals_total=int(r["n_intervals"]),
                replica_intervals=tuple(_interval(x) for x in _of_partition(r_rows, key)),
                replica_intervals_total=r_totals.get(key, 0),
                marks=tuple(
                    PartitionMark(ts=m["ts"], severity=m["severity"], rule=m["rule"], summary=m["summary"] or "")
                    for m in _of_partition(marks, key)
                ),
            )
        )
    return stories, total


def _of_partition(rows: list[dict], key: tuple) -> list[dict]:
    return [x for x in rows if (x["cluster"], x["topic"], x["partition"]) == key]


def _interval(r: dict) -> StateInterval:
    return StateInterval(
        ts_start=r["ts_start"],
        ts_end=r["ts_end"],
        state=r["state"],
        leader=r["leader"],
        isr=tuple(r["isr"]) if r["isr"] is not None else None,
        replicas=tuple(r["replicas"]) if r["replicas"] is not None else None,
        leader_epoch=r["leader_epoch"],
        controller_epoch=r["controller_epoch"],
        cause=r["cause"],
        cause_event_type=r["cause_event_type"],
        replica=r.get("replica"),
    )


def _matrices(events: DataFrame) -> list[TransitionMatrix]:
    """Logged transitions per entity, with the count the state machine of each line's era forbids."""
    F = functions_of(events)
    rows = collect_arrow(
        events.filter(
            F.col("event_type").isin(*_TRANSITION_TYPES)
            & F.col("from_state").isNotNull()
            & F.col("to_state").isNotNull()
        )
        .groupBy("event_type", "dialect", "from_state", "to_state")
        .count()
        .orderBy("event_type", "dialect", "from_state", "to_state")
        .limit(5000)
    )
    out = []
    for event_type, entity in _TRANSITION_TYPES.items():
        declared = [s.value for s in (PartitionState if entity == "partition" else ReplicaState)]
        cells: dict[tuple[str, str], list] = {}
        for r in (x for x in rows if x["event_type"] == event_type):
            cell = cells.setdefault((r["from_state"], r["to_state"]), [0, 0, set()])
            cell[0] += int(r["count"])
            if _illegal_in_era(entity, r["dialect"], r["from_state"], r["to_state"]):
                cell[1] += int(r["count"])
            cell[2].add(r["dialect"] or "unknown")
        seen = {s for pair in cells for s in pair}
        states = tuple(declared + sorted(seen - set(declared)))
        out.append(
            TransitionMatrix(
                entity=entity,
                states=states,
                cells=tuple(
                    TransitionCell(from_state=a, to_state=b, count=v[0], illegal_count=v[1], eras=tuple(sorted(v[2])))
                    for (a, b), v in sorted(cells.items())
                ),
            )
        )
    return out


def _illegal_in_era(entity: str, dialect: Optional[str], from_state: str, to_state: str) -> bool:
    """Illegal if every release the line's dialect admits forbids it (statemachines.legality)."""
    try:
        return is_forbidden(entity, from_state, to_state, range_for_dialect(dialect))
    except UnknownStateError:
        return False  # a state name no Kafka has: the parser would not type it; never mark it


def bucket_seconds_for(start: Optional[datetime], end: Optional[datetime]) -> int:
    if start is None or end is None:
        return 1
    span = max((end - start).total_seconds(), 1.0)
    for step in _BUCKET_STEPS:
        if span / step <= MAX_BUCKETS:
            return step
    return math.ceil(span / MAX_BUCKETS / 86400.0) * 86400


def _rates(events: DataFrame, start, end) -> tuple[int, list[RateSeries], int]:
    if start is None:
        return 1, [], 0
    F = functions_of(events)
    step = bucket_seconds_for(start, end)
    type_counts = collect_arrow(
        events.filter(F.col("ts").isNotNull()).groupBy("event_type").count().orderBy(F.desc("count"), "event_type")
    )  # one row per event type: bounded
    kept = [r["event_type"] for r in type_counts[:MAX_EVENT_TYPES]]
    other = OTHER_TYPES
    group = F.when(F.col("event_type").isin(*kept), F.col("event_type")).otherwise(F.lit(other))
    bucket = (F.floor(F.unix_micros(F.col("ts")) / F.lit(step * 1_000_000)) * F.lit(step)).cast("long")
    rows = collect_arrow(
        events.filter(F.col("ts").isNotNull()).groupBy(bucket.alias("b"), group.alias("t")).count().orderBy("t", "b")
    )
    series: dict[str, list] = {}
    for r in rows:
        series.setdefault(r["t"], []).append((datetime.fromtimestamp(int(r["b"]), tz=timezone.utc), int(r["count"])))
    order = kept + ([other] if other in series else [])
    return step, [RateSeries(event_type=t, points=tuple(series[t])) for t in order if t in series], len(type_counts)


def _quarantine(quarantine: DataFrame) -> tuple[list[Count], int, int]:
    F = functions_of(quarantine)
    first = F.min(F.struct("source_file", "line_no", "raw"))
    grouped = quarantine.groupBy("reason").agg(F.count(F.lit(1)).alias("n"), first.alias("f"))
    reasons = grouped.count()
    rows = collect_arrow(
        grouped.orderBy(F.desc("n"), "reason")
        .limit(MAX_QUARANTINE_REASONS)
        .select(
            "reason",
            "n",
            F.col("f.source_file").alias("file"),
            F.col("f.line_no").alias("line"),
            F.substring(F.col("f.raw"), 1, 300).alias("raw"),
        )
    )
    total = collect_arrow(quarantine.agg(F.count(F.lit(1)).alias("n")))[0]["n"]
    return (
        [Count(label=r["reason"], count=int(r["n"]), sample=f"{r['file']}:{r['line']}\n{r['raw']}") for r in rows],
        int(total or 0),
        reasons,
    )


# ---- the expectations' verdict (written by the check job; shape tolerated loosely) --------------
def read_story(spark: SparkSession, out_dir: str) -> tuple[list[StorySentence], list[str]]:
    """The story the replay wrote (``story_job.STORY_JSON``: a few hundred sentences at most)."""
    from .story_job import STORY_JSON

    path = f"{out_dir}/{STORY_JSON}"
    if not path_exists(spark, path):
        return [], ["no story.json: the replay was written by an older version; rerun replay or analyze"]
    try:
        text = read_text(spark, path)
        doc = json.loads(text) if text is not None else {"clusters": []}
    except Exception as err:  # an unreadable story must not cost the whole report
        return [], [f"story.json unreadable: {short_error(err, 300)}"]
    sentences, notes = [], []
    for cluster in doc.get("clusters", []):
        notes += cluster.get("notes", [])
        for s in cluster.get("sentences", []):
            ts = datetime.fromisoformat(s["ts"]) if s.get("ts") else None
            sentences.append(StorySentence(s["cluster"], ts, s["kind"], s["sentence"], tuple(s["evidence"])))
    return sentences, notes


def read_verdict(spark: SparkSession, out_dir: str) -> VerdictSummary:
    path = f"{out_dir}/{VERDICT}"
    if not path_exists(spark, path):
        return VerdictSummary(status="not run")
    try:
        text = read_text(spark, path)
        doc = json.loads(text) if text is not None else None
    except Exception as err:  # unreadable JSON must not cost the on-call engineer the whole report
        return VerdictSummary(status="unreadable", note=f"verdict.json: {short_error(err, 300)}")
    return summarize_verdict(doc)


__all__ = [
    "ReportSummary",
    "bucket_seconds_for",
    "build_report",
    "collect_report_data",
    "read_story",
    "read_verdict",
]
