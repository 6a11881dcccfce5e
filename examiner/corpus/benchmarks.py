"""Loaders for the public validation sets (LLMBar, MT-bench, PubMedQA, WikiText-2, LegalBench, SummEval).

Each loader reads one set's real files into small frozen records, so experiments and tests do not parse
raw JSON themselves; the loader of users' datasets is examiner/corpus/datasets.py. No set ships with the
package: the files lie in the data folder (`$EXAMINER_DATA` when set, else the user's cache folder), where
`examiner data pull NAME` puts them, pinned and hash-checked (examiner/corpus/public_sets.py, docs/DATA.md).
A loader of a set that is not there raises a one-line UserError naming that command. Every loader takes
`root` to read another folder laid out the same way.
"""

from __future__ import annotations

import csv
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from examiner.corpus.public_sets import data_root as data_root  # re-exported: the folder the loaders read
from examiner.corpus.public_sets import set_file
from examiner.corpus.reading import Corpus, corpus_from_texts
from examiner.core.errors import UserError

log = logging.getLogger(__name__)

def data_file(*parts: str, root: Path | None = None) -> Path:
    """`root/parts...` (the data folder by default) of a set's file; the first part names the set. A file
    that is not there is a UserError saying how to pull its set."""
    return set_file(*parts, root=root)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSONL file."""
    with open(path, encoding="utf-8") as fh:
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
    raw = json.loads(data_file("pubmedqa", "ori_pqal.json", root=root).read_text(encoding="utf-8"))
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
    raw = json.loads(data_file("pubmedqa", "test_ground_truth.json", root=root).read_text(encoding="utf-8"))
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

    with open(data_file("wikitext2", f"{split}.txt", root=root), encoding="utf-8") as fh:
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
        with open(data_file("legalbench", task, "train.tsv", root=root), encoding="utf-8", newline="") as fh:
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


SUMMEVAL_FILE = "summeval_1600.jsonl"
"""The SummEval rows as JSONL (8.6 MB, mostly the 100 articles repeated 16 times), converted from the
upstream pickle by `examiner data pull summeval` (examiner/corpus/summeval_source.py)."""


def load_summeval(root: Path | None = None) -> list[SummEvalRow]:
    """The 1,600 SummEval rows (100 documents x 16 systems), in file order."""
    return [
        SummEvalRow(
            doc_id=r["doc_id"], system_id=r["system_id"], source=r["source"], summary=r["system_output"],
            reference=r["reference"], references=tuple(r.get("references", ())),
            scores={k: float(v) for k, v in r["scores"].items()},
        )
        for r in _jsonl(data_file("summeval", SUMMEVAL_FILE, root=root))
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


def llmbar_records(subsets: Sequence[str], root: Path | None = None) -> list[tuple[str, int, dict[str, Any]]]:
    """(subset, index, raw record) of the given subsets, in the order given."""
    unknown = [s for s in subsets if s not in LLMBAR_SUBSETS]
    if unknown:
        raise UserError(f"unknown LLMBar subset(s) {', '.join(unknown)}; known: {', '.join(LLMBAR_SUBSETS)}")
    return [(name, i, r) for name in subsets
            for i, r in enumerate(json.loads(data_file("llmbar", f"{name}.json", root=root).read_text(encoding="utf-8")))]


def load_llmbar(subsets: Sequence[str] | None = None, root: Path | None = None) -> list[PairItem]:
    """Pairs of the given subsets (all of them by default), subset by subset in LLMBAR_SUBSETS order."""
    names = list(subsets) if subsets is not None else list(LLMBAR_SUBSETS)
    return [PairItem(name, i, r["input"], r["output_1"], r["output_2"], int(r["label"]))
            for name, i, r in llmbar_records(names, root)]


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
        for r in _jsonl(data_file("mt_bench", "reference_answer_gpt-4.jsonl", root=root))
    }
    return [
        MTBenchQuestion(int(q["question_id"]), q["category"], tuple(q["turns"]), refs.get(int(q["question_id"])))
        for q in _jsonl(data_file("mt_bench", "question.jsonl", root=root))
    ]
