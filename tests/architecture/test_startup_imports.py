"""Commands that call no model start quickly: `examiner gate` and `examiner compare` on a run folder load
neither the embedder and model stacks (torch, sentence-transformers, faiss, langgraph, the provider
clients) nor the report writers' libraries (matplotlib, scikit-learn, statsmodels; for the gate also
scipy.stats). Held by the modules a child python has loaded, not by a clock (experiments/startup_time.py
measures the seconds)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.sample_run import write_sample_run

ROOT = Path(__file__).resolve().parents[2]
MODEL_STACK = ("torch", "sentence_transformers", "transformers", "faiss", "langgraph", "openai", "httpx")
REPORT_STACK = ("matplotlib", "sklearn", "statsmodels", "pandas", "scipy.stats")


def loaded_after(argv: list[str]) -> set[str]:
    """The modules a fresh python holds after `examiner ARGV` (its exit code ignored: the gate exits 1
    on a failed decision)."""
    code = ("import json, sys\nfrom examiner.cli.main import main\n"
            "try:\n    main(json.loads(sys.argv[1]))\nexcept SystemExit:\n    pass\n"
            "print('MODULES ' + json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(argv)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    line = next((x for x in done.stdout.splitlines() if x.startswith("MODULES ")), None)
    assert line is not None, f"examiner {' '.join(argv)} did not finish: {done.stderr[-2000:]}"
    return set(json.loads(line[len("MODULES "):]))


def heavy(loaded: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(name for name in names if any(m == name or m.startswith(name + ".") for m in loaded))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_run(tmp_path_factory.mktemp("startup") / "run")


def test_gate_help_loads_no_model_stack() -> None:
    assert heavy(loaded_after(["gate", "--help"]), MODEL_STACK + REPORT_STACK) == []


def test_gate_on_a_run_loads_neither_models_nor_report_writers(run_dir: Path) -> None:
    loaded = loaded_after(["gate", str(run_dir), str(run_dir), "--target", "alpha", "--margin", "0.5",
                           "--allow-unhealthy"])
    assert "examiner.stats.paired" in loaded, "the gate did not run: the test would prove nothing"
    assert heavy(loaded, MODEL_STACK + REPORT_STACK) == []


def test_compare_without_out_loads_neither_models_nor_the_chart_library(run_dir: Path) -> None:
    """Without --out compare prints Markdown: no chart, so no matplotlib. (Two targets' paired subgroups
    name topics with scikit-learn and adjust p-values with statsmodels: those load, for a reason.)"""
    loaded = loaded_after(["compare", str(run_dir)])
    assert "examiner.reporting.compare" in loaded, "compare did not run: the test would prove nothing"
    assert heavy(loaded, MODEL_STACK + ("matplotlib",)) == []


def test_compare_of_one_target_loads_no_topic_or_calibration_libraries(tmp_path: Path) -> None:
    """One target has no pair: no topic names (scikit-learn) and no calibration, cascade or subgroup
    figures (statsmodels) are computed, so none of those libraries load."""
    run = write_sample_run(tmp_path / "one", targets=("alpha",))
    loaded = loaded_after(["compare", str(run)])
    assert "examiner.reporting.compare" in loaded, "compare did not run: the test would prove nothing"
    assert heavy(loaded, MODEL_STACK + ("matplotlib", "sklearn", "statsmodels", "pandas")) == []


def test_report_rebuilds_without_the_exam_runner_or_model_clients(run_dir: Path) -> None:
    """`examiner report RUN` writes reports and figures (matplotlib, scikit-learn load, for a reason) but
    imports neither the exam runner's graph engine nor the model gateway's clients."""
    loaded = loaded_after(["report", str(run_dir)])
    assert "examiner.exam.reports" in loaded, "report did not run: the test would prove nothing"
    assert heavy(loaded, MODEL_STACK) == [] and "examiner.exam.runner" not in loaded
