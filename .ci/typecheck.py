"""mypy over the layers that must type-check: core, parsers, statemachines, replay (pyproject [tool.mypy]).

The folders install as ``kafka_forensics.<folder>`` (setuptools package-dir), a mapping mypy cannot
follow in an editable install, so the namespace is rebuilt here as symlinks (.mypy_tree/, ignored
by git) and mypy reads the repository's own files through it. Exit code: mypy's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("core", "parsers", "statemachines", "replay")


def main() -> int:
    tree = ROOT / ".mypy_tree"
    namespace = tree / "kafka_forensics"
    namespace.mkdir(parents=True, exist_ok=True)
    for init in sorted(ROOT.glob("*/__init__.py")):
        package = init.parent
        link = namespace / package.name
        if package.name != "tests" and not link.exists():
            link.symlink_to(package, target_is_directory=True)
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(ROOT / "pyproject.toml"),
        *(arg for name in CHECKED for arg in ("-p", f"kafka_forensics.{name}")),
    ]
    env = {**os.environ, "MYPYPATH": str(tree)}
    return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
