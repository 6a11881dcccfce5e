"""Loaders for the public validation sets shipped with the package (examiner/data, see its README.md).

Each loader reads one set's real files into small frozen records, so experiments and tests do not parse
raw JSON themselves. The last section is the one loader of users' datasets (JSONL, JSON arrays, the
shipped `llmbar:SUBSET` and `summeval` sets) that `examiner judge`, `examiner meta` and `examiner
metric-stats` share. The data root is `$EXAMINER_DATA` when set (an override, e.g. a newer copy of the
sets), else the package's own `data` folder, which a wheel installs with the code.
"""

from __future__ import annotations

import csv
import gzip
import json
import logging
import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from examiner.core.labels import Preference, preference_from_text
from examiner.corpus import Corpus, corpus_from_texts, decode_text
from examiner.errors import UserError

log = logging.getLogger(__name__)

PACKAGE_DATA = Path(__file__).resolve().parent / "data"
"""The validation sets installed with the package (sources, commits and licences in its README.md)."""


def data_root() -> Path:
    """Folder holding the validation sets: `$EXAMINER_DATA` when set, else the package's own copy."""
    env = os.environ.get("EXAMINER_DATA")
    if env:
        root = Path(env).expanduser()
        if not root.is_dir():
            raise UserError(f"EXAMINER_DATA points to {root}, which is not a folder")
        return root
    if PACKAGE_DATA.is_dir():
        return PACKAGE_DATA
    raise UserError(f"validation data not found at {PACKAGE_DATA}: reinstall examiner, or set EXAMINER_DATA")


def _file(*parts: str, root: Path | None = None) -> Path:
    path = (root or data_root()).joinpath(*parts)
    if not path.exists():
        raise UserError(f"validation data file missing: {path}")
    return path


def _jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a shipped JSONL file, plain or gzip-compressed (`.jsonl.gz`)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# --- PubMedQA --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PubMedQAItem:
    """One expert-labelled PubMedQA question (PQA-L)."""

    pubid: str
    """PubMed id of the abstract."""
    question: str
    """The question (usually the article title)."""
    contexts: tuple[str, ...]
    """Abstract sections without the conclusion: the passages a model may read."""
    labels: tuple[str, ...]
    """Section label of each context (BACKGROUND, METHODS, RESULTS...)."""
    long_answer: str
    """The abstract's conclusion, which answers the question."""
    final_decision: str
    """yes / no / maybe."""
    year: str
    """Publication year."""
    meshes: tuple[str, ...]
    """MeSH terms."""
    in_test: bool
    """Whether the id belongs to the 500-question test split (test_ground_truth.json)."""


def load_pubmedqa(split: str = "all", root: Path | None = None) -> list[PubMedQAItem]:
    """The 1,000 expert-labelled questions (`split="test"`: the 500 test ids only), in file order."""
    raw = json.loads(_file("pubmedqa", "ori_pqal.json", root=root).read_text(encoding="utf-8"))
    test = pubmedqa_test_decisions(root)
    items = [
        PubMedQAItem(
            pubid=str(pid), question=r["QUESTION"], contexts=tuple(r["CONTEXTS"]), labels=tuple(r.get("LABELS", ())),
            long_answer=r["LONG_ANSWER"], final_decision=r["final_decision"], year=str(r.get("YEAR", "")),
            meshes=tuple(r.get("MESHES", ())), in_test=str(pid) in test,
        )
        for pid, r in raw.items()
    ]
    if split == "test":
        return [i for i in items if i.in_test]
    if split != "all":
        raise ValueError("split must be 'all' or 'test'")
    return items


def pubmedqa_test_decisions(root: Path | None = None) -> dict[str, str]:
    """pubid -> gold decision for the 500 test questions."""
    raw = json.loads(_file("pubmedqa", "test_ground_truth.json", root=root).read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in raw.items()}


def pubmedqa_corpus(items: Sequence[PubMedQAItem]) -> Corpus:
    """A corpus with one document per abstract (`pubmedqa/<pubid>`), one passage per context."""
    return corpus_from_texts((f"pubmedqa/{i.pubid}", "\n\n".join(i.contexts)) for i in items)


# --- WikiText-2 ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class WikiArticle:
    """One Wikipedia article of WikiText-2, detokenised."""

    title: str
    """Article title (from its ` = Title = ` heading)."""
    text: str
    """Paragraphs separated by blank lines; section headings removed (see `sections`)."""
    sections: tuple[str, ...]
    """Section and subsection titles in order."""


_TITLE = re.compile(r"^ = ([^=].*?) = $")
_SECTION = re.compile(r"^ (=(?: =)+) (.*?) \1 $")
_AT_TOKENS = ((" @-@ ", "-"), (" @,@ ", ","), (" @.@ ", "."))
_SPACED_PUNCT = ((" ,", ","), (" .", "."), (" ;", ";"), (" :", ":"), (" !", "!"), (" ?", "?"),
                 (" 's", "'s"), (" n't", "n't"), ("( ", "("), (" )", ")"), (" %", "%"))


def detokenize_wikitext(line: str, light: bool = True) -> str:
    """Undo WikiText's ` @-@ `, ` @,@ `, ` @.@ ` splitting; with `light`, also re-attach common punctuation
    (" , " -> ", "), which helps sentence splitting and embeddings. `<unk>` tokens are left as they are."""
    for a, b in _AT_TOKENS:
        line = line.replace(a, b)
    if light:
        for a, b in _SPACED_PUNCT:
            line = line.replace(a, b)
    return " ".join(line.split())


def load_wikitext2(split: str = "valid", root: Path | None = None, light_detokenize: bool = True) -> list[WikiArticle]:
    """Articles of WikiText-2 raw (`valid` or `test`), split at level-one ` = Title = ` headings."""
    if split not in ("valid", "test"):
        raise ValueError("split must be 'valid' or 'test'")
    articles: list[WikiArticle] = []
    title: str | None = None
    paragraphs: list[str] = []
    sections: list[str] = []

    def flush() -> None:
        if title is not None:
            articles.append(WikiArticle(title, "\n\n".join(paragraphs), tuple(sections)))

    with open(_file("wikitext2", f"{split}.txt", root=root), encoding="utf-8") as fh:
        for raw in fh:
            line = raw.rstrip("\n")
            if m := _TITLE.match(line):
                flush()
                title, paragraphs, sections = detokenize_wikitext(m.group(1), light_detokenize), [], []
            elif m := _SECTION.match(line):
                sections.append(detokenize_wikitext(m.group(2), light_detokenize))
            elif line.strip() and title is not None:
                paragraphs.append(detokenize_wikitext(line, light_detokenize))
    flush()
    return articles


def wikitext_corpus(articles: Sequence[WikiArticle]) -> Corpus:
    """A corpus with one document per article (`wikitext2/<title>`)."""
    return corpus_from_texts((f"wikitext2/{a.title}", a.text) for a in articles)


# --- LegalBench definitions ------------------------------------------------------------------------------

@dataclass(frozen=True)
class LegalDefinition:
    """A sentence from a US Supreme Court opinion, from LegalBench's definition tasks."""

    task: str
    """`definition_extraction` or `definition_classification`."""
    index: int
    """Row index in the task's train.tsv."""
    text: str
    """The sentence(s)."""
    term: str | None
    """The term defined (extraction task); None for the classification task."""
    is_definition: bool | None
    """Whether the text defines a term (classification task); None for the extraction task."""


def load_legalbench_definitions(root: Path | None = None) -> list[LegalDefinition]:
    """Rows of definition_extraction (term + text) then definition_classification (text + yes/no)."""
    out: list[LegalDefinition] = []
    for task in ("definition_extraction", "definition_classification"):
        with open(_file("legalbench", task, "train.tsv", root=root), encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                answer = row["answer"].strip()
                out.append(LegalDefinition(
                    task=task, index=int(row["index"]), text=row["text"].strip(),
                    term=answer if task == "definition_extraction" else None,
                    is_definition=(answer.lower() == "yes") if task == "definition_classification" else None,
                ))
    return out


# --- SummEval --------------------------------------------------------------------------------------------

SUMMEVAL_ASPECTS = ("coherence", "consistency", "fluency", "relevance")


@dataclass(frozen=True)
class SummEvalRow:
    """One system summary of one CNN/DM article with its mean expert scores."""

    doc_id: str
    """Article id (100 distinct)."""
    system_id: str
    """Summarisation system (16 distinct)."""
    source: str
    """The article text (tokenised)."""
    summary: str
    """The system's summary (`system_output` in the file)."""
    reference: str
    """The original highlight summary."""
    references: tuple[str, ...]
    """The 11 reference summaries (original + 10 crowd-written)."""
    scores: dict[str, float]
    """Mean expert score per aspect (coherence, consistency, fluency, relevance), 1-5."""


SUMMEVAL_FILE = "summeval_1600.jsonl.gz"
"""The SummEval rows, gzip-compressed (8.6 MB of JSONL, mostly the 100 articles repeated 16 times)."""


def load_summeval(root: Path | None = None) -> list[SummEvalRow]:
    """The 1,600 SummEval rows (100 documents x 16 systems), in file order."""
    return [
        SummEvalRow(
            doc_id=r["doc_id"], system_id=r["system_id"], source=r["source"], summary=r["system_output"],
            reference=r["reference"], references=tuple(r.get("references", ())),
            scores={k: float(v) for k, v in r["scores"].items()},
        )
        for r in _jsonl(_file("summeval", SUMMEVAL_FILE, root=root))
    ]


# --- LLMBar ----------------------------------------------------------------------------------------------

LLMBAR_SUBSETS = (
    "Natural", "Adversarial_Neighbor", "Adversarial_GPTInst", "Adversarial_GPTOut", "Adversarial_Manual",
    "Processed_MT-Bench_200", "Processed_FairEval", "Processed_LLMEval2",
)
"""File stems under llmbar/: LLMBar itself (Natural + four adversarial sets) and three processed sets."""


@dataclass(frozen=True)
class PairItem:
    """An instruction with two outputs and the gold preference."""

    subset: str
    """Which file it comes from (see LLMBAR_SUBSETS)."""
    index: int
    """Position in that file."""
    input: str
    """The instruction."""
    output_1: str
    """First response."""
    output_2: str
    """Second response."""
    label: int
    """1 or 2: the better response."""

    @property
    def id(self) -> str:
        """`<subset>/<index>`."""
        return f"{self.subset}/{self.index}"


def _llmbar_records(subsets: Sequence[str], root: Path | None = None) -> list[tuple[str, int, dict[str, Any]]]:
    """(subset, index, raw record) of the given subsets, in the order given."""
    unknown = [s for s in subsets if s not in LLMBAR_SUBSETS]
    if unknown:
        raise UserError(f"unknown LLMBar subset(s) {', '.join(unknown)}; known: {', '.join(LLMBAR_SUBSETS)}")
    return [(name, i, r) for name in subsets
            for i, r in enumerate(json.loads(_file("llmbar", f"{name}.json", root=root).read_text(encoding="utf-8")))]


def load_llmbar(subsets: Sequence[str] | None = None, root: Path | None = None) -> list[PairItem]:
    """Pairs of the given subsets (all of them by default), subset by subset in LLMBAR_SUBSETS order."""
    names = list(subsets) if subsets is not None else list(LLMBAR_SUBSETS)
    return [PairItem(name, i, r["input"], r["output_1"], r["output_2"], int(r["label"]))
            for name, i, r in _llmbar_records(names, root)]


# --- MT-bench --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MTBenchQuestion:
    """A two-turn MT-bench question, with GPT-4's reference answer where the set has one."""

    question_id: int
    """81..160."""
    category: str
    """writing, roleplay, reasoning, math, coding, extraction, stem, humanities."""
    turns: tuple[str, ...]
    """The user's two turns."""
    reference: tuple[str, ...] | None
    """GPT-4 reference answer per turn (math, reasoning, coding: 30 questions), else None."""


def load_mt_bench(root: Path | None = None) -> list[MTBenchQuestion]:
    """The 80 MT-bench questions in file order, joined with the GPT-4 reference answers."""
    refs = {
        int(r["question_id"]): tuple(r["choices"][0]["turns"])
        for r in _jsonl(_file("mt_bench", "reference_answer_gpt-4.jsonl", root=root))
    }
    return [
        MTBenchQuestion(int(q["question_id"]), q["category"], tuple(q["turns"]), refs.get(int(q["question_id"])))
        for q in _jsonl(_file("mt_bench", "question.jsonl", root=root))
    ]


# --- Datasets given to `examiner judge` and `examiner meta` ----------------------------------------------
# One loader and one bad-row policy for every method that reads a user's dataset: a record that cannot
# be used (broken JSON, not an object, a missing or malformed field, a repeated id) is named by where
# it is (JSONL line, JSON array index, LLMBar subset/index), skipped and counted; the run goes on with
# the others and says how many it skipped. Only a file that cannot be read at all is an error.

T = TypeVar("T")


@dataclass(frozen=True)
class SourceRecord:
    """One record of a dataset and where it came from."""

    data: Any
    """The parsed JSON value (usually an object; anything else is skipped by `load_dataset`)."""
    place: str
    """How messages name it: `row 7` (JSONL line), `record 3` (JSON array index), `Natural/3` (LLMBar)."""
    line: int
    """The JSONL line number, or the 1-based position in a JSON array or LLMBar subset."""
    source: str
    """The file's stem, or the LLMBar subset."""
    index: int
    """0-based position within its source."""
    broken: str = ""
    """Why the record could not even be parsed (a JSONL line that is not JSON); empty when it was."""


@dataclass(frozen=True)
class FieldMap:
    """Which JSON key holds each input of a record (the --*-field flags of `examiner judge` and
    `examiner meta`). The defaults are `examiner judge`'s; LLMBAR_FIELDS are `examiner meta`'s."""

    id: str = "id"
    instruction: str = "instruction"
    output: str = "output"
    """The single response (meta-evaluation: the text an individual item scores)."""
    output_1: str = "output_1"
    output_2: str = "output_2"
    reference: str = "reference"
    label: str = "label"
    """Gold preference 1 / 2 / 0 (tie), or another spelling of it."""
    human: str = "human_score"
    """Gold human score (meta-evaluation: an individual item's gold score)."""
    source: str = "source"
    group: str = "group"
    system: str = "system"


LLMBAR_FIELDS = FieldMap(instruction="input", output="text", human="score")
"""The keys of LLMBar's files (and `examiner meta`'s defaults)."""


@dataclass(frozen=True)
class Skipped:
    """A record that could not be used, with the offending field and a message naming both."""

    line: int
    field: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "field": self.field, "message": self.message}


class RowError(Exception):
    """Why one record cannot be used; `field` names the offending key ("-" for the record as a whole)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


SHIPPED_JSONL = {"summeval": ("summeval", SUMMEVAL_FILE)}
"""Built-in dataset names (besides `llmbar:SUBSET`) and the shipped JSONL file each stands for."""


def read_records(spec: str, what: str = "dataset") -> list[SourceRecord]:
    """Every record of `llmbar:SUBSET[,SUBSET]`, a shipped set (`summeval`), a .json array file or a JSONL
    file, in order (a JSONL line that is not JSON comes back `broken`). UserError only when the file as a
    whole is unusable."""
    if spec.startswith("llmbar:"):
        names = [s for s in spec.removeprefix("llmbar:").split(",") if s]
        return [SourceRecord(r, f"{name}/{i}", i + 1, name, i) for name, i, r in _llmbar_records(names)]
    if spec in SHIPPED_JSONL:
        with gzip.open(_file(*SHIPPED_JSONL[spec]), "rt", encoding="utf-8") as fh:
            return _jsonl_source_records(fh.read(), spec)
    path = Path(spec)
    if not path.is_file():
        raise UserError(f"{what} {path} does not exist (or use llmbar:SUBSET or {', '.join(SHIPPED_JSONL)})")
    text = _dataset_text(path, what)
    if path.suffix == ".json":
        values, problem = _parse_json(text, outer=1)  # the array holding the records
        if problem:
            raise UserError(f"{path} is not valid JSON: {problem}")
        if not isinstance(values, list):
            raise UserError(f"{path} must hold a JSON array of records")
        return [SourceRecord(v, f"record {i}", i + 1, path.stem, i) for i, v in enumerate(values)]
    return _jsonl_source_records(text, path.stem)


def _jsonl_source_records(text: str, source: str) -> list[SourceRecord]:
    """One record per non-blank JSONL line; a line that is not JSON comes back `broken`."""
    records: list[SourceRecord] = []
    for line_no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        data, broken = _parse_json(line)
        records.append(SourceRecord(data, f"row {line_no}", line_no, source, len(records), broken))
    return records


def _parse_json(text: str, outer: int = 0) -> tuple[Any, str]:
    """(value, "") or (None, why not) under the corpus reader's JSON limits: a record nested deeper than
    `--max-nesting-depth` is refused before Python's recursive parser meets it (`outer`: levels holding
    the records, 1 for a .json array)."""
    from examiner.corpus import parse_json, reading_limits

    data, problem = parse_json(text, reading_limits().max_nesting_depth, outer)
    return data, problem.replace("invalid JSON (", "not valid JSON (").replace(" (--max-nesting-depth)", "")


def _dataset_text(path: Path, what: str) -> str:
    """A dataset file's text under the corpus reader's decoding policy: a binary file is refused with one
    line; text that is not UTF-8 (e.g. Latin-1) is read in its detected encoding, named in one warning."""
    try:
        decoded = decode_text(path.read_bytes())
    except OSError as exc:
        raise UserError(f"{what} {path} cannot be read ({exc.strerror or type(exc).__name__})") from None
    if decoded.text is None:
        raise UserError(f"{what} {path} is a {decoded.binary}, not JSON or JSONL text")
    if decoded.encoding:
        log.warning("%s %s is not valid UTF-8: read as %s (detected)", what, path, decoded.encoding)
    return decoded.text


def load_dataset(spec: str, make: Callable[[SourceRecord], T], row_id: Callable[[T], str], *, id_field: str = "id",
                 limit: int | None = None, what: str = "dataset") -> tuple[list[T], list[Skipped]]:
    """Usable rows (`make` of each record) and the skipped records, in file order.

    `make` raises RowError for a record it cannot use; a row whose id repeats an earlier one is skipped
    too. `limit` keeps the first N records of the file, usable or not."""
    rows: list[T] = []
    skipped: list[Skipped] = []
    seen: set[str] = set()
    for record in read_records(spec, what):
        if limit is not None and len(rows) + len(skipped) >= limit:
            break
        try:
            if record.broken:
                raise RowError("-", record.broken)
            if not isinstance(record.data, dict):
                raise RowError("-", "expected a JSON object")
            row = make(record)
        except RowError as exc:
            skipped.append(Skipped(record.line, exc.field, f"{record.place}: {exc}"))
            continue
        key = row_id(row)
        if key in seen:
            skipped.append(Skipped(record.line, id_field, f"{record.place}: duplicate id '{key}' in field '{id_field}'"))
            continue
        seen.add(key)
        rows.append(row)
    return rows, skipped


def field_text(obj: dict[str, Any], key: str, *, required: bool, allow_empty: bool = False) -> str | None:
    """The text under `key`; None when absent (or blank, unless `allow_empty`) and not required.

    RowError when a required field is missing or blank, or when the value is not text."""
    if key not in obj or obj[key] is None:
        if required:
            raise RowError(key, f"missing field '{key}'")
        return None
    value = obj[key]
    if not isinstance(value, str):
        raise RowError(key, f"field '{key}' must be text, got {type(value).__name__}")
    if not value.strip() and not allow_empty:
        if required:
            raise RowError(key, f"field '{key}' is empty")
        return None
    return value


def parse_preference(value: Any, key: str) -> Preference:
    """A gold (or imported) preference: 1, 2 or 0 (tie), or another input spelling of them; RowError otherwise."""
    try:
        return preference_from_text(value)
    except ValueError:
        raise RowError(key, f"field '{key}' must be 0, 1 or 2, got {value!r}") from None


def parse_number(value: Any, key: str, bounds: tuple[float, float] | None = None) -> float:
    """A finite number, within `bounds` when given; RowError otherwise."""
    if isinstance(value, bool):
        raise RowError(key, f"field '{key}' must be a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise RowError(key, f"field '{key}' must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise RowError(key, f"field '{key}' must be a finite number, got {value!r}")
    if bounds is not None and not bounds[0] <= number <= bounds[1]:
        raise RowError(key, f"field '{key}' = {number:g} is outside {bounds[0]:g}-{bounds[1]:g}")
    return number
