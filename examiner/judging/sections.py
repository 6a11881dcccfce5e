"""The metrics report of a judging run and the judgments JSONL.

Pairwise records -> agreement with labels (and per classic metric / majority vote for RevisEval),
swap consistency and bias. Single-score records -> correlations with human scores at sample, summary
(per `group`) and system (per `system`) level via examiner.stats.correlation. Skipped rows and failed or
unparseable judgments are always counted.

The section builders compute the figures; `judge_report` puts them into the report model once (a
JudgeReport), and report.md (`markdown`), report.json and the terminal summary
(examiner.reporting.terminal.judge_summary) are rendered from that model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from examiner.core.contract import Mark, agreement_with_panel
from examiner.core.errors import UserError
from examiner.core.labels import Preference, is_scored, preference_from_text, preference_to_number
from examiner.core.rundir import JUDGMENTS
from examiner.judging.bias_audit import judge_bias_audit
from examiner.judging.gold_calibration import calibration_markdown, pairwise_calibration, score_calibration
from examiner.judging.swap_metrics import (Judgment, agreement, classification_metrics, judgments, record_preference,
                                          swap_metrics)
from examiner.reporting.bias_render import bias_markdown
from examiner.reporting.cascade_section import pair_cascade_markdown
from examiner.reporting.markdown import table as md_table
from examiner.reporting import judge_parts
from examiner.reporting.judge_parts import (AGREEMENT_NOTE, LEVELS_NOTE, accuracy_cell, agreement_rows,
                                            coefficient_cells, correlation_n, correlation_rows, with_interval)
from examiner.stats.agreement_intervals import wilson_interval
from examiner.reporting.model import JudgeReport
from examiner.reporting.model.judge import PairwiseSection, SingleSection
from examiner.reporting.writer import as_report, cell, report_data, write_jsonl, write_report
from examiner.stats import correlation as stats




def _gold(labels: Mapping[Any, Any]) -> dict[Any, Preference]:
    return {key: preference_from_text(value) for key, value in labels.items()}


def _wrong_label(gold: Preference) -> Preference:
    """A label that disagrees with `gold`: what an unparseable verdict counts as under `--unparseable wrong`."""
    return Preference.SECOND if gold is Preference.FIRST else Preference.FIRST


def _counted_as_wrong(js: Sequence[Judgment], gold: Mapping[Any, Preference]) -> list[Judgment]:
    """The judgments with every unparseable verdict that has a gold label replaced by a wrong label (the
    convention of tables that count a missing verdict as an error rather than leaving it out)."""
    return [Judgment(j.id, j.order, _wrong_label(gold[j.id]))
            if not isinstance(j.verdict, Preference) and j.id in gold else j for j in js]


def pairwise_section(records: Sequence[Mapping[str, Any]], labels: Mapping[Any, int] | None = None,
                     teacher: Mapping[Any, int] | None = None, unparseable: str = "drop") -> dict[str, Any]:
    """Agreement (labels from `labels` or the records' `label`), teacher agreement, swap metrics, and each
    panel member's agreement with the panel when a panel judged. `unparseable`: `drop` leaves unparseable
    verdicts out of the agreement figures, `wrong` counts each as a wrong label, `own-class` keeps each as a
    class of its own, never correct, with macro averages over the gold classes (swap figures always drop)."""
    js = judgments(records)
    gold = _gold(labels if labels is not None else {
        str(r["id"]): r["label"] for r in records if r.get("label") is not None})
    out: dict[str, Any] = {
        "unparseable_convention": unparseable,
        "n_judgments": len(js),
        "n_unparseable": sum(1 for j in js if not is_scored(j.verdict)),
        "n_failed_calls": sum(1 for r in records if r.get("failed")),
        "verdicts": {str(k): v for k, v in sorted(Counter(
            preference_to_number(j.verdict) if isinstance(j.verdict, Preference) else "unparseable"
            for j in js).items(), key=str)},
    }
    if gold:
        out["agreement"] = agreement(_counted_as_wrong(js, gold) if unparseable == "wrong" else js, gold,
                                     own_class=unparseable == "own-class")
        if (calibration := pairwise_calibration(js, gold)) is not None:  # gold labels on only some rows
            out["calibration"] = calibration
    if teacher:
        out["teacher_agreement"] = agreement(js, _gold(teacher))
    if any(j.order == "swapped" for j in js):
        out["swap"] = swap_metrics(js)
    if any(r.get("panel") for r in records):
        out["panel_agreement"] = panel_agreement(records)
    metric_prefs = [r for r in records if r.get("metric_preferences")]
    if metric_prefs and gold:
        per_metric: dict[str, Any] = {}
        names = list(metric_prefs[0]["metric_preferences"])
        usable = [r for r in metric_prefs if str(r["id"]) in gold]
        target = [gold[str(r["id"])] for r in usable]
        for name in names:
            per_metric[name] = classification_metrics(
                [preference_from_text(r["metric_preferences"][name]) for r in usable], target)
        per_metric["majority"] = classification_metrics([preference_from_text(r["metric_majority"]) for r in usable],
                                                        target)
        out["classic_metric_agreement"] = per_metric
        out["metric_implementations"] = implementations(names)
    return out


def implementations(names: Iterable[str]) -> dict[str, str]:
    """What computed each classic metric a report shows (reference_metrics.implementation)."""
    from examiner.stats.reference_metrics import METRICS, implementation

    return {name: implementation(name) for name in names if name in METRICS}


def panel_agreement(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per panel member: how often its verdict was the panel's, over the judgments the panel decided."""
    marks = [Mark(record_preference(r.get("verdict")), members={
        name: Mark(record_preference(own.get("verdict"))) for name, own in r["panel"].items()}) for r in records if r.get("panel")]
    return [{"member": m.member, "agreed": m.agreed, "compared": m.compared, "unscored": m.unscored, "rate": m.rate,
             **dict(zip(("rate_low", "rate_high"), wilson_interval(m.agreed, m.compared) if m.compared else (None, None)))}
            for m in agreement_with_panel(marks)]


def single_section(records: Sequence[Mapping[str, Any]], unparseable: str = "drop",
                   lowest_score: float = 1.0) -> dict[str, Any]:
    """Score summary, G-Eval paths, and correlations with human scores (judge score and classic metrics).

    `unparseable`: `drop` leaves judgments without a score out of the correlations; `wrong` gives each the
    lowest score of the scale (`lowest_score`), the convention of tables that count a missing score as
    the worst one. `own-class` is a class of pairwise verdicts and has no meaning for scores."""
    if unparseable == "own-class":
        raise UserError("--unparseable own-class counts unparseable verdicts as a class of their own; these "
                        "judgments are single scores: use drop or wrong")
    scored = [r for r in records if r.get("score") is not None]
    if unparseable == "wrong":
        scored = [r if r.get("score") is not None else dict(r, score=lowest_score) for r in records]
    out: dict[str, Any] = {
        "unparseable_convention": unparseable,
        "lowest_score": lowest_score if unparseable == "wrong" else None,
        "n_judgments": len(records),
        "n_scored": sum(1 for r in records if r.get("score") is not None),
        "n_unparseable": sum(1 for r in records if r.get("score") is None and not r.get("failed")),
        "n_failed_calls": sum(1 for r in records if r.get("failed")),
        "mean_score": _mean([r["score"] for r in records if r.get("score") is not None]),
    }
    paths = Counter(r["path"] for r in records if r.get("path"))
    if paths:
        out["geval_paths"] = dict(paths)
        out["geval_unparseable_samples"] = sum(int(r.get("n_unparseable") or 0) for r in records)
    with_human = [r for r in scored if r.get("human") is not None]
    if len(with_human) >= 2:
        groups = [r.get("group") for r in with_human]
        systems = [r.get("system") for r in with_human]
        human = [float(r["human"]) for r in with_human]
        corr = {"judge": stats.levels([float(r["score"]) for r in with_human], human, groups, systems)}
        metric_rows = [r for r in with_human if r.get("metric_scores")]
        if len(metric_rows) == len(with_human):
            for name in with_human[0]["metric_scores"]:
                corr[name] = stats.levels([float(r["metric_scores"][name]) for r in with_human], human,
                                           groups, systems)
            if len(corr) > 1:
                out["metric_implementations"] = implementations(corr)
        out["correlation_with_human"] = corr
        if (calibration := score_calibration(scored, len(records))) is not None:  # human scores on some rows
            out["calibration"] = calibration
    return out


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def judge_report(method: str, records: Sequence[Mapping[str, Any]], skipped: Sequence[Mapping[str, Any]],
                 meta: Mapping[str, Any], labels: Mapping[Any, int] | None = None,
                 teacher: Mapping[Any, int] | None = None, unparseable: str = "drop",
                 lowest_score: float = 1.0) -> JudgeReport:
    """The full report as its model: meta (the run's judge, usage and dataset), counts of rows and skips,
    and the method's section (`unparseable`: how judgments without a verdict or score count, `drop` or
    `wrong`; see the sections)."""
    pairwise = any("order" in r for r in records)
    section = (pairwise_section(records, labels, teacher, unparseable) if pairwise
               else single_section(records, unparseable, lowest_score))
    return JudgeReport.model_validate({
        "method": method,
        **dict(meta),
        "rows_judged": len({r["id"] for r in records}),
        "rows_skipped": len(skipped),
        "skipped": list(skipped),
        "pairwise" if pairwise else "single": section,
        "bias_audit": judge_bias_audit(records, meta, pairwise),
    })


def build_report(method: str, records: Sequence[Mapping[str, Any]], skipped: Sequence[Mapping[str, Any]],
                 meta: Mapping[str, Any], labels: Mapping[Any, int] | None = None,
                 teacher: Mapping[Any, int] | None = None, unparseable: str = "drop",
                 lowest_score: float = 1.0) -> dict[str, Any]:
    """`judge_report` as the data report.json holds (a dict), for callers that read the report as a
    mapping (examiner.api.judging and judgment_files until they keep the model)."""
    return report_data(judge_report(method, records, skipped, meta, labels, teacher, unparseable, lowest_score))


def convention_text(section: PairwiseSection | SingleSection | Mapping[str, Any]) -> str:
    """Which convention for unparseable judgments the section's figures used (--unparseable). A mapping
    (report.json's section, as examiner/cli/output/judging.py passes it) is read through its model."""
    if isinstance(section, Mapping):
        model = SingleSection if "n_scored" in section else PairwiseSection
        return judge_parts.convention_text(model.model_validate(section))
    return judge_parts.convention_text(section)


FACTS = ("dataset", "judge", "model", "status", "rows_judged", "rows_skipped", "passed_cut", "calls", "batch_calls",
         "cache_hits", "prompt_tokens", "cached_tokens", "completion_tokens", "reasoning_tokens", "cost_usd", "wall_s")
"""The run's figures report.md lists first, in this order (those the report has)."""


def _pairwise_markdown(section: PairwiseSection) -> list[str]:
    lines = ["", "## Pairwise", "", f"- judgments: {section.n_judgments}, unparseable: "
             f"{section.n_unparseable}, failed calls: {section.n_failed_calls}",
             f"- verdicts: {section.verdicts}", f"- {judge_parts.convention_text(section)}"]
    table = agreement_rows(section)
    if table:
        lines += ["", "| comparison | n | accuracy [95% CI] | macro P | macro R | macro F1 |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {name} | {m.n} | {accuracy_cell(m)} | {cell(m.macro_precision)} | {cell(m.macro_recall)} | "
                  f"{cell(m.macro_f1)} |" for name, m in table]
        lines += ["", AGREEMENT_NOTE]
    lines += _implementation_lines(section.metric_implementations)
    if section.panel_agreement:
        lines += ["", "| panel member | agrees with panel [95% CI] | compared | unscored |", "|---|---|---|---|"]
        lines += [f"| {m.member} | {with_interval(m.rate, m.rate_low, m.rate_high)} | {m.compared} | {m.unscored} |"
                  for m in section.panel_agreement]
    swap = section.swap
    if swap:
        consistency = with_interval(swap.consistency, swap.consistency_low, swap.consistency_high)
        lines += ["", "| pairs (both orders) | consistency [95% CI] | bias 1st | bias 2nd | delta bias | "
                  "bias 1st (all pairs) | bias 2nd (all pairs) | delta (all pairs) |",
                  "|---|---|---|---|---|---|---|---|",
                  f"| {swap.n_pairs_both_orders} | {consistency} | {cell(swap.bias_first)} | "
                  f"{cell(swap.bias_second)} | {cell(swap.delta_bias)} | {cell(swap.bias_first_all_pairs)} | "
                  f"{cell(swap.bias_second_all_pairs)} | {cell(swap.delta_bias_all_pairs)} |"]
    return lines


def _single_markdown(section: SingleSection) -> list[str]:
    lines = ["", "## Scores", "", f"- judgments: {section.n_judgments}, scored: {section.n_scored}, "
             f"unparseable: {section.n_unparseable}, failed calls: {section.n_failed_calls}",
             f"- mean score: {cell(section.mean_score)}", f"- {judge_parts.convention_text(section)}"]
    if section.geval_paths:
        lines.append(f"- G-Eval paths: {section.geval_paths}, unparseable samples excluded: "
                     f"{section.geval_unparseable_samples}")
    rows = correlation_rows(section)
    if rows:
        lines += ["", "| scorer | level | n | Pearson | Spearman | Kendall tau-b |", "|---|---|---|---|---|---|"]
        lines += [f"| {name} | {level} | {correlation_n(c)} | {' | '.join(coefficient_cells(c))} |"
                  for name, level, c in rows]
        lines += ["", LEVELS_NOTE]
    return lines + _implementation_lines(section.metric_implementations)


def _implementation_lines(given: Mapping[str, str] | None) -> list[str]:
    return ["", *(f"- {name}: {text}" for name, text in given.items())] if given else []


def markdown(report: JudgeReport) -> str:
    """report.md of a judging run, from its model."""
    lines = [f"# Judging report: {report.method}", ""]
    lines += [f"- {key.replace('_', ' ')}: {cell(getattr(report, key))}" for key in FACTS
              if key in report.model_fields_set]
    if report.pairwise:
        lines += _pairwise_markdown(report.pairwise) + calibration_markdown(report.pairwise)
    if report.single:
        lines += _single_markdown(report.single) + calibration_markdown(report.single)
    if report.cascade:
        lines += ["", *pair_cascade_markdown(report.cascade)]
    if report.bias_audit:
        lines += ["", *bias_markdown(report.bias_audit, md_table)]
    if report.skipped:
        lines += ["", "## Skipped rows", ""] + [f"- {s.message}" for s in report.skipped]
    return "\n".join(lines) + "\n"


def as_judge_report(report: JudgeReport | Mapping[str, Any]) -> JudgeReport:
    """The model of a judging report (a mapping: `build_report`'s data, validated once here)."""
    model = as_report(report if isinstance(report, JudgeReport) else {**report, "kind": "judge"})
    if not isinstance(model, JudgeReport):
        raise TypeError(f"not a judging report: kind {getattr(model, 'kind', '?')}")
    return model


def write_outputs(out_dir: Path, records: Sequence[Mapping[str, Any]], report: JudgeReport | Mapping[str, Any],
                  stem: str = "") -> dict[str, Path]:
    """judgments.jsonl (when records given), report.json, report.md in out_dir, through the one writer."""
    model = as_judge_report(report)
    written = write_report(out_dir, model, markdown=markdown(model), stem=stem)
    paths = {"report_json": written["json"], "report_md": written["md"]}
    if records:
        paths["judgments"] = write_jsonl(out_dir / f"{stem}{JUDGMENTS}", records)
    return paths


__all__ = ["LEVELS_NOTE", "as_judge_report", "build_report", "convention_text", "judge_report", "judgments", "markdown",
           "pairwise_section", "panel_agreement", "single_section", "write_outputs"]
