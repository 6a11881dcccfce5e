"""report.md: the exam report (an ExamReport) as Markdown tables, figures linked from figures/.

The row builders here are shared with the HTML renderer (html.py), so both show the same cells.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from examiner.llm.ledger import PART_HEADERS, billed_parts, settlement_lines, shown_parts
from examiner.reporting.bias_render import bias_markdown
from examiner.reporting.calibration_section import calibration_markdown
from examiner.reporting.cascade_section import cascade_markdown
from examiner.reporting.stopping_section import stopping_markdown
from examiner.reporting.wording_section import wording_markdown
from examiner.reporting.health_section import UNTRUSTWORTHY, health_markdown
from examiner.reporting.layout import (
    HEADLINE_HEADER,
    cluster_name,
    clusters_in_order,
    cost_line,
    examined_lines,
    figure_mark,
    headline_rows,
    health_line,
    pct,
    report_title,
    untrustworthy,
    went_wrong,
    with_ci,
)
from examiner.reporting.knowledge_section import md_knowledge
from examiner.reporting.gate_section import gate_lines
from examiner.reporting.languages import LANGUAGE_HEADER, language_line, language_rows, shows_languages
from examiner.reporting.model import ExamReport
from examiner.reporting.model.exam import (
    ClusterRow,
    CostFigures,
    CostSection,
    CountsSection,
    IncorrectSample,
    JudgePanel,
    OverridesSection,
    PaperRow,
    RunSection,
    TargetSection,
)
from examiner.core.plain_text import markdown_inline, markdown_quote
from examiner.reporting.md_table import table
from examiner.reporting.score_intervals import small_sample_notes
from examiner.reporting.summary import worst_clusters
from examiner.reporting.writer import cell

PER_CLUSTER_ROWS = 40
"""Per-cluster tables in the Markdown/HTML show at most this many clusters: all of them in round order when
there are no more, else the worst (lowest accuracy first); report.json keeps up to JSON_CLUSTER_ROWS."""




def score_rows(report: ExamReport) -> list[list[Any]]:
    rows = []
    for name, t in report.targets.items():
        s = t.counts
        rows.append([name, with_ci(t.accuracy), with_ci(t.coverage), s.correct, s.incorrect, s.abstained,
                     s.unanswered, s.uncovered, t.rounds])
    return rows


SCORE_HEADER = ["target", "accuracy [95% CI]", "coverage [95% CI]", "correct", "incorrect", "abstained",
                "unanswered", "uncovered", "rounds"]
COST_HEADER = ["stage", "#questions", "API calls / unit", "input + output tokens / unit", "cents / unit",
               "calls", "cache hits", "dollars"]


def per_unit_cells(r: CostFigures | PaperRow) -> list[Any]:
    """The cells every cost table ends with (GROUP_TAIL): per-unit figures, then the group's totals."""
    return [cell(r.calls_per_unit, 2), f"{r.input_tokens_per_unit:.0f} + {r.output_tokens_per_unit:.0f}",
            cell(r.cents_per_unit, 3), r.calls, r.cache_hits, f"{r.cost_usd:.4f}"]


def cost_rows(cost: CostSection) -> list[list[Any]]:
    """Rows of the paper-layout table: question generation, judging, their total, the candidate beside."""
    return [[r.stage, r.questions, *per_unit_cells(r)] for r in cost.paper]


def group_rows(rows: Sequence[CostFigures], keys: tuple[str, ...]) -> list[list[Any]]:
    return [[*(getattr(r, k) for k in keys), *per_unit_cells(r)] for r in rows]


GROUP_TAIL = ["API calls / unit", "input + output tokens / unit", "cents / unit", "calls", "cache hits", "dollars"]

PRICING_TITLE = "Tokens as billed, standard and batch"
PRICING_NOTE = ("Tokens split the way providers price them: input = prompt tokens at the input price; cached = "
                "read from the provider's prompt cache (cached-input price); write = written to it; output = "
                "visible completion; reason = hidden reasoning tokens (part of the completion). Batch calls were "
                "answered through the provider's batch API at the endpoint's batch price. Cache share = cached / "
                "prompt tokens.")


def pricing_table(cost: CostSection) -> tuple[list[str], list[list[Any]]]:
    """Per role and pricing (standard or batch): calls, tokens in their billed parts, cache share, dollars."""
    rows = [r.model_dump() for r in cost.by_pricing]  # the ledger's token splits read the counters by name
    parts = shown_parts(rows)
    header = ["role", "pricing", "calls", *(PART_HEADERS[p] for p in parts), "cache share", "dollars"]
    body = [[r["role"], "batch" if r["batch"] else "standard", r["calls"],
             *(f"{billed_parts(r)[p]:,}" for p in parts), pct(r["cached_input_share"]), f"{r['cost_usd']:.4f}"]
            for r in rows]
    return header, body


def qtype_table(report: ExamReport) -> tuple[list[str], list[list[Any]]]:
    names = list(report.targets)
    qtypes = [r.qtype for r in next(iter(report.targets.values())).per_qtype] if names else []
    rows = []
    for q in qtypes:
        row: list[Any] = [q]
        for name in names:
            r = next(x for x in report.targets[name].per_qtype if x.qtype == q)
            n = r.correct + r.incorrect
            row.append(f"{pct(r.accuracy)} (n={n})" if n else "–")
        rows.append(row)
    return ["question type", *names], rows


def baseline_rows(report: ExamReport) -> list[list[Any]]:
    rows = []
    for name, t in report.targets.items():
        b = t.baselines
        rows.append([name, b.answers, cell(b.bleu.mean, 2), cell(b.bleu.pearson, 2), cell(b.bleu.spearman, 2),
                     cell(b.embedding_similarity.mean, 3), cell(b.embedding_similarity.pearson, 2),
                     cell(b.embedding_similarity.spearman, 2)])
    return rows


BASELINE_HEADER = ["target", "answers", "mean BLEU", "BLEU vs judge (Pearson)", "BLEU vs judge (Spearman)",
                   "mean embedding sim.", "emb. vs judge (Pearson)", "emb. vs judge (Spearman)"]

PANEL_HEADER = ["target", "member", "agreement with the panel", "agreed", "compared", "member unscored"]
PANEL_NOTE = ("Each unit's verdict is the majority label of the panel's members; a tie or no usable label "
              "leaves it unscored (the unit stays in the pool). Agreement = share of the units both the "
              "member and the panel labelled on which they gave the same label.")


def panel_rows(panel: JudgePanel) -> list[list[Any]]:
    return [[r.target, r.member, pct(r.agreement), r.agreed, r.compared, r.unscored] for r in panel.agreement]


COUNT_LABELS = [
    ("skipped_files", "skipped input files"),
    ("skipped_passages", "passages that gave no knowledge unit (llm unit mode)"),
    ("decoded_with_replacement", "files not in UTF-8 (read in their detected encoding)"),
    ("unparseable_questions", "unparseable questions"),
    ("unparseable_judgments", "unparseable judgments"),
    ("leak_rejections", "questions rejected for leaking an answer"),
    ("dropped_targets", "targets dropped (not units of the cluster)"),
    ("questions_without_targets", "questions left without targets"),
    ("ignored_verdicts", "ignored verdicts (unit not a target)"),
    ("failed_requests", "failed model requests"),
]


def judge_line(run: RunSection | Mapping[str, Any]) -> str:
    """The judge that gave the verdicts, and its panel if there was one (`run`: the report's run section;
    a mapping, report.json's `run` as read by callers not yet on the model, reads the same)."""
    data = run.model_dump() if isinstance(run, RunSection) else run
    judges = data.get("judges") or []
    panel = f", a panel of {', '.join(judges)} (majority per unit)" if len(judges) > 1 else ""
    return f"{data.get('judge_mode', 'refeval')}{panel}"


STOPPED_EARLY = {
    "incomplete": "INCOMPLETE: model calls failed for good",
    "interrupted": "INTERRUPTED by a stop signal",
    "budget_exhausted": "STOPPED by the budget",
    "failed": "FAILED",
}
"""The headline of a run that did not finish, by its status."""


def stop_notice(report: ExamReport) -> str:
    """One line above the figures of a run that stopped before its end: why, how many units per target it
    left unexamined (their status in outcomes.jsonl is `uncovered`), and that `examiner resume` finishes
    it; empty for a completed run."""
    run = report.run
    if run.status not in STOPPED_EARLY:
        return ""
    left = ", ".join(f"{name}: {target.counts.uncovered} of {run.units}" for name, target in report.targets.items())
    return (f"{STOPPED_EARLY[run.status]} ({run.stop_reason or 'no reason recorded'}). The figures cover "
            f"only what was examined before the stop; units not yet examined: {left or 'all'}. "
            "`examiner resume` on this run folder continues it.")


def run_lines(run: RunSection) -> list[tuple[str, str]]:
    stop = run.stop_reason or "-"
    items = [
        ("status", f"{run.status} (stop reason: {stop})"),
        ("mode", run.mode),
        ("judge", judge_line(run)),
        ("targets", ", ".join(run.targets)),
        ("corpus", ", ".join(run.corpus_paths)),
        ("documents / passages / units", f"{run.documents} / {run.passages} / {run.units}"),
        ("questions / answers / verdicts", f"{run.questions} / {run.answers} / {run.verdicts}"),
    ]
    if run.language and shows_languages(run):
        items.append(("language", language_line(run)))
    if run.duration_s is not None:
        items.append(("duration", f"{run.duration_s:.1f} s"))
    if run.outcomes_derived:
        items.append(("note", "outcomes.jsonl missing: unit outcomes rebuilt from verdicts (run did not finish)"))
    if run.passage_source_note:
        items.append(("source passages", run.passage_source_note + " (passages come from the run's "
                                                                   "passages.jsonl where it has them, else the unit text)"))
    return items


LANGUAGE_NOTE = ("A unit's language is the detected language of the document it comes from; the exam asked, "
                 "answered and judged in the exam language shown above.")
def language_table(report: ExamReport) -> list[list[Any]]:
    """Accuracy per target and language (LANGUAGE_HEADER), accuracy as a percentage."""
    return [[*r[:-1], pct(r[-1])] for r in language_rows(report)]


SCORE_NOTE = ("Accuracy = correct / covered units (correct + incorrect + abstained: a declined answer is not right); "
              "coverage = covered / all units. "
              "Intervals: 95%, percentile bootstrap resampling source documents (the exam clusters when every "
              "unit comes from one document); below 30 of them a small-sample interval, named below.")
CLUSTER_HEADER = ["round", "cluster", "topic", "correct", "incorrect", "abstained", "accuracy"]
CLUSTER_NOTE = ("Topic: the top TF-IDF terms of the cluster's units (else the examiner's question to it), "
                "computed from the records without a model call. Clusters in round order, then by number.")
OVERRIDE_HEADER = ["target", "overrides", "accuracy (judge)", "accuracy (with overrides)", "coverage (judge)",
                   "coverage (with overrides)", "incorrect / abstained (judge)", "incorrect / abstained (with overrides)"]


def override_note(overrides: OverridesSection) -> str:
    """What the "with overrides" table is, and how often the judge agreed with the people."""
    agree = overrides.judge_vs_people
    return (f"{overrides.overrides} verdicts overridden by people in {overrides.file} ({overrides.changed} "
            "with a different label; the latest override per question and unit counts, verdicts.jsonl is "
            f"unchanged). The judge agreed with the people on {agree.agreed} of {agree.compared} "
            f"({pct(agree.agreement)}), Cohen's kappa {cell(agree.cohen_kappa)}.")


def override_rows(overrides: OverridesSection) -> list[list[Any]]:
    """One row per target: accuracy, coverage and the incorrect and abstained units as the judge gave them and
    with the overrides (OVERRIDE_HEADER): a person who says an answer declined moves a unit from incorrect to
    abstained without changing accuracy."""
    return [[name, t.overrides, with_ci(t.accuracy_judge), with_ci(t.accuracy_with_overrides),
             with_ci(t.coverage_judge), with_ci(t.coverage_with_overrides),
             f"{t.counts_judge.incorrect} / {t.counts_judge.abstained}",
             f"{t.counts_with_overrides.incorrect} / {t.counts_with_overrides.abstained}"]
            for name, t in overrides.targets.items()]


def cost_note(units: int) -> str:
    return (f"Per unit = divided by all {units} units of the corpus. Question generation = examiner "
            "stages question, probe, extract_units; the candidate's calls and the judge self-check's (stage "
            "self_check, answers re-judged with the units reordered) are shown beside, not in the total. "
            "Cache hits cost nothing and are not counted as calls.")


def cluster_rows(target: TargetSection) -> list[list[Any]]:
    """The clusters of one target (CLUSTER_HEADER): all in round order, or the PER_CLUSTER_ROWS worst."""
    rows: list[ClusterRow] = clusters_in_order(target)
    if len(rows) > PER_CLUSTER_ROWS:
        rows = worst_clusters(rows, PER_CLUSTER_ROWS)  # type: ignore[arg-type]  # rows as models or dicts
    return [[r.round, r.cluster, cluster_name(r) if r.topic or r.question else "–", r.correct, r.incorrect,
             r.abstained, pct(r.accuracy)] for r in rows]


def cluster_note(target: TargetSection) -> str | None:
    """Says which clusters the table shows when it does not show them all (None when it does)."""
    total = target.per_cluster_total
    if total <= PER_CLUSTER_ROWS:
        return None
    return (f"The {PER_CLUSTER_ROWS} worst of {total} clusters (lowest accuracy first); report.json keeps "
            f"{len(target.per_cluster)} of them, outcomes.jsonl every unit's cluster and status.")


def incorrect_note(sample: IncorrectSample) -> str:
    """"N of M shown" for the incorrect units, and where the rest is."""
    if sample.shown == sample.total:
        return f"All {sample.total} shown."
    return (f"{sample.shown} of {sample.total} shown (a sample drawn with seed {sample.seed}); every "
            f"unit's records are in the run directory ({sample.full_records}): "
            "`examiner trace RUN_DIR UNIT_ID` shows one, `examiner export RUN_DIR --to jsonl DIR` all.")


def provenance_line(report: ExamReport) -> tuple[str, str] | None:
    """The run line saying provenance.graphml was skipped for its size (None when written or not planned)."""
    plan = report.provenance
    return ("provenance graph", plan.note) if plan and not plan.written else None


def skipped_note(counts: CountsSection) -> str | None:
    """Says how many skipped files and passages are not listed (None when all are)."""
    more = (counts.skipped_files - len(counts.skipped_file_list)
            + counts.skipped_passages - len(counts.skipped_passage_list))
    return f"{more} more skipped files or passages are listed in run.json." if more > 0 else None


def convergence_rows(report: ExamReport) -> list[list[Any]]:
    """Per round from 0, the uncovered units each target had left (blank where it stopped earlier)."""
    names = list(report.targets)
    max_round = max((r.round for t in report.targets.values() for r in t.convergence), default=0)
    conv = {n: {r.round: r.remaining for r in report.targets[n].convergence} for n in names}
    return [[k, *(conv[n].get(k, "") for n in names)] for k in range(max_round + 1)]


def ignored_rows(report: ExamReport) -> list[list[Any]]:
    """Per count k, how many units each target targeted k times without covering them."""
    names = list(report.targets)
    hist = {n: {int(k): v for k, v in report.targets[n].ignored_histogram.items()} for n in names}
    ks = sorted({k for counts in hist.values() for k in counts})
    return [[k, *(hist[n].get(k, 0) for n in names)] for k in ks]


def source_line(src: Any) -> str:
    """One source span of an incorrect unit, with the passage around it."""
    origin = " (the unit's text: the run recorded no passage for it)" if src.origin == "unit text" else ""
    return (f"   - source `{markdown_inline(src.document)}` chars {src.start}-{src.end}{origin}: "
            f"> {markdown_inline(' '.join(src.passage_text.split()))}")


MdSection = Callable[[ExamReport], list[str]]
"""One section of report.md: the report -> its Markdown lines (none when the section does not apply)."""


def md_front(report: ExamReport) -> list[str]:
    """Title, what was examined and by whom, the headline block and what went wrong (layout.py)."""
    out = [f"# {report_title(report)}", "", *(f"{line}  " for line in examined_lines(report)), "",
           "## Headline", ""]
    out += [f"**{notice}**", ""] if (notice := stop_notice(report)) else []
    out += [f"**{UNTRUSTWORTHY}**", ""] if untrustworthy(report) else []
    out += [table(HEADLINE_HEADER, headline_rows(report)), "", f"{cost_line(report)}  ",
            f"**{health_line(report)}**", "", "## What went wrong", ""]
    return out + [f"- {item}" for item in went_wrong(report)] + [""]


def md_scores(report: ExamReport) -> list[str]:
    out = [f"## Accuracy and coverage{figure_mark(report)}", "", SCORE_NOTE, "",
           table(SCORE_HEADER, score_rows(report)), ""]
    notes = small_sample_notes(report.targets.items())
    out += [f"- {line}" for line in notes] + ([""] if notes else [])
    if report.overrides:
        out += ["### With people's overrides", "", override_note(report.overrides), "",
                table(OVERRIDE_HEADER, override_rows(report.overrides)), ""]
    out += calibration_markdown(report.calibration, table)
    if "scores" in report.figures:
        out += [f"![accuracy and coverage]({report.figures['scores']})", ""]
    return out


def md_qtypes(report: ExamReport) -> list[str]:
    header, rows = qtype_table(report)
    out = [f"## Accuracy per question type{figure_mark(report)}", "", table(header, rows), ""]
    return out + ([f"![accuracy per question type]({report.figures['qtypes']})", ""] if "qtypes" in report.figures
                  else [])


def md_languages(report: ExamReport) -> list[str]:
    if not shows_languages(report.run):
        return []
    return [f"## Accuracy per language{figure_mark(report)}", "", LANGUAGE_NOTE, "",
            table(LANGUAGE_HEADER, language_table(report)), ""]


def md_clusters(report: ExamReport) -> list[str]:
    out = [f"## Accuracy per cluster{figure_mark(report)}", "", CLUSTER_NOTE, ""]
    for name, t in report.targets.items():
        out += [f"### {name}", "", table(CLUSTER_HEADER, cluster_rows(t)), ""]
        note = cluster_note(t)
        out += [note, ""] if note else []
    return out


def md_convergence(report: ExamReport) -> list[str]:
    names = list(report.targets)
    out = ["## Convergence: uncovered units left after each round", "",
           table(["round", *names], convergence_rows(report)), ""]
    if "convergence" in report.figures:
        out += [f"![convergence]({report.figures['convergence']})", ""]
    out += ["## Units targeted without coverage", "",
            table(["times targeted uncovered", *names], ignored_rows(report)), ""]
    if "ignored" in report.figures:
        out += [f"![targeted without coverage]({report.figures['ignored']})", ""]
    maps = [(k, v) for k, v in report.figures.items() if k.startswith("map:")]
    if maps:
        out += ["## Maps of the uncovered units", ""]
        out += [f"![map {k[4:]}]({v})" for k, v in maps] + [""]
    return out


def md_incorrect(report: ExamReport) -> list[str]:
    out = ["## Incorrect units", ""]
    for name, t in report.targets.items():
        sample = t.incorrect_sample
        out += [f"### {markdown_inline(name)} ({sample.total})", ""]
        out += [incorrect_note(sample) if t.incorrect else "None.", ""]
        for i, row in enumerate(t.incorrect, 1):  # the unit, question, answer and reason are others' text
            out += [f"{i}. **{markdown_inline(row.unit_text)}** (`{row.unit_id}`, round {row.round})",
                    f"   - question: {markdown_inline(row.question)}",
                    f"   - answer: {markdown_inline(row.answer_excerpt)}",
                    "   - judge:", *markdown_quote(row.reason, "     ")]  # a quote: no heading of its own
            out += [source_line(src) for src in row.sources]
            out.append("")
    return out


def md_cost(report: ExamReport) -> list[str]:
    cost = report.cost
    out = ["## Cost per unit (paper layout)", "", cost_note(cost.units), "",
           table(COST_HEADER, cost_rows(cost)), "", "### Per role", "",
           table(["role", *GROUP_TAIL], group_rows(cost.by_role, ("role",))), "", "### Per stage", "",
           table(["role", "stage", *GROUP_TAIL], group_rows(cost.by_stage, ("role", "stage"))), "",
           f"### {PRICING_TITLE}", "", PRICING_NOTE, "", table(*pricing_table(cost)), ""]
    unknown = settlement_lines(cost.settlement.model_dump(), cost.torn_ledger_lines, always=False)
    return out + ([*unknown, ""] if unknown else [])


def md_baselines(report: ExamReport) -> list[str]:
    return ["## Classic baselines", "",
            "Correlation of each answer's score with its share of correct verdicts (correct / covered).", "",
            table(BASELINE_HEADER, baseline_rows(report)), ""]


def md_panel(report: ExamReport) -> list[str]:
    panel = report.judge_panel
    if not panel:
        return []
    return ["## Judge panel", "", PANEL_NOTE, "",
            f"Members: {', '.join(panel.members)}; {panel.verdicts} verdicts, "
            f"{panel.tied_or_unscored} tied or unscored.", "", table(PANEL_HEADER, panel_rows(panel)), ""]


def md_stopping(report: ExamReport) -> list[str]:
    """The stopping rule (examiner/reporting/stopping_section.py); nothing without one."""
    return stopping_markdown(report.stopping, report.figures.get("stopping"))


def md_wording(report: ExamReport) -> list[str]:
    """The wording check (examiner/reporting/wording_section.py); nothing without `--paraphrases`."""
    return wording_markdown(report.wording, table, figure_mark(report))


def md_cascade(report: ExamReport) -> list[str]:
    """The judge cascade (examiner/reporting/cascade_section.py); nothing without one."""
    return cascade_markdown(report.cascade, table)


def md_bias(report: ExamReport) -> list[str]:
    """The judge bias audit (examiner/reporting/bias_render.py)."""
    return bias_markdown(report.bias_audit, table)


def md_health(report: ExamReport) -> list[str]:
    """The health checks in full (the headline gives their verdict in one line)."""
    return health_markdown(report.health, table)


def md_run(report: ExamReport) -> list[str]:
    graph = provenance_line(report)
    return ["## Run", "", *(f"- **{k}**: {v}" for k, v in [*run_lines(report.run), *([graph] if graph else [])]),
            ""]


def md_counts(report: ExamReport) -> list[str]:
    c = report.counts
    out = ["## Skipped, unparseable, rejected, ignored", "",
           table(["what", "count"], [[label, getattr(c, key)] for key, label in COUNT_LABELS]), ""]
    out += [f"- skipped `{markdown_inline(item.path)}`: {markdown_inline(item.reason)}" for item in c.skipped_file_list]
    out += [f"- no unit from passage `{p.passage_id}` of `{markdown_inline(p.document)}`: {markdown_inline(p.reason)}"
            for p in c.skipped_passage_list]
    more = skipped_note(c)
    return out + ([more] if more else []) + passed_text_lines(report) + gate_lines(report, table)


def passed_text_lines(report: ExamReport) -> list[str]:
    """How many answers the judge (and the examiner's probe) read cut, and where the cap comes from."""
    p = report.passed_text
    if p is None or not p.answers_cut:
        return []
    return ["", f"{p.answers_cut} of {p.answers} answers were longer than `max_passed_chars` ({p.limit:,} "
                f"characters; the longest {p.longest_answer:,}): the judge and the examiner read each cut, ending "
                "`[... cut by examiner: N of M characters shown]`.", ""]


MARKDOWN_SECTIONS: list[MdSection] = [
    md_front,  # title, examined, headline, what went wrong: always first
    # details, in reading order; a new section is a function added here
    md_scores, md_stopping, md_wording, md_knowledge, md_qtypes, md_languages, md_clusters, md_incorrect, md_convergence, md_cost,
    md_baselines, md_panel, md_cascade, md_bias, md_health, md_run, md_counts,
]
"""report.md's sections in order (docs/REPORT.md, "Layout"); html.py keeps the same order."""


def render_markdown(report: ExamReport) -> str:
    """The whole report as Markdown (MARKDOWN_SECTIONS in order); figures are linked by their paths in
    `report.figures`."""
    out: list[str] = []
    for section in MARKDOWN_SECTIONS:
        out += section(report)
    return "\n".join(out).rstrip() + "\n"
