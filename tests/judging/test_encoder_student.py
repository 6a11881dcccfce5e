"""The encoder student (`examiner distil --student encoder`): a cross-encoder judge trained on a teacher's
verdicts, order-free by construction, calibrated, bounded in time and resumable, and served over the
chat-completions API so a cascade can name it. A tiny random encoder keeps each test to seconds."""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path

import numpy as np
import pytest

from examiner.agents.judge.grade_confidence import verdict_probabilities
from examiner.agents.judge.pairwise_judge import pairwise_messages
from examiner.cli.main import main
from examiner.core.labels import Preference
from examiner.judging.encoder_distil import TaughtPair, fit_temperature, taught_pairs, train_encoder_judge
from examiner.llm.encoder_chat import EncoderChat, grade_reply, read_pair
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
