"""Start, resume and estimate exams: wires settings, gateway, run store and graph together.

A run directory holds everything needed to resume: `request.json` (what was asked), `config.yaml`
(the settings, API-key variable names only), `checkpoints.sqlite` (LangGraph's checkpointer) and
`cache.sqlite` (responses), so `examiner resume RUN_DIR` continues without paying for a finished call.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from examiner.config import Settings
from examiner.errors import UserError
from examiner.exam.bookends import load_for_resume
from examiner.exam.graph import build_exam_graph
from examiner.exam.modes import MODES
from examiner.exam.nodes.context import ExamContext
from examiner.exam.progress import ExamProgress
from examiner.core import rundir
from examiner.core.rundir import RunDir
from examiner.core.records import RunInfo
from examiner.exam.store import RunStore
from examiner.judging.exam_judges import JUDGE_METHODS, exam_judge
from examiner.llm import Gateway
from examiner.vectors import EmbeddingCache, Embedder


@dataclass
class ExamRequest:
    """What the user asked for; saved as request.json so a resume asks the same."""

    corpus_paths: list[str]
    targets: list[str] = field(default_factory=list)
    mode: str = "refeval"
    judge_mode: str = "refeval"
    judges: list[str] = field(default_factory=list)
    """Judge endpoints: two or more make a panel (majority per unit); empty: the `judge` role's endpoint.
    A new run fills it from the settings' `judge_panel` when no --judge was given."""
    jsonl_field: str = "text"
    run_id: str = ""


def _check_request(settings: Settings, request: ExamRequest) -> None:
    if request.mode not in MODES:
        raise UserError(f"unknown mode '{request.mode}' (choose from {', '.join(MODES)})")
    if request.judge_mode not in JUDGE_METHODS:
        raise UserError(f"unknown judge mode '{request.judge_mode}' (choose from {', '.join(JUDGE_METHODS)})")
    for flag, names in (("--target", request.targets), ("--judge", request.judges)):
        if len(set(names)) != len(names):
            raise UserError(f"each {flag} may be given once")
    for name in request.targets + request.judges:
        settings.endpoint(name)
    for role in ("examiner", "judge"):
        settings.endpoint_for(role)[1].api_key()
    for name in request.targets + request.judges:
        settings.endpoint(name).api_key()


def _write_start(run_dir: Path, settings: Settings, request: ExamRequest) -> RunStore:
    store = RunStore(run_dir)
    store.run.write_request(asdict(request), settings.model_dump(mode="json"))
    if not (run_dir / rundir.RUN_INFO).exists():
        store.write_info(
            RunInfo(
                run_id=request.run_id, mode=request.mode, targets=request.targets,  # type: ignore[arg-type]
                corpus_paths=request.corpus_paths, started=time.time(),
            )
        )
    return store


async def _drive(run_dir: Path, settings: Settings, request: ExamRequest, *, resume: bool, quiet: bool) -> RunInfo:
    store = RunStore(run_dir)
    async with Gateway(settings, run_dir, run_id=request.run_id) as gateway:
        embed_cache = EmbeddingCache(run_dir / rundir.EMBEDDINGS)
        mode = MODES[request.mode]
        judge = exam_judge(gateway, method=request.judge_mode, reads_references=mode.reads_references,
                           stage=mode.judge_stage, endpoints=request.judges)
        ctx = ExamContext(
            settings=settings, gateway=gateway, store=store, embedder=Embedder(cache=embed_cache),
            targets=request.targets, mode=mode, judge=judge, progress=ExamProgress(gateway.totals, enabled=not quiet),
        )
        if resume:
            load_for_resume(ctx)
        graph = build_exam_graph(ctx, request.corpus_paths, request.jsonl_field)
        config: dict[str, Any] = {"configurable": {"thread_id": request.run_id}, "recursion_limit": 10_000}
        try:
            async with AsyncSqliteSaver.from_conn_string(str(run_dir / rundir.CHECKPOINTS)) as saver:
                app = graph.compile(checkpointer=saver)
                if resume:
                    snapshot = await app.aget_state(config)
                    if not snapshot.next:
                        if snapshot.values:
                            return store.read_info()
                        await app.ainvoke({}, config)
                    else:
                        await app.ainvoke(None, config)
                else:
                    await app.ainvoke({}, config)
        except BaseException as exc:
            info = store.read_info()
            if info.status == "running":
                info.status = "failed"
                info.stop_reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
                store.write_info(info)
            raise
        finally:
            embed_cache.close()
    return store.read_info()


def build_reports(run_dir: Path) -> dict[str, Path]:
    """report.json/.md/.html and provenance.graphml for a run (empty dict if reporting is unavailable)."""
    from examiner.provenance import build_provenance
    from examiner.report import build_report

    paths = dict(build_report(run_dir))
    paths["provenance"] = build_provenance(run_dir)
    return paths


async def start_exam(
    settings: Settings, request: ExamRequest, run_dir: str | Path, *, quiet: bool = False, report: bool = True
) -> RunInfo:
    """Run a new exam into `run_dir` (which must be new or empty)."""
    run_dir = Path(run_dir)
    if run_dir.exists() and any(run_dir.iterdir()):
        raise UserError(f"run directory {run_dir} is not empty (use `examiner resume {run_dir}` to continue it)")
    if not request.targets:
        request.targets = [settings.roles["candidate"]]
    request.judges = request.judges or list(settings.judge_panel)
    # Absolute, so `resume` and `report` work from any directory.
    request.corpus_paths = [str(Path(p).resolve()) for p in request.corpus_paths]
    _check_request(settings, request)
    request.run_id = request.run_id or uuid.uuid4().hex[:12]
    run_dir.mkdir(parents=True, exist_ok=True)
    _write_start(run_dir, settings, request)
    info = await _drive(run_dir, settings, request, resume=False, quiet=quiet)
    if report:
        build_reports(run_dir)
    return info


def load_run(run_dir: str | Path) -> tuple[Settings, ExamRequest]:
    """Settings and request saved in a run directory."""
    request, config = RunDir(run_dir).read_request()
    return Settings.model_validate(config), ExamRequest(**request)


async def resume_exam(run_dir: str | Path, *, quiet: bool = False, report: bool = True,
                      budget_usd: float | None = None) -> RunInfo:
    """Continue a killed run from its last checkpoint (a finished run only gets its reports rebuilt)."""
    run_dir = Path(run_dir)
    settings, request = load_run(run_dir)
    if budget_usd is not None:
        settings = settings.merged({"budget_usd": budget_usd})
    info = RunStore(run_dir).read_info()
    if info.status in ("completed", "budget_exhausted"):
        if report:
            build_reports(run_dir)
        return info
    info = await _drive(run_dir, settings, request, resume=True, quiet=quiet)
    if report:
        build_reports(run_dir)
    return info


async def estimate_exam(settings: Settings, request: ExamRequest, *, quiet: bool = True) -> dict[str, Any]:
    """Run the exam against the simulated backend (prices of the configured endpoints) in a scratch dir."""
    from examiner.llm.ledger import aggregate, answered

    simulated = settings.simulated()
    sim_request = ExamRequest(**{**asdict(request), "run_id": "estimate"})
    sim_request.targets = [f"sim-{t}" for t in (request.targets or [settings.roles["candidate"]])]
    sim_request.judges = [f"sim-{j}" if f"sim-{j}" in simulated.endpoints else j for j in request.judges]
    with tempfile.TemporaryDirectory(prefix="examiner-estimate-") as scratch:
        run_dir = Path(scratch) / "run"
        info = await start_exam(simulated, sim_request, run_dir, quiet=quiet, report=False)
        records = answered(RunDir(run_dir).read_ledger())
        by_role = aggregate(records, by=("role",))
        total = aggregate(records, by=())[0] if records else {}
        clusters = sum(r.clusters for r in info.rounds)
    return {
        "units": info.units, "documents": info.documents, "rounds": len({r.round for r in info.rounds}),
        "clusters": clusters, "by_role": by_role, "total": total, "stop_reason": info.stop_reason,
    }


def default_run_dir() -> Path:
    return Path("runs") / time.strftime("exam-%Y%m%d-%H%M%S")


__all__ = ["ExamRequest", "start_exam", "resume_exam", "estimate_exam", "build_reports", "load_run"]
