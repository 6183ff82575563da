"""``kafka-forensics lab ...``: the lab's commands (real Kafka clusters, recorded incidents)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from kafka_forensics.lab.releases import MODES, RELEASES
from kafka_forensics.lab.scenarios import SCENARIOS

from .common import debug_option, run_guarded

_kafka = click.option(
    "--kafka",
    "kafka",
    default="3.9",
    show_default=True,
    help=f"Kafka release: a line ({', '.join(RELEASES)}) or an exact version (3.9.1).",
)
_mode = click.option(
    "--mode",
    type=click.Choice(MODES),
    default=None,
    help="zookeeper or kraft (default: the release's first mode; 4.x is KRaft only).",
)


@click.group("lab", context_settings={"help_option_names": ["-h", "--help"]})
def lab() -> None:
    """Real Kafka as the oracle: record real incidents from real brokers, with their truth.

    Needs a JDK (17 by default; $KAFKA_FORENSICS_LAB_JAVA_HOME picks another) and Maven, which
    resolves Kafka's jars from Maven Central into ~/.cache/kafka-forensics/lab/VERSION/libs.

    \b
    Example:
      kafka-forensics lab record controller-kill --kafka 3.9 --out /tmp/real-3.9-zk-controller-kill
    """


@lab.command("scenarios")
def scenarios_cmd() -> None:
    """List the scenarios and the modes they run in.

    \b
    Example:
      kafka-forensics lab scenarios
    """
    for s in SCENARIOS.values():
        click.echo(f"{s.name:<24} {'/'.join(s.modes):<16} {s.summary}")


@lab.command("record")
@click.argument("scenario", type=click.Choice(sorted(SCENARIOS)))
@_kafka
@_mode
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False),
    help="Incident folder to write (replaced if it exists).",
)
@click.option("--trace", is_flag=True, help="state.change.logger at TRACE (the stock file's only change).")
@click.option("--keep-work", is_flag=True, help="Also keep the cluster's whole working directory under OUT/work.")
@click.option("--no-consume", "no_consume", is_flag=True, help="Skip reading the topics back after the scenario.")
@debug_option
def record_cmd(scenario, kafka, mode, out, trace, keep_work, no_consume, debug) -> None:
    """Run SCENARIO on a real 3-broker cluster and write the incident folder with truth.json.

    \b
    Example:
      kafka-forensics lab record unclean-election --kafka 3.9 --mode kraft --out /tmp/real-3.9-kraft-unclean
    """
    from kafka_forensics.lab.record import record

    given = (
        [a for a in sys.argv[sys.argv.index(scenario) :] if a != "--debug"]
        if scenario in sys.argv
        else [scenario, "--kafka", kafka, "--out", out]
    )
    command = "kafka-forensics lab record " + " ".join(shlex.quote(a) for a in given)

    def work() -> None:
        rec = record(
            scenario, kafka, mode, Path(out), trace=trace, keep_work=keep_work, consume=not no_consume, command=command
        )
        t = rec.truth
        click.echo(
            f"{scenario} on Kafka {t['kafka_version']} ({t['mode']}): {rec.lines:,} lines in "
            f"{len(t['files'])} files, {len(t['actions'])} actions, {len(t['describe'])} describe snapshots, "
            f"in {rec.seconds:.0f} s (jars {rec.jar_seconds:.0f} s) -> {rec.folder}"
        )
        for e in t["must"]:
            where = "any" if e["topic"] is None else f"{e['topic']}-{e['partition']}"
            click.echo(f"  must: {e['rule']} {where}")

    run_guarded(debug, work)


@lab.command("jars")
@_kafka
@debug_option
def jars_cmd(kafka, debug) -> None:
    """Resolve a release's jars from Maven Central (cached) and print where they are.

    \b
    Example:
      kafka-forensics lab jars --kafka 2.4
    """
    from kafka_forensics.lab.jars import resolve_jars
    from kafka_forensics.lab.releases import resolve

    def work() -> None:
        jars = resolve_jars(resolve(kafka))
        click.echo(f"{jars.libs} ({len(list(jars.libs.glob('*.jar')))} jars, resolved in {jars.seconds:.1f} s)")

    run_guarded(debug, work)


@lab.command("log4j")
@_kafka
@click.option("--trace", is_flag=True, help="The TRACE variant.")
def log4j_cmd(kafka, trace) -> None:
    """Print the log4j configuration the lab starts a release's brokers with.

    \b
    Example:
      kafka-forensics lab log4j --kafka 3.9 --trace
    """
    from kafka_forensics.lab.log4j import render
    from kafka_forensics.lab.releases import resolve

    cfg = resolve(kafka).release.log4j
    click.echo(render(cfg.with_trace() if trace else cfg)[1], nl=False)


@lab.command("probe")
@_kafka
@_mode
@debug_option
def probe_cmd(kafka, mode, debug) -> None:
    """Start a cluster, create a topic, describe it and stop: does this release run on this machine?

    \b
    Example:
      kafka-forensics lab probe --kafka 1.1
    """
    from kafka_forensics.lab.probe import probe

    def work() -> None:
        click.echo(probe(kafka, mode))

    run_guarded(debug, work)


@lab.command("load")
@_kafka
@_mode
@click.option("--out", "out", required=True, type=click.Path(file_okay=False), help="Where to write (bench/out/...).")
@click.option("--partitions", default=300, show_default=True, type=int, help="Partitions in all (RF 3).")
@click.option("--rounds", default=6, show_default=True, type=int, help="Rounds of broker kill/restart.")
@debug_option
def load_cmd(kafka, mode, out, partitions, rounds, debug) -> None:
    """Record a large real TRACE-level log under load for the benchmarks (never committed).

    \b
    Example:
      kafka-forensics lab load --kafka 3.9 --out bench/out/lab-trace-3.9
    """
    from kafka_forensics.lab.load import record_load

    def work() -> None:
        click.echo(record_load(kafka, mode, Path(out), partitions=partitions, rounds=rounds))

    run_guarded(debug, work)


@lab.command("evaluate")
@click.argument("incidents", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--details", is_flag=True, help="Also list each finding, mismatch and untyped line.")
@debug_option
def evaluate_cmd(incidents, details, debug) -> None:
    """Judge the tool on recorded incidents: the lab's table (lines, reconciliation, typed %, findings
    against truth.json, final state against the last describe).

    \b
    Example:
      kafka-forensics lab evaluate sample_logs/real-3.9-zk-controller-kill
    """
    from kafka_forensics.lab.evaluate import TABLE_HEAD, evaluate, table_row

    def work() -> None:
        click.echo(TABLE_HEAD)
        for folder in incidents:
            ev = evaluate(Path(folder))
            click.echo(table_row(ev))
            if details:
                for e in ev.verdict["missing"]:
                    click.echo(f"    missing: {e['rule']} {e['topic']}-{e['partition']} ({e['why']})")
                for _, f in ev.verdict["violations"]:
                    click.echo(
                        f"    violation: {f['rule']} {f['severity']} {f['topic']}-{f['partition']}: "
                        f"{f['summary'][:200]}"
                    )
                for m in ev.mismatches:
                    click.echo(f"    final state: {m}")
                for file, line, message in ev.untyped[:20]:
                    click.echo(f"    untyped: {file}:{line} {message[:160]}")

    run_guarded(debug, work)


@lab.command("differential")
@click.argument("incidents", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@debug_option
def differential_cmd(incidents, debug) -> None:
    """Line shapes real Kafka printed against those the simulator writes for the same release.

    \b
    Example:
      kafka-forensics lab differential sample_logs/real-2.4-zk-controller-kill
    """
    from kafka_forensics.lab.differential import differential, render

    def work() -> None:
        click.echo(render(differential([Path(i) for i in incidents])), nl=False)

    run_guarded(debug, work)
