"""`examiner judge` prints and writes a judge's agreement with its 95 % interval: the accuracy against the
labels (Wilson) in the terminal, report.md and report.json, and the correlations with human scores
(Fisher z) likewise; the figures are the references' (statsmodels, scipy)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from examiner.cli.main import main

PAIRS = [{"id": f"q{i}", "question": f"Explain topic number {i} in one sentence.",
          "a": f"Topic {i} is explained well here.", "b": f"Something unrelated about weather {i}.",
          "gold": 1 + i % 2} for i in range(12)]
FIELDS = ["--instruction-field", "question", "--output1-field", "a", "--output2-field", "b", "--label-field",
          "gold", "--simulate"]


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_pairwise_agreement_is_shown_with_its_wilson_interval(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["judge", str(_write(tmp_path / "pairs.jsonl", PAIRS)), "--method", "pairwise", "--out", str(out),
                 *FIELDS]) == 0
    agreement = json.loads((out / "report.json").read_text())["pairwise"]["agreement"]
    correct = round(agreement["accuracy"] * agreement["n"])
    low, high = proportion_confint(correct, agreement["n"], alpha=0.05, method="wilson")
    assert (agreement["accuracy_low"], agreement["accuracy_high"]) == pytest.approx((low, high), abs=1e-12)
    shown = f"[{low:.3f}, {high:.3f}]"
    assert shown in capsys.readouterr().out
    assert f"{agreement['accuracy']:.3f} {shown}" in (out / "report.md").read_text()


def test_correlations_with_human_scores_are_shown_with_fisher_intervals(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"id": f"s{i}", "instruction": "Summarise.", "output": f"Summary {i} " + "(u1:known) " * (i % 3),
             "reference": "A summary.", "human_score": 1 + i % 5} for i in range(12)]
    out = tmp_path / "g"
    assert main(["judge", str(_write(tmp_path / "s.jsonl", rows)), "--method", "geval", "--human-range", "1,5",
                 "--criterion", "Coherence (1-5): is it coherent?", "--out", str(out), "--simulate"]) == 0
    sample = json.loads((out / "report.json").read_text())["single"]["correlation_with_human"]["judge"]["sample"]
    assert sample["n"] == 12
    z = sps.norm.ppf(0.975) / (sample["n"] - 3) ** 0.5
    r = sample["pearson"]
    expected = (math.tanh(math.atanh(r) - z), math.tanh(math.atanh(r) + z))
    assert (sample["pearson_low"], sample["pearson_high"]) == pytest.approx(expected, abs=1e-12)
    shown = f"[{sample['pearson_low']:.3f}, {sample['pearson_high']:.3f}]"
    assert shown in capsys.readouterr().out and shown in (out / "report.md").read_text()


def test_each_panel_members_agreement_rate_has_its_wilson_interval() -> None:
    from examiner.judging.sections import panel_agreement

    records = [{"verdict": 1, "panel": {"a": {"verdict": 1}, "b": {"verdict": 1 if i < 7 else 2}}} for i in range(10)]
    rows = {row["member"]: row for row in panel_agreement(records)}
    for member, agreed in (("a", 10), ("b", 7)):
        assert rows[member]["agreed"] == agreed and rows[member]["compared"] == 10
        expected = proportion_confint(agreed, 10, alpha=0.05, method="wilson")
        assert (rows[member]["rate_low"], rows[member]["rate_high"]) == pytest.approx(expected, abs=1e-12)


def test_swap_consistency_has_its_wilson_interval() -> None:
    from examiner.judging.swap_metrics import Judgment, swap_metrics
    from examiner.core.labels import Preference

    flip = {Preference.FIRST: Preference.SECOND, Preference.SECOND: Preference.FIRST}
    js = []
    for i in range(13):  # 9 of 13 pairs judged alike in both orders
        verdict = Preference.FIRST if i % 2 else Preference.SECOND
        js += [Judgment(f"p{i}", "original", verdict), Judgment(f"p{i}", "swapped", verdict if i < 9 else flip[verdict])]
    m = swap_metrics(js)
    assert (m["n_pairs_both_orders"], m["consistency"]) == (13, 9 / 13)
    expected = proportion_confint(9, 13, alpha=0.05, method="wilson")
    assert (m["consistency_low"], m["consistency_high"]) == pytest.approx(expected, abs=1e-12)
    none = swap_metrics([Judgment("p0", "original", Preference.FIRST)])  # no pair in both orders: undefined
    assert math.isnan(none["consistency_low"]) and math.isnan(none["consistency_high"])


def test_swap_consistency_is_shown_with_its_interval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["judge", str(_write(tmp_path / "pairs.jsonl", PAIRS)), "--method", "pairwise", "--swap",
                 "--out", str(out), *FIELDS]) == 0
    swap = json.loads((out / "report.json").read_text())["pairwise"]["swap"]
    n = swap["n_pairs_both_orders"]
    low, high = proportion_confint(round(swap["consistency"] * n), n, alpha=0.05, method="wilson")
    assert (swap["consistency_low"], swap["consistency_high"]) == pytest.approx((low, high), abs=1e-12)
    shown = f"{swap['consistency']:.3f} [{low:.3f}, {high:.3f}]"
    assert f"consistency {shown}" in capsys.readouterr().out.replace("\n", " ")
    assert f"| {n} | {shown} |" in (out / "report.md").read_text()
