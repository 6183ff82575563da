"""The first run on a small input: ``kafka-forensics analyze`` on the bundled sample, end to end.

    python bench/bench_first_run.py [--runs 5] [--vs OTHER_CHECKOUT] [--sample DIR]
    python bench/bench_first_run.py --profile [--sample DIR]

**Timing** (default). Each round runs, one after the other:

- the *anchor*: the same Python starting the same SparkSession (``build_session``, the laptop
  defaults) and counting the sample's lines with ``spark.read.text(...).count()`` - the floor of
  "start Spark and touch the input", measured in the same minute as the command;
- ``kafka-forensics analyze SAMPLE --out TMP`` of this checkout (A);
- with ``--vs DIR``, the same command of another checkout (B: e.g. the commit before a change;
  it needs its own ``DIR/.venv``).

Every figure is wall seconds (start to exit of the command) and CPU seconds of the whole process
tree (user + system of the command, the Spark JVM it starts, the JVM's Python workers and
anything else below it): this script makes itself a child subreaper (Linux ``prctl``), so
processes that outlive their parent (the JVM outlives the Python driver for a moment) are
reparented to it, reaped and counted. The ratios are taken round by round (A/anchor, A/B) and
their median printed: on a shared 2-core machine the absolute seconds drift with the load, a
ratio measured in the same round drifts much less.

**Profile** (``--profile``): one ``analyze`` in this process with Spark's event log on, then per
stage (parse, replay, check, report): wall seconds, Spark jobs, stages and tasks, files written,
plus the JVM start, the driver's imports (Great Expectations separately) and the grammar build
of a fresh Python process (with the compiled-grammar cache as it is; ``KAFKA_FORENSICS_CACHE_DIR=off``
for a cold build).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_logs" / "kafka-2.4-controller-failover"
_PR_SET_CHILD_SUBREAPER = 36


# ---- whole-process-tree timing -----------------------------------------------------------------
def _become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed: CPU of orphans would be lost")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _reap_orphans(deadline_seconds: float = 60.0) -> None:
    """Wait for every process reparented to us (the JVM, its Python daemon) to exit."""
    deadline = time.monotonic() + deadline_seconds
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() > deadline:
                raise RuntimeError("a process started by the benchmarked command did not exit")
            time.sleep(0.05)


def timed(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the whole tree, exit code) of one run of ``command``."""
    cpu_before = _children_cpu()
    started = time.monotonic()
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, err = proc.communicate()
    wall = time.monotonic() - started
    _reap_orphans()
    if proc.returncode not in (0, 1):
        sys.stderr.write(err.decode("utf-8", "replace")[-2000:])
        raise SystemExit(f"{' '.join(command)} exited {proc.returncode}")
    return wall, _children_cpu() - cpu_before, proc.returncode


def _checkout_python(checkout: Path) -> Path:
    python = checkout / ".venv" / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"{checkout} has no .venv (python3 -m venv .venv && .venv/bin/pip install -e .)")
    return python


def _analyze(python: Path, sample: Path, out: Path) -> list[str]:
    return [str(python.parent / "kafka-forensics"), "analyze", str(sample), "--out", str(out)]


def _anchor(python: Path, sample: Path) -> list[str]:
    code = (
        "import sys\n"
        "from kafka_forensics.jobs.spark_session import build_session\n"
        "spark = build_session()\n"
        "print(spark.read.text(sys.argv[1], recursiveFileLookup=True).count())\n"
    )
    return [str(python), "-c", code, str(sample)]


def run_timing(args: argparse.Namespace) -> int:
    _become_subreaper()
    python = Path(sys.executable)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_HOME"))}
    work = Path(tempfile.mkdtemp(prefix="kf-first-run-"))
    contenders = {
        "anchor": (_anchor(python, args.sample), REPO),
        "A": (_analyze(python, args.sample, work / "a"), REPO),
    }
    if args.vs:
        other = Path(args.vs).resolve()
        contenders["B"] = (_analyze(_checkout_python(other), args.sample, work / "b"), other)
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
    try:
        print(f"sample {args.sample}, {args.runs} round(s); each round: {', '.join(contenders)}", flush=True)
        print(f"{'round':>5} {'command':>7} {'wall s':>8} {'cpu s':>8}  load", flush=True)
        for round_no in range(1, args.runs + args.warmup + 1):
            for name, (command, cwd) in contenders.items():
                wall, cpu, _ = timed(command, env, cwd)
                label = "warmup" if round_no <= args.warmup else str(round_no - args.warmup)
                print(f"{label:>5} {name:>7} {wall:8.1f} {cpu:8.1f}  {os.getloadavg()[0]:.1f}", flush=True)
                if round_no > args.warmup:
                    results[name].append((wall, cpu))
        _print_summary(results)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _print_summary(results: dict[str, list[tuple[float, float]]]) -> None:
    print("\nmedian over rounds (min..max)")
    for name, runs in results.items():
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        print(
            f"  {name:>7}: wall {statistics.median(walls):6.1f} s ({min(walls):.1f}..{max(walls):.1f})"
            f"   cpu {statistics.median(cpus):6.1f} s ({min(cpus):.1f}..{max(cpus):.1f})"
        )
    pairs = [("A", "anchor")] + ([("A", "B"), ("B", "anchor")] if "B" in results else [])
    print("round-by-round ratios, median (min..max)")
    for left, right in pairs:
        for index, measure in ((0, "wall"), (1, "cpu")):
            ratios = [a[index] / b[index] for a, b in zip(results[left], results[right])]
            print(
                f"  {left}/{right} {measure:>4}: {statistics.median(ratios):5.2f} ({min(ratios):.2f}..{max(ratios):.2f})"
            )


# ---- profile -----------------------------------------------------------------------------------
def _fresh_process_seconds(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
    return time.perf_counter() - started


def _grammar_build_code(dialects: tuple[str, ...]) -> str:
    return "from kafka_forensics.parsers.records import line_parser\n" + "".join(
        f"line_parser({d!r}, None, False)\n" for d in dialects
    )


def _event_log_jobs(directory: Path) -> list[dict]:
    """Jobs of the event log Spark wrote under ``directory`` (uncompressed JSON lines)."""
    jobs: dict[int, dict] = {}
    tasks: dict[int, int] = {}
    stage_job: dict[int, int] = {}
    for path in sorted(directory.rglob("*")):
        if not path.is_file() or path.name.startswith((".", "appstatus")):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            kind = event["Event"]
            if kind == "SparkListenerJobStart":
                jobs[event["Job ID"]] = {"start": event["Submission Time"] / 1000, "stages": len(event["Stage IDs"])}
                for stage in event["Stage IDs"]:
                    stage_job[stage] = event["Job ID"]
            elif kind == "SparkListenerTaskEnd":
                job = stage_job.get(event["Stage ID"])
                if job is not None:
                    tasks[job] = tasks.get(job, 0) + 1
    for job_id, job in jobs.items():
        job["tasks"] = tasks.get(job_id, 0)
    return list(jobs.values())


def _proc_stat(path: Path) -> tuple[str, list[str]] | None:
    try:
        text = path.read_text()
    except OSError:
        return None
    return text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :].split()


def _thread_group(name: str) -> str:
    """JVM threads by what they do (Linux truncates a thread's name to 15 characters)."""
    for prefix, group in (
        ("C2 Compiler", "JIT C2"),
        ("C1 Compiler", "JIT C1"),
        ("GC ", "GC"),
        ("G1 ", "GC"),
        ("VM ", "VM"),
        ("Executor task", "tasks"),
        ("executor task", "tasks"),
    ):
        if name.startswith(prefix):
            return group
    return "other JVM"


def cpu_by_part(jvm_pid: int) -> dict[str, float]:
    """CPU seconds so far: this Python driver, the JVM by thread group, the JVM's Python workers."""
    tick = os.sysconf("SC_CLK_TCK")
    own = resource.getrusage(resource.RUSAGE_SELF)
    parts = {"driver Python": own.ru_utime + own.ru_stime}
    for task in Path(f"/proc/{jvm_pid}/task").iterdir():
        stat = _proc_stat(task / "stat")
        if stat is not None:
            group = _thread_group(stat[0])
            parts[group] = parts.get(group, 0.0) + (int(stat[1][11]) + int(stat[1][12])) / tick
    jvm_stat = _proc_stat(Path(f"/proc/{jvm_pid}/stat"))
    workers = (int(jvm_stat[1][13]) + int(jvm_stat[1][14])) / tick if jvm_stat else 0.0  # reaped children
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _proc_stat(entry / "stat")
            if stat is not None:
                parents[int(entry.name)] = (int(stat[1][1]), sum(int(x) for x in stat[1][11:15]) / tick)
    tree, grew = {jvm_pid}, True
    while grew:
        grew = False
        for pid, (parent, _) in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    parts["Python workers"] = workers + sum(parents[p][1] for p in tree if p != jvm_pid)
    return parts


def _files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()} if root.exists() else set()


def run_profile(args: argparse.Namespace) -> int:
    work = Path(tempfile.mkdtemp(prefix="kf-first-run-profile-"))
    try:
        print("fresh Python processes (each imports what it needs, then exits):")
        base = _fresh_process_seconds("pass")
        print(f"  interpreter alone                 {base:6.2f} s")
        for label, code in (
            ("import the CLI", "import kafka_forensics.cli.main"),
            ("import the four jobs", "from kafka_forensics.jobs import parse_job, replay_job, check_job, report_job"),
            ("import great_expectations", "import great_expectations"),
            ("build the grammar (auto + zk-2.4)", _grammar_build_code(("auto", "zk-2.4"))),
        ):
            print(f"  {label:<33} {_fresh_process_seconds(code) - base:6.2f} s (beyond the interpreter)")

        from click.testing import CliRunner

        from kafka_forensics.cli.main import main
        from kafka_forensics.jobs.spark_session import build_session

        log_dir = work / "eventlog"
        log_dir.mkdir()
        started = time.perf_counter()
        spark = build_session(
            None,
            {
                "spark.eventLog.enabled": "true",
                "spark.eventLog.dir": f"file://{log_dir}",
                "spark.eventLog.compress": "false",
            },
        )
        print(f"\nSparkSession (JVM start included)   {time.perf_counter() - started:6.2f} s")
        import kafka_forensics.jobs.analyze_job as analyze_job

        jvm_pid = spark.sparkContext._gateway.proc.pid
        marks: list[tuple[str, str, float, set[str]]] = []
        cpu_marks: list[dict[str, float]] = []
        out = work / "out"
        original = analyze_job.run_analyze

        def recording(*a, progress=None, **kw):
            def progress_and_mark(stage: str, phase: str, counts: dict) -> None:
                marks.append((stage, phase, time.time(), _files_under(out)))
                cpu_marks.append(cpu_by_part(jvm_pid))
                if progress is not None:
                    progress(stage, phase, counts)

            return original(*a, progress=progress_and_mark, **kw)

        analyze_job.run_analyze = recording
        started = time.perf_counter()
        before = cpu_by_part(jvm_pid)
        result = CliRunner().invoke(main, ["analyze", str(args.sample), "--out", str(out)])
        after = cpu_by_part(jvm_pid)
        print(f"analyze in this process             {time.perf_counter() - started:6.2f} s (exit {result.exit_code})")
        analyze_job.run_analyze = original
        spark.stop()
        jobs = _event_log_jobs(log_dir)
        print(f"\n{'stage':<8} {'wall s':>7} {'jobs':>5} {'stages':>7} {'tasks':>6} {'files':>6}")
        windows = [(s, t0, t1, f1 - f0) for (s, _, t0, f0), (_, _, t1, f1) in zip(marks[0::2], marks[1::2])]
        for stage, t0, t1, files in windows:
            mine = [j for j in jobs if t0 <= j["start"] <= t1]
            print(
                f"{stage:<8} {t1 - t0:7.2f} {len(mine):5d} {sum(j['stages'] for j in mine):7d}"
                f" {sum(j['tasks'] for j in mine):6d} {len(files):6d}"
            )
        inside = sum(1 for j in jobs if any(t0 <= j["start"] <= t1 for _, t0, t1, _ in windows))
        print(f"{'other':<8} {'':>7} {len(jobs) - inside:5d}   (the summary after the stages)")
        print("\nCPU seconds by part: session start (until analyze), then each stage, then analyze in all")
        columns = sorted(after, key=lambda k: -after[k])
        print(f"{'':<10}" + "".join(f"{c:>15}" for c in columns))
        print(f"{'start':<10}" + "".join(f"{before.get(c, 0.0):15.1f}" for c in columns))
        for (stage, *_), b, a in zip(marks[0::2], cpu_marks[0::2], cpu_marks[1::2]):
            print(f"{stage:<10}" + "".join(f"{a.get(c, 0.0) - b.get(c, 0.0):15.1f}" for c in columns))
        print(f"{'analyze':<10}" + "".join(f"{after.get(c, 0.0) - before.get(c, 0.0):15.1f}" for c in columns))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", type=Path, default=SAMPLE, help="input directory (default: the bundled sample)")
    parser.add_argument("--runs", type=int, default=5, help="rounds counted (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="rounds run first and not counted (default 1)")
    parser.add_argument("--vs", metavar="CHECKOUT", help="also time another checkout's analyze (its own .venv)")
    parser.add_argument("--profile", action="store_true", help="one in-process run, broken down by stage")
    args = parser.parse_args(argv)
    args.sample = args.sample.resolve()
    return run_profile(args) if args.profile else run_timing(args)


if __name__ == "__main__":
    sys.exit(main())
