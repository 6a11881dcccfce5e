"""The memorisation probe as a library call (`examiner probe-memory`): a target's guided versus general
completions of held-back sentence halves of a corpus and, where the target gives its full token
distributions, the sentences' Min-K%++, beside a negative control it cannot have read, with
the report (memory_probe.json, memory_probe.md), every completion (completions.jsonl), the ledger and the
response cache written into one folder. The method: examiner/exam/memory_probe.py."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from examiner.api.checks import Notes, output_dir, to_stderr
from examiner.api.settings import JobOptions, SettingsSource, path_texts, resolve_settings, simulated_name
from examiner.core.errors import UserError

if TYPE_CHECKING:
    from examiner.core.config import Settings
    from examiner.exam.memory_probe import HeldBack
    from examiner.reporting.model.memory_probe import MemoryProbeReport

HANDBOOK = Path(__file__).resolve().parents[2] / "corpora" / "examiner-handbook"
"""The default negative control: the handbook written for this project (after any public model's cutoff)."""

REPORT_JSON, REPORT_MD, COMPLETIONS = "memory_probe.json", "memory_probe.md", "completions.jsonl"


class MemoryProbeOptions(JobOptions):
    """`examiner probe-memory`: guided versus general completion of a corpus's held-back sentence halves."""

    corpus: tuple[str, ...]
    """Files or folders of the corpus probed."""
    out: str
    """Folder for the report, completions.jsonl, the ledger and the response cache."""
    target: str | None = None
    """Endpoint probed (default: the candidate role's endpoint)."""
    control: tuple[str, ...] = ()
    """Files or folders the target cannot have read (default: corpora/examiner-handbook)."""
    sentences: int = 5
    """Sentences probed per document at most (seeded)."""
    max_documents: int | None = 20
    """Documents probed per side at most (a seeded sample); None: all of them."""
    seed: int = 0
    """Seed of the documents and sentences drawn."""
    min_k_percent: float = 20.0
    """Min-K%++'s k: the share (per cent) of a sentence's lowest-scoring tokens averaged."""
    source_name: str | None = None
    """How the guided prompt names the corpus's collection (default: its folder's name)."""
    control_name: str | None = None
    """How the guided prompt names the control's collection (default: its folder's name)."""
    no_cache: bool = False
    """Do not reuse cached replies in `out`."""
    quiet: bool = False
    """No progress display."""


@dataclass(frozen=True)
class MemoryProbeResult:
    """What the probe wrote and found: the report as written to memory_probe.json."""

    out: Path
    report: MemoryProbeReport
    paths: dict[str, Path]
    outage: str | None = None
    """One line naming the target when every call failed (an endpoint that is down); None otherwise."""

    @property
    def status(self) -> str:
        return self.report.status


def _collection(paths: tuple[str, ...], given: str | None) -> str:
    return given or (Path(paths[0]).resolve().name if len(paths) == 1 else "the collection")


def probe_memory(options: MemoryProbeOptions, settings: SettingsSource = None, *,
                 notes: Notes = to_stderr) -> MemoryProbeResult:
    """Probe the target and write the report into `options.out`, as `examiner probe-memory` does."""
    from examiner.corpus.reading import load_corpus
    from examiner.exam.memory_probe import SIDES, held_back, sample_documents

    if options.sentences < 1:
        raise UserError(f"--sentences must be 1 or more, got {options.sentences}")
    if not 0 < options.min_k_percent <= 100:
        raise UserError(f"--min-k-percent must be above 0 and at most 100, got {options.min_k_percent:g}")
    if options.max_documents is not None and options.max_documents < 2:
        raise UserError(f"--max-documents must be 2 or more (an interval needs two documents), got "
                        f"{options.max_documents}")
    control = options.control or (str(HANDBOOK),)
    if not options.control and not HANDBOOK.is_dir():
        raise UserError("the default control corpora/examiner-handbook is not here; give --control FOLDER")
    probed, held = [Path(p).resolve() for p in options.corpus], [Path(p).resolve() for p in control]
    if any(a == b or a in b.parents or b in a.parents for a in probed for b in held):
        raise UserError("the corpus and the --control share a path (one holds the other): the control must be text "
                        "the target cannot have read, apart from the corpus")
    resolved = resolve_settings(settings, options)
    out = output_dir(options.out)
    target = options.target
    if target is not None:
        target = simulated_name(resolved, target) if options.simulate else target
        resolved.endpoint(target)  # ConfigError for a typo
    sources = {"corpus": _collection(options.corpus, options.source_name),
               "control": _collection(control, options.control_name)}
    items: list[HeldBack] = []
    skipped: list[str] = []
    for side, paths in zip(SIDES, (options.corpus, control)):
        documents = sample_documents(load_corpus(list(paths)).documents, options.max_documents, options.seed, side)
        cut = held_back(documents, side, per_document=options.sentences, seed=options.seed)
        probed = {i.document for i in cut}
        skipped += [f"{side}/{d.id}" for d in documents if d.id not in probed]
        if len(probed) < 2:
            raise UserError(f"the {side} has {len(probed)} document(s) with a prose sentence to probe; the "
                            "probe needs two or more a side")
        items += cut
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    records, meta = asyncio.run(_probe(options, resolved, target, items, sources, out))
    return _write(options, out, records, meta, sources, skipped, time.perf_counter() - started, resolved)


async def _probe(options: MemoryProbeOptions, settings: Settings, target: str | None, items: list[HeldBack],
                 sources: dict[str, str], out: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Both completions of every item on one gateway (ledger and cache in `out`)."""
    from examiner.agents.candidate.completer import complete_sentence
    from examiner.exam.memory_probe import add_min_k, oracle, run_probe
    from examiner.exam.progress import ExamProgress
    from examiner.llm.gateway import Gateway
    from examiner.llm.token_scores import token_scorer

    async with Gateway(settings, run_dir=out, cache=not options.no_cache) as gw:
        name, _ = gw.resolve("candidate", target)
        await gw.register_oracle(name, oracle(items))

        async def complete(item: HeldBack, source: str | None) -> str:
            result = await complete_sentence(gw, item.start, source=source, ending_words=len(item.ending.split()),
                                             target=target, item_id=item.key)
            return result.text

        progress = ExamProgress(gw.totals, enabled=not options.quiet)
        with progress.task("probe memory", len(items)) as tick:
            records, stopped = await run_probe(items, complete, sources, on_done=tick.advance)  # type: ignore[arg-type]
        scorer = await token_scorer(gw, name)
        min_k: dict[str, Any] = {"computed": False, "k_percent": options.min_k_percent, "method": None, "reason": None}
        if isinstance(scorer, str):
            min_k["reason"] = scorer
        else:
            await add_min_k(records, scorer, options.min_k_percent)
            min_k.update(computed=True, method=scorer.method)
        totals = gw.totals
        meta = {"target": name, "status": "budget_exhausted" if stopped else "ok", "calls": totals.calls,
                "cache_hits": totals.cache_hits, "prompt_tokens": totals.prompt_tokens,
                "completion_tokens": totals.completion_tokens, "cost_usd": round(totals.cost_usd, 6),
                "min_k_plus_plus": min_k}
    return records, meta


def _write(options: MemoryProbeOptions, out: Path, records: list[dict[str, Any]], meta: dict[str, Any],
           sources: dict[str, str], skipped: list[str], wall_s: float, settings: Settings) -> MemoryProbeResult:
    from examiner.core.owned import write_output
    from examiner.exam.memory_probe import MAX_WORDS, MIN_WORDS, per_document, summary
    from examiner.reporting.memory_probe import render_markdown
    from examiner.reporting.model.memory_probe import MemoryProbeReport
    from examiner.reporting.writer import dumps, report_data, write_jsonl

    documents = per_document(records)
    failed = [r for r in records if "error" in r]
    data = {"kind": "memory_probe", **meta, "corpus": list(path_texts(options.corpus)),
              "control": list(path_texts(options.control)) or ["corpora/examiner-handbook"], "sources": sources,
              "per_document": options.sentences, "max_documents": options.max_documents, "seed": options.seed,
              "min_words": MIN_WORDS, "max_words": MAX_WORDS, "scoring": "ROUGE-L F1, stemmed, completion cut to "
              "the held-back half's length",
              "sentences": len(records), "failed": len(failed), "wall_s": round(wall_s, 3),
              "summary": summary(documents), "documents": documents, "skipped_documents": skipped}
    if meta["status"] == "ok" and failed:
        data["status"] = "partial"
    report = MemoryProbeReport.model_validate(data)
    paths = {"completions": write_jsonl(out / COMPLETIONS, records),
             "report_json": out / REPORT_JSON, "report_md": out / REPORT_MD}
    write_output(paths["report_json"], dumps(report_data(report)) + "\n")
    write_output(paths["report_md"], render_markdown(report))
    outage = None
    if records and len(failed) == len(records) and meta["status"] == "ok":
        url = settings.endpoints[meta["target"]].base_url if meta["target"] in settings.endpoints else None
        outage = (f"every probe call failed ({len(records)} sentences): endpoint {meta['target']}"
                  f"{f' at {url}' if url else ''}: {failed[0]['error']}")
    return MemoryProbeResult(out, report, paths, outage)


__all__ = ["COMPLETIONS", "HANDBOOK", "MemoryProbeOptions", "MemoryProbeResult", "REPORT_JSON", "REPORT_MD",
           "probe_memory"]
