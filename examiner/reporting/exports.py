"""An exam run as a dataset: one row per (unit, question, answer, verdict), in JSONL, Parquet or a folder
that Hugging Face `datasets.load_from_disk` reads, with a dataset card (README.md) beside the data.

Why: people want the exam in the formats their other tools read, and a dataset without a card saying
where it came from (corpus, models, prompts, figures, licence) cannot be shared responsibly. Nothing
here uploads anything. The run is read through examiner.core.rundir (via report.store.load_run); JSONL
needs no extra package, Parquet needs pyarrow and `hf` needs datasets (the `export` extra).

A row exists for every unit a question targeted, whether or not a verdict came back: `verdict` is null
then, and `unscored` says why (the judge's reason for an unscored verdict, or that no answer or no
verdict was recorded). Spans are character offsets of the unit's text in its source document; `page` is
the passage's page (PDF page, DOCX page, PPTX slide; passages.jsonl) and null for formats without pages.
A control question (controls.jsonl: `--control-share`) is one row per (control, target) after the exam's
rows, marked `control` true, with no unit and no verdict: the judge's control label is in `control_label`
(examiner/reporting/export_controls.py), so nothing that counts verdicts counts it in accuracy.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from examiner.core.version import VERSION
from examiner.core.rundir import RUN_INFO
from examiner.core.errors import UserError
from examiner.core.staging import staged_folder
from examiner.reporting.endpoint_identity import endpoint_identities
from examiner.reporting.export_controls import (CONTROL_COLUMNS, CONTROL_QUESTION_KIND, NOT_A_CONTROL,
                                                control_columns, sorted_controls, unlabelled_reason)
from examiner.reporting.export_labels import IDENTITY_COLUMNS, LABEL_COLUMNS, human_labels, identity_columns, label_columns
from examiner.reporting.run_reader import RunData, load_run
from examiner.reporting.summary import target_scores

FORMATS = ("jsonl", "parquet", "hf")
DATA_FILES = {"jsonl": "data.jsonl", "parquet": "data.parquet"}
CARD = "README.md"
EXTRA_HINT = "pip install 'examiner[export]'"

COLUMNS: tuple[tuple[str, str], ...] = (
    ("run_id", "string"), ("target", "string"),
    ("unit_id", "string"), ("unit_text", "string"),
    ("question_id", "string"), ("question_text", "string"), ("question_round", "int"),
    ("question_kind", "string"), ("question_type", "string"), ("cluster", "string"),
    ("answer_id", "string"), ("answer_text", "string"),
    ("verdict_id", "string"), ("verdict", "string"), ("unscored", "string"), ("judge_reason", "string"),
    ("judge_mode", "string"), *LABEL_COLUMNS, *CONTROL_COLUMNS,
    ("document", "string"), ("passage_id", "string"), ("start", "int"), ("end", "int"), ("page", "int"),
    ("sources", "sources"), *IDENTITY_COLUMNS,
)
"""Every column of an exported row and its type (`sources`: every source of the unit, a list of
{document, passage_id, start, end, page}; the flat document/span columns are its first entry; the label
and identity columns: examiner/reporting/export_labels.py; the control columns: export_controls.py)."""

_KIND_TEXT = {"int": "integer", "bool": "boolean", "sources": "list of {document, passage_id, start, end, page}"}

UNKNOWN_LICENCE = "unknown — set it before sharing"
_HF_LICENCES = {"apache-2.0", "mit", "cc0-1.0", "cc-by-4.0", "cc-by-sa-3.0", "cc-by-sa-4.0", "cc-by-nc-4.0",
                "bsd-2-clause", "bsd-3-clause", "gpl-3.0", "lgpl-3.0", "odc-by", "odbl", "pddl"}
"""Licence ids the card's front matter may name; any other licence text is given in the card's body only."""


def rows(run: RunData, health_status: str | None = None) -> list[dict[str, Any]]:
    """One row per (question, unit it targets), in question order, then one per (control question, target);
    see the module docstring. `health_status` is the run's health verdict (examiner.exam.health, computed by
    the layer above)."""
    answer_of = {a.question_id: a for a in run.answers.values()}
    people = human_labels(run)
    identities = identity_columns(run, health_status)
    verdict_of = {(v.answer_id, v.unit_id): v for v in run.verdicts.values()}
    out = []
    for q in sorted(run.questions.values(), key=lambda q: (q.target, q.round, q.id)):
        answer = answer_of.get(q.id)
        for unit_id in q.targets:
            unit = run.units.get(unit_id)
            sources = _sources(run, unit_id)
            first = sources[0] if sources else dict.fromkeys(("document", "passage_id", "start", "end", "page"))
            verdict = verdict_of.get((answer.id, unit_id)) if answer else None
            scored = verdict is not None and verdict.verdict != "unscored"
            if verdict is None:
                unscored = "no answer recorded" if answer is None else "no verdict recorded"
            else:
                unscored = None if scored else verdict.reason
            out.append({
                "run_id": run.info.run_id, "target": q.target,
                "unit_id": unit_id, "unit_text": unit.text if unit else None,
                "question_id": q.id, "question_text": q.text, "question_round": q.round,
                "question_kind": q.kind, "question_type": q.qtype, "cluster": q.cluster_id,
                "answer_id": answer.id if answer else None, "answer_text": answer.text if answer else None,
                "verdict_id": verdict.id if verdict else None, "verdict": verdict.verdict if scored else None,  # type: ignore[union-attr]
                "unscored": unscored, "judge_reason": verdict.reason if verdict else None,
                "judge_mode": verdict.mode if verdict else None,
                **label_columns(verdict, people.get(verdict.id) if verdict else None), **NOT_A_CONTROL,
                **first, "sources": sources,
                **(identities.get(q.target) or identity_columns(run, health_status, (q.target,))[q.target]),
            })
    for control in sorted_controls(run):
        sources = [source for unit_id in control.unit_ids for source in _sources(run, unit_id)]
        first = sources[0] if sources else dict.fromkeys(("document", "passage_id", "start", "end", "page"))
        out.append({
            "run_id": run.info.run_id, "target": control.target, "unit_id": None, "unit_text": None,
            "question_id": control.id, "question_text": control.text, "question_round": control.round,
            "question_kind": CONTROL_QUESTION_KIND, "question_type": None, "cluster": control.cluster_id,
            "answer_id": None, "answer_text": control.answer, "verdict_id": None, "verdict": None,
            "unscored": unlabelled_reason(control), "judge_reason": control.reason, "judge_mode": None,
            **label_columns(None, None), **control_columns(control), **first, "sources": sources,
            **(identities.get(control.target) or identity_columns(run, health_status, (control.target,))[control.target]),
        })
    return out


def _sources(run: RunData, unit_id: str) -> list[dict[str, Any]]:
    """A unit's sources as the `sources` column gives them (none for a unit the run does not hold)."""
    unit = run.units.get(unit_id)
    return [{"document": s.document, "passage_id": s.passage_id, "start": s.start, "end": s.end,
             "page": run.passages.get(s.passage_id, {}).get("page")} for s in (unit.sources if unit else [])]


# --- the dataset card ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Licence:
    text: str
    """What the corpus says, or UNKNOWN_LICENCE."""
    hf_id: str
    """The front matter's `license:` (a known id, else `unknown` or `other`)."""


_LICENCE_LINE = re.compile(r"^\s*[-*]?\s*licen[cs]e\s*:\s*(.+)$", re.IGNORECASE)


def corpus_licence(corpus_paths: Iterable[str]) -> Licence:
    """The corpus's licence from its metadata: a `Licence:` line in SOURCE.md, else the first line of a
    LICENSE file, in each corpus folder; unknown when none says."""
    found: list[str] = []
    for path in map(Path, corpus_paths):
        if not path.is_dir():
            continue
        text = ""
        source = path / "SOURCE.md"
        if source.is_file():
            lines = source.read_text(encoding="utf-8", errors="replace").splitlines()
            text = next((m.group(1).strip() for m in map(_LICENCE_LINE.match, lines) if m), "")
        for name in ("LICENSE", "LICENSE.md", "LICENSE.txt"):
            if not text and (path / name).is_file():
                lines = (path / name).read_text(encoding="utf-8", errors="replace").splitlines()
                text = next((line.strip() for line in lines if line.strip()), "")
        if text and text not in found:
            found.append(text)
    if not found:
        return Licence(UNKNOWN_LICENCE, "unknown")
    ids = {re.split(r"[\s,;(]", t.lower(), maxsplit=1)[0].rstrip(".") for t in found}
    hf_id = ids.pop() if len(ids) == 1 else "other"
    return Licence("; ".join(found), hf_id if hf_id in _HF_LICENCES else "other")


def _models(run: RunData) -> list[tuple[str, str, str]]:
    """(role, endpoint, model and server) for the targets, the judge panel and every role the settings name:
    a simulated endpoint says so (never the name of the model it stands in for alone), a URL has no credentials."""
    known = endpoint_identities(run)
    return [(role, name, ident.text.replace("|", "\\|")) for name, ident in known.items() for role in ident.roles]


def card(run: RunData, data: list[dict[str, Any]], fmt: str, files: list[str], corpus: Iterable[str] = ()) -> str:
    """README.md: front matter for dataset hubs, then corpus, models, prompts, figures, licence, columns.
    The licence is read from `corpus`, the folders the user names, never from the run's corpus_paths."""
    info = run.info
    licence = corpus_licence(corpus)
    verdicts = Counter(r["verdict"] or "unscored" for r in data if not r["control"])
    controls = [r for r in data if r["control"]]
    control_labels = Counter(r["control_label"] or "unlabelled" for r in controls)
    prompts = (f"sha256 {info.prompts_sha256} of the prompt files (examiner {info.examiner_version})"
               if info.prompts_sha256 else
               f"not recorded by this run (it predates the field); exported with examiner {VERSION}")
    lines = ["---", f"license: {licence.hf_id}", f"pretty_name: examiner exam {info.run_id}",
             "tags:", "- examiner", "- evaluation", "- question-answering", "---", "",
             f"# examiner exam run {info.run_id}", "",
             "Questions an examiner model wrote about a reference corpus, the answers of the models examined, "
             "and the judge's verdict for every knowledge unit each question targeted.", "",
             "## Corpus", "", f"- paths: {', '.join(info.corpus_paths) or '-'}",
             f"- documents: {info.documents}, passages: {info.passages}, knowledge units: {info.units}", "",
             "## Models", "", "| role | endpoint | model and server |", "|---|---|---|"]
    lines += [f"| {role} | {endpoint} | {model} |" for role, endpoint, model in _models(run)]
    lines += ["", "## Prompts", "", f"- {prompts}", f"- judge mode: {info.judge_mode}; exam mode: {info.mode}", "",
              "## Figures", "", f"- run status: {info.status} ({info.stop_reason or 'no stop reason'})",
              f"- rows: {len(data)}; verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())),
              *([f"- control questions (rows marked `control`, never counted in accuracy): {len(controls)}; labels: "
                 + ", ".join(f"{k} {v}" for k, v in sorted(control_labels.items()))] if controls else []), "",
              "| target | units | accuracy (95% CI) | coverage (95% CI) | correct | incorrect | abstained | unanswered "
              "| uncovered |",
              "|---|---|---|---|---|---|---|---|---|"]
    for target in run.targets:
        s = target_scores(run, target)
        c = s["counts"]
        lines.append(f"| {target} | {s['units']} | {_ci(s['accuracy'])} | {_ci(s['coverage'])} | {c['correct']} | "
                     f"{c['incorrect']} | {c['abstained']} | {c['unanswered']} | {c['uncovered']} |")
    lines += ["", "Accuracy = correct / (correct + incorrect + abstained) units; coverage = covered units / all units; "
              "intervals resample clusters (examiner's report).", "",
              "## Licence", "", f"- corpus licence: {licence.text}",
              "- the questions, answers and verdicts were written by the models above: check their terms too.", "",
              "## Files and columns", "", f"- format: {fmt}; files: {', '.join(files)}",
              "- one row per (unit, question, answer, verdict); `verdict` is null when the judge gave none, "
              "and `unscored` says why; `abstained`: the answer declined or hedged without a claim about the unit",
              "- a control question (a question the corpus does not support, asked to tell over-refusal from "
              "hallucination) is a row with `control` true, no unit and no verdict: the judge's label is "
              "`control_label` (declined_or_corrected is the right answer, accepted_premise the hallucination)", "- `start`/`end`: character offsets of the unit in `document`; `page` is "
              "the page (PDF, DOCX) or slide (PPTX) of its passage, null for text formats; `sources` lists every source of a merged unit", "",
              "| column | type |", "|---|---|"]
    lines += [f"| {name} | {_KIND_TEXT.get(kind, kind)} |" for name, kind in COLUMNS]
    return "\n".join(lines) + "\n"


def _ci(figure: dict[str, Any]) -> str:
    if figure.get("value") is None:
        return "n/a"
    if figure.get("low") is None:
        return f"{figure['value']:.3f}"
    return f"{figure['value']:.3f} [{figure['low']:.3f}, {figure['high']:.3f}]"


# --- writers -------------------------------------------------------------------------------------------


NEEDS = {"parquet": ("pyarrow",), "hf": ("pyarrow", "datasets")}
"""The packages (of the `export` extra) each format needs; jsonl needs none."""


def check_extra(fmt: str) -> None:
    """A one-line UserError naming the extra when a package the format needs is not installed."""
    import importlib.util

    for package in NEEDS.get(fmt, ()):
        try:
            found = importlib.util.find_spec(package) is not None
        except ValueError:  # a module entry without a spec (e.g. set to None): treat as absent
            found = False
        if not found:
            raise UserError(f"--to {fmt} needs the {package} package: {EXTRA_HINT}")


def _arrow_table(data: list[dict[str, Any]]) -> Any:
    import pyarrow as pa

    source = pa.struct([("document", pa.string()), ("passage_id", pa.string()), ("start", pa.int64()),
                        ("end", pa.int64()), ("page", pa.int64())])
    types = {"string": pa.string(), "int": pa.int64(), "bool": pa.bool_(), "sources": pa.list_(source)}
    schema = pa.schema([(name, types[kind]) for name, kind in COLUMNS])
    return pa.Table.from_pylist(data, schema=schema)


def _write_jsonl(data: list[dict[str, Any]], folder: Path) -> list[str]:
    with open(folder / DATA_FILES["jsonl"], "w", encoding="utf-8") as fh:
        for row in data:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return [DATA_FILES["jsonl"]]


def _write_parquet(data: list[dict[str, Any]], folder: Path) -> list[str]:
    import pyarrow.parquet as pq

    pq.write_table(_arrow_table(data), folder / DATA_FILES["parquet"])
    return [DATA_FILES["parquet"]]


def _write_hf(data: list[dict[str, Any]], folder: Path) -> list[str]:
    import datasets

    datasets.disable_progress_bars()  # the command prints one line of its own
    datasets.Dataset(_arrow_table(data)).save_to_disk(str(folder))
    return sorted(p.name for p in folder.iterdir())


WRITERS = {"jsonl": _write_jsonl, "parquet": _write_parquet, "hf": _write_hf}


def export_run(run_dir: str | Path, fmt: str, out: str | Path, health_status: str | None = None,
               corpus: Iterable[str] = ()) -> dict[str, Any]:
    """Write the run's rows in `fmt` and the card into `out` (a new or empty folder); what was written.
    `health_status`: the run's health verdict for the health_status column (examiner.api.export computes it);
    `corpus`: the corpus folders the user names, where the card's licence is read."""
    if fmt not in WRITERS:
        raise UserError(f"unknown export format '{fmt}' (choose from {', '.join(FORMATS)})")
    check_extra(fmt)
    folder = Path(out)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UserError(f"{folder} exists and is not an empty folder: export into a new one")
    run = load_run(run_dir)
    if not run.questions:
        raise UserError(f"{run_dir} holds no questions yet ({RUN_INFO} status: {run.info.status}): nothing to export")
    data = rows(run, health_status)
    with staged_folder(folder) as staging:  # `out` holds a finished export or nothing, even after a kill
        files = WRITERS[fmt](data, staging)
        (staging / CARD).write_text(card(run, data, fmt, files, corpus), encoding="utf-8")
    return {"folder": folder, "rows": len(data), "files": [*files, CARD]}
