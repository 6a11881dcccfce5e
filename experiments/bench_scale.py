"""The same simulated exam at about 2,000, 20,000 and 200,000 knowledge units: what grows with the corpus.

The corpus is experiments/scale_corpus.py's WikiText-2 files, each corpus a prefix of the next, built into
--corpus when files are missing. Later files repeat more of the text, so they give fewer units: 1 file
makes 2,452 sentence units, 10 files 20,963 and 180 files 219,204, before near-duplicates merge (2,443
units are left of the first file). The default is `--sizes 1,10,180`. Every size runs the same exam:
the simulated backend with zero latency, seed 0 and the knowledge profile PROFILE, the default
exam settings (seed 0), and one embedding cache shared by all sizes (--embedding-cache: fill it once, e.g.
with a first run, and the unit vectors are read, not computed). Each size runs in fresh processes:

1. the exam (start_exam, reports left out) in a child process, whose peak RSS the parent reads with
   os.wait4 when it exits (a child past --timeout is killed and the size is "did not finish in N s");
2. the reports (build_reports) in another child, timed inside it, the imports left out;
3. `examiner resume RUN_DIR` of the completed run, timed to its first line starting with "resume: " (the
   line resume prints at its first decision); where no such line comes, the whole resume is timed and
   `resume_first_decision` says `whole resume`.

Non-model overhead: the simulated server runs in a process of its own (SimulatedProcess; the run's
endpoint points at its URL through a config file), so the exam process's CPU time (user + system, all its
threads, from the start of start_exam to its end: interpreter start-up and imports left out) holds none
of the model's work. What the exam process spends inside the embedding model (Embedder._encode, wrapped
in the child: its CPU time and its wall time, the lazy model load included) is the other model, and is
taken out:

    non-model overhead per unit = (exam CPU s - embedding-model CPU s) / units

This is CPU time, not wall time, so waiting on the server and the machine's other load count for nothing:
what is left is examiner's own work (reading and cutting the corpus, cache lookups, clustering, the
gateway's client side, records, checkpoints), the part that must stay flat per unit. The parts are
printed beside it: wall time, the exam's CPU, the embedding model's CPU / wall / texts encoded, and the
server's CPU (from /proc, Linux). Answers are embedded for their similarity baseline, so a first run on
a new cache encodes them; a repeated run encodes nothing. A run that encodes any text also holds torch and
the embedding model (their imports add 0.40 GB of RSS, the weights 90 MB) and the encoder's working
memory, so compare sizes that are all first runs on the cache or all repeats (`encoded_texts` says
which).

Checkpoints: LangGraph's SQLite saver keeps one row per checkpoint in table `checkpoints` (blob column
`checkpoint`) and the pending writes of each step in table `writes` (blob column `value`); bytes per
checkpoint = sum of length(checkpoint) / number of checkpoints.

    python experiments/scale_corpus.py /tmp/scale/corpus --parts 180   # once (the bench builds it too)
    python experiments/bench_scale.py --corpus /tmp/scale/corpus --embedding-cache /tmp/scale/emb.sqlite \\
        --sizes 1,10,180 --timeout 14000

On 2 CPU cores an empty cache makes the 180-file exam embed about 220,000 unit texts before its first
round (about an hour), then about 1.7 texts per question as it goes (each answer and its reference
text: hours more). experiments/prefill_vectors.py computes both sets of vectors on a GPU machine and
loads them into the cache first.

Figures per size, and as ratios against the smallest size, go to experiments/results/bench_scale.json;
the RESULT line holds the worst ratio / size of each acceptance figure and the sha256 of the smallest
run's sorted verdicts.jsonl lines (same seed, same code: the same digest).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this tree's examiner, not another checkout installed in the environment

from finish import RESULTS, print_result, save_json  # noqa: E402
from scale_corpus import write_parts  # noqa: E402

from examiner.core.config import ROLES  # noqa: E402
from examiner.core import rundir  # noqa: E402
from examiner.simulator import SimulatedProcess  # noqa: E402

PROFILE = {"known": 0.6, "wrong": 0.2, "unknown": 0.2}
"""The simulated target's knowledge profile (share of units it knows, gets wrong, does not know)."""
SIZES = (1, 10, 180)
"""Corpus files per size: about 2,000, 20,000 and 200,000 units (see the module docstring)."""
TOP_FILES = 8
"""Largest files of a run directory listed per size."""
RATIO_FIGURES = ("units", "wall_s", "overhead_ms_per_unit", "peak_rss_gb", "run_dir_mb", "ckpt_bytes_per_checkpoint",
                 "ckpt_bytes_max", "report_s", "report_html_mb", "resume_s")
"""Figures also given as a ratio against the smallest size."""


# --- the children ----------------------------------------------------------------------------------------

def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _time_encoding() -> dict[str, float]:
    """Wrap Embedder._encode so that the embedding model's CPU time, wall time and texts are counted.

    Calls overlap (answers are scored in several worker threads at once, each encoding what the cache
    lacks) and the process's CPU time counts every thread, so the clocks run over the union of the calls'
    spans: from a call that starts while none runs to the end of the last one running. Summing each
    call's own span counted the same seconds once per overlapping call (a first run at 1 file: 1,223.5 s
    of encoding in an exam process of 277.4 s, a negative overhead). Other threads' work inside those
    spans still counts as the model's, so on a run that encodes, the overhead is a lower bound."""
    from examiner.corpus.vectors import Embedder

    spent = {"encode_cpu_s": 0.0, "encode_wall_s": 0.0, "encoded_texts": 0}
    encode = Embedder._encode
    lock = threading.Lock()
    running = 0
    since = (0.0, 0.0)

    def timed(self: Embedder, texts: list[str]):  # noqa: ANN202 - returns what Embedder._encode does
        nonlocal running, since
        with lock:
            if running == 0:
                since = (time.process_time(), time.perf_counter())
            running += 1
        try:
            return encode(self, texts)
        finally:
            with lock:
                running -= 1
                spent["encoded_texts"] += len(texts)
                if running == 0:
                    spent["encode_cpu_s"] += time.process_time() - since[0]
                    spent["encode_wall_s"] += time.perf_counter() - since[1]

    Embedder._encode = timed  # type: ignore[method-assign]
    return spent


def child_exam(config: Path, run_dir: Path, out: Path, paths: list[str]) -> None:
    """The exam of `paths` into `run_dir` (no reports), its CPU and embedding time written to `out`."""
    from examiner.core.config import load_settings
    from examiner.exam.runner import ExamRequest, start_exam

    encoding = _time_encoding()
    settings = load_settings(config)
    cpu, wall = _cpu_s(), time.perf_counter()
    info = asyncio.run(start_exam(settings, ExamRequest(paths, run_id="scale"), run_dir, quiet=True, report=False))
    figures = {"status": info.status, "wall_s": time.perf_counter() - wall, "cpu_s": _cpu_s() - cpu, **encoding,
               "own_peak_rss_gb": _own_peak_rss_gb()}
    save_json(figures, out)


def _own_peak_rss_gb() -> float | None:
    """This process's own peak RSS (VmHWM, Linux), not counting anything it started: os.wait4's figure
    takes the largest of the child and every process it waited for."""
    status = Path("/proc/self/status")
    if not status.is_file():
        return None
    for line in status.read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024 / 2**30
    return None


def child_report(run_dir: Path, out: Path) -> None:
    """build_reports of `run_dir`, timed without the imports, written to `out`."""
    from examiner.exam.runner import build_reports

    began = time.perf_counter()
    build_reports(run_dir)
    save_json({"report_s": time.perf_counter() - began}, out)


# --- running a child -------------------------------------------------------------------------------------

def _child_command(*args: str | Path) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--child", *map(str, args)]


def run_child(command: list[str], timeout_s: float) -> tuple[int | None, float]:
    """Run `command` to its end, or kill its process group after `timeout_s`: (exit code, None when
    killed; its peak RSS in GB, read by os.wait4 as it exits)."""
    proc = subprocess.Popen(command, start_new_session=True)
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        _kill_group(proc.pid)

    timer = threading.Timer(timeout_s, kill)
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return (None if killed.is_set() else proc.returncode), usage.ru_maxrss * 1024 / 2**30


def _kill_group(pid: int) -> None:
    """SIGKILL the process group `pid` leads (the child and anything it started)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:  # it ended as the timer fired: nothing left to stop
        pass


def time_resume(run_dir: Path, timeout_s: float) -> dict[str, Any]:
    """`examiner resume RUN_DIR` of a completed run: seconds to its first "resume: " line, and to its end.
    It imports this tree's examiner, as the other children do (before, it took the one on the path of the
    directory the bench was started from)."""
    began = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    proc = subprocess.Popen([sys.executable, "-m", "examiner.cli.main", "resume", str(run_dir)], text=True, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    timer = threading.Timer(timeout_s, _kill_group, (proc.pid,))
    timer.start()
    first: float | None = None
    assert proc.stdout is not None
    for line in proc.stdout:
        if first is None and line.lstrip().startswith("resume: "):
            first = time.perf_counter() - began
    code = proc.wait()
    timer.cancel()
    whole = time.perf_counter() - began
    return {"resume_s": first if first is not None else whole, "resume_whole_s": whole, "resume_exit": code,
            "resume_first_decision": "resume: line" if first is not None else "whole resume"}


# --- what a run directory holds --------------------------------------------------------------------------

def _files(folder: Path) -> Iterator[tuple[str, int]]:
    for path in folder.rglob("*"):
        if path.is_file():
            yield str(path.relative_to(folder)), path.stat().st_size


def run_dir_figures(run_dir: Path) -> dict[str, Any]:
    """Total size, and the largest files by size."""
    sizes = sorted(_files(run_dir), key=lambda item: -item[1])
    return {"run_dir_mb": sum(size for _, size in sizes) / 1e6, "run_dir_files": len(sizes),
            "top_files_mb": {name: round(size / 1e6, 3) for name, size in sizes[:TOP_FILES]}}


def checkpoint_figures(run_dir: Path) -> dict[str, Any]:
    """checkpoints.sqlite: its size (with its WAL), checkpoints, blob bytes per checkpoint and the largest
    blob (comparable between a killed run and a finished one, whose mean holds its later checkpoints)."""
    path = run_dir / rundir.CHECKPOINTS
    if not path.is_file():  # killed before its first checkpoint
        return {"ckpt_file_mb": 0.0, "checkpoints": 0, "ckpt_bytes_per_checkpoint": 0, "ckpt_bytes_max": 0,
                "ckpt_writes_mb": 0.0}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        count, blobs, largest = db.execute("SELECT COUNT(*), COALESCE(SUM(LENGTH(checkpoint)), 0), "
                                           "COALESCE(MAX(LENGTH(checkpoint)), 0) FROM checkpoints").fetchone()
        write_bytes = db.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes").fetchone()[0]
    size = sum(p.stat().st_size for p in run_dir.glob(rundir.CHECKPOINTS + "*"))
    return {"ckpt_file_mb": size / 1e6, "checkpoints": count, "ckpt_bytes_per_checkpoint": blobs / count if count else 0,
            "ckpt_bytes_max": largest, "ckpt_writes_mb": write_bytes / 1e6}


def verdicts_sha256(run_dir: Path) -> str:
    """sha256 of the sorted lines of verdicts.jsonl (their order depends on concurrency, not their content)."""
    lines = sorted((run_dir / rundir.VERDICTS).read_text(encoding="utf-8").splitlines())
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def run_info(run_dir: Path) -> dict[str, Any]:
    """Units, and rounds completed (none yet, or none of a killed run's, when run.json has no rounds)."""
    path = run_dir / rundir.RUN_INFO
    info = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"units": 0, "rounds": []}
    return {"units": info["units"], "rounds": len(info["rounds"])}


# --- one size --------------------------------------------------------------------------------------------

def write_config(folder: Path, base_url: str, embedding_cache: Path) -> Path:
    """The run's settings: every role on the simulated server at `base_url`, the shared embedding cache."""
    endpoint = {"provider": "simulated", "base_url": base_url, "model": "sim", "max_concurrency": 16}
    config = {"endpoints": {"sim": endpoint}, "roles": {role: "sim" for role in ROLES},
              "embedding_cache": str(embedding_cache), "exam": {"seed": 0, "max_corpus_mb": 1000}}
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _server_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a live process, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def exam_size(paths: list[Path], folder: Path, embedding_cache: Path, timeout_s: float) -> dict[str, Any]:
    """The exam of `paths` into `folder/run` with the server in its own process, its figures also kept in
    `folder/exam.json`; only `did_not_finish_s` and the peak RSS so far when it was killed."""
    folder.mkdir(parents=True, exist_ok=True)
    server = SimulatedProcess({"knowledge": PROFILE, "latency_s": 0}, seed=0)
    with server as base_url:
        config = write_config(folder, base_url, embedding_cache)
        out = folder / "exam.json"
        code, rss_gb = run_child(_child_command("exam", config, folder / "run", out, *paths), timeout_s)
        assert server.proc is not None
        server_cpu = _server_cpu_s(server.proc.pid)
    if code is not None and code != 0:
        raise SystemExit(f"the exam child failed with exit code {code}")
    done = json.loads(out.read_text()) if code == 0 else {"did_not_finish_s": timeout_s}
    exam = {**done, "server_cpu_s": server_cpu, "peak_rss_gb": rss_gb}
    save_json(exam, out)
    return exam


def kept_exam(folder: Path) -> dict[str, Any] | None:
    """The figures of an exam an earlier invocation ran in `folder` (--reuse-exams): completed, or killed
    at the timeout; None when there is none."""
    out = folder / "exam.json"
    if not out.is_file():
        return None
    exam = json.loads(out.read_text())
    ended = exam.get("status") == "completed" or "did_not_finish_s" in exam
    return exam if ended and "peak_rss_gb" in exam else None


def measure_size(parts: int, corpus: Path, scratch: Path, embedding_cache: Path, timeout_s: float,
                 reuse: bool = False) -> dict[str, Any]:
    """Every figure of one size; with `reuse`, an exam kept in the scratch folder is measured again without
    running it again. An exam killed at the timeout gets `did_not_finish_s`, its peak RSS so far and what
    its run directory and checkpoints hold at the kill (the exam's other figures need its end)."""
    folder = scratch / f"size-{parts}"
    paths = sorted(corpus.glob("part-*.txt"))[:parts]
    figures: dict[str, Any] = {"parts": parts}
    figures |= (reuse and kept_exam(folder)) or exam_size(paths, folder, embedding_cache, timeout_s)
    run_dir = folder / "run"
    if "did_not_finish_s" in figures:
        return figures | run_info(run_dir) | run_dir_figures(run_dir) | checkpoint_figures(run_dir)
    figures |= run_info(run_dir)
    cpu = figures["cpu_s"] - figures["encode_cpu_s"]
    figures |= {"overhead_cpu_s": cpu, "overhead_ms_per_unit": 1000 * cpu / figures["units"]}
    figures |= checkpoint_figures(run_dir)
    figures["verdicts_sha256"] = verdicts_sha256(run_dir)
    code, _ = run_child(_child_command("report", run_dir, folder / "report.json"), timeout_s)
    figures |= json.loads((folder / "report.json").read_text()) if code == 0 else {"report_s": None}
    figures["report_html_mb"] = (run_dir / rundir.REPORT_HTML).stat().st_size / 1e6 if code == 0 else None
    figures |= run_dir_figures(run_dir)  # with the reports (provenance.graphml, figures/) in it
    return figures | time_resume(run_dir, timeout_s)


# --- all sizes -------------------------------------------------------------------------------------------

def ensure_corpus(corpus: Path, parts: int) -> None:
    """Build the corpus files when fewer than `parts` are there (the same files every time)."""
    if len(list(corpus.glob("part-*.txt"))) < parts:
        write_parts(corpus, parts)


def ratios(results: list[dict[str, Any]]) -> list[dict[str, float | None]]:
    """Each RATIO_FIGURES figure of each size over the smallest size's (None where a size lacks it: a size
    that did not finish has only its peak RSS, run directory and checkpoints at the kill)."""
    base = results[0]

    def over(row: dict[str, Any], key: str) -> float | None:
        if row.get(key) is None or not base.get(key):
            return None
        return round(row[key] / base[key], 3)

    return [{"parts": row["parts"], "finished": "did_not_finish_s" not in row,
             **{key: over(row, key) for key in RATIO_FIGURES}} for row in results]


def _fmt(value: Any) -> str:
    return f"{value:,.3f}" if isinstance(value, float) else str(value)


def print_size(row: dict[str, Any]) -> None:
    print(f"\n== {row['parts']} corpus file(s)")
    if "did_not_finish_s" in row:
        print(f"   did not finish in {row['did_not_finish_s']:.0f} s; at the kill:")
    for key, value in row.items():
        if key not in ("parts", "top_files_mb"):
            print(f"   {key:28} {_fmt(value)}")
    print("   largest files (MB): " + ", ".join(f"{name} {mb}" for name, mb in row["top_files_mb"].items()))


def worst(rows: list[dict[str, Any]], key: str) -> str:
    """The largest value of `key` over the sizes that finished ("none" when none has it)."""
    values = [row[key] for row in rows if row.get(key) is not None]
    return f"{max(values):.3f}" if values else "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="corpus files per size, comma-separated")
    parser.add_argument("--corpus", type=Path, default=Path(tempfile.gettempdir()) / "examiner-scale" / "corpus",
                        help="folder of scale_corpus.py's part-NNNNN.txt files (missing ones are built)")
    parser.add_argument("--embedding-cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "examiner-scale" / "embeddings.sqlite",
                        help="embedding cache shared by every size (the runs' embedding_cache setting)")
    parser.add_argument("--scratch", type=Path, default=None,
                        help="folder for the run directories (kept; default: a temporary folder, removed)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds one size's exam may take")
    parser.add_argument("--reuse-exams", action="store_true",
                        help="with --scratch: measure again the exams an earlier invocation ran there "
                             "(run directory, reports, resume) instead of running them again")
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_scale.json",
                        help="where the figures go as JSON (default: experiments/results/bench_scale.json)")
    parser.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return run_as_child(args.child)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    ensure_corpus(args.corpus, sizes[-1])
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as temporary:
        scratch = args.scratch or Path(temporary)
        results: list[dict[str, Any]] = []
        for parts in sizes:
            results.append(measure_size(parts, args.corpus, scratch, args.embedding_cache.resolve(), args.timeout,
                                        reuse=args.reuse_exams))
            print_size(results[-1])
            if "did_not_finish_s" in results[-1]:
                break  # a larger size would not finish either
    report(results, sizes, args.out)


def report(results: list[dict[str, Any]], sizes: list[int], out: Path) -> None:
    """Ratios, the JSON file (`out`) and the RESULT line."""
    finished = [row for row in results if "did_not_finish_s" not in row]
    every = ratios(results)
    rows = [row for row in every if row["finished"]]
    print("\nratios against the smallest size:")
    for row in every:
        print("   " + " ".join(f"{key}={value}" for key, value in row.items()))
    save_json({"sizes": sizes, "profile": PROFILE, "results": results, "ratios": every}, out)
    smallest = finished[0] if finished and finished[0]["parts"] == 1 else {}
    unfinished = [f"{row['parts']}@{row['did_not_finish_s']:.0f}s" for row in results if row not in finished]
    print_result({
        "sizes_finished": ",".join(str(row["parts"]) for row in finished) or "none",
        "did_not_finish": ",".join(unfinished) or "none",
        "units_max": max((row["units"] for row in finished), default=0),
        "overhead_ratio_max": worst(rows, "overhead_ms_per_unit"),
        "peak_rss_gb_max": worst(finished, "peak_rss_gb"),
        "ckpt_bytes_ratio_max": worst(rows, "ckpt_bytes_per_checkpoint"),
        "ckpt_max_bytes_ratio_at_kill": worst([row for row in every if not row["finished"]], "ckpt_bytes_max"),
        "report_html_mb_max": worst(finished, "report_html_mb"),
        "resume_first_decision_s_max": worst(finished, "resume_s"),
        "resume_timed": ",".join(sorted({row["resume_first_decision"].replace(" ", "_") for row in finished})) or "none",
        "verdicts_sha256_2k": smallest.get("verdicts_sha256", "none"),
    })


CHILDREN: dict[str, Callable[..., None]] = {
    "exam": lambda config, run_dir, out, *paths: child_exam(Path(config), Path(run_dir), Path(out), list(paths)),
    "report": lambda run_dir, out: child_report(Path(run_dir), Path(out)),
}
"""What `--child NAME ARGS...` runs in a fresh process."""


def run_as_child(argv: list[str]) -> None:
    CHILDREN[argv[0]](*argv[1:])


if __name__ == "__main__":
    main()
