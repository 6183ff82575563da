"""The ``impact`` and ``impact_totals`` tables in Spark, from the replay's tables (``replay/impact.py`` says
what each kind means; this is the same computation with window functions, checked against it by a test).

1. Effective rows: a broker-view row takes the values of the last controller-side row before it
   (``last(..., ignorenulls)`` over the partition's rows in ``seq`` order).
2. Pieces: each row is cut where its leader's broker changed liveness (``brokers`` is small: broadcast).
3. Flags per piece and kind; episodes are runs of flagged pieces (``lag`` marks a start, a running sum
   numbers them, ``lead`` gives the piece that ends each one).
4. min.insync.replicas per partition: ``--min-isr``, else the lines that state it (``replay/impact.py``).
Only aggregates of a few rows (the cluster-wide min.insync.replicas, the end of the logs per cluster)
reach the driver.
"""

from __future__ import annotations

from typing import Optional

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from kafka_forensics.core.tables import IMPACT_SCHEMA, IMPACT_TOTALS_SCHEMA
from kafka_forensics.replay.cluster import DELETION_COMPLETED
from kafka_forensics.replay.findings import MAX_EVIDENCE
from kafka_forensics.replay.impact import (
    CLUSTER_CONFIG_RX,
    CONFIG_DUMP_RX,
    CONFIG_DUMP_START,
    CREATED_LOG_RX,
    DEFAULT_SESSION_TIMEOUT_MS,
    DELETION,
    DETECTION,
    ELECTION,
    KRAFT_ROLES_RX,
    KRAFT_SESSION_RX,
    LEADER_LOST,
    LEADER_NOT_ALIVE,
    LEADERLESS_KINDS,
    NO_LEADER,
    NO_LEADER_REASON,
    NO_LEADER_STATES,
    NOT_COUNTED_STATES,
    NOT_LIVE_BROKER_STATES,
    RECOVERY,
    TOPIC_CONFIG_RX,
    UNAVAILABLE,
    UNCLEAN_ELECTION,
    UNDER_MIN_ISR,
    UNDER_REPLICATED,
    ZK_SESSION_RX,
    MinIsrOption,
)
from kafka_forensics.replay.partition_view import BROKER_VIEW, FAILURE
from kafka_forensics.statemachines.states import PartitionState as P

from .lineage import materialized

_KEY = ("cluster", "topic", "partition")
_VALUES = ("state", "leader", "isr", "replicas")
_NO_MIN_ISR = MinIsrOption()  # no --min-isr: what the logs state


def _ref(df_file: str = "source_file", df_line: str = "line_no") -> Column:
    return F.concat_ws(":", F.col(df_file), F.col(df_line).cast("string"))


def _latest(df: DataFrame, keys: list[str]) -> DataFrame:
    """The last row per ``keys`` in (ts, file, line) order (the value in force at the end)."""
    order = F.struct(F.coalesce(F.col("ts"), F.lit(0).cast("timestamp")), "source_file", "line_no")
    return (
        df.groupBy(*keys)
        .agg(F.max_by(F.struct("value", "ref"), order).alias("m"))
        .select(*keys, F.col("m.value").alias("value"), F.col("m.ref").alias("ref"))
    )


def min_isr_frames(events: DataFrame) -> tuple[DataFrame, DataFrame, list[Optional[dict]]]:
    """(per partition, per topic, [cluster setting, config dump]) - the last two are one row each at most."""
    message = F.coalesce(F.col("message"), F.lit(""))
    created = events.filter(message.rlike(CREATED_LOG_RX)).select(
        F.coalesce(
            F.nullif(F.regexp_extract(message, CREATED_LOG_RX, 1), F.lit("")),
            F.regexp_extract(message, CREATED_LOG_RX, 3),
        ).alias("topic"),
        F.coalesce(
            F.nullif(F.regexp_extract(message, CREATED_LOG_RX, 2), F.lit("")),
            F.regexp_extract(message, CREATED_LOG_RX, 4),
        )
        .cast("int")
        .alias("partition"),
        F.regexp_extract(message, CREATED_LOG_RX, 5).cast("int").alias("value"),
        _ref().alias("ref"),
        "ts",
        "source_file",
        "line_no",
    )
    topics = events.filter(message.rlike(TOPIC_CONFIG_RX)).select(
        F.regexp_extract(message, TOPIC_CONFIG_RX, 1).alias("topic"),
        F.regexp_extract(message, TOPIC_CONFIG_RX, 2).cast("int").alias("value"),
        _ref().alias("ref"),
        "ts",
        "source_file",
        "line_no",
    )
    cluster = _latest(
        events.filter(message.rlike(CLUSTER_CONFIG_RX)).select(
            F.regexp_extract(message, CLUSTER_CONFIG_RX, 1).cast("int").alias("value"),
            _ref().alias("ref"),
            F.lit(1).alias("k"),
            "ts",
            "source_file",
            "line_no",
        ),
        ["k"],
    )
    dump_lines = events.filter(message.startswith(CONFIG_DUMP_START)).select(
        "source_file", "line_no", F.posexplode(F.split("message", "\n")).alias("pos", "text")
    )
    dumps = dump_lines.filter(F.col("text").rlike(CONFIG_DUMP_RX)).select(
        F.regexp_extract("text", CONFIG_DUMP_RX, 1).cast("int").alias("value"),
        F.concat_ws(":", "source_file", (F.col("line_no") + F.col("pos")).cast("string")).alias("ref"),
    )
    dump = dumps.agg(F.max(F.struct("value", "ref")).alias("m")).select("m.value", "m.ref")  # the strictest broker
    cluster_rows = [r.asDict() for r in cluster.select("value", "ref").collect()]  # one row at most
    dump_rows = [r.asDict() for r in dump.filter(F.col("value").isNotNull()).collect()]  # one row at most
    return (
        _latest(created, ["topic", "partition"]),
        _latest(topics, ["topic"]),
        [cluster_rows[0] if cluster_rows else None, dump_rows[0] if dump_rows else None],
    )


def _with_min_isr(pieces: DataFrame, events: DataFrame, option: MinIsrOption) -> DataFrame:
    per_partition, per_topic, (cluster_row, dump_row) = min_isr_frames(events)
    out = pieces.join(
        per_partition.select("topic", "partition", F.col("value").alias("p_v"), F.col("ref").alias("p_r")),
        ["topic", "partition"],
        "left",
    ).join(per_topic.select("topic", F.col("value").alias("t_v"), F.col("ref").alias("t_r")), ["topic"], "left")
    candidates_v: list[Column] = []
    candidates_r: list[Column] = []
    if option.topics:
        topic_map = F.create_map(*[x for t, n in sorted(option.topics.items()) for x in (F.lit(t), F.lit(n))])
        candidates_v.append(topic_map[F.col("topic")])
        candidates_r.append(F.when(topic_map[F.col("topic")].isNotNull(), F.lit("--min-isr")))
    if option.default is not None:
        candidates_v.append(F.lit(option.default))
        candidates_r.append(F.lit("--min-isr"))
    candidates_v += [F.col("p_v"), F.col("t_v")]
    candidates_r += [F.when(F.col("p_v").isNotNull(), F.col("p_r")), F.when(F.col("t_v").isNotNull(), F.col("t_r"))]
    for row in (cluster_row, dump_row):
        if row is not None:
            candidates_v.append(F.lit(row["value"]))
            candidates_r.append(F.lit(row["ref"]))
    return out.withColumn("min_isr", F.coalesce(*candidates_v).cast("int")).withColumn(
        "min_isr_source", F.coalesce(*candidates_r)
    )


def effective_frame(timeline: DataFrame) -> DataFrame:
    """Broker-view rows not newer than the last controller-side row take its values (``effective_rows``)."""
    w = Window.partitionBy(*_KEY).orderBy("seq").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    epochs = F.struct(
        F.coalesce(F.col("leader_epoch"), F.lit(-1)).alias("le"),
        F.coalesce(F.col("partition_epoch"), F.lit(-1)).alias("pe"),
    )
    own = F.struct(*_VALUES, epochs.alias("epochs"))
    view = F.coalesce(F.col("source"), F.lit("")) == BROKER_VIEW
    last = F.last(F.when(~view, own), ignorenulls=True).over(w)
    echo = view & last.isNotNull() & (epochs <= last["epochs"])
    eff = F.when(echo, last).otherwise(own)
    return timeline.withColumn("_eff", eff).select(
        *[F.col(f"_eff.{c}").alias(c) if c in _VALUES else F.col(c) for c in timeline.columns]
    )


def _pieces(rows: DataFrame, brokers: DataFrame) -> DataFrame:
    """Each row cut where its leader's broker changed liveness; ``leader_live`` null = unknown."""
    b = F.broadcast(
        brokers.filter(F.col("ts_start").isNotNull()).select(
            F.col("cluster").alias("b_cluster"),
            F.col("broker").alias("b_broker"),
            F.col("ts_start").alias("b_start"),
            (~F.col("state").isin(*NOT_LIVE_BROKER_STATES)).alias("b_live"),
            F.col("evidence").alias("b_ref"),
        )
    )
    has_leader = F.col("leader").isNotNull() & (F.col("leader") >= 0) & F.col("ts_start").isNotNull()
    same = (F.col("cluster") == F.col("b_cluster")) & (F.col("leader") == F.col("b_broker"))
    live_at_start = (
        rows.filter(has_leader)
        .join(b, same & (F.col("b_start") <= F.col("ts_start")))
        .groupBy(*_KEY, "seq")
        .agg(F.max_by("b_live", F.struct("b_start", "b_ref")).alias("start_live"))
    )
    starts = rows.join(live_at_start, [*_KEY, "seq"], "left").select(
        *_KEY,
        "seq",
        F.col("ts_start").alias("cut"),
        F.col("start_live").alias("leader_live"),
        F.col("cause").alias("cause"),
        F.lit(0).alias("order"),
    )
    inner = (
        rows.filter(has_leader)
        .join(
            b,
            same
            & (F.col("b_start") > F.col("ts_start"))
            & (F.col("ts_end").isNull() | (F.col("b_start") < F.col("ts_end"))),
        )
        .select(
            *_KEY,
            "seq",
            F.col("b_start").alias("cut"),
            F.col("b_live").alias("leader_live"),
            F.col("b_ref").alias("cause"),
            F.lit(1).alias("order"),
        )
    )
    cuts = starts.unionByName(inner)
    w = Window.partitionBy(*_KEY, "seq").orderBy("cut", "order", "cause")
    return (
        cuts.join(rows.drop("cause"), [*_KEY, "seq"])
        .withColumn("piece", F.row_number().over(w))
        .withColumn("piece_end", F.coalesce(F.lead("cut").over(w), F.col("ts_end")))
        .select(
            *_KEY,
            "seq",
            "piece",
            F.col("cut").alias("p_start"),
            F.col("piece_end").alias("p_end"),
            "state",
            "leader",
            "isr",
            "replicas",
            "leader_live",
            "cause",
            (F.coalesce(F.col("source"), F.lit("")) == FAILURE).alias("failure"),
        )
        .filter(F.col("p_start").isNotNull())
    )


def _no_leader() -> Column:
    return F.col("state").isin(*NO_LEADER_STATES) | (F.col("leader").isNotNull() & (F.col("leader") < 0))


def _flags() -> dict[str, Column]:
    counted = ~F.coalesce(F.col("state").isin(*NOT_COUNTED_STATES), F.lit(False))
    no_leader = F.coalesce(_no_leader(), F.lit(False))
    unavailable = no_leader | F.coalesce(~F.col("leader_live"), F.lit(False))
    under_replicated = (
        F.col("isr").isNotNull()
        & F.col("replicas").isNotNull()
        & (F.size("replicas") > 0)
        & (F.size("isr") < F.size("replicas"))
    )
    under_min = F.col("min_isr").isNotNull() & (
        no_leader | (F.col("isr").isNotNull() & (F.size("isr") < F.col("min_isr")))
    )
    return {
        UNAVAILABLE: counted & unavailable,
        UNDER_REPLICATED: counted & F.coalesce(under_replicated, F.lit(False)),
        UNDER_MIN_ISR: counted & F.coalesce(under_min, F.lit(False)),
    }


def impact_frame(
    timeline: DataFrame,
    brokers: DataFrame,
    findings: DataFrame,
    events: DataFrame,
    cluster_events: DataFrame,
    option: MinIsrOption = _NO_MIN_ISR,
) -> DataFrame:
    """The ``impact`` table. ``events``: the parsed lines with their ``cluster`` (their messages state
    min.insync.replicas and session timeouts); ``cluster_events``: the replay's prepared lines."""
    logs_end = cluster_events.groupBy("cluster").agg(F.max("ts").alias("logs_end"))
    pieces = _with_min_isr(_pieces(effective_frame(timeline), brokers), events, option)
    flags = _flags()
    kinds = F.array(*[F.struct(F.lit(k).alias("kind"), flag.alias("flag")) for k, flag in flags.items()])
    per_kind = pieces.withColumn("_k", F.explode(kinds)).select("*", "_k.kind", "_k.flag").drop("_k")
    w = Window.partitionBy(*_KEY, "kind").orderBy("seq", "piece")  # the timeline's order
    nxt = F.struct(
        F.lead("p_start").over(w).alias("start"),
        F.lead("cause").over(w).alias("cause"),
        F.lead("state").over(w).alias("state"),
        F.lead("leader").over(w).alias("leader"),
    )
    marked = (
        per_kind.withColumn("_prev", F.lag("flag").over(w))
        .withColumn("_begins", (F.col("flag") & ~F.coalesce(F.col("_prev"), F.lit(False))).cast("int"))
        .withColumn("_episode", F.sum("_begins").over(w.rowsBetween(Window.unboundedPreceding, Window.currentRow)))
        .withColumn("_next", nxt)
        .filter(F.col("flag"))
    )
    order = F.struct("seq", "piece")
    failure_refs = F.transform(
        F.array_sort(F.collect_list(F.when(F.col("failure"), F.struct(order.alias("o"), F.col("cause").alias("c"))))),
        lambda x: x["c"],
    )
    episodes = materialized(  # joined below with what is derived from it (lineage.py)
        marked.groupBy(*_KEY, "kind", "_episode").agg(
            F.min_by(
                F.struct("p_start", "cause", "leader", "isr", "replicas", "state", "min_isr", "min_isr_source"), order
            ).alias("first"),
            F.max_by(F.struct("p_end", "_next"), order).alias("last"),
            failure_refs.alias("failures"),
        )
    )
    ends = F.col("last._next")
    end_ts = F.coalesce(ends["start"], F.col("last.p_end"))
    end_ref = ends["cause"]
    start_leader = F.col("first.leader")
    first_no_leader = F.col("first.state").isin(*NO_LEADER_STATES) | (start_leader.isNotNull() & (start_leader < 0))
    seconds = lambda a, b: F.round(  # noqa: E731
        F.greatest((F.unix_micros(b) - F.unix_micros(a)) / F.lit(1e6), F.lit(0.0)), 3
    )
    no_refs = F.array().cast("array<string>")
    refs = F.array_distinct(
        F.concat(
            F.array(F.col("first.cause")),
            F.col("failures"),
            F.coalesce(F.when(end_ref.isNotNull(), F.array(end_ref)), no_refs),
        )
    )
    unclean = findings.filter((F.col("rule") == "unclean_election") & F.col("ts").isNotNull()).select(
        F.col("cluster").alias("u_cluster"),
        F.col("topic").alias("u_topic"),
        F.col("partition").alias("u_partition"),
        F.col("ts").alias("u_ts"),
    )
    # a leaderless episode during which an unclean election is dated ended with it (replay.impact._ended_by)
    hits = (
        episodes.select(*_KEY, "kind", "_episode", F.col("first.p_start").alias("_s"), ends["start"].alias("_e"))
        .filter(F.col("kind").isin(*LEADERLESS_KINDS) & F.col("_e").isNotNull())
        .join(
            unclean,
            (F.col("cluster") == F.col("u_cluster"))
            & (F.col("topic") == F.col("u_topic"))
            & (F.col("partition") == F.col("u_partition"))
            & (F.col("u_ts") > F.col("_s"))
            & (F.col("u_ts") <= F.col("_e")),
        )
        .select(*_KEY, "kind", "_episode")
        .distinct()
        .withColumn("u_hit", F.lit(True))
    )
    out = episodes.join(logs_end, ["cluster"], "left").join(hits, [*_KEY, "kind", "_episode"], "left")
    unclean_end = F.coalesce(F.col("u_hit"), F.lit(False))
    is_open = end_ts.isNull()
    ended_by = (
        F.when(is_open, F.lit(None).cast("string"))
        .when(F.coalesce(ends["state"] == P.NonExistentPartition.value, F.lit(False)), F.lit(DELETION))
        .when(unclean_end, F.lit(UNCLEAN_ELECTION))
        .when(
            (F.col("kind") == UNAVAILABLE) & ends["start"].isNotNull() & ~ends["leader"].eqNullSafe(start_leader),
            F.lit(ELECTION),
        )
        .otherwise(F.lit(RECOVERY))
    )
    is_min = F.col("kind") == UNDER_MIN_ISR
    result = out.select(
        *_KEY,
        "kind",
        (F.col("_episode") - 1).cast("int").alias("episode"),
        F.col("first.p_start").alias("ts_start"),
        end_ts.alias("ts_end"),
        is_open.alias("open"),
        F.when(~is_open, seconds(F.col("first.p_start"), end_ts)).alias("duration_seconds"),
        F.coalesce(seconds(F.col("first.p_start"), F.coalesce(end_ts, F.col("logs_end"))), F.lit(0.0)).alias(
            "known_seconds"
        ),
        F.when(start_leader.isNull() | (start_leader < 0), F.lit(NO_LEADER)).otherwise(start_leader).alias("leader"),
        F.col("first.isr").alias("isr"),
        F.col("first.replicas").alias("replicas"),
        F.when(is_min, F.col("first.min_isr")).alias("min_isr"),
        F.when(is_min, F.col("first.min_isr_source")).alias("min_isr_source"),
        F.when(
            F.col("kind") == UNAVAILABLE,
            F.when(F.coalesce(first_no_leader, F.lit(False)), F.lit(NO_LEADER_REASON)).otherwise(
                F.lit(LEADER_NOT_ALIVE)
            ),
        ).alias("reason"),
        F.size("failures").cast("int").alias("failed_elections"),
        ended_by.alias("ended_by"),
        F.col("first.cause").alias("start_evidence"),
        end_ref.alias("end_evidence"),
        F.slice(refs, 1, MAX_EVIDENCE).alias("evidence"),
        F.size(refs).cast("int").alias("evidence_count"),
    )
    lost = _leader_lost(timeline, brokers, cluster_events, session_timeouts(events))
    result = materialized(_with_last_seen(materialized(result), cluster_events).unionByName(lost))
    result = _cut_at_deletions(result, cluster_events)
    return result.select(*[F.col(f.name).cast(_spark_type(f.name)) for f in IMPACT_SCHEMA])


def _writer_lines(cluster_events: DataFrame) -> DataFrame:
    """Every line with the broker that wrote it (metadata records are nobody's)."""
    return cluster_events.filter(
        F.col("broker").isNotNull() & F.col("ts").isNotNull() & (F.coalesce(F.col("log_kind"), F.lit("")) != "metadata")
    ).select(
        F.col("cluster").alias("w_cluster"),
        F.col("broker").alias("w_broker"),
        F.col("ts").alias("w_ts"),
        "source_file",
        "line_no",
    )


def session_timeouts(events: DataFrame) -> DataFrame:
    """cluster, s_ms, s_ref: the longest session timeout a config dump of the cluster states (``session_timeout_of``)."""
    dumps = events.filter(F.coalesce(F.col("message"), F.lit("")).startswith(CONFIG_DUMP_START))
    kraft = F.exists(F.split("message", "\n"), lambda x: x.rlike(KRAFT_ROLES_RX))
    lines = dumps.select(
        "cluster",
        "source_file",
        "line_no",
        kraft.alias("kraft"),
        F.posexplode(F.split("message", "\n")).alias("pos", "text"),
    )
    found = lines.filter(
        (F.col("kraft") & F.col("text").rlike(KRAFT_SESSION_RX))
        | (~F.col("kraft") & F.col("text").rlike(ZK_SESSION_RX))
    )
    value = F.coalesce(
        F.nullif(F.regexp_extract("text", KRAFT_SESSION_RX, 1), F.lit("")), F.regexp_extract("text", ZK_SESSION_RX, 1)
    ).cast("long")
    ref = F.concat_ws(":", "source_file", (F.col("line_no") + F.col("pos")).cast("string"))
    # per dump the first matching line, then the largest (ms, ref) per cluster, as the pure code does
    per_dump = found.groupBy("cluster", "source_file", "line_no").agg(
        F.min_by(F.struct(value.alias("ms"), ref.alias("ref")), F.col("pos")).alias("t")
    )
    return (
        per_dump.groupBy("cluster")
        .agg(F.max("t").alias("t"))
        .select(F.col("cluster").alias("s_cluster"), F.col("t.ms").alias("s_ms"), F.col("t.ref").alias("s_ref"))
    )


def _leader_lost(timeline: DataFrame, brokers: DataFrame, cluster_events: DataFrame, timeouts: DataFrame) -> DataFrame:
    """``leader_lost`` (``replay.impact._leader_lost``): from a leader's last line to its logged death."""
    bw = Window.partitionBy("cluster", "broker").orderBy("ts_start", "evidence")
    deaths = (
        brokers.filter(F.col("ts_start").isNotNull())
        .withColumn("prev", F.lag("state").over(bw))
        .filter(F.col("state").isin(*NOT_LIVE_BROKER_STATES) & F.col("prev").isNotNull())
        .filter(~F.col("prev").isin(*NOT_LIVE_BROKER_STATES))
        .select(
            F.col("cluster").alias("d_cluster"),
            F.col("broker").alias("d_broker"),
            F.col("ts_start").alias("died"),
            F.col("state").alias("d_state"),
            F.col("evidence").alias("d_ref"),
        )
    )
    pw = Window.partitionBy(*_KEY).orderBy("seq")
    rows = effective_frame(timeline)
    runs = (
        rows.withColumn("_new", (~F.lag("leader").over(pw).eqNullSafe(F.col("leader"))).cast("int"))
        .withColumn("_run", F.sum("_new").over(pw.rowsBetween(Window.unboundedPreceding, Window.currentRow)))
        .withColumn("led_from", F.first("ts_start").over(Window.partitionBy(*_KEY, "_run").orderBy("seq")))
    )
    hit = runs.join(
        F.broadcast(deaths),
        (F.col("cluster") == F.col("d_cluster"))
        & (F.col("leader") == F.col("d_broker"))
        & F.col("ts_start").isNotNull()
        & (F.col("ts_start") < F.col("died"))
        & (F.col("ts_end").isNull() | (F.col("died") <= F.col("ts_end"))),
    )
    # the first row (in seq order) that held the dead broker as leader at its death, per death
    first = hit.withColumn(
        "_n", F.row_number().over(Window.partitionBy(*_KEY, "d_broker", "died", "d_ref").orderBy("seq"))
    ).filter(F.col("_n") == 1)
    lines = _writer_lines(cluster_events)
    seen = (
        first.select(*_KEY, "d_broker", "died", "d_ref")
        .join(
            lines,
            (F.col("cluster") == F.col("w_cluster"))
            & (F.col("w_broker") == F.col("d_broker"))
            & (F.col("w_ts") <= F.col("died")),
        )
        .groupBy(*_KEY, "d_broker", "died", "d_ref")
        .agg(
            F.max_by(
                F.struct(F.col("w_ts").alias("ts"), _ref().alias("ref")), F.struct("w_ts", "source_file", "line_no")
            ).alias("seen")
        )
    )
    lost = first.join(seen, [*_KEY, "d_broker", "died", "d_ref"]).join(
        F.broadcast(timeouts), F.col("cluster") == F.col("s_cluster"), "left"
    )
    timeout_ms = F.coalesce(F.col("s_ms"), F.lit(DEFAULT_SESSION_TIMEOUT_MS))
    by_timeout = F.col("died") - F.make_dt_interval(secs=timeout_ms / F.lit(1000.0))
    start = F.greatest(F.col("seen.ts"), F.coalesce(F.col("led_from"), F.col("seen.ts")), by_timeout)
    seconds = F.round(F.greatest((F.unix_micros(F.col("died")) - F.unix_micros(start)) / F.lit(1e6), F.lit(0.0)), 3)
    order = Window.partitionBy(*_KEY).orderBy("died", "d_broker", "d_ref")
    return (
        lost.filter(start < F.col("died"))
        .withColumn("_start", start)
        .withColumn("_seconds", seconds)
        .select(
            *_KEY,
            F.lit(LEADER_LOST).alias("kind"),
            (F.row_number().over(order) - 1).cast("int").alias("episode"),
            F.col("_start").alias("ts_start"),
            F.col("died").alias("ts_end"),
            F.lit(False).alias("open"),
            F.col("_seconds").alias("duration_seconds"),
            F.col("_seconds").alias("known_seconds"),
            F.col("d_broker").alias("leader"),
            "isr",
            "replicas",
            F.lit(None).cast("int").alias("min_isr"),
            F.lit(None).cast("string").alias("min_isr_source"),
            F.col("d_state").alias("reason"),
            F.lit(0).alias("failed_elections"),
            F.lit(DETECTION).alias("ended_by"),
            F.col("seen.ref").alias("start_evidence"),
            F.col("d_ref").alias("end_evidence"),
            F.when(F.col("s_ref").isNull(), F.array(F.col("seen.ref"), F.col("d_ref")))
            .otherwise(F.array(F.col("seen.ref"), F.col("s_ref"), F.col("d_ref")))
            .alias("evidence"),
            F.when(F.col("s_ref").isNull(), F.lit(2)).otherwise(F.lit(3)).alias("evidence_count"),
            F.col("seen.ts").alias("leader_last_seen"),
            F.col("seen.ref").alias("leader_last_seen_evidence"),
        )
    )


_EPISODE = (*_KEY, "kind", "episode")


def _cut_at_deletions(episodes: DataFrame, cluster_events: DataFrame) -> DataFrame:
    """An episode that outlives its topic's logged deletion ends there (``replay.impact._cut_at_deletion``)."""
    deletions = cluster_events.filter(
        (F.col("event_type") == DELETION_COMPLETED) & F.col("topic").isNotNull() & F.col("ts").isNotNull()
    ).select("cluster", "topic", F.col("ts").alias("d_ts"), _ref().alias("d_ref"))
    hits = (
        episodes.select(*_EPISODE, "ts_start", "ts_end")
        .join(F.broadcast(deletions), ["cluster", "topic"])
        .filter((F.col("d_ts") > F.col("ts_start")) & (F.col("ts_end").isNull() | (F.col("d_ts") < F.col("ts_end"))))
        .groupBy(*_EPISODE)
        .agg(F.min_by(F.struct("d_ts", "d_ref"), F.struct("d_ts", "d_ref")).alias("d"))
    )
    hit = F.col("d").isNotNull()
    refs = F.array_distinct(
        F.concat(F.filter("evidence", lambda x: ~x.eqNullSafe(F.col("end_evidence"))), F.array(F.col("d.d_ref")))
    )
    seconds = F.round(
        F.greatest((F.unix_micros(F.col("d.d_ts")) - F.unix_micros(F.col("ts_start"))) / F.lit(1e6), F.lit(0.0)), 3
    )
    changed = {
        "ts_end": F.col("d.d_ts"),
        "open": F.lit(False),
        "duration_seconds": seconds,
        "known_seconds": seconds,
        "ended_by": F.lit(DELETION),
        "end_evidence": F.col("d.d_ref"),
        "evidence": F.slice(refs, 1, MAX_EVIDENCE),
        "evidence_count": F.size(refs),
    }
    joined = episodes.join(hits, list(_EPISODE), "left")
    return joined.select(
        *[F.when(hit, changed[c]).otherwise(F.col(c)).alias(c) if c in changed else F.col(c) for c in episodes.columns]
    )


def _with_last_seen(episodes: DataFrame, cluster_events: DataFrame) -> DataFrame:
    """``leader_last_seen``: the last line a dead leader wrote before its death was logged."""
    lines = _writer_lines(cluster_events)
    wanted = episodes.filter(F.col("reason") == LEADER_NOT_ALIVE).select(*_EPISODE, "leader", "ts_start")
    seen = (
        lines.join(
            F.broadcast(wanted),
            (F.col("w_cluster") == F.col("cluster"))
            & (F.col("w_broker") == F.col("leader"))
            & (F.col("w_ts") <= F.col("ts_start")),
        )
        .groupBy(*_EPISODE)
        .agg(
            F.max_by(
                F.struct(F.col("w_ts").alias("ts"), _ref().alias("ref")), F.struct("w_ts", "source_file", "line_no")
            ).alias("seen")
        )
    )
    return episodes.join(seen, list(_EPISODE), "left").select(
        *episodes.columns,
        F.col("seen.ts").alias("leader_last_seen"),
        F.col("seen.ref").alias("leader_last_seen_evidence"),
    )


def _spark_type(name: str) -> str:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(IMPACT_SCHEMA)[name].dataType.simpleString()


def impact_totals_frame(impact: DataFrame) -> DataFrame:
    """``impact_totals``: per (cluster, kind, topic) and per (cluster, kind) with topic null."""
    longest = F.max_by(
        F.struct("topic", "partition"), F.struct("known_seconds", "topic", (-F.col("partition")).alias("np"))
    )
    aggs = [
        F.countDistinct("topic", "partition").alias("partitions"),
        F.count(F.lit(1)).alias("episodes"),
        F.sum(F.col("open").cast("long")).alias("open_episodes"),
        F.round(F.sum("known_seconds"), 3).alias("seconds"),
        F.max("known_seconds").alias("longest_seconds"),
        longest.alias("longest"),
        F.min("ts_start").alias("first_start"),
        F.when(F.max(F.col("open").cast("int")) == 1, F.lit(None)).otherwise(F.max("ts_end")).alias("last_end"),
    ]
    per_topic = impact.groupBy("cluster", "kind", "topic").agg(*aggs)
    per_cluster = impact.groupBy("cluster", "kind").agg(*aggs).withColumn("topic", F.lit(None).cast("string"))
    both = per_topic.unionByName(per_cluster)
    return both.select(
        "cluster",
        "topic",
        "kind",
        F.col("partitions").cast("long"),
        F.col("episodes").cast("long"),
        F.col("open_episodes").cast("long"),
        "seconds",
        "longest_seconds",
        F.col("longest.topic").alias("longest_topic"),
        F.col("longest.partition").cast("int").alias("longest_partition"),
        "first_start",
        F.col("last_end").cast("timestamp").alias("last_end"),
    ).select(*[f.name for f in IMPACT_TOTALS_SCHEMA])


__all__ = ["MinIsrOption", "impact_frame", "impact_totals_frame", "min_isr_frames"]
