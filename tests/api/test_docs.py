"""docs/API.md says what the API is: every public name is documented, and each options table is the
options model itself (names, types, defaults and descriptions), so the page cannot drift from the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

import examiner.api as api
from examiner.api.exam import CorpusOptions

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "API.md").read_text(encoding="utf-8")

JOB = set(api.JobOptions.model_fields)
CORPUS = set(CorpusOptions.model_fields)
TABLES: list[tuple[type[BaseModel], set[str]]] = [
    (api.JobOptions, set()), (CorpusOptions, JOB), (api.ExamOptions, CORPUS), (api.EstimateOptions, CORPUS),
    (api.ResumeOptions, set()), (api.DemoOptions, set()), (api.JudgeOptions, JOB), (api.JudgeStatsOptions, set()),
    (api.JudgeVsPeopleOptions, set()),
    (api.MetaOptions, JOB), (api.MetricStatsOptions, set()), (api.CompareOptions, set()), (api.GateOptions, set()),
    (api.ExportOptions, set()), (api.ReviewSampleOptions, set()), (api.MemoryProbeOptions, JOB)]
"""Each options model with the fields its table leaves to the table of its base."""


def type_name(annotation: object) -> str:
    text = annotation.__name__ if isinstance(annotation, type) else repr(annotation)
    text = text.replace("typing.", "").replace("collections.abc.", "").replace("NoneType", "None")
    return re.sub(r"^Optional\[(.*)\]$", r"\1 | None", text)


def options_table(model: type[BaseModel], inherited: set[str]) -> str:
    """The Markdown table docs/API.md gives for `model`: option, type, default, description."""
    lines = ["| option | type | default | what it is |", "|---|---|---|---|"]
    for name, info in model.model_fields.items():
        if name in inherited:
            continue
        if info.default is PydanticUndefined and info.default_factory is None:
            default = "required"
        else:
            default = "`{}`" if info.default_factory is not None else f"`{info.default!r}`"
        description = " ".join((info.description or "").split()).replace("|", "\\|")
        lines.append(f"| `{name}` | `{type_name(info.annotation).replace('|', chr(92) + '|')}` | {default} | "
                     f"{description} |")
    return "\n".join(lines)


@pytest.mark.parametrize(("model", "inherited"), TABLES, ids=[m.__name__ for m, _ in TABLES])
def test_each_options_table_is_the_model(model: type[BaseModel], inherited: set[str]) -> None:
    table = options_table(model, inherited)
    assert table in DOC, (f"docs/API.md's table of {model.__name__} differs from the model; the table the model "
                          f"gives is:\n{table}")


@pytest.mark.parametrize(("model", "inherited"), TABLES, ids=[m.__name__ for m, _ in TABLES])
def test_every_option_is_documented_frozen_and_strict(model: type[BaseModel], inherited: set[str]) -> None:
    assert model.model_config.get("frozen") and model.model_config.get("extra") == "forbid"
    undocumented = [name for name, info in model.model_fields.items() if not (info.description or "").strip()]
    assert not undocumented, f"{model.__name__}: fields without a description: {undocumented}"


def test_every_public_name_is_on_the_page() -> None:
    missing = [name for name in api.__all__ if f"`{name}" not in DOC and f"{name}(" not in DOC]
    assert not missing, f"docs/API.md does not mention {missing}"


def test_the_face_lists_what_each_module_defines() -> None:
    """examiner.api.__all__ and its MODULES map agree, and each name lives in the module MODULES says."""
    assert sorted(api.__all__) == sorted(api._HOME)
    for name, module in api._HOME.items():
        assert getattr(api, name).__module__ in (f"examiner.api.{module}", "typing"), name
