"""The "Calibrated by people" section: the judge's accuracy beside the one a random sample of human labels
gives (PPI++ with its interval, the human sample alone, the judge's agreement with the people).

Why a module of its own: the exam report (per target, from human_sample.jsonl), the judging report
(`examiner judge-stats` on a dataset with a few gold labels) and the three renderers (Markdown, HTML,
terminal) share the figures and their wording. The figures are examiner.stats.ppi's, unchanged:
`calibrated_accuracy` for the estimates, `agreement` for kappa and per-label sensitivity / specificity. The
exam report calibrates the abstention rate (a mean over the judged units, as accuracy) and the hallucination
rate (incorrect among attempted: a ratio, examiner.stats.ppi_ratio) the same way, per target, under `rates`.
Only the random sample is used; overrides made while browsing (overrides.jsonl) never are.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from html import escape
from typing import Any

from examiner.core.human_sample import read_sample
from examiner.core.rundir import HUMAN_SAMPLE
from examiner.reporting.human_sample import population
from examiner.reporting.model.calibration import ExamCalibration, JudgeCalibration
from examiner.reporting.run_reader import RunData
from examiner.stats.ppi import agreement, calibrated_accuracy
from examiner.stats.ppi_ratio import ppi_ratio

EXTEND_HINT = ("If every drawn unit is labelled, extend the sample with the next units of its seeded order "
               "(`examiner review RUN_DIR --extend N`, or \"add units\" on the review page's sample): the labels "
               "given stay valid.")
"""What the exam report adds to a target's note when it has too few labels for the PPI++ figure."""
MIN_LABELS = 20
"""Fewest people-labelled units an estimand needs for its PPI++ figure (docs/STATISTICS.md section 3 has
the simulation behind it); below it the report gives the human sample's own figure and says so."""
LEVEL = 0.95
HUMAN_LABEL_RULE = ("a person's `correct` counts 1; `incorrect`, `abstained` and `unrelated` count 0 (the answer did not "
                    "state the unit correctly); agreement compares the labels themselves; for the abstention rate "
                    "`abstained` counts 1, the others 0; for the hallucination rate (incorrect among attempted) "
                    "`correct` and `incorrect` are attempted, `abstained` and `unrelated` are not")
NOTE = ("A random sample of the judged units, drawn by examiner (human_sample.jsonl records how), labelled by "
        "people without seeing the judge's verdict. PPI++ adds to the people's figure the judge's figure on the "
        "units nobody labelled, less the judge's bias measured on the sample, which removes that bias whatever "
        "the judge (on average; docs/STATISTICS.md section 3 gives the bias measured with few labels). Its "
        "interval is narrower than the people's alone when the judge tracks them and may be wider with few "
        "labels or a rare label: the people-alone figure is shown beside it. Overrides made "
        "while browsing are not a random sample and are not used here.")


def _wilson(values: Sequence[float], n: int, n_unlabelled: int, method: str) -> dict[str, Any]:
    """A 0/1 mean with its Wilson interval, shaped as MeanFigure (as ppi.py gives its own)."""
    from statsmodels.stats.proportion import proportion_confint  # loaded when a sample is calibrated, not by compare

    mean = sum(values) / len(values)
    low, high = proportion_confint(int(sum(values)), len(values), alpha=1 - LEVEL, method="wilson")
    return {"estimate": mean, "low": float(low), "high": float(high), "level": LEVEL,
            "standard_error": math.sqrt(mean * (1 - mean) / len(values)), "n": n, "n_unlabelled": n_unlabelled,
            "method": method}


def calibrated_figure(judge: Sequence[int], human: Sequence[int | None], judge_labels: Sequence[Hashable],
                      human_labels: Sequence[Hashable | None], *, minimum: int | None = None) -> dict[str, Any]:
    """One estimand three ways (CalibratedFigure): `judge` 0/1 on every unit, `human` 0/1 on the sampled
    units (None elsewhere); agreement from the labels themselves (`judge_labels`, `human_labels`).
    `minimum`: fewest labels for the PPI++ figure (None: MIN_LABELS)."""
    minimum = MIN_LABELS if minimum is None else minimum
    labelled = [i for i, h in enumerate(human) if h is not None]
    n, big_n = len(labelled), len(judge)
    out: dict[str, Any] = {"population": big_n, "labelled": n, "human_only": None, "ppi": None, "lam": None,
                           "judge_bias": None, "agreement": None, "note": None}
    pairs_h = [human_labels[i] for i in labelled]
    pairs_j = [judge_labels[i] for i in labelled]
    if n >= 2:
        out["agreement"] = agreement(pairs_h, pairs_j, level=LEVEL).to_dict()
    if n >= 2 and n < big_n:
        figures = calibrated_accuracy(list(judge), list(human), level=LEVEL)
        out.update(judge_raw=figures.judge_raw.to_dict(), human_only=figures.human_only.to_dict())
        if n >= minimum:
            out.update(ppi=figures.ppi.to_dict(), lam=figures.lam, judge_bias=figures.judge_bias)
    else:
        out["judge_raw"] = _wilson([float(j) for j in judge], 0, big_n,
                                   "judge alone (Wilson; its bias is not in the interval)")
        if n >= 1:
            out["human_only"] = _wilson([float(human[i] or 0) for i in labelled], n, 0, "human sample alone (Wilson)")
    if n == big_n and n > 0:
        out["note"] = "Every judged unit is labelled: the people's figure is the figure itself, no estimate needed."
    elif n < minimum:
        out["note"] = (f"{n} of {big_n} judged units labelled: too few for the calibrated (PPI++) figure, which "
                       f"needs at least {minimum} (docs/STATISTICS.md, section 3); label more of the sample.")
    return out


def _ratio_wilson(pairs: Sequence[tuple[int, int]], n: int, n_unlabelled: int, method: str) -> dict[str, Any] | None:
    """The plain ratio sum(num) / sum(den) with the Wilson interval of num among den (None without a den)."""
    among = [num for num, den in pairs if den]
    return _wilson([float(x) for x in among], n, n_unlabelled, method) if among else None


def hallucination_figure(judge: Sequence[str], human: Sequence[str | None], *,
                         minimum: int | None = None) -> dict[str, Any]:
    """The hallucination rate (incorrect among attempted) three ways, shaped as CalibratedFigure: the judge's
    labels on every judged unit, people's on the sampled ones (None elsewhere). PPI++ for a ratio
    (examiner.stats.ppi_ratio): a person who relabels an incorrect unit abstained moves the denominator too."""
    minimum = MIN_LABELS if minimum is None else minimum

    def pair(label: str) -> tuple[int, int]:
        return int(label == "incorrect"), int(label in ("correct", "incorrect"))

    labelled = [i for i, h in enumerate(human) if h is not None]
    n, big_n = len(labelled), len(judge)
    judge_pairs = [pair(j) for j in judge]
    people = [pair(str(human[i])) for i in labelled]
    out: dict[str, Any] = {"population": big_n, "labelled": n, "human_only": None, "ppi": None, "lam": None,
                           "judge_bias": None, "agreement": None, "note": None,
                           "judge_raw": _ratio_wilson(judge_pairs, 0, big_n,
                                                      "judge alone, incorrect among attempted (Wilson; its bias is "
                                                      "not in the interval)")}
    if n >= 1:
        out["human_only"] = _ratio_wilson(people, n, 0, "human sample alone, incorrect among attempted (Wilson)")
    if out["judge_raw"] is None:
        out["note"] = "No judged unit was attempted (correct or incorrect): no hallucination rate."
    elif n == big_n:
        out["note"] = "Every judged unit is labelled: the people's figure is the figure itself, no estimate needed."
    elif n < minimum:
        out["note"] = (f"{n} of {big_n} judged units labelled: too few for the calibrated (PPI++) figure, which "
                       f"needs at least {minimum} (docs/STATISTICS.md, section 3); label more of the sample.")
    else:
        unlabelled = [judge_pairs[i] for i in range(big_n) if human[i] is None]
        try:
            ppi, lam = ppi_ratio(people, [judge_pairs[i] for i in labelled], unlabelled, level=LEVEL)
        except ValueError as why:  # the people marked no sampled unit attempted
            out["note"] = f"No calibrated hallucination rate: {why}."
        else:
            out.update(ppi=ppi.to_dict(), lam=lam, judge_bias=out["judge_raw"]["estimate"] - ppi.estimate)
    return out


def exam_rates(status: Sequence[str], people: Sequence[str | None]) -> dict[str, Any]:
    """A target's abstention and hallucination rates calibrated by people (CalibratedFigure each): `status`
    the judged units' outcomes, `people` the sample's labels (None where not labelled)."""
    abstention = calibrated_figure([int(s == "abstained") for s in status],
                                   [None if p is None else int(p == "abstained") for p in people], status, people)
    abstention["agreement"] = None  # the accuracy row gives the judge's agreement with the people once
    return {"abstention_rate": abstention, "hallucination_rate": hallucination_figure(status, people)}


def exam_calibration(run: RunData, headline: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any] | None:
    """report.json's `calibration` (ExamCalibration as data) from the run's human_sample.jsonl; None
    when no sample was drawn. A label whose unit is now decided by another verdict (a resumed run) is
    stale and left out. `headline`: each target's accuracy as the report's headline gives it; the judge's
    figure here is the same accuracy, so it takes that interval (one accuracy, one interval per report)."""
    sample = read_sample(run.path)
    if sample is None:
        return None
    labels = sample.labels()
    units = population(run)
    current = {(u.target, u.unit_id): u.verdict_id for u in units}
    stale = sum(1 for key, row in labels.items() if current.get(key) != row.verdict_id)
    targets = {}
    rates = {}
    for target in run.targets:
        mine = [u for u in units if u.target == target]
        if not mine:
            continue
        status = [run.outcomes[target][u.unit_id].status for u in mine]
        given = [labels.get((target, u.unit_id)) for u in mine]
        people = [row.verdict if row is not None and row.verdict_id == u.verdict_id else None
                  for row, u in zip(given, mine)]
        figure = calibrated_figure(
            [int(s == "correct") for s in status], [None if p is None else int(p == "correct") for p in people],
            status, people)
        if figure["labelled"] < MIN_LABELS < figure["population"]:  # more labels would give the PPI++ figure
            figure["note"] = f"{figure['note']} {EXTEND_HINT}"
        figure["judge_raw"] = _as_headline(figure.get("judge_raw"), (headline or {}).get(target))
        targets[target] = figure
        rates[target] = exam_rates(status, people)
    draw = sample.draw
    facts = {**draw.model_dump(include={"draw_id", "method", "seed", "size", "population", "population_rule", "blind",
                                        "who", "at"}),
             "drawn": len(sample.units), "extended": len(sample.units) - len(draw.units), "labelled": len(labels),
             "stale": stale}
    return ExamCalibration.model_validate({"file": HUMAN_SAMPLE, "minimum": MIN_LABELS,
                                           "human_label_rule": HUMAN_LABEL_RULE, "draw": facts,
                                           "targets": targets, "rates": rates}).model_dump()


def _as_headline(judge: dict[str, Any] | None, accuracy: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The judge's figure with the headline accuracy's interval and method when both are the same estimate
    (the headline's interval accounts for the clustering of units; a second interval for the same number
    would only confuse). Left as it is otherwise."""
    if judge is None or not accuracy or accuracy.get("value") is None or accuracy.get("low") is None:
        return judge
    if abs(float(accuracy["value"]) - float(judge["estimate"])) > 1e-9:
        return judge
    method = accuracy.get("method") or "the report's accuracy interval"
    return {**judge, "low": float(accuracy["low"]), "high": float(accuracy["high"]), "standard_error": None,
            "method": f"judge alone: the report's accuracy and its interval ({method}; the judge's bias is not in it)"}


def judge_calibration(judged: Mapping[str, Hashable], gold: Mapping[str, Hashable],
                      unparseable: Hashable | None = None) -> dict[str, Any] | None:
    """The judging report's `calibration` (JudgeCalibration as data): rows the judge judged (id -> its
    label; `unparseable`: the label of rows without a usable verdict, a class of its own that no gold label
    is) of which some carry a gold label (id -> label); per label, the share of rows whose gold label it
    is, three ways. None when no judged row has a gold label, or every one has (nothing to calibrate).
    Why every judged row: the estimand is over the rows the report counts, so a gold label drawn on a row
    the judge could not read stays in the sample it was drawn from."""
    ids = sorted(judged)
    labelled = [i for i in ids if i in gold]
    if not labelled or len(labelled) == len(ids):
        return None
    names = sorted({*(judged[i] for i in ids if judged[i] != unparseable), *(gold[i] for i in labelled)}, key=str)
    per_label = {}
    for name in names:
        per_label[str(name)] = calibrated_figure(
            [int(judged[i] == name) for i in ids], [int(gold[i] == name) if i in gold else None for i in ids],
            [judged[i] for i in ids], [gold.get(i) for i in ids])
    agree = agreement([gold[i] for i in labelled], [judged[i] for i in labelled], level=LEVEL).to_dict() \
        if len(labelled) >= 2 else None
    unread = sum(1 for i in ids if unparseable is not None and judged[i] == unparseable)
    estimand = "the share of rows whose gold label is each label, over every judged row"
    if unread:
        estimand += (f" (the {unread} rows without a usable verdict included: the judge's verdict on them is "
                     f"`{unparseable}`, a class of its own)")
    return JudgeCalibration.model_validate({
        "estimand": estimand, "minimum": MIN_LABELS, "rows": len(ids), "unparseable": unread,
        "labelled": len(labelled), "agreement": agree,
        "labels": {k: {**v, "agreement": None} for k, v in per_label.items()}}).model_dump()


# --- rendering ------------------------------------------------------------------------------------------------

RATE_NOTE = ("The abstention rate (abstained among judged units) and the hallucination rate (incorrect among "
             "attempted units: a ratio, whose denominator people's labels move too) calibrated by the same sample; "
             "PPI++ for the ratio by the delta method (examiner/stats/ppi_ratio.py).")
CALIBRATION_HEADER = ["target", "labelled / judged", "judge alone", "people alone", "PPI++ (calibrated)",
                      "judge bias", "Cohen's kappa"]
LABEL_HEADER = ["target", "label", "people gave it", "sensitivity", "specificity"]


def _interval(figure: Mapping[str, Any] | None) -> str:
    if not figure or figure.get("estimate") is None:
        return "-"
    low, high = figure.get("low"), figure.get("high")
    span = "" if low is None or high is None else f" [{100 * low:.1f}, {100 * high:.1f}]"
    return f"{100 * figure['estimate']:.1f}%{span}"


def mean_text(figure: Any) -> str:
    """A mean on any scale with its interval (a MeanFigure, model or data; None: `-`)."""
    if figure is None:
        return "-"
    f = _plain(figure)
    return f"{f['estimate']:.3f} [{f['low']:.3f}, {f['high']:.3f}]"


def _ratio(value: float | None, low: float | None = None, high: float | None = None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    span = "" if low is None or high is None or math.isnan(low) or math.isnan(high) else f" [{low:.2f}, {high:.2f}]"
    return f"{value:.2f}{span}"


def _plain(section: Any) -> dict[str, Any]:
    return section.model_dump() if hasattr(section, "model_dump") else dict(section)


RATE_HEADER = ["target", "rate", "labelled / judged", "judge alone", "people alone", "PPI++ (calibrated)", "judge bias"]
RATE_NAMES = {"abstention_rate": "abstention", "hallucination_rate": "hallucination (incorrect among attempted)"}


def rate_rows(section: Any) -> list[list[str]]:
    """Per target, the abstention and hallucination rates three ways (RATE_HEADER)."""
    rows = []
    for name, rates in (_plain(section).get("rates") or {}).items():
        for key, label in RATE_NAMES.items():
            f = rates.get(key)
            if f is None:
                continue
            bias = f.get("judge_bias")
            rows.append([name, label, f"{f['labelled']} / {f['population']}", _interval(f["judge_raw"]),
                         _interval(f["human_only"]), _interval(f["ppi"]),
                         "-" if bias is None else f"{100 * bias:+.1f} points"])
    return rows


def calibration_rows(section: Any) -> list[list[str]]:
    """One row per target (CALIBRATION_HEADER) of an ExamCalibration (model or data)."""
    data = _plain(section)
    rows = []
    for name, t in data["targets"].items():
        a = t.get("agreement")
        bias = t.get("judge_bias")
        rows.append([name, f"{t['labelled']} / {t['population']}", _interval(t["judge_raw"]), _interval(t["human_only"]),
                     _interval(t["ppi"]), "-" if bias is None else f"{100 * bias:+.1f} points",
                     _ratio(a["kappa"], a["kappa_low"], a["kappa_high"]) if a else "-"])
    return rows


def label_rows(section: Any) -> list[list[str]]:
    """Per target and label: how often people gave it, the judge's sensitivity and specificity (LABEL_HEADER)."""
    data = _plain(section)
    rows = []
    for name, t in data["targets"].items():
        for row in (t.get("agreement") or {}).get("per_label", []):
            rows.append([name, row["label"], str(row["n_human"]),
                         _ratio(row["sensitivity"], row["sensitivity_low"], row["sensitivity_high"]),
                         _ratio(row["specificity"], row["specificity_low"], row["specificity_high"])])
    return rows


def draw_text(section: Any) -> str:
    data = _plain(section)
    d = data["draw"]
    stale = f"; {d['stale']} stale labels left out (their unit is now decided by another verdict)" if d["stale"] else ""
    extended = (f", {d['extended']} of them added later from the same seeded order" if d.get("extended") else "")
    return (f"Sample {d['draw_id']}: {d['drawn']} of {d['population']} judged units drawn {d['method']} "
            f"(seed {d['seed']}, size {d['size']}{extended}) by {d['who']} at {d['at']}; {d['labelled']} labelled{stale}. "
            f"Labels: {data['human_label_rule']}.")


def notes(section: Any) -> list[str]:
    return [f"{name}: {t['note']}" for name, t in _plain(section)["targets"].items() if t.get("note")]


def calibration_markdown(section: Any, table: Callable[[list[str], list[list[Any]]], str]) -> list[str]:
    """The Markdown lines of the section (nothing without a sample; `table` is the Markdown table renderer)."""
    if not section:
        return []
    out = ["### Calibrated by people", "", NOTE, "", draw_text(section), "",
           table(CALIBRATION_HEADER, calibration_rows(section)), ""]
    out += [f"- {line}" for line in notes(section)] + ([""] if notes(section) else [])
    if rate_rows(section):
        out += [RATE_NOTE, "", table(RATE_HEADER, rate_rows(section)), ""]
    rows = label_rows(section)
    if rows:
        out += ["Per label: sensitivity = P(judge gives it | people did), specificity = P(judge does not | people "
                "did not), 95% Wilson intervals.", "", table(LABEL_HEADER, rows), ""]
    return out


def calibration_html(section: Any, table: Callable[[list[str], list[list[Any]]], str]) -> list[str]:
    """The HTML parts of the section (nothing without a sample; `table` is the HTML table renderer)."""
    if not section:
        return []
    out = ["<h3>Calibrated by people</h3>", f"<p class=\"note\">{escape(NOTE)}</p>",
           f"<p class=\"note\">{escape(draw_text(section))}</p>", table(CALIBRATION_HEADER, calibration_rows(section))]
    out += [f"<p class=\"note\">{escape(line)}</p>" for line in notes(section)]
    if rate_rows(section):
        out += [f"<p class=\"note\">{escape(RATE_NOTE)}</p>", table(RATE_HEADER, rate_rows(section))]
    rows = label_rows(section)
    if rows:
        out.append(table(LABEL_HEADER, rows))
    return out


def calibration_lines(section: Any) -> list[str]:
    """Terminal lines: per target the judge's accuracy, the people's and the calibrated one (none: [])."""
    if not section:
        return []
    lines = []
    for name, t in _plain(section)["targets"].items():
        lines.append(f"{name}: accuracy {_interval(t['judge_raw'])} (judge) | {_interval(t['human_only'])} (people, "
                     f"{t['labelled']} of {t['population']} labelled) | {_interval(t['ppi'])} calibrated (PPI++)")
        if t.get("note"):
            lines.append(f"  {t['note']}")
        for key, label in RATE_NAMES.items():
            f = ((_plain(section).get("rates") or {}).get(name) or {}).get(key)
            if f is not None and f.get("judge_raw") is not None:
                lines.append(f"  {label}: {_interval(f['judge_raw'])} (judge) | {_interval(f['human_only'])} (people) | "
                             f"{_interval(f['ppi'])} calibrated (PPI++)")
    return lines


def judge_calibration_lines(report: Mapping[str, Any]) -> list[str]:
    """Terminal lines for a judging report's calibration (report.json's data; none: []): per gold label its
    share three ways, or the mean human score."""
    pairwise = (report.get("pairwise") or {}).get("calibration")
    single = (report.get("single") or {}).get("calibration")
    if pairwise:
        unread = pairwise.get("unparseable") or 0
        among = f", {unread} of them without a usable verdict (class unparseable)" if unread else ""
        lines = [f"calibrated by {pairwise['labelled']} gold labels of {pairwise['rows']} judged rows{among} (PPI++, "
                 "valid when they are a random sample of the rows):"]
        for label, f in pairwise["labels"].items():
            lines.append(f"  label {label}: share {_interval(f['judge_raw'])} (judge) | {_interval(f['human_only'])} "
                         f"(gold) | {_interval(f['ppi'])} calibrated")
        a = pairwise.get("agreement")
        if a:
            lines.append(f"  Cohen's kappa with the gold labels {_ratio(a['kappa'], a['kappa_low'], a['kappa_high'])}")
        notes = {f["note"] for f in pairwise["labels"].values() if f.get("note")}
        return lines + [f"  {note}" for note in sorted(notes)]
    if single:
        lines = [f"mean human score calibrated by {single['labelled']} of {single['rows']} scored rows (PPI++; "
                 f"{single.get('unscored') or 0} judged rows without a score are outside it): "
                 f"{mean_text(single['ppi'])} (human scores alone {mean_text(single['human_only'])})"]
        return lines + ([f"  {single['note']}"] if single.get("note") else [])
    return []


def judge_calibration_markdown(section: Any, table: Callable[[list[str], list[list[Any]]], str]) -> list[str]:
    """The judging report's Markdown lines for its `calibration` (nothing when absent)."""
    if not section:
        return []
    data = _plain(section)
    rows = [[label, f"{f['labelled']} / {f['population']}", _interval(f["judge_raw"]), _interval(f["human_only"]),
             _interval(f["ppi"]), "-" if f.get("judge_bias") is None else f"{100 * f['judge_bias']:+.1f} points"]
            for label, f in data["labels"].items()]
    out = ["", "## Calibrated by the gold labels", "",
           f"{data['labelled']} of {data['rows']} judged rows carry a gold label. Estimated: {data['estimand']}; "
           "PPI++ (docs/STATISTICS.md, section 3) is valid when the labelled rows are a random sample of the rows.", "",
           table(["label", "labelled / judged", "judge alone", "gold alone", "PPI++ (calibrated)", "judge bias"], rows)]
    small = [f"- label {label}: {f['note']}" for label, f in data["labels"].items() if f.get("note")]
    out += ["", *small] if small else []
    a = data.get("agreement")
    if a:
        out += ["", f"Agreement with the gold labels on {a['n']} rows: observed {_ratio(a['observed'])}, Cohen's "
                f"kappa {_ratio(a['kappa'], a['kappa_low'], a['kappa_high'])}.", "",
                table(["label", "gold gave it", "sensitivity", "specificity"],
                      [[r["label"], str(r["n_human"]), _ratio(r["sensitivity"], r["sensitivity_low"], r["sensitivity_high"]),
                        _ratio(r["specificity"], r["specificity_low"], r["specificity_high"])] for r in a["per_label"]])]
    return out


__all__ = ["CALIBRATION_HEADER", "EXTEND_HINT", "RATE_HEADER", "exam_rates", "hallucination_figure", "rate_rows", "HUMAN_LABEL_RULE", "LABEL_HEADER", "MIN_LABELS", "calibrated_figure",
           "calibration_html", "calibration_lines", "calibration_markdown", "calibration_rows", "exam_calibration",
           "judge_calibration", "judge_calibration_lines", "judge_calibration_markdown", "label_rows", "mean_text"]
