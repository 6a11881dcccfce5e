"""The Python API: the exam, dataset judging and meta-evaluation as functions returning typed results.

Each function is a thin wrapper over the command of the same job (`examiner run`, `examiner judge`,
`examiner meta`): it fills the command's arguments (its defaults, then the keywords given, named as the
flags are with '-' as '_'), runs the command's own code, and reads the headline figures back from the
run directory the command wrote. Nothing is printed but progress (off by default).

    import examiner
    result = examiner.run_exam(["corpora/pubmedqa-mini"], out="runs/sim", simulate=True, max_rounds=2)
    print(result.status, result.targets[result.target].accuracy)
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Figure:
    """A proportion with its 95% interval; None where it is undefined (nothing to divide by)."""

    value: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> "Figure":
        data = data or {}
        return cls(data.get("value"), data.get("low"), data.get("high"))


@dataclass(frozen=True)
class TargetResult:
    """One examined model's headline figures (report.json `targets`)."""

    target: str
    accuracy: Figure
    """correct / (correct + incorrect) over covered units, cluster-bootstrap interval."""
    coverage: Figure
    """covered units / all units."""
    correct: int
    incorrect: int
    unanswered: int
    uncovered: int


@dataclass(frozen=True)
class ExamResult:
    """An exam run: where it is, how it ended, who judged, the figures per target and what it cost."""

    run_dir: Path
    run_id: str
    status: str
    """completed, budget_exhausted or failed."""
    stop_reason: str | None
    judge_mode: str
    targets: Mapping[str, TargetResult]
    cost_usd: float
    report: Mapping[str, Any]
    """Everything report.json holds."""

    @property
    def target(self) -> str:
        """The first (often the only) target's name."""
        return next(iter(self.targets))


@dataclass(frozen=True)
class JudgeResult:
    """A judging run: rows judged, its agreement with the gold labels where there were any, the files."""

    run_dir: Path
    method: str
    status: str
    """ok or budget_exhausted."""
    rows: int
    judged: int
    """Judgments with a verdict or a score; 0 is the case `examiner judge` exits 4 on."""
    skipped: int
    accuracy: float | None
    """Pairwise methods: agreement with the gold labels (None without labels or for single scores)."""
    cost_usd: float
    report: Mapping[str, Any]


@dataclass(frozen=True)
class RankedEvaluator:
    """An evaluator's place in a meta-evaluation ranking (None where the method gives no such figure)."""

    evaluator: str
    baseline: float | None
    win_rate: float | None
    elo: float | None
    bradley_terry: float | None


@dataclass(frozen=True)
class MetaResult:
    """A meta-evaluation: the evaluators best first (by Elo), the report files."""

    run_dir: Path
    method: str
    ranking: tuple[RankedEvaluator, ...]
    problems: tuple[str, ...]
    report: Mapping[str, Any]


def _arguments(command: str, argv: Sequence[str], options: Mapping[str, Any]) -> argparse.Namespace:
    """The command's parsed arguments: `argv` through its parser, then each option set by name."""
    from examiner.cli.main import build_parser

    parser = build_parser()
    args = parser.parse_args([command, *argv])
    for name, value in options.items():
        if not hasattr(args, name) or name in ("func", "command"):
            raise TypeError(f"examiner {command} has no option {name!r}")
        setattr(args, name, value)
    return args


def run_exam(corpus: str | Path | Sequence[str | Path], *, out: str | Path | None = None,
             simulate: bool = False, quiet: bool = True, **options: Any) -> ExamResult:
    """Examine target model(s) on a corpus (files or folders), as `examiner run` does.

    Options are `examiner run`'s flags: config, target (list), judge (list), mode, judge_mode, budget_usd,
    max_rounds, cluster_size, seed, units, ... A budget stop or a failed run is returned with its status,
    not raised; input the tool cannot use raises examiner.core.errors.UserError."""
    from examiner.cli.commands.exam import exam

    paths = [str(corpus)] if isinstance(corpus, (str, Path)) else [str(p) for p in corpus]
    args = _arguments("run", paths, {"out": None if out is None else str(out), "simulate": simulate,
                                     "quiet": quiet, **options})
    info, run_dir = exam(args)
    path = run_dir / "report.json"
    report = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    targets = {name: TargetResult(name, Figure.of(f.get("accuracy")), Figure.of(f.get("coverage")),
                                  *(int((f.get("counts") or {}).get(k, 0))
                                    for k in ("correct", "incorrect", "unanswered", "uncovered")))
               for name, f in (report.get("targets") or {}).items()}
    cost = ((report.get("cost") or {}).get("total") or {}).get("cost_usd", 0.0)
    return ExamResult(run_dir=Path(run_dir), run_id=info.run_id, status=info.status, stop_reason=info.stop_reason,
                      judge_mode=info.judge_mode, targets=targets, cost_usd=float(cost), report=report)


def judge(data: str | Path, *, method: str, out: str | Path, simulate: bool = False, quiet: bool = True,
          **options: Any) -> JudgeResult:
    """Judge a dataset (.jsonl, a .json array, or llmbar:SUBSET) with one method, as `examiner judge`
    does. Options are its flags: judge (list of endpoints), swap, limit, instruction_field, ..."""
    from examiner.cli.commands.judging import judge as judge_dataset

    args = _arguments("judge", [str(data), "--method", method, "--out", str(out)],
                      {"simulate": simulate, "quiet": quiet, **options})
    run = judge_dataset(args)
    report = run.report
    agreement = (report.get("pairwise") or {}).get("agreement") or {}
    return JudgeResult(run_dir=Path(out), method=method, status=str(report.get("status", "ok")), rows=run.rows,
                       judged=run.judged, skipped=int(report.get("rows_skipped", 0)),
                       accuracy=agreement.get("accuracy"), cost_usd=float(report.get("cost_usd") or 0.0),
                       report=report)


def meta_evaluate(data: str | Path | None = None, *, evaluators: Sequence[str], out: str | Path,
                  simulate: bool = False, quiet: bool = True, **options: Any) -> MetaResult:
    """Meta-evaluate judges and rank them, as `examiner meta` does (data: a .jsonl / .json file or
    llmbar:SUBSET; or give exam=RUN_DIR). Options are its flags: method, meta_judge, limit, seed, ...
    (Not named `meta`: that is the examiner.meta package.)"""
    from examiner.cli.commands.meta import meta
    from examiner.meta.sections import ranking_rows

    argv = ([] if data is None else [str(data)]) + ["--evaluators", ",".join(evaluators), "--out", str(out)]
    args = _arguments("meta", argv, {"simulate": simulate, "quiet": quiet, **options})
    run, paths = meta(args)
    ranking = tuple(RankedEvaluator(r["evaluator"], r["baseline"], r["win_rate"], r["elo"], r["bt"])
                    for r in ranking_rows(run))
    report = json.loads(Path(paths["json"]).read_text(encoding="utf-8"))
    return MetaResult(run_dir=Path(out), method=run.config.method, ranking=ranking, problems=tuple(run.problems),
                      report=report)


__all__ = ["ExamResult", "Figure", "JudgeResult", "MetaResult", "RankedEvaluator", "TargetResult", "judge",
           "meta_evaluate", "run_exam"]
