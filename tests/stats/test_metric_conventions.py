"""Published metric conventions as one name each: `bleu4-nltk-sentence` is NLTK's unsmoothed sentence
BLEU-4 (the Topical-Chat tables' BLEU-4), and every report that shows a metric names its implementation
(rouge-score and its version for ROUGE; BERTScore's model, and that it is not the published roberta-large)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nltk.translate.bleu_score import sentence_bleu

from examiner.cli.main import main
from examiner.stats import reference_metrics as metrics

FIXTURES = [
    ("the cat sat on the mat today", ["the cat sat on the mat"]),
    ("i like to go hiking in the mountains on weekends", ["i love hiking in the mountains on the weekend",
                                                           "on weekends i go to the mountains"]),
    ("no shared words here", ["completely different reference text"]),
    ("that is a great movie , i watched it twice", ["that movie is great , i have watched it twice ."]),
    ("yes", ["yes"]),  # shorter than four tokens: unsmoothed BLEU-4 is (all but) 0
]


def test_bleu4_nltk_sentence_is_nltks_unsmoothed_sentence_bleu() -> None:
    got = metrics.bleu4_nltk_sentence([h for h, _ in FIXTURES], [r for _, r in FIXTURES])
    with pytest.warns(UserWarning):  # NLTK's own warning on zero n-gram counts, kept out of examiner's output
        expected = [sentence_bleu([x.split() for x in refs], hyp.split()) for hyp, refs in FIXTURES]
    assert got == pytest.approx(expected, abs=1e-15)
    assert got[0] > 0.5 and got[2] == 0.0 and got[4] < 1e-100  # NLTK gives 1.8e-231, not 0, for "yes"


def test_metric_stats_computes_and_names_each_implementation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"id": f"r{i}", "output": hyp, "reference": refs[0], "human_score": i % 3})
                            + "\n" for i, (hyp, refs) in enumerate(FIXTURES)), encoding="utf-8")
    out = tmp_path / "out"
    code = main(["metric-stats", str(data), "--metric", "bleu4-nltk-sentence,rougeL,bertscore", "--out", str(out)])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    expected = [sentence_bleu([refs[0].split()], hyp.split()) for hyp, refs in FIXTURES]
    assert report["mean_metric"]["bleu4-nltk-sentence"] == pytest.approx(sum(expected) / len(expected), abs=1e-12)
    names = report["implementations"]
    assert names["rougeL"].startswith("rouge-score 0.") and "nltk" in names["bleu4-nltk-sentence"]
    assert "all-MiniLM-L6-v2" in names["bertscore"] and f"not the published BERTScore model ({metrics.PUBLISHED_BERTSCORE})" \
        in names["bertscore"]
    md = (out / "report.md").read_text(encoding="utf-8")
    assert all(f"- {name}: {text}" in md for name, text in names.items())
    assert "rouge-score" in printed.out and "roberta-large" in printed.out
