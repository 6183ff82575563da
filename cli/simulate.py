"""``kafka-forensics simulate``: write a simulated incident's logs and its ground truth.

A scenario (``--scenario NAME``) writes a small cluster's ``state-change.log``, ``controller.log``
and ``server.log`` per broker in the exact text of ``--kafka-version`` plus ``truth.json``;
``--scale`` writes millions of lines for benchmarks.
"""

from __future__ import annotations

import click

from kafka_forensics.core.errors import UsageError
from kafka_forensics.simulator.profile import SUPPORTED
from kafka_forensics.simulator.scenarios import SCENARIOS

from .common import debug_option, run_guarded

_HELP = (
    "Simulate a Kafka cluster and write its logs exactly as that release would, with truth.json.\n\n"
    "\b\nScenarios:\n"
    + "".join(f"  {s.name:<22} {s.summary}\n" for s in SCENARIOS.values())
    + "\n\b\nExamples:\n  kafka-forensics simulate --scenario zombie-controller --kafka-version 1.1 --out sim/\n"
    + "\n\b\nScale mode (benchmarks): kafka-forensics simulate --scale --brokers 30 --topics 200 "
    "--partitions 100000 --failovers 5 --out DIR"
)


@click.command("simulate", help=_HELP)
@click.option("--scenario", "scenario", type=click.Choice(sorted(SCENARIOS)), help="Incident to simulate.")
@click.option(
    "--kafka-version",
    "kafka_version",
    default="2.4",
    show_default=True,
    help=f"Release whose log text is written: {', '.join(SUPPORTED)} (any patch of those lines).",
)
@click.option("--out", "out", required=True, type=click.Path(file_okay=False), help="Output directory.")
@click.option("--seed", default=0, show_default=True, type=int, help="Same seed, byte-identical files.")
@click.option("--trace", is_flag=True, help="state.change.logger at TRACE (default: the release's shipped level).")
@click.option("--gzip", "gzip_", is_flag=True, help="Gzip the hourly-rotated files.")
@click.option("--scale", is_flag=True, help="Benchmark mode: a big cluster, millions of lines, no truth findings.")
@click.option("--brokers", default=30, show_default=True, type=int, help="Scale mode: brokers.")
@click.option("--topics", default=200, show_default=True, type=int, help="Scale mode: topics.")
@click.option("--partitions", default=100_000, show_default=True, type=int, help="Scale mode: partitions in all.")
@click.option(
    "--failovers",
    default=5,
    show_default=True,
    type=int,
    help="Scale mode: rounds of broker crash/restart and controller failover.",
)
@debug_option
def simulate(
    scenario, kafka_version, out, seed, trace, gzip_, scale, brokers, topics, partitions, failovers, debug
) -> None:

    def work() -> None:
        if scale:
            from kafka_forensics.simulator.scale import run_scale

            res = run_scale(
                out,
                kafka_version=kafka_version,
                brokers=brokers,
                topics=topics,
                partitions=partitions,
                failovers=failovers,
                seed=seed,
                trace=trace,
                gzip=gzip_,
            )
            click.echo(
                f"wrote {res.lines:,} lines ({res.records:,} records, {res.bytes / 1e6:,.1f} MB) in "
                f"{res.files} files under {out} in {res.seconds:,.1f} s: {res.lines_per_second:,.0f} lines/s"
            )
            return
        if not scenario:
            raise UsageError("give --scenario NAME or --scale")
        from kafka_forensics.simulator.scenarios import run_scenario

        res = run_scenario(scenario, kafka_version, out, seed=seed, trace=trace, gzip=gzip_)
        truth = res.truth
        click.echo(
            f"{scenario} on Kafka {truth['kafka_version']} ({truth['mode']}, state-change at "
            f"{truth['state_change_level']}): {res.lines:,} lines in {len(res.files)} files under {out}"
        )
        for f in truth["findings"]:
            where = f"{f['topic']}-{f['partition']}" if f["topic"] is not None else "cluster"
            click.echo(f"  truth: {f['rule']} {where} epoch {f['controller_epoch']} ({len(f['evidence'])} lines)")
        click.echo(f"  truth.json: {res.out_dir / 'truth.json'}")

    run_guarded(debug, work)
