"""Swap metrics and agreement on a hand-built set; score-line parsing; judge-stats on imported judgments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examiner.cli.main import main
from examiner.core.labels import Preference, Unscored, preference_from_text, preference_to_number
from examiner.agents.parsing import parse_score_line, parse_single_score, verdict_from_scores
from examiner.judging.swap_metrics import Judgment, agreement, classification_metrics, swap_metrics

# (id, original-order verdict, swapped-order verdict in the ORIGINAL labelling); "-" = not judged
HAND = [
    ("p1", 1, 1),     # consistent
    ("p2", 2, 2),     # consistent
    ("p3", 1, 2),     # shown-first wins both times -> favours 1st
    ("p4", 1, 0),     # first wins, then tie -> favours 1st
    ("p5", 2, 1),     # shown-second wins both times -> favours 2nd
    ("p6", None, 1),  # unparseable original: pair not complete
    ("p7", 0, 0),     # consistent tie
    ("p8", 1, "-"),   # one order only
]
LABELS = {"p1": 1, "p2": 2, "p3": 1, "p4": 1, "p5": 1, "p6": 2, "p7": 1, "p8": 1}


def _pref(v: int | None) -> Preference | Unscored:
    return Unscored("unparseable") if v is None else preference_from_text(v)


def hand_judgments() -> list[Judgment]:
    out = []
    for pid, v1, v2 in HAND:
        out.append(Judgment(pid, "original", _pref(v1)))
        if v2 != "-":
            out.append(Judgment(pid, "swapped", _pref(v2)))
    return out


def test_swap_metrics_by_hand() -> None:
    m = swap_metrics(hand_judgments())
    assert m["n_judgments"] == 15 and m["n_unparseable"] == 1
    assert m["n_pairs"] == 8 and m["n_pairs_both_orders"] == 6
    assert m["n_pairs_one_order_only"] == 1 and m["n_pairs_with_unparseable"] == 1
    assert m["n_inconsistent"] == 3
    assert m["consistency"] == pytest.approx(0.5)
    assert m["bias_first"] == pytest.approx(2 / 3) and m["bias_second"] == pytest.approx(1 / 3)
    assert m["delta_bias"] == pytest.approx(1 / 3)
    assert m["bias_first_all_pairs"] == pytest.approx(2 / 6) and m["bias_second_all_pairs"] == pytest.approx(1 / 6)
    assert m["consistency"] + m["bias_first_all_pairs"] + m["bias_second_all_pairs"] == pytest.approx(1.0)


def test_agreement_by_hand() -> None:
    a = agreement(hand_judgments(), {k: _pref(v) for k, v in LABELS.items()})
    assert a["n"] == 14 and a["n_unparseable"] == 1
    assert a["accuracy"] == pytest.approx(8 / 14)
    p1, r1 = 6 / 7, 6 / 11
    p2, r2 = 2 / 4, 2 / 3
    assert a["classes"] == [1, 2, 0]
    assert a["macro_precision"] == pytest.approx((p1 + p2 + 0) / 3)
    assert a["macro_recall"] == pytest.approx((r1 + r2 + 0) / 3)
    f1 = 2 * p1 * r1 / (p1 + r1)
    f2 = 2 * p2 * r2 / (p2 + r2)
    assert a["macro_f1"] == pytest.approx((f1 + f2) / 3)
    assert a["by_order"]["original"]["n"] == 7


def test_macro_matches_sklearn() -> None:
    from sklearn.metrics import precision_recall_fscore_support

    pred = [1, 1, 2, 0, 2, 1, 0, 2, 1]
    gold = [1, 2, 2, 0, 1, 1, 1, 2, 0]
    ours = classification_metrics([_pref(v) for v in pred], [_pref(v) for v in gold])
    p, r, f, _ = precision_recall_fscore_support(gold, pred, labels=[1, 2, 0], average="macro", zero_division=0)
    assert (ours["macro_precision"], ours["macro_recall"], ours["macro_f1"]) == pytest.approx((p, r, f))


def test_score_line_parsing() -> None:
    line = parse_score_line("8 6\nAnswer 1 is better.")
    assert (line.score_1, line.score_2, line.reason, line.error) == (8, 6, "Answer 1 is better.", None)
    assert parse_score_line("\n  7, 7.5").score_2 == 7.5
    assert parse_score_line("Scores: 3 and 9").score_1 == 3
    assert parse_score_line("11 3").error == "score 1 11 outside 1-10"
    assert parse_score_line("I think the first").error is not None
    assert parse_score_line("").error == "empty reply"
    assert parse_single_score("Grade: 4\nok", 1, 5)[0] == 4
    assert parse_single_score("0", 1, 5)[2] == "score 0 outside 1-5"
    assert verdict_from_scores(8, 6) is Preference.FIRST and verdict_from_scores(6, 8) is Preference.SECOND
    assert verdict_from_scores(7, 7.5, tie_threshold=0.5) is Preference.TIE
    assert verdict_from_scores(7, 7.6, 0.5) is Preference.SECOND
    assert [_pref(v).swapped() for v in (1, 2, 0)] == [Preference.SECOND, Preference.FIRST, Preference.TIE]


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def test_judge_stats_on_imported_judgments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = []
    for j in hand_judgments():
        shown = (None if not isinstance(j.verdict, Preference) else
                 preference_to_number(j.verdict if j.order == "original" else j.verdict.swapped()))
        # an external tool's format: order as ab/ba, verdict in the order shown
        rows.append({"pair": j.id, "dir": "ab" if j.order == "original" else "ba", "winner": shown})
    rows.append({"pair": "p9", "dir": "ab", "winner": 7})        # label outside {0,1,2}
    rows.append({"dir": "ab", "winner": 1})                       # missing id
    rows.append("{broken")
    judgments = _write(tmp_path / "j.jsonl", rows)
    labels = _write(tmp_path / "gold.jsonl", [{"pair": k, "gold": v} for k, v in LABELS.items()] + [{"pair": "x", "gold": 3}])
    code = main(["judge-stats", str(judgments), "--labels", str(labels), "--id-field", "pair", "--order-field", "dir",
                 "--verdict-field", "winner", "--label-field", "gold", "--verdict-in-shown-order", "--out", str(tmp_path / "o")])
    assert code == 0
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["rows_skipped"] == 4
    messages = " ".join(s["message"] for s in report["skipped"])
    assert "row 16: field 'winner' must be 0, 1 or 2, got 7" in messages
    assert "row 17: missing field 'pair'" in messages and "row 18: not valid JSON" in messages and "labels row 9" in messages
    swap = report["pairwise"]["swap"]
    assert swap["consistency"] == pytest.approx(0.5) and swap["bias_first"] == pytest.approx(2 / 3)
    assert report["pairwise"]["agreement"]["accuracy"] == pytest.approx(8 / 14)
    assert "consistency" in capsys.readouterr().out


def test_judge_stats_from_scores_with_out_of_range(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "order": "original", "score_1": 8, "score_2": 6, "label": 1},
        {"id": "a", "order": "swapped", "score_1": 5, "score_2": 7, "label": 1},  # shown 2 wins -> original 1
        {"id": "b", "order": "original", "score_1": 15, "score_2": 6, "label": 2},
        {"id": "b", "order": "swapped", "score_1": None, "score_2": None, "label": 2},
    ]
    path = _write(tmp_path / "s.jsonl", rows)
    assert main(["judge-stats", str(path), "--out", str(tmp_path / "o")]) == 0
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["skipped"][0]["message"] == "row 3: field 'score_1' = 15 is outside 1-10"
    assert report["pairwise"]["swap"]["consistency"] == 1.0
    assert report["pairwise"]["n_unparseable"] == 1
    assert report["pairwise"]["agreement"]["accuracy"] == 1.0


def test_judge_stats_missing_file_is_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judge-stats", str(tmp_path / "nope.jsonl")]) == 2
    assert "does not exist" in capsys.readouterr().err
