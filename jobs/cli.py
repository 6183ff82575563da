"""The ``kafka-forensics`` command line: one click group, one module per subcommand."""

from __future__ import annotations

import click

from .cli_common import run_guarded  # noqa: F401  (re-exported for subcommand modules)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kafka-forensics")
def main() -> None:
    """Forensics for Apache Kafka controller logs (0.8 → 4.x, ZooKeeper and KRaft).

    \b
    Exit codes (the same for every subcommand):
      0  success (and, for checks, every expectation met)
      1  expectations failed / findings above threshold
      2  input or usage error (missing path, unknown --kafka-version, bad --layout)
      3  internal error (a bug: rerun with --debug and report it)
    """


def _register() -> None:
    from .analyze_cmd import analyze
    from .check_cmd import check
    from .merge_cmd import merge
    from .parse_cmd import parse
    from .replay_cmd import describe, replay, timeline
    from .report_cmd import report
    from .rules_cmd import rules
    from .simulate_cmd import simulate

    main.add_command(parse)
    main.add_command(rules)
    main.add_command(simulate)
    main.add_command(replay)
    main.add_command(timeline)
    main.add_command(describe)
    main.add_command(merge)
    main.add_command(analyze)
    main.add_command(report)
    main.add_command(check)


_register()
