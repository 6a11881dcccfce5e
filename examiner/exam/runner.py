"""Start and resume exams: wires settings, gateway, run store and graph together.

A run directory holds everything needed to resume: `request.json` (what was asked), `config.yaml`
(the settings, API-key variable names only), `checkpoints.sqlite` (LangGraph's checkpointer) and
`cache.sqlite` (responses), so `examiner resume RUN_DIR` continues without paying for a finished call.

The budget belongs to the run: config.yaml records its cap, and a resumed process starts from the
dollars the ledger says were already spent (calls in flight at a kill are first settled: reconciled
from the cache, or marked `unknown`, shown apart as possibly billed and still held against the budget at
their worst case). A budget-stopped run is continued by resuming it with a
larger cap: the graph goes back to the checkpoint before the node that ran out of money and runs it
again, its paid calls answered by the cache. One process writes a run at a time (core/runlock.py).
"""

from __future__ import annotations

import json
import logging
import shlex
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from examiner.core.allocator import fix_mmap_threshold
from examiner.core.version import VERSION
from examiner.core.config import Settings, read_settings_file, validate_settings
from examiner.corpus.reading import check_corpus_size, configure_reading, limits_from_settings
from examiner.core.errors import BudgetExhausted, UserError, note_run_dir
from examiner.exam.bookends import load_for_resume
from examiner.exam.checkpoints import checkpoint_problem, exam_checkpointer
from examiner.exam.graph import Sample, build_exam_graph
from examiner.exam.reports import build_reports
from examiner.exam.modes import MODES
from examiner.exam.nodes.context import ExamContext
from examiner.exam.progress import ExamProgress
from examiner.core import rundir
from examiner.core.records import RunInfo, UnitOutcome
from examiner.core.rundir import RunDir
from examiner.core.owned import FOLDER_MARK, is_marked, mark_folder
from examiner.core.runlock import hold_run_dir, refuse_if_in_use
from examiner.core.stopping import was_cancelled
from examiner.core.sqlite_check import set_aside_if_damaged, sqlite_problem
from examiner.exam import paper
from examiner.exam.run_writer import RunStore
from examiner.agents.prompting import prompts_digest
from examiner.judging.cascade import exam_cascade
from examiner.judging.exam_judges import JUDGE_METHODS, exam_judge
from examiner.llm import Gateway
from examiner.llm.cache import response_cache_path
from examiner.llm.ledger import spent_usd
from examiner.corpus.vectors import EmbeddingCache, Embedder

log = logging.getLogger(__name__)


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
    paper: str = ""
    """An earlier run directory whose questions the targets sit (examiner.exam.paper); empty: the adaptive exam."""
    paper_target: str = ""
    """Whose questions in that run (empty: its only target)."""
    demo: bool = False
    """Started by `examiner demo`, which may replace this run folder (and no other) with a new demo run."""


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
    check_corpus_size(request.corpus_paths, settings.exam.max_corpus_mb)  # before the run directory exists
    if not request.paper:
        check_corpus_has_text(request.corpus_paths, request.jsonl_field)


def check_corpus_has_text(paths: list[str], jsonl_field: str) -> None:
    """UserError, before a run folder exists, when no file of the corpus holds a passage (every file binary,
    unsupported or empty); files are read only until the first that holds text."""
    from examiner.corpus.reading import Corpus, check_not_empty, corpus_inputs, read_input

    seen = Corpus()
    for file, doc_id in corpus_inputs(paths, seen):
        part = read_input(file, doc_id, jsonl_field=jsonl_field)
        if part.documents:
            return
        seen.skipped += part.skipped
    check_not_empty(seen, paths)


def _write_start(run_dir: Path, settings: Settings, request: ExamRequest) -> RunStore:
    store = RunStore(run_dir)
    store.run.write_request(asdict(request), settings.model_dump(mode="json"))
    if not (run_dir / rundir.RUN_INFO).exists():
        store.write_info(
            RunInfo(
                run_id=request.run_id, mode=request.mode, targets=request.targets,  # type: ignore[arg-type]
                judge_mode=request.judge_mode, judges=list(request.judges),
                corpus_paths=request.corpus_paths, started=time.time(),
                examiner_version=VERSION, prompts_sha256=prompts_digest(), paper=request.paper,
            )
        )
    return store


RESUMABLE_STOPS = {"budget_exhausted": "where the budget ran out",
                   "incomplete": "where model calls failed for good (they are asked again)",
                   "failed": "where every model call failed (they are asked again)"}
"""Graph stops a resume continues from the node that stopped, and how the `resume:` line says why."""


async def _resume_point(app: Any, config: dict[str, Any]) -> tuple[tuple[Any, dict[str, Any]] | None, str]:
    """((graph input, checkpoint config) a resume continues with, or None when nothing is left to run;
    the decision in words, for the `resume: ` line).

    A run killed before its first checkpoint starts over; a killed run continues where its checkpoint
    stands: with a node still to run, or with a finished node's writes saved but not yet applied (a kill
    between the two; LangGraph then reports no `next` node, but `tasks` still holds that node). A run
    the budget stopped, or that stopped `incomplete` or `failed` because model calls failed for good, went
    on to `finish`, so it continues from the last checkpoint before the stop: the one whose next node is
    the node that stopped (every call that node paid for is in the response cache, so only the calls that
    ran out of money or failed are asked again)."""
    snapshot = await app.aget_state(config)
    if not snapshot.values:
        return ({}, config), "no checkpoint yet; starting the run over"
    if "pools" in snapshot.values:
        raise UserError("this run was checkpointed by an older examiner, whose graph state this one no longer "
                        "reads; start it again with `examiner run` (replies it paid for are in its cache)")
    if snapshot.tasks:
        return (None, config), f"continuing from the checkpoint before node {_next_node(snapshot)}"
    status = snapshot.values.get("status")
    if status not in RESUMABLE_STOPS:
        return None, f"nothing left to run (status {status or 'unknown'})"
    async for past in app.aget_state_history(config):
        if past.tasks and past.values.get("status", "running") == "running":
            return ((None, dict(config, configurable=past.config["configurable"])),
                    f"continuing from the checkpoint before node {_next_node(past)}, {RESUMABLE_STOPS[status]}")
    return None, "nothing left to run (no checkpoint before the stop)"


def _next_node(snapshot: Any) -> str:
    return ", ".join(task.name for task in snapshot.tasks)


def _announce(quiet: bool, decision: str) -> None:
    """The resume's first decision, one stderr line starting `resume: ` (not when quiet)."""
    if not quiet:
        print(f"resume: {decision}", file=sys.stderr, flush=True)


def _reopen(store: RunStore) -> None:
    """Mark a stopped run as running again, so a crash during the resume is recorded as `failed`."""
    info = store.read_info()
    if info.status != "running":
        info.status, info.stop_reason = "running", ""
        store.write_info(info)


async def _drive(run_dir: Path, settings: Settings, request: ExamRequest, *, resume: bool, quiet: bool,
                 sample: Sample | None = None) -> RunInfo:
    fix_mmap_threshold()  # large freed buffers (state values, encoder batches) go back to the system
    configure_reading(limits_from_settings(settings.exam))  # a resume reads the corpus within the run's limits
    store = RunStore(run_dir)
    async with Gateway(settings, run_dir, run_id=request.run_id) as gateway:
        if resume:
            gateway.resume_spending()
        embed_cache = EmbeddingCache(settings.embedding_cache or run_dir / rundir.EMBEDDINGS)
        mode = MODES[request.mode]
        judge = exam_judge(gateway, method=request.judge_mode, reads_references=mode.reads_references,
                           stage=mode.judge_stage, endpoints=request.judges)
        ctx = ExamContext(
            settings=settings, gateway=gateway, store=store, embedder=Embedder(cache=embed_cache),
            targets=request.targets, mode=mode, judge=judge, progress=ExamProgress(gateway.totals, enabled=not quiet),
            cascade=exam_cascade(gateway, settings, request.judge_mode, mode.reads_references, mode.judge_stage,
                                 notes=lambda line: gateway.notes(line)),
            corpus_paths=request.corpus_paths, jsonl_field=request.jsonl_field, sample=sample,
            paper=paper.read_paper(request.paper, request.paper_target or None) if request.paper else None,
        )
        gateway.notes = ctx.progress.note  # provider batch progress, above the bars (not when quiet)
        if gateway.cache is not None:  # records on disk only from replies the cache holds (RunStore.before_append)
            store.before_append = gateway.cache.flush
        if resume:
            load_for_resume(ctx)
        graph = build_exam_graph()
        config: dict[str, Any] = {"configurable": {"thread_id": request.run_id}, "recursion_limit": 10_000}
        lost_checkpoints = resume and not (run_dir / rundir.CHECKPOINTS).is_file() and (run_dir / rundir.STATE).is_file()
        try:
            async with exam_checkpointer(run_dir / rundir.CHECKPOINTS) as saver:
                app = graph.compile(checkpointer=saver)
                start: tuple[Any, dict[str, Any]] | None = ({}, config)
                if resume:
                    start, decision = await _resume_point(app, config)
                    if lost_checkpoints:
                        decision = (f"{rundir.CHECKPOINTS} is missing; starting the run over from its records "
                                    "(replies already paid for come from the response cache)")
                    _announce(quiet, decision)
                if start is None:
                    return store.read_info()
                _reopen(store)
                await app.ainvoke(*start, context=ctx)
        except BudgetExhausted as exc:  # a stop before the first checkpoint (unit extraction)
            info = store.read_info()
            info.status, info.stop_reason = "budget_exhausted", str(exc)
            store.write_info(info)
        except BaseException as exc:
            _record_stop(store, exc)
            raise
        finally:
            embed_cache.close()
            store.close()
    return store.read_info()


def _record_stop(store: RunStore, exc: BaseException) -> None:
    """run.json for a run an exception ended: `interrupted` for a stop signal's cancellation (the calls
    in flight got their `cancelled` outcomes as it unwound), else `failed` with the error's first line."""
    info = store.read_info()
    if info.status != "running":
        return
    if was_cancelled(exc):
        info.status, info.stop_reason = "interrupted", "stopped by a signal (SIGINT or SIGTERM); resume continues it"
    else:
        info.status, info.stop_reason = "failed", f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    store.write_info(info)


async def start_exam(
    settings: Settings, request: ExamRequest, run_dir: str | Path, *, quiet: bool = False, report: bool = True,
    sample: Sample | None = None,
) -> RunInfo:
    """Run a new exam into `run_dir` (which must be new or empty), holding the run directory's lock;
    `sample` narrows it to some of its units (the estimate's pilot)."""
    run_dir = Path(run_dir)
    _refuse_non_empty(run_dir)
    if not request.targets:
        request.targets = [settings.roles["candidate"]]
    request.judges = request.judges or list(settings.judge_panel)
    # Absolute, so `resume` and `report` work from any directory.
    request.corpus_paths = [str(Path(p).resolve()) for p in request.corpus_paths]
    _check_request(settings, request)
    request.run_id = request.run_id or uuid.uuid4().hex[:12]
    if request.paper:  # the paper fixes the units and questions, so the exam mode is the paper's too
        request.paper = str(Path(request.paper).resolve())
        request.mode = paper.read_paper(request.paper, request.paper_target or None).mode
    run_dir.mkdir(parents=True, exist_ok=True)
    note_run_dir(run_dir)  # where the full trace of an unexpected error goes (examiner.log)
    with hold_run_dir(run_dir):
        _refuse_non_empty(run_dir)  # another `run` may have filled it between the check and the lock
        mark_folder(run_dir)  # examiner's own folder from here on: a restart may clear its outputs
        _write_start(run_dir, settings, request)
        info = await _drive(run_dir, settings, request, resume=False, quiet=quiet, sample=sample)
        if report:
            build_reports(run_dir)
    return info


def _refuse_non_empty(run_dir: Path) -> None:
    """A new run needs an empty directory (its lock file aside); a live run in it is named as such. A
    run that stopped before its first model call (nothing paid, no file but its own) is cleared and
    started again in the same folder."""
    if run_dir.is_dir() and any(p.name not in (rundir.LOCK, FOLDER_MARK) for p in run_dir.iterdir()):
        refuse_if_in_use(run_dir)
        if restartable(run_dir):
            log.info("%s held a run that stopped before its first model call: starting it afresh", run_dir)
            rundir.remove_exam_outputs(run_dir)
            return
        foreign = rundir.foreign_entries(run_dir)
        if foreign and not (run_dir / rundir.RUN_INFO).is_file():
            shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
            raise UserError(f"run directory {run_dir} is not empty (it holds {shown}); give --out a new or "
                            "empty folder")
        raise UserError(f"run directory {run_dir} is not empty (use `examiner resume {shlex.quote(str(run_dir))}` "
                        "to continue it)")


def restartable(run_dir: Path) -> bool:
    """Whether `run_dir` holds only an exam run's own files, from a run that stopped (failed, or killed)
    before its first model call: no ledger row, a run.json (if any) that is not completed or stopped by
    its budget. Such a run may be cleared and started again. Only a folder examiner created (its marker,
    examiner.core.owned) counts: a user's folder that holds only names an exam also writes is not one."""
    if not is_marked(run_dir) or rundir.foreign_entries(run_dir):
        return False
    run = RunDir(run_dir)
    try:
        if run.read_ledger():
            return False
    except Exception:  # noqa: BLE001 - a ledger that cannot be read may record payments: keep it
        return False
    if not (run_dir / rundir.RUN_INFO).is_file():
        return True
    try:
        status = run.read_info().status
    except UserError:
        return True  # a run.json cut short before the first call: nothing of value was recorded
    return status in ("failed", "running", "interrupted")


def load_run(run_dir: str | Path, config_file: str | None = None) -> tuple[Settings, ExamRequest]:
    """Settings and request saved in a run directory, checked as a resume needs them: a missing or
    damaged request.json, config.yaml, run.json or checkpoints.sqlite is one UserError naming the file.
    config.yaml goes through the same validation as `examiner run`'s settings; an unfinished run whose
    endpoint URLs held credentials gets them back from `config_file` (restore_credentials)."""
    run_dir = Path(run_dir)
    request_file = run_dir / rundir.REQUEST
    if not request_file.is_file():
        raise UserError(f"{run_dir} is not an exam run directory (no {rundir.REQUEST})")
    try:
        request = ExamRequest(**json.loads(request_file.read_bytes().decode("utf-8")))
    except (ValueError, TypeError) as exc:  # not UTF-8, not JSON, or not the request's fields
        raise UserError(f"{request_file} is damaged ({_first_line(exc)})") from None
    saved_config = run_dir / rundir.CONFIG
    settings = validate_settings(read_settings_file(saved_config), str(saved_config))
    info = RunStore(run_dir).read_info()
    if info.status != "completed":
        settings = restore_credentials(settings, request, run_dir, config_file)
    checkpoints = run_dir / rundir.CHECKPOINTS
    cache_path = response_cache_path(settings, run_dir)
    if info.status != "completed" and settings.cache and cache_path is not None and not cache_path.is_file():
        log.warning("%s is missing: replies paid for before will be requested (and paid) again", cache_path)
    if info.status != "completed":
        set_aside_if_damaged(run_dir / rundir.EMBEDDINGS, "embeddings are computed again")
        state = run_dir / rundir.STATE  # absent until the first node: a run killed before it starts over
        # A missing checkpoints.sqlite is not an error: the run starts over in its folder, and its stable
        # record ids, content-addressed state and response cache make the rerun write the same records
        # without paying again for a reply the cache holds.
        for path in (checkpoints, state):
            if not path.is_file():
                continue
            problem = sqlite_problem(path)
            if problem is not None:
                afresh = (f"remove it and run `examiner resume {shlex.quote(str(run_dir))}` to start the run over "
                          "(replies already paid for come from its response cache)") if path is checkpoints else \
                    "the run cannot continue from its checkpoint; start it again with `examiner run`"
                raise UserError(f"{path} is damaged ({problem}): {afresh}")
        if checkpoints.is_file():
            foreign = checkpoint_problem(checkpoints)
            if foreign is not None:
                raise UserError(f"{checkpoints} was not written by examiner ({foreign}); refusing to load it "
                                "(a run folder from elsewhere is data: remove the file to start the run over)")
    return settings, request


def restore_credentials(settings: Settings, request: ExamRequest, run_dir: Path,
                        config_file: str | None) -> Settings:
    """The run's settings with the credentials of its endpoint URLs given back from `config_file` (the
    configuration the run was started with): the run folder keeps URLs without them (examiner.core.redact).
    Only endpoints the run uses count; a URL in the file must redact to the one the run saved."""
    from examiner.core.config import load_settings
    from examiner.core.redact import MASK, redact_url

    used = {*settings.roles.values(), *request.targets, *request.judges, *settings.judge_panel}
    needs = [name for name in sorted(used) if name in settings.endpoints
             and settings.endpoints[name].provider == "openai"
             and any(MASK in url for url in [settings.endpoints[name].base_url or "", *settings.endpoints[name].replicas])]
    if not needs:
        return settings
    if config_file is None:
        raise UserError(f"endpoint {needs[0]} has credentials in its URL, which the run folder does not keep: "
                        f"`examiner resume {shlex.quote(str(run_dir))} --config FILE` gives them back (FILE: the "
                        "configuration the run was started with)")
    given = load_settings(config_file)
    changes: dict[str, Any] = {}
    for name in needs:
        saved, spec = settings.endpoints[name], given.endpoints.get(name)
        if spec is None or redact_url(spec.base_url) != saved.base_url or \
                [redact_url(url) for url in spec.replicas] != saved.replicas:
            raise UserError(f"{config_file}: endpoint {name} does not have the URL the run used ({saved.base_url})")
        changes[name] = {"base_url": spec.base_url, "replicas": list(spec.replicas)}
    return settings.merged({"endpoints": changes})


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]


async def resume_exam(run_dir: str | Path, *, quiet: bool = False, report: bool = True,
                      budget_usd: float | None = None, cache_dir: str | None = None,
                      config_file: str | None = None) -> RunInfo:
    """Continue a killed or budget-stopped run from its checkpoint, holding the run directory's lock
    (a finished run only gets its reports rebuilt).

    `budget_usd` replaces the run's cap and `cache_dir` its shared response cache; both are recorded
    in config.yaml, so a later resume keeps them; money spent before counts against the cap either way.
    `config_file` gives back credentials of endpoint URLs, which config.yaml does not keep."""
    run_dir = Path(run_dir)
    note_run_dir(run_dir)
    settings, request = load_run(run_dir, config_file)
    with hold_run_dir(run_dir):
        changes = {key: value for key, value in (("budget_usd", budget_usd), ("cache_dir", cache_dir))
                   if value is not None and value != getattr(settings, key)}
        if changes:
            settings = settings.merged(changes)
            RunDir(run_dir).write_config(settings.model_dump(mode="json"))
        info = RunStore(run_dir).read_info()
        if info.status != "completed":
            info = await _drive(run_dir, settings, request, resume=True, quiet=quiet)
        else:
            _announce(quiet, f"run {info.run_id} is complete; " + ("rebuilding its reports" if report else "nothing to do"))
        if report:
            build_reports(run_dir)
    return info


@dataclass(frozen=True)
class BudgetStop:
    """What a budget-stopped run spent and left undone, for the message that tells how to continue."""

    spent_usd: float
    cap_usd: float | None
    stage: str
    round: int
    """The round the stop interrupted (1-based)."""
    units: int
    uncovered: dict[str, int]
    """Per target: units left in the pool, not yet covered."""


def budget_stop(run_dir: str | Path) -> BudgetStop:
    """Read a stopped run's figures back from its directory: ledger, config.yaml, run.json, outcomes."""
    run = RunDir(run_dir)
    info = run.read_info()
    cap = run.read_config().get("budget_usd")
    uncovered: dict[str, int] = {}
    for outcome in run.records(UnitOutcome).values():
        uncovered[outcome.target] = uncovered.get(outcome.target, 0) + (outcome.status == "uncovered")
    return BudgetStop(
        spent_usd=spent_usd(run.ledger_records()), cap_usd=None if cap is None else float(cap),
        stage=info.stop_reason, round=max((r.round for r in info.rounds), default=0) + 1,
        units=info.units, uncovered=uncovered,
    )


def default_run_dir() -> Path:
    return Path("runs") / time.strftime("exam-%Y%m%d-%H%M%S")


__all__ = ["BudgetStop", "ExamRequest", "budget_stop", "start_exam", "resume_exam", "build_reports", "load_run"]
