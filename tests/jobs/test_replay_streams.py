"""The three streams the driver's replay reads (``jobs/replay_streams.py``), on every recorded real incident
(``sample_logs/real-*``: ZooKeeper and KRaft, 0.10 to 4.1), the bundled sample and the shared real-log corpus,
against the replay's own
Python routing of the same lines (``replay.local.ClusterLines``, ``is_partition_line``, the impact facts).

That the replay on these streams equals the Spark job's is ``test_replay_driver.py``; here, that no line is lost
or read twice, and that a line the cluster-wide stages read is never streamed as only a partition's.
"""

from __future__ import annotations

import shutil
from collections import Counter
from operator import itemgetter
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from kafka_forensics.core.tables import EVENTS, EVENTS_SCHEMA
from kafka_forensics.jobs import process_pool, replay_partitions, replay_streams
from kafka_forensics.jobs.replay_driver import replay_in_driver
from kafka_forensics.jobs.replay_options import ReplayOptions
from kafka_forensics.jobs.replay_streams import IN_GROUP, ClusterOf, EventStreams
from kafka_forensics.parsers.records import parse_file
from kafka_forensics.replay.events import compact_batch
from kafka_forensics.replay.filters import EventFilter
from kafka_forensics.replay.impact import CONFIG_DUMP_START, SETTING, FactsBuilder
from kafka_forensics.replay.kraft import RECORD_TYPES, TOPIC_RECORD
from kafka_forensics.replay.local import ClusterLines, is_partition_line, replay_events
from kafka_forensics.replay.stale_epochs import RESPONSE, is_stale_epoch_event
from tests.jobs.test_replay_driver import CLUSTER_RX, SAMPLE, write_events
from tests.support.driver_replay import REPLAY_TABLES
from tests.support.paths import REAL_LOGS
from tests.support.recorded import parsed_rows, require_recorded


def _place(e: dict) -> tuple:
    return (e["source_file"], e["line_no"])


class Collected(list):
    """A ``replay_streams.LineSink`` that keeps every light line (merged in the order of the shares)."""

    def add(self, e: dict) -> None:
        self.append(e)

    def merge(self, other: list) -> None:
        self.extend(other)


@pytest.fixture(scope="module")
def events_dir(tmp_path_factory) -> Path:
    """The incidents, the sample and the shared real-log corpus in one events table; the corpus's 0.9 zombie
    controller logs a top-level error-11 response (``10-danisharora-0.9.0.0-state-change-zombie-controller.log:4``),
    which no recording has."""
    out = write_events(tmp_path_factory.mktemp("streams"), [*require_recorded(), SAMPLE])
    stored = pa.schema([f.with_nullable(True) for f in EVENTS_SCHEMA])
    pq.write_table(
        pa.Table.from_pylist(_corpus(), schema=EVENTS_SCHEMA).cast(stored), out / EVENTS / "part-corpus.parquet"
    )
    return out


def _corpus() -> list[dict]:
    return [e for path in sorted(REAL_LOGS.glob("*.log")) for e in parse_file(path.read_bytes(), str(path)).events]


def _cluster_of(path: str) -> str:
    return path.split("/sample_logs/")[-1].split("/")[0]


@pytest.fixture(scope="module")
def streamed(events_dir) -> tuple[list[dict], list[dict], list[tuple], dict[tuple, dict]]:
    """(side lines, light lines, partition groups, every parsed line by its place, as the replay reads it)."""
    rows = [r for d in (*require_recorded(), SAMPLE) for r in parsed_rows(d)[0]]
    lines = {_place(e): e for e in replay_events([*rows, *_corpus()])}
    light = Collected()
    with EventStreams(str(events_dir), _cluster_of) as streams:
        side = streams.split(light)
        return side, light, list(streams.partition_groups()), lines


def _cluster_wide(e: dict) -> bool:
    """Whether a stage other than the line's own partition's replay reads the line, by the replay's own code."""
    lines = ClusterLines()
    lines.add(e)
    only_its_partition = (
        not lines.cluster_lines
        and not lines.stale
        and list(lines.partitions)
        in (
            [],
            [(e.get("topic"), e.get("partition"))],
        )
    )
    return (
        not only_its_partition
        or e["event_type"] in RECORD_TYPES | {TOPIC_RECORD}
        or e.get("log_kind") == "metadata"
        or SETTING in (e.get("message") or "")
        or (e.get("message") or "").startswith(CONFIG_DUMP_START)
    )


def test_every_line_is_streamed_once(streamed):
    side, light, groups, lines = streamed
    grouped = [e for _, group in groups for e in group]
    facts_only = [e for e in light if not e[IN_GROUP]]
    assert Counter(map(_place, side + facts_only + grouped)) == Counter(dict.fromkeys(lines, 1))
    # the controllers' actions among the partitions' lines are read twice: light for the context, whole in their group
    assert {_place(e) for e in light if e[IN_GROUP]} <= {_place(e) for e in grouped}
    assert len(groups) == len({key for key, _ in groups}), "a partition's lines come as one group"


def test_a_line_the_cluster_reads_is_a_side_line(streamed):
    side, light, groups, lines = streamed
    grouped = [e for _, group in groups for e in group]
    assert all(is_partition_line(e) for e in grouped)
    # judged on the whole line (a group's lines keep their message only where a rule reads it; light lines have none)
    assert not [e for e in grouped if _cluster_wide(lines[_place(e)])]
    assert not [e for e in light if not e[IN_GROUP] and _cluster_wide(lines[_place(e)])]
    # the incidents have lines of every kind the side test looks for, so the checks above are not empty
    kinds = Counter(e["event_type"] for e in side)
    assert kinds["controller_elected"] and kinds["stale_controller_epoch_rejected"]
    assert any(e["event_type"] == RESPONSE and is_stale_epoch_event(e) for e in side)
    assert any(e.get("log_kind") == "metadata" for e in side) or any(e["event_type"] in RECORD_TYPES for e in side)


def test_a_group_is_in_the_order_the_spark_job_replays_it(streamed):
    _, _, groups, _ = streamed
    for (cluster, topic, partition), group in groups:
        assert {(e["cluster"], e["topic"], e["partition"]) for e in group} == {(cluster, topic, partition)}
        keys = [(e["ts"] is not None, e["ts"] or 0, e["source_file"], e["line_no"]) for e in group if e["ts"]]
        assert keys == sorted(keys)


def test_partitions_in_buckets_come_whole_and_in_order(streamed, events_dir, monkeypatch):
    """Past ``BUCKET_ROWS`` lines the partitions are sorted a bucket at a time: the same groups, the same order
    inside each."""
    _, _, groups, _ = streamed
    monkeypatch.setattr(replay_streams, "BUCKET_ROWS", 20_000)
    with EventStreams(str(events_dir), _cluster_of) as streams:
        streams.split(Collected())
        bucketed = list(streams.partition_groups())
    assert len(bucketed) == len({key for key, _ in bucketed})
    assert {key: list(map(_place, group)) for key, group in bucketed} == {
        key: list(map(_place, group)) for key, group in groups
    }
    assert [key for key, _ in bucketed] != [key for key, _ in groups]  # the buckets were used


def test_the_files_split_on_every_core_give_the_same_streams(streamed, events_dir):
    """With several processes each file share is split by its own (``replay_streams.split_share``): the same side
    lines in the table's order, the same light lines, the same groups in the same order inside each."""
    side, light, groups, _ = streamed
    if not process_pool.may_fork():
        pytest.skip("one core: the split never takes a pool here")
    shared = Collected()
    with EventStreams(str(events_dir), ClusterOf(r"/sample_logs/([^/]+)/"), lambda rows: 2) as streams:
        assert len(streams._files) > 2
        split_side = streams.split(shared)
        split_groups = list(streams.partition_groups())
    assert list(map(_place, split_side)) == list(map(_place, side))
    assert [e["cluster"] for e in split_side] == [e["cluster"] for e in side]  # ClusterOf: as _cluster_of
    assert Counter(map(_place, shared)) == Counter(map(_place, light))
    assert {key: list(map(_place, group)) for key, group in split_groups} == {
        key: list(map(_place, group)) for key, group in groups
    }


def test_the_replay_in_buckets_writes_the_same_outputs(events_dir, tmp_path, monkeypatch):
    options = ReplayOptions(cluster_from_path=CLUSTER_RX)
    whole, bucketed = tmp_path / "whole", tmp_path / "bucketed"
    for out in (whole, bucketed):
        shutil.copytree(events_dir / EVENTS, out / EVENTS)
    replay_in_driver(str(whole), options)
    monkeypatch.setattr(replay_streams, "BUCKET_ROWS", 20_000)
    replay_in_driver(str(bucketed), options)
    for name in REPLAY_TABLES:
        assert pq.read_table(bucketed / name).to_pylist() == pq.read_table(whole / name).to_pylist(), name
    for name in ("findings.jsonl", "story.json"):
        assert (bucketed / name).read_bytes() == (whole / name).read_bytes(), name
    assert pq.read_table(whole / "partition_timeline").num_rows > 100


def _recording(workers: list[int]):
    """``map_in_pool`` that records how many processes it was asked for."""
    original = replay_partitions.map_in_pool

    def pool(function, items, processes, cost):
        workers.append(processes)
        return original(function, items, processes, cost)

    return pool


def test_the_replay_on_every_core_writes_the_same_outputs(events_dir, tmp_path, monkeypatch):
    """The buckets replayed in a pool of processes (``jobs/replay_partitions.py``), each worker gathering its own
    facts and making the contexts it lacks, leave the tables and files the replay in one process leaves: with
    the defaults, and with a time window (which drops lines of every kind) and ``--kafka-version``."""
    if not process_pool.may_fork():
        pytest.skip("one core: the replay never takes a pool here")
    lines = pq.read_table(events_dir / EVENTS, columns=["ts"]).column("ts").drop_null()
    window = EventFilter(start=pc.min(lines).as_py() + (pc.max(lines).as_py() - pc.min(lines).as_py()) / 3)
    for options in (
        ReplayOptions(cluster_from_path=CLUSTER_RX),
        ReplayOptions(cluster_from_path=CLUSTER_RX, event_filter=window, kafka_version="2.4.1"),
    ):
        serial, pooled = tmp_path / f"serial-{id(options)}", tmp_path / f"pooled-{id(options)}"
        for out in (serial, pooled):
            shutil.copytree(events_dir / EVENTS, out / EVENTS)
        replay_in_driver(str(serial), options)
        workers: list[int] = []
        with monkeypatch.context() as patched:
            patched.setattr(replay_partitions, "POOL_MIN_ROWS", 0)
            patched.setattr(replay_partitions, "map_in_pool", _recording(workers))
            replay_in_driver(str(pooled), options)
        assert workers and workers[0] > 1, "the pool replayed the buckets"
        for name in REPLAY_TABLES:
            assert pq.read_table(pooled / name).to_pylist() == pq.read_table(serial / name).to_pylist(), name
        for name in ("findings.jsonl", "story.json", "replay_summary.json"):
            text = (serial / name).read_text().replace(str(serial), str(pooled))
            assert (pooled / name).read_text() == text, name
        assert pq.read_table(serial / "impact").num_rows > 10


def _with_clusters(events_dir: Path) -> pa.Table:
    """The events table as ``split`` reads it: every line with its ``cluster``."""
    table = pq.read_table(events_dir / EVENTS)
    clusters = [_cluster_of(path) for path in table.column("source_file").to_pylist()]
    return table.append_column("cluster", pa.array(clusters, pa.string()))


def _every_fact(facts: FactsBuilder, lines: list[dict]) -> dict:
    """What impact reads of ``facts`` about ``lines``: per cluster the last time and the deletions, and each
    broker's last line at or before the time of every line."""
    gathered = facts.facts({}, {})
    return {
        cluster: (
            f.logs_end,
            f.deletions,
            sorted(
                {(e["broker"], e["ts"], f.last_seen(e["broker"], e["ts"])) for e in lines if e["cluster"] == cluster},
                key=repr,
            ),
        )
        for cluster, f in gathered.items()
    }


def _variants(table: pa.Table) -> list[pa.Table]:
    """The table, and the table with what its real lines never have but a line may: KRaft metadata records with
    a broker (no incident's has one), and every seventh line without a time."""
    metadata = pc.equal(table.column("log_kind"), "metadata")
    with_broker = pc.if_else(metadata, pa.scalar(1, table.schema.field("broker").type), table.column("broker"))
    untimed = pa.array([k % 7 == 0 for k in range(table.num_rows)])
    ts = table.column("ts")
    mutated = table.set_column(table.schema.get_field_index("broker"), "broker", with_broker)
    mutated = mutated.set_column(
        mutated.schema.get_field_index("ts"), "ts", pc.if_else(untimed, pa.nulls(1, ts.type)[0], ts)
    )
    return [table, mutated]


@pytest.mark.parametrize("variant", [0, 1], ids=["real", "mutated"])
def test_the_facts_gathered_column_wise_are_the_facts_of_each_line(events_dir, variant):
    """A bucket's impact facts are gathered from its Arrow columns (``gather_facts``), not line by line: the same
    last times, topic deletions and brokers' lines as ``FactsBuilder.add`` of each line, on every recorded incident
    (topic deletions among them), the sample and the real-log corpus, in one table and in slices of it."""
    table = _variants(_with_clusters(events_dir))[variant]
    lines = compact_batch(table)
    by_line = FactsBuilder(itemgetter("cluster"))
    for e in lines:
        by_line.add(e)
    whole, sliced = FactsBuilder(itemgetter("cluster")), FactsBuilder(itemgetter("cluster"))
    replay_streams.gather_facts(whole, table)
    for start in range(0, table.num_rows, 5_000):
        replay_streams.gather_facts(sliced, table.slice(start, 5_000))
    timed = [e for e in lines if e["ts"] is not None and e["broker"] is not None]
    expected = _every_fact(by_line, timed)
    assert any(deletions for _, deletions, _ in expected.values()), "the incidents delete topics"
    if variant:
        assert any(e["log_kind"] == "metadata" for e in timed) and any(e["ts"] is None for e in lines)
    assert _every_fact(whole, timed) == expected
    assert _every_fact(sliced, timed) == expected


@pytest.mark.parametrize("variant", [0, 1], ids=["real", "mutated"])
@pytest.mark.parametrize("third", ["start", "end", "both"])
def test_the_time_window_keeps_the_rows_it_keeps_line_by_line(events_dir, third, variant):
    """``KeptLines.rows``, the window on a bucket's Arrow rows, keeps exactly the lines ``keeps_time`` keeps: the
    cluster lines and KRaft records before ``--start-time`` too (with or without a time), and no other line
    without a time."""
    table = _variants(_with_clusters(events_dir))[variant]
    lines = compact_batch(table)
    times = sorted(e["ts"] for e in lines if e["ts"] is not None)
    start, end = times[len(times) // 3], times[2 * len(times) // 3]
    window = EventFilter(start=start if third != "end" else None, end=end if third != "start" else None)
    kept = replay_partitions.KeptLines(window)
    expected = [_place(e) for e in lines if kept(e)]
    assert 0 < len(expected) < len(lines)
    if third == "start":
        assert any(e["ts"] is None or e["ts"] < start for e in lines if kept(e)), "lines before start are kept"
    assert [_place(e) for e in compact_batch(kept.rows(table))] == expected
    assert replay_partitions.KeptLines(None).rows(table) is table


def test_no_events_table_is_an_input_error(tmp_path: Path):
    from kafka_forensics.core.errors import InputError

    with pytest.raises(InputError, match="no events table"):
        EventStreams(str(tmp_path), lambda path: "")
