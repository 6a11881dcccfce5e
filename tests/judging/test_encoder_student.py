"""The encoder student (`examiner distil --student encoder`): a cross-encoder judge trained on a teacher's
verdicts, order-free by construction, calibrated, bounded in time and resumable, and served over the
chat-completions API so a cascade can name it. A tiny random encoder keeps each test to seconds."""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from examiner.agents.judge.grade_confidence import verdict_probabilities
from examiner.agents.aliases import UnitAliases
from examiner.agents.prompting.fence import one_line
from examiner.agents.judge.label_confidence import label_confidences
from examiner.agents.judge.pairwise_judge import pairwise_messages
from examiner.agents.judge.unit_judge import JUDGE, REASON_WORDS, Judgment
from examiner.api.encoder_student import EncoderStudentOptions, train_encoder_student
from examiner.cli.main import main
from examiner.core.errors import EXIT_OUTAGE, UserError
from examiner.core.labels import Preference
from examiner.judging.encoder_distil import TaughtPair, fit_temperature, taught_pairs, train_encoder_judge
from examiner.judging.distil import JudgedAnswer, exam_examples
from examiner.judging.encoder_finetune import CHECKPOINT_FILE, CrossSettings, finetune_encoder_judge
from examiner.judging.encoder_units_train import finetune_unit_judge, taught_units
from examiner.llm.encoder_chat import EncoderChat, grade_reply, read_pair
from examiner.llm.encoder_cross import INSTRUCTION_TOKENS, clipped_inputs, load_backbone
from examiner.llm.encoder_units import UnitJudge, read_exam_prompt
from examiner.llm.encoder_judge import INFO_FILE, EncoderJudge, is_encoder_judge
from examiner.llm.types import TokenLogprob

CITIES = [("France", "Paris", "Lyon"), ("Italy", "Rome", "Milan"), ("Spain", "Madrid", "Seville"),
          ("Japan", "Tokyo", "Osaka"), ("Canada", "Ottawa", "Toronto"), ("Kenya", "Nairobi", "Mombasa"),
          ("Peru", "Lima", "Cusco"), ("Egypt", "Cairo", "Giza"), ("Chile", "Santiago", "Valparaiso"),
          ("Norway", "Oslo", "Bergen"), ("Greece", "Athens", "Patras"), ("Cuba", "Havana", "Trinidad")]


def pairs() -> list[TaughtPair]:
    """The teacher prefers the capital; half the items show it second."""
    out = []
    for index, (country, capital, other) in enumerate(CITIES):
        right, wrong = f"The capital of {country} is {capital}.", f"The capital of {country} is {other}."
        first, second, target = (right, wrong, 1.0) if index % 2 else (wrong, right, 0.0)
        out.append(TaughtPair(f"item{index}", f"Name the capital of {country}.", first, second, target))
    return out


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("encoder") / "judge"
    result = train_encoder_judge(pairs(), folder, base="tiny", calibration_share=0.3, threads=1, epochs=60)
    assert result.stopped == "done" and result.fit_items + result.calibration_items == len(CITIES)
    assert result.calibration_items > 0 and result.temperature is not None and result.temperature > 0
    return folder


def test_the_judge_gives_the_same_verdict_in_both_orders(trained: Path) -> None:
    judge = EncoderJudge(trained, threads=1)
    items = [(p.instruction, p.answer_1, p.answer_2) for p in pairs()]
    forward = judge.judge(items)
    backward = judge.judge([(i, b, a) for i, a, b in items])
    for f, b in zip(forward, backward):
        assert f.p_first == pytest.approx(1 - b.p_first, abs=1e-5)
        assert 0.5 <= f.confidence <= 1


def test_a_stopped_training_resumes_from_its_cached_encodings(tmp_path: Path) -> None:
    lines: list[str] = []
    stopped = train_encoder_judge(pairs(), tmp_path / "j", base="tiny", max_minutes=1e-9, threads=1)
    assert stopped.stopped == "time" and stopped.temperature is None and not is_encoder_judge(tmp_path / "j")
    done = train_encoder_judge(pairs(), tmp_path / "j", base="tiny", threads=1, epochs=20, progress=lines.append)
    assert done.stopped == "done" and done.encoded == done.to_encode == 2 * len(CITIES)
    assert lines and lines[-1].startswith(f"encoder: encoded {2 * len(CITIES)}/{2 * len(CITIES)} texts")
    again: list[str] = []
    train_encoder_judge(pairs(), tmp_path / "j", base="tiny", threads=1, epochs=20, progress=again.append)
    assert again == []  # everything came from the cache


def test_temperature_scaling_softens_an_overconfident_score() -> None:
    logits = np.array([4.0, 4.0, 4.0, 4.0, -4.0, -4.0])
    targets = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 1.0])  # right 4 of 6 times at p = 0.98
    assert fit_temperature(logits, targets) > 2


def test_taught_pairs_read_the_teacher_back_into_the_original_order() -> None:
    pair = {"instruction": "q", "output_1": "a", "output_2": "b"}
    examples = [{"kind": "pairwise", "group": "g", "order": "original", "label": "first", "meta": {"pair": pair}},
                {"kind": "pairwise", "group": "g", "order": "swapped", "label": "first", "meta": {"pair": pair}},
                {"kind": "pairwise", "group": "h", "order": "swapped", "label": "first", "meta": {"pair": pair}}]
    got = {p.group: p.target for p in taught_pairs(examples)}
    assert got == {"g": 0.5, "h": 0.0}


@pytest.mark.parametrize("p", [0.9, 0.3, 0.5])
def test_the_served_grade_line_carries_the_judge_probability(p: float) -> None:
    text, tokens = grade_reply(p)
    read = verdict_probabilities([TokenLogprob(t["token"], t["logprob"], {a["token"]: a["logprob"] for a in t["top_logprobs"]})
                                  for t in tokens])
    assert read is not None
    assert read[Preference.FIRST] == pytest.approx(p) and read[Preference.SECOND] == pytest.approx(1 - p)
    assert text == ("6 5" if p >= 0.5 else "6 7")
    assert math.isclose(sum(read.values()), 1)


def test_the_encoder_judge_is_served_over_the_chat_api(trained: Path) -> None:
    import httpx

    from examiner.llm.hf_server import make_server

    server = make_server(EncoderChat(trained, "encoder-judge", threads=1), port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions"
        messages = pairwise_messages("Name the capital of France.", "It is Paris.", "It is Lyon.", None, grade_only=True)
        assert read_pair(messages[-1]["content"]) == ("Name the capital of France.", "It is Paris.", "It is Lyon.")
        reply = httpx.post(url, timeout=30, json={"messages": messages, "temperature": 0, "logprobs": True,
                                                  "top_logprobs": 10}).json()
        choice = reply["choices"][0]
        p = EncoderJudge(trained, threads=1).judge([read_pair(messages[-1]["content"])])[0].p_first  # type: ignore[list-item]
        assert choice["message"]["content"] == ("6 5" if p >= 0.5 else "6 7")
        assert math.exp(choice["logprobs"]["content"][1]["top_logprobs"][0]["logprob"]) == pytest.approx(p, rel=1e-4)
        refused = httpx.post(url, timeout=30, json={"messages": [{"role": "user", "content": "Mark these units."}]})
        assert refused.status_code == 400 and "pairwise prompts only" in refused.json()["error"]["message"]
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.usefixtures("fixture_data")
def test_distil_trains_the_encoder_student_from_the_command_line(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "distil"
    args = ["distil", "--data", "llmbar:Natural", "--out", str(out), "--student", "encoder", "--encoder-base", "tiny",
            "--threads", "1"]
    assert main(args) == 0
    said = capsys.readouterr()
    assert "encoder student:" in said.out and "encoder: encoded" in said.err
    info = json.loads((out / "encoder" / INFO_FILE).read_text())
    assert info["base"] == "tiny" and info["stopped"] == "done" and info["fit_items"] > 0
    assert main(args) == 0  # the same command again reuses the data and the encodings
    assert "already holds the data" in capsys.readouterr().out


@pytest.mark.usefixtures("fixture_data")
def test_a_bad_student_flag_is_refused_before_anything_is_written(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "distil"
    assert main(["distil", "--data", "llmbar:Natural", "--out", str(out), "--student", "encoder",
                 "--max-minutes", "0"]) == 2
    assert "--max-minutes 0.0: input should be greater than 0" in capsys.readouterr().err
    assert not out.exists()


# --- the fine-tuned cross-encoder (`--encoder-mode cross`) ---------------------------------------------------

FAST = CrossSettings(epochs=2, batch=4, checkpoint_minutes=0.0, progress_every=1)


@pytest.fixture(scope="module")
def cross_trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cross") / "judge"
    result = finetune_encoder_judge(pairs(), folder, base="tiny", calibration_share=0.3, threads=1, settings=FAST)
    assert result.stopped == "done" and result.encoded == result.to_encode > 0
    assert result.calibration_items > 0 and result.temperature is not None and result.temperature > 0
    return folder


def test_the_cross_encoder_gives_the_same_verdict_in_both_orders(cross_trained: Path) -> None:
    judge = EncoderJudge(cross_trained, threads=1)
    assert judge.info["mode"] == "cross" and is_encoder_judge(cross_trained)
    items = [(p.instruction, p.answer_1, p.answer_2) for p in pairs()]
    forward = judge.judge(items)
    backward = judge.judge([(i, b, a) for i, a, b in items])
    assert len({round(f.p_first, 6) for f in forward}) > 1  # the scores depend on the answers
    for f, b in zip(forward, backward):
        assert f.p_first == pytest.approx(1 - b.p_first, abs=1e-5)


def test_the_cross_encoder_learns_what_its_teacher_prefers(tmp_path: Path) -> None:
    # the teacher prefers the answer that says "correct"; a tiny encoder at a high learning rate learns it
    taught = [TaughtPair(f"g{k}", f"Question {k}?", *(("correct", "wrong", 1.0) if k % 2 else ("wrong", "correct", 0.0)))
              for k in range(16)]
    settings = CrossSettings(epochs=15, batch=8, learning_rate=3e-3, score_learning_rate=3e-2, checkpoint_minutes=60)
    finetune_encoder_judge(taught, tmp_path / "j", base="tiny", calibration_share=0.25, threads=1, settings=settings)
    verdicts = EncoderJudge(tmp_path / "j", threads=1).judge([(p.instruction, p.answer_1, p.answer_2) for p in taught])
    assert [v.first_wins for v in verdicts] == [p.target == 1.0 for p in taught]


def test_a_stopped_fine_tuning_leaves_a_judge_and_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    folder = tmp_path / "j"
    stopped = finetune_encoder_judge(pairs(), folder, base="tiny", max_minutes=1e-9, threads=1, settings=FAST)
    assert stopped.stopped == "time" and stopped.encoded == 0 < stopped.to_encode
    assert is_encoder_judge(folder) and (folder / CHECKPOINT_FILE).is_file()
    lines: list[str] = []
    done = finetune_encoder_judge(pairs(), folder, base="tiny", threads=1, settings=FAST, progress=lines.append)
    assert lines[0] == f"encoder: resuming at step 0/{done.to_encode}"
    assert done.stopped == "done" and done.encoded == done.to_encode
    assert any(line.startswith(f"encoder: step {done.to_encode}/{done.to_encode} (epoch 2/2)") for line in lines)
    p_done = EncoderJudge(folder, threads=1).judge([("q", "a", "b")])[0].p_first
    again: list[str] = []
    finetune_encoder_judge(pairs(), folder, base="tiny", threads=1, settings=FAST, progress=again.append)
    assert again == [f"encoder: resuming at step {done.to_encode}/{done.to_encode}"]  # nothing left to train
    assert EncoderJudge(folder, threads=1).judge([("q", "a", "b")])[0].p_first == pytest.approx(p_done, abs=1e-6)


def test_each_answer_is_clipped_on_its_own_so_both_stay_in_view() -> None:
    tokenizer, _ = load_backbone("tiny")
    long_instruction, long_answer = "please " * 300, "word " * 600
    batch = clipped_inputs(tokenizer, [(long_instruction, long_answer), ("Short?", "Yes.")], max_tokens=128)
    ids, types = batch["input_ids"][0].tolist(), batch["token_type_ids"][0].tolist()
    assert len(ids) == 128 and types.count(0) == INSTRUCTION_TOKENS + 2  # [CLS] instruction [SEP]
    assert ids.count(tokenizer.sep_token_id) == 2 and ids[-1] == tokenizer.sep_token_id
    short = [t for t, m in zip(batch["input_ids"][1].tolist(), batch["attention_mask"][1].tolist()) if m]
    assert tokenizer.decode(short) == "[CLS] short? [SEP] yes. [SEP]"


def test_the_fine_tuned_judge_is_served_like_the_frozen_one(cross_trained: Path) -> None:
    chat = EncoderChat(cross_trained, "encoder-judge", threads=1)
    messages = pairwise_messages("Name the capital of Peru.", "Lima.", "Cusco.", None, grade_only=True)
    reply = chat.complete({"messages": messages, "temperature": 0, "logprobs": True})
    p = EncoderJudge(cross_trained, threads=1).judge([("Name the capital of Peru.", "Lima.", "Cusco.")])[0].p_first
    tokens = reply["choices"][0]["logprobs"]["content"]
    assert math.exp(tokens[1]["top_logprobs"][0]["logprob"]) == pytest.approx(p, rel=1e-4)


@pytest.mark.usefixtures("fixture_data")
def test_distil_fine_tunes_the_cross_encoder_from_the_command_line(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "distil"
    args = ["distil", "--data", "llmbar:Natural", "--out", str(out), "--student", "encoder", "--encoder-mode", "cross",
            "--encoder-base", "tiny", "--threads", "1"]
    assert main(args) == 0
    said = capsys.readouterr()
    assert "encoder student:" in said.out and "(cross, done," in said.out and "encoder: step " in said.err
    info = json.loads((out / "encoder" / INFO_FILE).read_text())
    assert info["mode"] == "cross" and info["steps"] == info["planned_steps"] > 0
    assert main(args) == 0  # again: the data and the finished checkpoint are reused
    assert "encoder: resuming at step" in capsys.readouterr().err


# --- exam units: (unit, question, answer) -> label, served to the exam judge's prompt -------------------------

def unit_examples() -> list[dict[str, object]]:
    """distil's exam examples: every country asked twice, the teacher labelling its units correct where the
    answer says "yes" and incorrect where it says "no", so only the answer tells the label (units hold `<`
    and `&`, which the prompt escapes)."""
    answers = []
    for k, (country, capital, _) in enumerate(CITIES):
        units = [(f"u{k}", f"The capital of {country} is {capital} (pop. < 10m & growing)."),
                 (f"v{k}", f"{capital} lies in {country}.")]
        for said, label in (("no", "incorrect"), ("yes", "correct")):
            answers.append(JudgedAnswer(f"a{k}{said}", f"Is {country}'s capital {capital}?", said, units,
                                        {uid: label for uid, _ in units}, {uid: "" for uid, _ in units}, f"doc{k}"))
    return [{"kind": e.kind, "group": e.group, "order": e.order, "messages": e.messages}
            for e in exam_examples(answers, "strong")]


@pytest.fixture(scope="module")
def units_trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("units") / "judge"
    settings = CrossSettings(epochs=12, batch=8, learning_rate=3e-3, score_learning_rate=3e-2, checkpoint_minutes=60)
    result = finetune_unit_judge(taught_units(unit_examples()), folder, base="tiny", calibration_share=0.25,
                                 threads=1, settings=settings)
    assert result.stopped == "done" and result.temperature is not None and result.calibration_items > 0
    return folder


def test_the_exam_judge_prompt_is_read_back_into_its_units() -> None:
    taught = taught_units(unit_examples())
    assert len(taught) == 4 * len(CITIES)  # the units-reversed copies are not read twice
    first = taught[0]
    assert (first.question, first.answer, first.label) == ("Is France's capital Paris?", "no", "incorrect")
    assert first.unit == "The capital of France is Paris (pop. < 10m & growing)."
    assert read_exam_prompt("Mark these units.") is None


def test_the_unit_judge_learns_its_teacher_and_answers_the_exam_judge_prompt(units_trained: Path) -> None:
    chat = EncoderChat(units_trained, "encoder-judge", threads=1)
    messages = JUDGE.render(question="Is Peru's capital Lima?", answer="yes",
                            units=UnitAliases.of([("x", "The capital of Peru is Lima."), ("y", "Lima lies in Peru.")])
                            .block([("x", "The capital of Peru is Lima."), ("y", "Lima lies in Peru.")]),
                            incorrect_words=REASON_WORDS["incorrect"])
    reply = chat.complete({"messages": messages, "temperature": 0, "logprobs": True})
    choice = reply["choices"][0]
    judged = Judgment.model_validate_json(choice["message"]["content"])
    assert judged.labels == {"U1": "correct", "U2": "correct"}
    tokens = [TokenLogprob(t["token"], t["logprob"], {a["token"]: a["logprob"] for a in t["top_logprobs"]})
              for t in choice["logprobs"]["content"]]
    read = label_confidences(tokens, ["U1", "U2"])
    probabilities = UnitJudge(units_trained, json.loads((units_trained / INFO_FILE).read_text())).probabilities(
        "Is Peru's capital Lima?", "yes", ["The capital of Peru is Lima.", "Lima lies in Peru."])
    assert read == pytest.approx({"U1": probabilities[0]["correct"], "U2": probabilities[1]["correct"]}, rel=1e-6)
    no = chat.complete({"messages": JUDGE.render(question="Is Peru's capital Lima?", answer="no",
                                                 units=UnitAliases.of([("x", "Lima is Peru's capital.")])
                                                 .block([("x", "Lima is Peru's capital.")]),
                                                 incorrect_words=REASON_WORDS["incorrect"])})
    assert Judgment.model_validate_json(no["choices"][0]["message"]["content"]).labels == {"U1": "incorrect"}
    sampled = chat.complete({"messages": messages, "temperature": 0.7, "n": 3, "seed": 1})
    assert len(sampled["choices"]) == 3
    with pytest.raises(ValueError, match="taught exam units"):
        chat.complete({"messages": pairwise_messages("q", "a", "b", None, grade_only=True)})


def test_exam_units_need_the_fine_tuned_encoder(tmp_path: Path) -> None:
    folder = tmp_path / "distil"
    folder.mkdir()
    (folder / "train.jsonl").write_text("".join(json.dumps(e) + "\n" for e in unit_examples()))
    with pytest.raises(UserError, match="--encoder-mode cross"):
        train_encoder_student(EncoderStudentOptions(data=str(folder), base="tiny"))


def test_an_exam_cascade_names_the_unit_judge_taught_from_a_simulated_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The student is taught each unit's passage and, with `cheap_passages`, served it; the strong judge's
    prompt stays the one without passages."""
    import yaml

    from examiner.llm.hf_server import make_server
    from examiner.simulator import server as simulator

    strong: list[str] = []
    find = simulator.find_behaviour

    def noting_strong(role: str, stage: str) -> Any:
        behaviour = find(role, stage)

        def run(req: Any) -> Any:
            if stage == "judge":
                strong.append(req.last_user)
            return behaviour(req)

        return run

    corpus = "corpora/examiner-handbook"  # several documents: distil and the student split by document
    teacher = tmp_path / "teacher"
    assert main(["run", corpus, "--simulate", "--out", str(teacher), "--quiet", "--max-rounds", "1"]) == 0
    distilled = tmp_path / "distil"
    assert main(["distil", "--exam", str(teacher), "--out", str(distilled), "--student", "encoder",
                 "--encoder-mode", "cross", "--encoder-base", "tiny", "--threads", "1"]) == 0
    assert "encoder student:" in capsys.readouterr().out
    info = json.loads((distilled / "encoder" / INFO_FILE).read_text())
    assert info["task"] == "exam_units" and info["fit_items"] > 0 and sum(info["teacher_labels"].values()) > 0
    assert info["passages"] is True  # the run kept its passages, so distil showed them and the student read them
    chat = EncoderChat(distilled / "encoder", "encoder-judge", threads=1)
    served: list[str] = []
    complete = chat.complete

    def noting(body: dict[str, Any]) -> dict[str, Any]:
        served.append(body["messages"][-1]["content"])
        return complete(body)

    chat.complete = noting  # type: ignore[method-assign]
    server = make_server(chat, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = tmp_path / "cascade.yaml"
        config.write_text(yaml.safe_dump({
            "endpoints": {"encoder-judge": {"provider": "openai", "model": "encoder-judge", "supports_logprobs": True,
                                            "base_url": f"http://127.0.0.1:{server.server_address[1]}/v1"},
                          "strong": {"provider": "simulated", "model": "sim-strong", "price_input_per_1m": 2.5,
                                     "price_output_per_1m": 10.0}},
            "roles": {"examiner": "simulated", "candidate": "simulated",
                      "judge": {"cascade": ["encoder-judge", "strong"], "target_agreement": 0.9, "risk": 0.1,
                                "calibration_share": 0.5, "confidence": "logprobs", "cheap_passages": True}}}))
        out = tmp_path / "cascade"
        monkeypatch.setattr(simulator, "find_behaviour", noting_strong)
        assert main(["run", corpus, "--config", str(config), "--out", str(out), "--quiet", "--max-rounds", "1",
                     "--allow-simulated-roles"]) == 0
    finally:
        server.shutdown()
        server.server_close()
    passages = {one_line(p["text"]) for p in map(json.loads, (out / "passages.jsonl").read_text().splitlines())}
    assert served and all((read := read_exam_prompt(text)) is not None and read.passages
                          and set(read.passages.values()) <= passages for text in served)
    assert strong and not any("<exam_passages>" in text for text in strong)
    records = [json.loads(line) for line in (out / "cascade.jsonl").read_text().splitlines()]
    assert records and all(r["cheap_label"] in ("correct", "incorrect", "abstained", "unrelated") for r in records)
    assert {r["confidence_source"] for r in records} == {"logprobs"} and any(r["calibration"] for r in records)
    ledger = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]
    assert any(r.get("stage") == "judge_cascade" and r.get("endpoint") == "encoder-judge" for r in ledger)
    section = json.loads((out / "report.json").read_text())["cascade"]
    assert section["cheap"] == "encoder-judge" and section["units"] == len(records)
    assert section["calibration_agreement"] is not None and section["spend_ratio"] > 0


def test_a_cascade_without_cheap_passages_stops_at_a_passage_taught_student(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A student taught on passages, named as the cheap tier without `cheap_passages`, answers 400: the run
    stops at the first cheap calls with one line naming the setting and a non-zero exit, before the strong
    judge is paid for any unit; with the setting added to the run folder's config.yaml, a resume finishes."""
    import yaml

    from examiner.llm.hf_server import make_server

    corpus = "corpora/examiner-handbook"
    teacher = tmp_path / "teacher"
    assert main(["run", corpus, "--simulate", "--out", str(teacher), "--quiet", "--max-rounds", "1"]) == 0
    distilled = tmp_path / "distil"
    assert main(["distil", "--exam", str(teacher), "--out", str(distilled), "--student", "encoder",
                 "--encoder-mode", "cross", "--encoder-base", "tiny", "--threads", "1"]) == 0
    capsys.readouterr()
    server = make_server(EncoderChat(distilled / "encoder", "encoder-judge", threads=1), port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    out = tmp_path / "cascade"
    try:
        config = tmp_path / "cascade.yaml"
        config.write_text(yaml.safe_dump({
            "endpoints": {"encoder-judge": {"provider": "openai", "model": "encoder-judge", "supports_logprobs": True,
                                            "base_url": f"http://127.0.0.1:{server.server_address[1]}/v1"},
                          "strong": {"provider": "simulated", "model": "sim-strong"}},
            "roles": {"examiner": "simulated", "candidate": "simulated",
                      "judge": {"cascade": ["encoder-judge", "strong"], "target_agreement": 0.9, "risk": 0.1,
                                "calibration_share": 0.5, "confidence": "logprobs"}}}))
        code = main(["run", corpus, "--config", str(config), "--out", str(out), "--quiet", "--max-rounds", "1",
                     "--allow-simulated-roles"])
        err = capsys.readouterr().err
        assert code == EXIT_OUTAGE
        assert err.count("\n") == 1 and err.startswith(
            "examiner: error: every judging call failed: the cheap judge encoder-judge reads reference passages: "
            "set cheap_passages: true in the judge cascade (to resume, in the run folder's config.yaml);")
        assert f"examiner resume {out}" in err
        ledger = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]
        assert any(r["endpoint"] == "encoder-judge" and r.get("outcome") == "failed" for r in ledger)
        assert not any(r["endpoint"] == "strong" for r in ledger)  # no unit paid for twice, none at all
        saved = out / "config.yaml"
        assert "cheap_passages: false" in saved.read_text()
        saved.write_text(saved.read_text().replace("cheap_passages: false", "cheap_passages: true"))
        assert main(["resume", str(out), "--quiet"]) == 0
    finally:
        server.shutdown()
        server.server_close()
    section = json.loads((out / "report.json").read_text())["cascade"]
    assert section["cheap"] == "encoder-judge" and section["units"] > 0
