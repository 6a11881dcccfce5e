"""How long the commands that call no model take to start and finish, before and after imports were made
lazy (issue 38, item 5): `examiner --help`, `gate --help`, `gate RUN RUN`, `compare RUN`, `cost RUN`.

    python experiments/startup_time.py [--before REV] [--after REV] [--repeats 5] [--run RUN_DIR]

The "before" side is a git worktree of REV (default: the commit the lazy imports started from), the
"after" side a worktree of --after (default: this checkout as it is). Both run with this Python, from
their own folder (`python -m examiner.cli.main`), alternating before / after for every repeat so that a
change in the machine's load falls on both. The run folder both read is a simulated exam of the examiner
handbook, written once by this checkout unless --run names one. (The editable install maps the top-level
agents/ folder to `examiner.agents` of this checkout: both sides import that one copy.)

Figures per command and side: the median wall time (startup_s: what a user waits) and the median CPU time
of the child (cpu_s: user + system, which a loaded machine inflates far less than the wall time; on an
idle machine the wall time of these single-threaded commands is close to it). The load average at the
start and the end says how loaded the machine was.

Ends with `RESULT help_before_s=... help_after_s=... ... cost_after_cpu_s=... load_start=... load_end=...`.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from finish import RESULTS, print_result, save_json

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "3cfa8b95c2a3ca92db43c48e7cf5b98bfab06461"
"""The commit before gate, compare and the stats modules stopped importing scipy.stats, statsmodels,
scikit-learn, the report writers and the provider clients at start."""


def commands(run_dir: Path) -> dict[str, list[str]]:
    run = str(run_dir)
    return {
        "help": ["--help"],
        "gate_help": ["gate", "--help"],
        "gate": ["gate", run, run, "--margin", "0.2", "--allow-unhealthy"],
        "compare": ["compare", run],
        "cost": ["cost", run],
    }


def worktree(rev: str, where: Path) -> Path:
    """A detached checkout of REV at `where`."""
    subprocess.run(["git", "worktree", "add", "--detach", str(where), rev], cwd=ROOT, check=True,
                   capture_output=True)
    return where


def timed(tree: Path, argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of `python -m examiner.cli.main ARGV` run from `tree` (its examiner package)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "examiner.cli.main", *argv], cwd=tree, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(tree)})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # the gate exits 1 on a failed decision
        raise SystemExit(f"examiner {' '.join(argv)} in {tree} exited {done.returncode}: {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def package_of(tree: Path) -> str:
    """Where `examiner` is imported from when run from `tree` (it must be that tree's copy)."""
    return subprocess.run([sys.executable, "-c", "import examiner; print(examiner.__file__)"], cwd=tree,
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(tree)}).stdout.strip()


def simulated_run(out: Path) -> Path:
    """A simulated exam of the examiner handbook (4 documents), written by this checkout."""
    subprocess.run([sys.executable, "-m", "examiner.cli.main", "run", str(ROOT / "corpora" / "examiner-handbook"),
                    "--simulate", "--out", str(out), "--quiet"], cwd=ROOT, check=True, capture_output=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help="commit of the before side (default: %(default)s)")
    parser.add_argument("--after", help="commit of the after side (default: this checkout as it is)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per command and side (default 5)")
    parser.add_argument("--run", type=Path, help="a run folder to read (default: a simulated exam)")
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="examiner-startup-") as work_text:
        work = Path(work_text)
        trees = {"before": worktree(args.before, work / "before")}
        trees["after"] = worktree(args.after, work / "after") if args.after else ROOT
        try:
            for side, tree in trees.items():
                found = package_of(tree)
                if not found.startswith(str(tree)):
                    raise SystemExit(f"the {side} side imports examiner from {found}, not from {tree}")
            run_dir = args.run or simulated_run(work / "run")
            timings: dict[str, dict[str, list[tuple[float, float]]]] = {}
            for name, argv in commands(run_dir).items():
                timings[name] = {"before": [], "after": []}
                timed(trees["before"], argv)  # warm the file cache and the bytecode of each side once
                timed(trees["after"], argv)
                for _ in range(args.repeats):
                    for side in ("before", "after"):
                        timings[name][side].append(timed(trees[side], argv))
        finally:
            for side in ("before", "after"):
                if trees.get(side, ROOT) != ROOT:
                    subprocess.run(["git", "worktree", "remove", "--force", str(trees[side])], cwd=ROOT,
                                   capture_output=True)
    figures: dict[str, float] = {}
    print(f"{'command':<10} {'before wall':>12} {'after wall':>11} {'before cpu':>11} {'after cpu':>10}")
    for name, sides in timings.items():
        for kind, at in (("s", 0), ("cpu_s", 1)):
            for side, runs in sides.items():
                figures[f"{name}_{side}_{kind}"] = round(statistics.median(run[at] for run in runs), 2)
        print(f"{name:<10} {figures[f'{name}_before_s']:>12.2f} {figures[f'{name}_after_s']:>11.2f} "
              f"{figures[f'{name}_before_cpu_s']:>11.2f} {figures[f'{name}_after_cpu_s']:>10.2f}")
    figures["load_start"] = round(load_start, 2)
    figures["load_end"] = round(os.getloadavg()[0], 2)
    save_json({"before": args.before, "after": args.after or "working tree", "repeats": args.repeats,
               "figures": figures, "runs": timings}, RESULTS / "startup_time.json")
    print_result(figures)


if __name__ == "__main__":
    main()
