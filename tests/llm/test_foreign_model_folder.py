"""A model folder from elsewhere (`serve-local --model`, `finetune --base`) is data: the code it ships
(config.json's auto_map naming a module in the folder) is never imported, and pickled weights are never
read (pytorch_model.bin unpickles with torch.load): a folder without safetensors is one UserError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("peft")

from examiner.core.errors import UserError  # noqa: E402
from examiner.llm.hf_models import load_model  # noqa: E402
from tests.helpers import foreign_payloads as payloads  # noqa: E402
from tests.helpers.tiny_lm import build_tiny_model  # noqa: E402


def _with_shipped_code(folder: Path, marker: Path) -> None:
    """auto_map entries naming a module of the folder that creates `marker` when imported."""
    (folder / "shipped.py").write_text(f"import os\nos.system({payloads.command(marker)!r})\n"
                                       "from transformers import LlamaConfig as Config, LlamaForCausalLM as Model\n",
                                       encoding="utf-8")
    for name in ("config.json", "tokenizer_config.json"):
        data = json.loads((folder / name).read_text(encoding="utf-8"))
        data["auto_map"] = {"AutoConfig": "shipped.Config", "AutoModelForCausalLM": "shipped.Model",
                            "AutoTokenizer": ["shipped.Model", None]}
        (folder / name).write_text(json.dumps(data), encoding="utf-8")


def test_code_a_model_folder_ships_is_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    folder = build_tiny_model(tmp_path / "model")
    _with_shipped_code(folder, marker)
    try:
        model, _tokenizer = load_model(folder, device="cpu")
    except ValueError:  # transformers may refuse a folder that asks for its own code: refusing is fine
        pass
    else:
        assert type(model).__module__.startswith("transformers.")
    assert not marker.exists()


def test_pickled_weights_are_refused_in_one_line(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    folder = build_tiny_model(tmp_path / "model")
    for weights in folder.glob("*.safetensors"):
        weights.unlink()
    (folder / "pytorch_model.bin").write_bytes(payloads.pickled(marker))
    with pytest.raises(UserError, match="safetensors"):
        load_model(folder, device="cpu")
    assert not marker.exists()
