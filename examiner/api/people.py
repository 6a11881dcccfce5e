"""The exam's own judge against people's overrides, as a library call.

The overrides a reviewer made in `examiner view` (overrides.jsonl) are human labels for the verdicts
they touch: this compares the judge's original verdict (and, with a panel, each member's) with them —
agreement, Cohen's kappa and the confusion table — overall and per target.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, field_validator

from examiner.api.checks import output_dir
from examiner.api.settings import path_text
from examiner.core.errors import UserError

if TYPE_CHECKING:
    from examiner.reporting.model.people import JudgeVsPeopleReport

CONFUSION_NOTE = "Rows: the judge's verdict; columns: the person's label."


class JudgeVsPeopleOptions(BaseModel):
    """`examiner judge-stats --human-from-run RUN_DIR`: the exam's judge against the run's overrides."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    run_dir: str
    """An exam run folder whose verdicts people reviewed in `examiner view` (it holds overrides.jsonl)."""

    _paths = field_validator("run_dir", mode="before")(path_text)


@dataclass(frozen=True)
class JudgeVsPeopleResult:
    """The agreement figures (overall, per target, per panel member) as the typed report model, and the
    report as Markdown; `write` puts both into a folder."""

    report: JudgeVsPeopleReport
    markdown: str

    def write(self, out: str | Path) -> dict[str, Path]:
        """report.json and report.md in `out` (checked as an output folder first); the paths written."""
        from examiner.reporting.writer import write_report

        return write_report(output_dir(out), self.report, markdown=self.markdown)


def judge_vs_people(options: JudgeVsPeopleOptions) -> JudgeVsPeopleResult:
    """How often the exam's judge agrees with the people's overrides of its verdicts, as `examiner
    judge-stats --human-from-run` computes it; a run without overrides is a UserError."""
    from examiner.reporting.model.people import JudgeVsPeopleReport

    figures = _report(options.run_dir)
    return JudgeVsPeopleResult(report=JudgeVsPeopleReport.model_validate(figures), markdown=_markdown(figures))


def _report(run_dir: str) -> dict[str, Any]:
    """The figures, as report.json holds them: overall, per target, per panel member."""
    from examiner.core.rundir import OVERRIDES
    from examiner.reporting.with_overrides import judge_vs_people
    from examiner.reporting.run_reader import load_run

    run = load_run(run_dir)
    if not run.overrides:
        raise UserError(f"{run_dir}: no {OVERRIDES} (review the run with `examiner view` first)")
    target_of = {(v.question_id, v.unit_id): v.target for v in run.verdicts.values()}
    per_target = {}
    for target in run.targets:
        mine = {key: row for key, row in run.overrides.items() if target_of.get(key) == target}
        if mine:
            per_target[target] = judge_vs_people(replace(run, overrides=mine))
    return {"kind": "judge-vs-people", "run": str(run.path), "run_id": run.info.run_id,
            "judge_mode": run.info.judge_mode, "judges": run.info.judges, "overall": judge_vs_people(run),
            "per_target": per_target}


def _markdown(report: dict[str, Any]) -> str:
    """The figures as Markdown: one agreement table, then the overall confusion table."""
    from examiner.reporting.markdown import table
    from examiner.reporting.writer import cell

    def row(name: str, a: dict[str, Any]) -> list[str]:
        return [name, str(a["compared"]), str(a["judge_unscored"]), cell(a["agreement"]), cell(a["cohen_kappa"])]

    overall = report["overall"]
    rows = [row("all (judge's verdict)", overall)]
    rows += [row(f"{target}", a) for target, a in report["per_target"].items()]
    rows += [row(f"member {name}", a) for name, a in overall["members"].items()]
    labels = list(overall["confusion"])
    confusion = [[j, *(str(overall["confusion"][j][h]) for h in labels)] for j in labels]
    return "\n".join([
        f"# The exam's judge against people's overrides: {report['run_id']}", "",
        f"Judge: {report['judge_mode']}" + (f" (panel {', '.join(report['judges'])})" if report["judges"] else "")
        + f"; {overall['items']} overridden verdicts ({report['run']}/overrides.jsonl).", "",
        table(["verdicts", "compared", "judge unscored", "agreement", "Cohen's kappa"], rows), "",
        "## Confusion (all targets)", "", CONFUSION_NOTE, "", table(["judge \\ person", *labels], confusion), ""])
