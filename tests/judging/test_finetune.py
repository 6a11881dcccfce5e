"""LoRA fine-tuning of a local judge and serving the result, on a tiny random model built in-process."""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path

import pytest

pytest.importorskip("peft")
pytest.importorskip("transformers")

from examiner.core.errors import UserError  # noqa: E402
from examiner.judging.finetune import IGNORE, FinetuneSettings, encode, finetune, read_examples  # noqa: E402
from tests.helpers.tiny_lm import build_tiny_model  # noqa: E402

SYSTEM = "You compare two answers."


def _rows(n: int) -> list[dict]:
    rows = []
    for i in range(n):
        grades = "8 3" if i % 2 else "2 9"
        rows.append({"messages": [{"role": "system", "content": SYSTEM},
                                  {"role": "user", "content": f"Q{i}: <answer_1>a{i}</answer_1> <answer_2>b{i}</answer_2>"},
                                  {"role": "assistant", "content": grades}],
                     "kind": "pairwise", "order": "original", "label": "first" if i % 2 else "second"})
    return rows


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch

    torch.set_num_threads(1)
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture()
def train_file(tmp_path: Path) -> Path:
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows(6)))
    return path


def test_only_the_reply_is_learnt_and_long_prompts_lose_their_middle(tiny: Path) -> None:
    from examiner.llm.hf_models import load_model

    _, tokenizer = load_model(tiny, device="cpu")
    messages = _rows(1)[0]["messages"]
    ids, labels = encode(tokenizer, messages, 1024)
    learnt = [t for t in labels if t != IGNORE]
    assert tokenizer.decode(learnt).startswith("2 9")
    assert len(ids) == len(labels) and labels[0] == IGNORE
    short_ids, short_labels = encode(tokenizer, messages, 40)
    assert len(short_ids) == 40
    assert [t for t in short_labels if t != IGNORE] == learnt  # the verdict survives the cut
    assert short_ids[:5] == ids[:5]  # so does the start of the prompt


def test_trains_writes_adapter_and_merged_model_and_resumes(tiny: Path, train_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "judge"
    lines: list[str] = []
    settings = FinetuneSettings(max_steps=3, grad_accum=2, save_every=2, progress_every=1, max_length=64)
    first = finetune(train_file, out, tiny, settings=settings, notes=lines.append, device="cpu")
    assert first.steps == 3 and first.resumed_from == 0 and first.stopped == "steps"
    assert len(first.losses) == 3 and all(math.isfinite(v) and v > 0 for v in first.losses)
    assert any("step 3/3" in line and "ETA" in line for line in lines)
    assert (out / "adapter" / "adapter_model.safetensors").is_file()
    assert (out / "merged" / "config.json").is_file() and (out / "merged" / "tokenizer.json").is_file()
    summary = json.loads((out / "finetune.json").read_text())
    assert summary["steps"] == 3 and summary["peak_rss_gb"] > 0
    more = FinetuneSettings(max_steps=5, grad_accum=2, save_every=2, progress_every=1, max_length=64)
    second = finetune(train_file, out, tiny, settings=more, notes=lines.append, device="cpu")
    assert second.resumed_from == 3 and second.steps == 5
    assert second.losses[:3] == first.losses  # continued, not restarted
    assert any("resuming from step 3" in line for line in lines)


def test_learning_moves_the_loss_down(tiny: Path, tmp_path: Path) -> None:
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows(2)))
    settings = FinetuneSettings(max_steps=12, grad_accum=1, learning_rate=5e-3, save_every=100, max_length=64)
    result = finetune(path, tmp_path / "judge", tiny, settings=settings, notes=lambda _: None, device="cpu")
    assert sum(result.losses[-2:]) < sum(result.losses[:2])


def test_a_time_bound_stops_and_saves(tiny: Path, train_file: Path, tmp_path: Path) -> None:
    settings = FinetuneSettings(max_steps=1000, max_minutes=1e-9, grad_accum=1, max_length=64)
    result = finetune(train_file, tmp_path / "judge", tiny, settings=settings, notes=lambda _: None, device="cpu")
    assert result.stopped == "time" and result.steps == 0
    assert (tmp_path / "judge" / "merged" / "config.json").is_file()


def test_bad_training_file_is_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "train.jsonl"
    path.write_text("not json\n")
    with pytest.raises(UserError, match="not a distil example"):
        read_examples(path)
    with pytest.raises(UserError, match="not found"):
        read_examples(tmp_path / "missing.jsonl")


def test_served_model_answers_chat_completions(tiny: Path) -> None:
    import httpx

    from examiner.llm.hf_models import load_model
    from examiner.llm.hf_server import ChatModel, make_server

    model, tokenizer = load_model(tiny, device="cpu")
    server = make_server(ChatModel(model, tokenizer, "tiny-judge"), port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        reply = httpx.post(f"{base}/chat/completions", timeout=30, json={
            "model": "tiny-judge", "max_tokens": 4, "temperature": 0,
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Grade these."}]})
        assert reply.status_code == 200
        body = reply.json()
        assert body["object"] == "chat.completion" and body["model"] == "tiny-judge"
        assert isinstance(body["choices"][0]["message"]["content"], str)
        assert 0 < body["usage"]["completion_tokens"] <= 4 and body["usage"]["prompt_tokens"] > 0
        assert httpx.get(f"{base}/models", timeout=10).json()["data"][0]["id"] == "tiny-judge"
        bad = httpx.post(f"{base}/chat/completions", timeout=10, json={"messages": []})
        assert bad.status_code == 400
    finally:
        server.shutdown()
        server.server_close()


def test_the_api_reads_a_distil_folder_and_names_what_is_missing(tiny: Path, train_file: Path,
                                                                  tmp_path: Path) -> None:
    from examiner.api.finetune import FinetuneOptions, finetune as api_finetune

    result = api_finetune(FinetuneOptions(data=str(train_file.parent), out=str(tmp_path / "judge"), base=str(tiny),
                                          max_steps=1, grad_accum=1, max_length=64, device="cpu", threads=1),
                          notes=lambda _: None)
    assert result.steps == 1 and (tmp_path / "judge" / "merged" / "config.json").is_file()
    with pytest.raises(UserError, match="no train.jsonl"):
        api_finetune(FinetuneOptions(data=str(tmp_path / "empty"), out=str(tmp_path / "x"), base=str(tiny)))
    with pytest.raises(UserError, match="neither 'smollm2' nor a transformers model folder"):
        api_finetune(FinetuneOptions(data=str(train_file.parent), out=str(tmp_path / "x"), base=str(tmp_path)))


def test_the_reply_loss_equals_the_models_own_loss(tiny: Path) -> None:
    import torch

    from examiner.judging.finetune import reply_loss
    from examiner.llm.hf_models import load_model

    model, tokenizer = load_model(tiny, device="cpu")
    ids, labels = encode(tokenizer, _rows(1)[0]["messages"], 1024)
    x = torch.tensor([ids])
    own = model(input_ids=x, attention_mask=torch.ones_like(x), labels=torch.tensor([labels])).loss
    assert float(reply_loss(model, ids, labels, "cpu")) == pytest.approx(float(own), rel=1e-5)
