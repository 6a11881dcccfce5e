"""Distillation data (examiner/judging/distil.py, `examiner distil`): the teacher's verdicts in examiner's
own judge prompts, both orders, with and without the reference, split by item or document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examiner.agents.judge.unit_judge import Judgment
from examiner.agents.parsing import parse_score_line
from examiner.cli.main import main
from examiner.core.labels import Preference
from examiner.judging.dataset import Row
from examiner.judging.distil import (JudgedAnswer, exam_examples, gold_teachings, judged_teachings, pairwise_examples,
                                     split_of, swap_reason)


def test_the_reason_reads_right_after_a_swap() -> None:
    assert swap_reason("Answer 1 is vague; answer 2 cites the source. The first answer rambles.") == \
        "Answer 2 is vague; answer 1 cites the source. The second answer rambles."


def test_a_pair_with_a_reference_gives_four_examples_whose_replies_parse_to_the_teacher() -> None:
    row = Row(line=1, id="p1", instruction="Name the capital of France.", output_1="Paris.", output_2="Lyon.",
              reference="Paris", label=Preference.FIRST)
    taught = judged_teachings([{"id": "p1", "order": "original", "verdict": 1, "score_1": 9, "score_2": 2,
                                "reason": "Answer 1 is right; answer 2 is wrong."}], "gpt-4")
    examples = pairwise_examples([row], taught)
    assert sorted((e.order, e.reference) for e in examples) == [("original", False), ("original", True),
                                                                 ("swapped", False), ("swapped", True)]
    for example in examples:
        user = example.messages[1]["content"]
        line = parse_score_line(example.messages[-1]["content"])
        first, second = ("Paris.", "Lyon.") if example.order == "original" else ("Lyon.", "Paris.")
        assert user.index(first) < user.index(second)
        assert ("<reference>" in user) == example.reference
        assert (line.score_1, line.score_2) == ((9, 2) if example.order == "original" else (2, 9))
        assert example.label == ("first" if example.order == "original" else "second")
    swapped = next(e for e in examples if e.order == "swapped")
    assert swapped.messages[-1]["content"].endswith("Answer 2 is right; answer 1 is wrong.")


def test_a_teacher_seen_only_in_swapped_order_is_read_back_into_the_original() -> None:
    taught = judged_teachings([{"id": "p", "order": "swapped", "verdict": 2, "score_1": 8, "score_2": 3,
                                "reason": "Answer 1 wins."}], "t")
    assert (taught["p"].score_1, taught["p"].score_2, taught["p"].label) == (3, 8, Preference.SECOND)
    assert taught["p"].reason == "Answer 2 wins."


def test_gold_labels_teach_grades_without_a_reason() -> None:
    rows = [Row(line=1, id="a", instruction="i", output_1="x", output_2="y", label=Preference.TIE),
            Row(line=2, id="b", instruction="i", output_1="x", output_2="y")]
    taught = gold_teachings(rows)
    assert set(taught) == {"a"} and (taught["a"].score_1, taught["a"].score_2, taught["a"].reason) == (6, 6, "")


def test_exam_examples_reply_in_the_judge_format_under_the_calls_unit_names() -> None:
    units = [("ku-1", "Water boils at 100 C at sea level."), ("ku-2", "Ice melts at 0 C.")]
    judged = JudgedAnswer("a1", "When does water boil?", "At 90 C.", units, {"ku-1": "incorrect", "ku-2": "unrelated"},
                          {"ku-1": "says 90 C, the unit says 100 C", "ku-2": ""}, "doc-1")
    original, swapped = exam_examples([judged], "judge")
    for example, order in ((original, units), (swapped, list(reversed(units)))):
        reply = Judgment.model_validate_json(example.messages[-1]["content"])
        shown = [text for _, text in order]
        user = example.messages[1]["content"]
        assert user.index(shown[0]) < user.index(shown[1])
        names = {text: name for name, text in zip(["U1", "U2"], shown)}
        assert reply.labels[names[units[0][1]]] == "incorrect" and reply.labels[names[units[1][1]]] == "unrelated"
        assert [r.unit for r in reply.reasons] == [names[units[0][1]]]


def test_the_split_keeps_each_group_on_one_side() -> None:
    sides = {g: split_of(g, 0.2, seed=3) for g in (f"doc-{i}" for i in range(2000))}
    assert 0.17 < sum(s == "validation" for s in sides.values()) / len(sides) < 0.23
    assert all(split_of(g, 0.2, seed=3) == s for g, s in sides.items())


@pytest.mark.usefixtures("fixture_data")
def test_cli_writes_the_sets_and_refuses_a_folder_with_files(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "llmbar"
    assert main(["distil", "--data", "llmbar:Natural", "--out", str(out)]) == 0
    assert "teacher gold" in capsys.readouterr().out
    train = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
    validation = [json.loads(line) for line in (out / "validation.jsonl").read_text().splitlines()]
    assert len(train) + len(validation) == 32  # the fixture's 16 pairs, both orders
    assert not {e["group"] for e in train} & {e["group"] for e in validation}
    assert json.loads((out / "distil.json").read_text())["examples"] == {"train": len(train),
                                                                          "validation": len(validation)}
    assert main(["distil", "--data", "llmbar:Natural", "--out", str(out)]) == 2
    assert "not an empty folder" in capsys.readouterr().err


@pytest.mark.usefixtures("fixture_data")
def test_several_datasets_combine_with_their_ids_kept_apart(tmp_path: Path) -> None:
    out = tmp_path / "mix"
    assert main(["distil", "--data", "llmbar:Natural", "--data", "llmbar:Processed_FairEval", "--out", str(out)]) == 0
    rows = [json.loads(line) for name in ("train.jsonl", "validation.jsonl")
            for line in (out / name).read_text().splitlines()]
    assert len(rows) == 2 * (16 + 6)  # both sets' pairs (each set numbers its rows from row1), both orders
    assert {r["meta"]["dataset"] for r in rows} == {"llmbar:Natural", "llmbar:Processed_FairEval"}
    assert all(r["group"].startswith(r["meta"]["dataset"] + ":") for r in rows)
    train = {r["group"] for r in rows if r["split"] == "train"}
    assert train and not train & {r["group"] for r in rows if r["split"] == "validation"}
    assert json.loads((out / "distil.json").read_text())["source"] == ["llmbar:Natural", "llmbar:Processed_FairEval"]


def test_judgments_name_one_dataset(tmp_path: Path) -> None:
    from pydantic import ValidationError

    from examiner.api.distil import DistilOptions

    with pytest.raises(ValidationError, match="one dataset"):
        DistilOptions(out=str(tmp_path), data=("a.jsonl", "b.jsonl"), judgments="j.jsonl")
    assert DistilOptions(out=str(tmp_path), data=["a.jsonl"]).data == "a.jsonl"
