"""Which exam options each way of sitting an exam honours: an option a mode cannot honour is refused in
one line before anything is created, never ignored.

Two things decide it: the exam mode (`--mode`: refeval, top, noref) and whether the targets sit an
earlier run's paper (`--paper`). A paper fixes the units, questions, rounds and clusters, so every option
that shapes them is the paper's; the corpus is not read again, so options about reading it do nothing
either. The top baseline asks every unit alone in one pass, so it has no clusters, rounds or probes.

Each rule names the option as the command line spells it and the value that means "not asked for"
(None, or the flag's default), so a value from the configuration file is never mistaken for a flag.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from examiner.core.errors import UserError


@dataclass(frozen=True)
class Unhonoured:
    """An option one way of sitting cannot honour, and why."""

    field: str
    """The option's name in examiner.api.exam.CorpusOptions / ExamOptions."""
    flag: str
    """How the command line spells it."""
    unset: Any
    """The value that means the option was not given."""
    why: str


PAPER_FIXES = "a paper sitting asks the earlier run's questions on its units"
PAPER_READS_NOTHING = "a paper sitting reads no corpus (its units and passages come from the earlier run)"

UNHONOURED_BY_PAPER = (
    Unhonoured("mode", "--mode", "refeval", PAPER_FIXES + ", in that run's mode"),
    Unhonoured("units", "--units", None, PAPER_FIXES),
    Unhonoured("cluster_size", "--cluster-size", None, PAPER_FIXES + " in its clusters"),
    Unhonoured("max_rounds", "--max-rounds", None, PAPER_FIXES + " in its rounds"),
    Unhonoured("max_probes", "--max-probes", None, PAPER_FIXES + ", its probes included"),
    Unhonoured("prepare_engine", "--prepare-engine", None, PAPER_READS_NOTHING),
    Unhonoured("ray_address", "--ray-address", None, PAPER_READS_NOTHING),
    Unhonoured("jsonl_field", "--jsonl-field", "text", PAPER_READS_NOTHING),
    Unhonoured("max_corpus_mb", "--max-corpus-mb", None, PAPER_READS_NOTHING),
    Unhonoured("follow_links", "--follow-links", None, PAPER_READS_NOTHING),
    Unhonoured("max_document_mb", "--max-document-mb", None, PAPER_READS_NOTHING),
    Unhonoured("max_document_text_mb", "--max-document-text-mb", None, PAPER_READS_NOTHING),
    Unhonoured("max_document_pages", "--max-document-pages", None, PAPER_READS_NOTHING),
    Unhonoured("max_document_seconds", "--max-document-seconds", None, PAPER_READS_NOTHING),
    Unhonoured("max_nesting_depth", "--max-nesting-depth", None, PAPER_READS_NOTHING),
    Unhonoured("embedding_cache", "--embedding-cache", None, "a paper sitting embeds nothing (it makes no clusters)"),
    Unhonoured("question_gate", "--question-gate", None, PAPER_FIXES + " as they were written"),
    Unhonoured("gate_drop_guessable", "--gate-drop-guessable", None, PAPER_FIXES + " as they were written"),
    Unhonoured("control_share", "--control-share", None, PAPER_FIXES + ", and it holds no control questions"),
    Unhonoured("stop_when", "--stop-when", None, PAPER_FIXES + ": every one of them, in its rounds, not a sample "
               "drawn until a rule is met"),
)
"""What `--paper` cannot honour."""

HONOURED_BY_PAPER = frozenset({
    "corpus", "roles", "targets", "judges", "judge_mode", "judge_cascade", "target_agreement", "cascade_risk",
    "cascade_confidence", "seed", "language", "allow_simulated_roles", "simulate", "budget_usd", "cache_dir",
    "quiet", "out", "paper", "paper_target", "paraphrases", "paraphrase_share",
})
"""What a paper sitting honours: the targets, the judges (a panel, a judge mode, a cascade), the seed (its
self-check sample), the language (default: the paper's) and every budget, cache and output option. The
corpus PATH is required by the command line and checked to exist, but the paper's units are used."""

TOP_ASKS_ALONE = "the top baseline asks every unit alone, in one pass"

UNHONOURED_BY_MODE: Mapping[str, tuple[Unhonoured, ...]] = {
    "top": (
        Unhonoured("cluster_size", "--cluster-size", None, TOP_ASKS_ALONE + " (no clusters)"),
        Unhonoured("max_rounds", "--max-rounds", None, TOP_ASKS_ALONE),
        Unhonoured("max_probes", "--max-probes", None, TOP_ASKS_ALONE + ", without probes"),
        Unhonoured("paraphrases", "--paraphrases", None,
                   TOP_ASKS_ALONE + ": one unit gives no spread between wordings of a question"),
    ),
    "noref": (
        Unhonoured("paraphrases", "--paraphrases", None,
                   "the no-reference judge marks no units, and the wording check compares units across wordings"),
        Unhonoured("control_share", "--control-share", None,
                   "the no-reference judge reads no units, and a control's premise is judged against them"),
    ),
}
"""What each exam mode cannot honour (refeval honours every exam option)."""


def unhonoured(options: Any, *, paper: bool) -> list[str]:
    """One phrase per option given that this way of sitting would ignore: `--flag VALUE (why)`."""
    rules = UNHONOURED_BY_PAPER if paper else UNHONOURED_BY_MODE.get(str(getattr(options, "mode", "")), ())
    refused = []
    for rule in rules:
        value = getattr(options, rule.field, rule.unset)
        if value != rule.unset:
            shown = "" if isinstance(value, bool) else f" {value}"
            refused.append(f"{rule.flag}{shown} ({rule.why})")
    return refused


def check_options_fit(options: Any) -> None:
    """Refuse, in one line, the options the exam these options ask for would not honour."""
    paper = bool(getattr(options, "paper", None))
    refused = unhonoured(options, paper=paper)
    if refused:
        how = "with --paper" if paper else f"with --mode {getattr(options, 'mode', '')}"
        raise UserError(f"{how}, these options would be ignored, so they are refused: {'; '.join(refused)}")


__all__ = ["HONOURED_BY_PAPER", "UNHONOURED_BY_MODE", "UNHONOURED_BY_PAPER", "Unhonoured", "check_options_fit", "unhonoured"]
