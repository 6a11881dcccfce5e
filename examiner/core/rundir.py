"""The run directory: the name of every file a run writes, and typed readers and writers for them.

Why one owner: the exam writes a run directory, and the reports, the provenance graph, `examiner cost`
and `examiner meta --exam` read it back; judge and meta runs write theirs. Spelling a file name in one
place keeps writers and readers in step, and reading every JSONL file through core/jsonl.py gives every
reader the same policy (a torn last line is tolerated and counted, damage elsewhere is a one-line
error naming file and line).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from examiner.core.cascade_records import CASCADE, CascadeRecord
from examiner.core.control_records import CONTROLS, ControlRecord
from examiner.core.jsonl import (CorruptRunFile, Span, append_jsonl, iter_jsonl, iter_jsonl_spans, read_jsonl,
                                 read_models, repair_tail)
from examiner.core.ledger_record import LedgerRecord
from examiner.core.overrides import OverrideRecord, latest
from examiner.core.records import (
    AnswerRecord,
    ClusterRound,
    QuestionRecord,
    RunInfo,
    SelfCheckRecord,
    UnitOutcome,
    UnitRecord,
    VerdictRecord,
    WordingRecord,
    record_key,
)
from examiner.core.redact import redact_data, redact_text
from examiner.core.errors import UserError, disk_full
from examiner.core.full_disk import overwrite_in_place
from examiner.core.owned import FOLDER_MARK

M = TypeVar("M", bound=BaseModel)

# --- every file name a run directory holds -------------------------------------------------------------

RUN_INFO = "run.json"
"""RunInfo: status, rounds, counters (rewritten atomically)."""
REQUEST = "request.json"
"""The exam request (corpus paths, targets, mode), for resuming."""
CONFIG = "config.yaml"
"""The settings the run used."""
UNITS = "units.jsonl"
PASSAGES = "passages.jsonl"
"""The corpus passages as the exam read them (id, document, start, end, text)."""
QUESTIONS = "questions.jsonl"
ANSWERS = "answers.jsonl"
VERDICTS = "verdicts.jsonl"
OUTCOMES = "outcomes.jsonl"
SELF_CHECK = "self_check.jsonl"
"""The judge self-check: sampled answers judged a second time, units in another order."""
REWORDING = "rewording.jsonl"
"""The wording check: a seeded share of round-1 questions in other wordings, answered and judged."""
CLUSTERS = "clusters"
"""Folder: clusters/<target>/round-N.json."""
LEDGER = "ledger.jsonl"
"""One line per model call: tokens, dollars, cache hits (written by the gateway)."""
CACHE = "cache.sqlite"
CHECKPOINTS = "checkpoints.sqlite"
"""LangGraph's checkpointer: where a killed exam resumes from (small: keys into STATE, not the values)."""
STATE = "state.sqlite"
"""The exam graph's bulk state (pools, coverage, clusters, work lists): immutable values under the keys
its checkpoints hold (examiner/exam/statestore.py)."""
EMBEDDINGS = "embeddings.sqlite"
LOCK = "run.lock"
"""Held (fcntl.flock) by the one process writing the run; holds that process's pid and start time."""
REPORT_JSON = "report.json"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
FIGURES = "figures"
PROVENANCE = "provenance.graphml"
PILOT = "pilot.json"
"""Estimate pilots: the sample of units the pilot examined (ids, clusters)."""
ESTIMATE = "estimate.json"
"""Estimate pilots: the extrapolated figures with their ranges."""
JUDGMENTS = "judgments.jsonl"
"""Judge runs: one line per judgment; meta runs: one line per meta-judgment."""
ASSESSMENTS = "assessments.jsonl"
DEBATES = "debates.jsonl"
INDIVIDUAL = "individual.jsonl"
OVERRIDES = "overrides.jsonl"
"""Exam runs: people's corrections of verdicts (core/overrides.py), appended by `examiner view`; the
latest row per (question, unit) wins and verdicts.jsonl never changes."""
HUMAN_SAMPLE = "human_sample.jsonl"
"""Exam runs: a random sample of verdicts drawn for people to label, then their labels (core/human_sample.py);
kept apart from overrides.jsonl, which holds corrections chosen while browsing."""
BATCHES = "batches.json"
"""Provider batches submitted for the run (id, endpoint, the request keys in it), saved before the first
status check (rewritten atomically), so a killed run waits on the same batches instead of paying again."""
LOG = "examiner.log"
"""The full traceback of an unexpected error (the terminal gets one line), credentials redacted."""

EXAM_OUTPUTS = frozenset({
    RUN_INFO, REQUEST, CONFIG, UNITS, PASSAGES, QUESTIONS, ANSWERS, VERDICTS, OUTCOMES, SELF_CHECK, CLUSTERS,
    LEDGER, CACHE, CHECKPOINTS, STATE, EMBEDDINGS, LOCK, REPORT_JSON, REPORT_MD, REPORT_HTML, FIGURES, PROVENANCE,
    PILOT, ESTIMATE, OVERRIDES, HUMAN_SAMPLE, BATCHES, LOG, FOLDER_MARK,
})
"""Every name an exam run writes into its folder: what a restart or `demo` may remove, and nothing else."""
_OUTPUT_SUFFIXES = ("", ".tmp", "-wal", "-shm", "-journal", ".damaged", ".damaged-wal", ".damaged-shm")


def exam_output(name: str) -> bool:
    """Whether a name in a run folder is one an exam run writes (its SQLite and temporary companions too)."""
    return any(name == base + suffix for base in EXAM_OUTPUTS for suffix in _OUTPUT_SUFFIXES)


def foreign_entries(folder: Path) -> list[str]:
    """Names in `folder` that no exam run writes (a user's own files), sorted."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if not exam_output(p.name))


def remove_exam_outputs(folder: Path) -> list[str]:
    """Remove what an exam run wrote into `folder` (only names in EXAM_OUTPUTS; the lock file stays, as
    its holder may be this process, and so does examiner's marker); returns the names removed."""
    import shutil

    removed = []
    for entry in sorted(folder.iterdir()):
        if entry.name in (LOCK, FOLDER_MARK) or not exam_output(entry.name):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
        removed.append(entry.name)
    return removed

class _PassageSpan(TypedDict):
    id: str
    document: str
    """The document's id."""
    start: int
    end: int
    """`document text[start:end] == text`."""
    text: str


class PassageRow(_PassageSpan, total=False):
    """One line of passages.jsonl: a corpus passage as the exam read it (what reports, `examiner view` and
    the provenance trace show next to a source). `page` and `language` are there only when known."""

    page: int
    """From 1 (.pdf and .docx: the page; .pptx: the slide)."""
    language: str
    """The document's language code."""


RECORD_FILES: dict[type[BaseModel], str] = {
    UnitRecord: UNITS,
    QuestionRecord: QUESTIONS,
    AnswerRecord: ANSWERS,
    VerdictRecord: VERDICTS,
    UnitOutcome: OUTCOMES,
    SelfCheckRecord: SELF_CHECK,
    WordingRecord: REWORDING,
    CascadeRecord: CASCADE,
    ControlRecord: CONTROLS,
}
"""The exam's record types and the append-only file each lives in."""


class SubmittedBatch(BaseModel):
    """One provider batch of a run: what examiner needs to collect its results after a kill."""

    id: str
    """The provider's batch id."""
    endpoint: str
    """The endpoint name (in the run's settings) the batch was submitted to."""
    input_file_id: str
    custom_ids: list[str]
    """The request keys (the response cache's keys) of the calls in the batch, one per input line."""
    created: float
    """When it was submitted (Unix seconds)."""


def report_paths(folder: Path, stem: str = "") -> dict[str, Path]:
    """{"json", "md", "html"} -> the report files of a run (a stem prefixes them, e.g. `stats-`)."""
    return {"json": folder / f"{stem}{REPORT_JSON}", "md": folder / f"{stem}{REPORT_MD}",
            "html": folder / f"{stem}{REPORT_HTML}"}


def safe_name(name: str) -> str:
    """A target name usable as a folder name."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


@dataclass
class RunRecords:
    """Everything an exam run directory holds, read once: each record type by id (the last write winning),
    the clusterings, the ledger rows and the passages. What the reports and the provenance graph start from.
    """

    path: Path
    info: RunInfo
    config: dict[str, Any]
    units: dict[str, UnitRecord]
    clusters: dict[str, list[ClusterRound]]
    """Per target, the rounds' clusterings in round order."""
    questions: dict[str, QuestionRecord]
    answers: dict[str, AnswerRecord]
    verdicts: dict[str, VerdictRecord]
    outcome_records: dict[str, UnitOutcome]
    """outcomes.jsonl as written (empty when the run stopped before writing it)."""
    ledger: list[LedgerRecord]
    passages: dict[str, PassageRow]
    """passages.jsonl by id: the passages as the exam read them (empty for runs that predate it)."""
    overrides: dict[tuple[str, str], OverrideRecord]
    """People's corrections in force, by (question id, unit id) (overrides.jsonl; empty when none)."""
    unreadable_lines: dict[str, int]
    """Per file name, the torn last lines met while reading (a killed writer's last record)."""
    self_checks: dict[str, SelfCheckRecord] = field(default_factory=dict)
    """self_check.jsonl by id: the judge's second marking of sampled answers (empty when none)."""


class RunDir:
    """One run directory on disk: paths by role, and records read under the one JSONL policy.

    `torn` counts, per file name, the torn last lines the reads met (a killed writer's last record;
    the run that resumes redoes it). Reading never creates the folder; writing does.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.torn: dict[str, int] = {}

    def file(self, name: str) -> Path:
        return self.path / name

    def record_file(self, model: type[BaseModel]) -> Path:
        return self.path / RECORD_FILES[model]

    # --- exam records ------------------------------------------------------------------------------

    def read(self) -> RunRecords:
        """The whole run; UserError (one line for the CLI) when it is not a run directory or a file is damaged."""
        if not self.path.is_dir():
            raise UserError(f"run directory not found: {self.path}")
        # Read in this order so that `unreadable_lines` lists the files as they come in the run.
        info, config, units = self.read_info(), self.read_config(), self.records(UnitRecord)
        questions, answers = self.records(QuestionRecord), self.records(AnswerRecord)
        verdicts, outcomes = self.records(VerdictRecord), self.records(UnitOutcome)
        self_checks = self.records(SelfCheckRecord)
        return RunRecords(
            path=self.path, info=info, config=config, units=units, clusters=self.read_clusters(),
            questions=questions, answers=answers, verdicts=verdicts, outcome_records=outcomes,
            ledger=self.ledger_records(), passages=self.read_passages(), overrides=self.current_overrides(),
            unreadable_lines=self.torn, self_checks=self_checks,
        )

    def records(self, model: type[M]) -> dict[str, M]:
        """Every record of an exam record type by id, the last write winning (missing file: empty)."""
        return read_models(self.record_file(model), model, record_key, self.torn)

    def iter_records(self, model: type[M]) -> Iterator[M]:
        """The records of one type in the order written, one at a time (a record rewritten later comes
        again: the last one wins); for readers that look for a few records in a large run."""
        return iter_jsonl(self.record_file(model), model.model_validate_json, self._torn_counter(model))

    def _torn_counter(self, model: type[BaseModel]) -> Callable[[], None]:
        """What a reader calls when the file of `model` records ends in a torn line: counted in `torn`."""

        def torn() -> None:
            name = RECORD_FILES[model]
            self.torn[name] = self.torn.get(name, 0) + 1

        return torn

    def iter_passages(self) -> Iterator[PassageRow]:
        """passages.jsonl rows one at a time (nothing when absent)."""
        return iter_jsonl(self.file(PASSAGES))

    def require_records(self, model: type[M]) -> dict[str, M]:
        """As `records`, but a missing file is a UserError (for readers that need a finished exam)."""
        if not self.record_file(model).is_file():
            raise UserError(f"{self.path} lacks {RECORD_FILES[model]} (is it an exam run directory?)")
        return self.records(model)

    def append_records(self, model: type[BaseModel], records: Iterable[BaseModel], *, repair: bool) -> list[Span]:
        """Append records of one type; `repair` first cuts off a torn tail (once per file and writer).
        Returns where each record's line lies in the file (offset, length), one per record."""
        return self.append_lines(model, [record.model_dump_json() for record in records], repair=repair)

    def append_lines(self, model: type[BaseModel], lines: Iterable[str], *, repair: bool) -> list[Span]:
        """`append_records` of records already serialised (each `model_dump_json()`, no newline)."""
        path = self.record_file(model)
        self.path.mkdir(parents=True, exist_ok=True)
        if repair:
            repair_tail(path)
        return append_jsonl(path, lines)

    def record_spans(self, model: type[M]) -> Iterator[tuple[str, Span]]:
        """(id, span of its line) of every record of a type in the order written (a rewritten id comes
        again: the last one wins), the records checked as `records` checks them."""
        spans = iter_jsonl_spans(self.record_file(model), model.model_validate_json, self._torn_counter(model))
        for record, span in spans:
            yield record_key(record), span

    # --- run.json, request.json, config.yaml ---------------------------------------------------------------------

    def read_info(self) -> RunInfo:
        """run.json; a missing or invalid one is a one-line UserError."""
        file = self.file(RUN_INFO)
        if not file.is_file():
            raise UserError(f"not a run directory (no {RUN_INFO}): {self.path}")
        try:
            return RunInfo.model_validate_json(file.read_text(encoding="utf-8"))
        except (ValidationError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0]
            raise UserError(f"invalid {RUN_INFO} in {self.path}: {first}") from None

    def write_info(self, info: RunInfo) -> None:
        """Replace run.json atomically (a kill mid-write leaves the previous one). On a full disk, where
        that cannot be done, the status is written over the old file in place (examiner.core.full_disk),
        so a run the full disk stopped says `failed`, not `running` (its stop reason cut to "disk full" when
        the whole one does not fit); only when that fails too is the disk-full error raised."""
        self.path.mkdir(parents=True, exist_ok=True)
        path = self.file(RUN_INFO)
        try:
            _write_atomic(path, redact_text(info.model_dump_json(indent=1)))
        except OSError as exc:
            if disk_full(exc) is None:
                raise
            short = info.model_copy(update={"stop_reason": "disk full"}) if info.stop_reason else info
            if not any(overwrite_in_place(path, redact_text(fit.model_dump_json()).encode()) for fit in (info, short)):
                raise

    def write_config(self, data: Mapping[str, object]) -> None:
        """Replace config.yaml atomically (a resume that raises the budget rewrites it while another
        process may be reading it to learn that the run is in use)."""
        self.path.mkdir(parents=True, exist_ok=True)
        _write_atomic(self.file(CONFIG), yaml.safe_dump(redact_data(data), sort_keys=False))

    def write_request(self, request: Mapping[str, object], config: Mapping[str, object]) -> None:
        """request.json (what was asked) and config.yaml (the settings used): what a resume starts from."""
        self.path.mkdir(parents=True, exist_ok=True)
        self.file(REQUEST).write_text(json.dumps(redact_data(request), indent=1), encoding="utf-8")
        self.write_config(config)

    def read_config(self) -> dict[str, Any]:
        """config.yaml as a mapping ({} when absent); invalid YAML is a one-line UserError."""
        file = self.file(CONFIG)
        if not file.is_file():
            return {}
        try:
            return yaml.safe_load(file.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise UserError(f"{file}: not valid YAML ({str(exc).splitlines()[0]})") from None

    # --- clusters ------------------------------------------------------------------------------------

    def write_clusters(self, clusters: ClusterRound) -> Path:
        folder = self.file(CLUSTERS) / safe_name(clusters.target)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"round-{clusters.round}.json"
        _write_atomic(path, clusters.model_dump_json(indent=1))
        return path

    def read_clusters(self) -> dict[str, list[ClusterRound]]:
        """Per target, the rounds' clusterings in round order (also the flat clusters/round-N.json layout).

        A clustering file is replaced whole and atomically, so one that does not parse is damage: a
        CorruptRunFile naming it.
        """
        result: dict[str, dict[int, ClusterRound]] = defaultdict(dict)
        root = self.file(CLUSTERS)
        if not root.is_dir():
            return {}
        for file in sorted(root.rglob("round-*.json")):
            try:
                rnd = ClusterRound.model_validate_json(file.read_text(encoding="utf-8"))
            except (ValidationError, ValueError) as exc:
                raise CorruptRunFile(f"{file}: not a valid clustering ({str(exc).strip().splitlines()[0]})") from None
            result[rnd.target][rnd.round] = rnd
        return {t: [rounds[r] for r in sorted(rounds)] for t, rounds in result.items()}

    # --- ledger ---------------------------------------------------------------------------------------

    def read_ledger(self) -> list[dict[str, Any]]:
        """ledger.jsonl's lines as written, plain JSON objects in call order ([] when absent; for checks of
        the file itself: readers take `ledger_records`); a torn last line is counted in `torn`."""
        return self._rows(LEDGER)

    def ledger_records(self) -> list[LedgerRecord]:
        """ledger.jsonl's records, typed, in call order ([] when absent); a torn last line is counted in
        `torn`, a damaged one is a CorruptRunFile naming it."""
        read = read_jsonl(self.file(LEDGER), LedgerRecord.model_validate_json)
        if read.torn_tail:
            self.torn[LEDGER] = self.torn.get(LEDGER, 0) + 1
        return read.rows

    # --- provider batches ----------------------------------------------------------------------------

    def read_batches(self) -> list[SubmittedBatch]:
        """batches.json ([] when absent); a damaged one is a CorruptRunFile naming it (it is replaced
        whole and atomically, so a parse failure is damage, not a kill)."""
        file = self.file(BATCHES)
        if not file.is_file():
            return []
        try:
            rows = json.loads(file.read_text(encoding="utf-8"))
            return [SubmittedBatch.model_validate(row) for row in rows]
        except (ValidationError, ValueError, TypeError) as exc:
            raise CorruptRunFile(f"{file}: not a valid list of batches ({str(exc).strip().splitlines()[0]})") from None

    def write_batches(self, batches: Iterable[SubmittedBatch]) -> None:
        """Replace batches.json atomically (a kill mid-write leaves the previous list)."""
        self.path.mkdir(parents=True, exist_ok=True)
        _write_atomic(self.file(BATCHES), json.dumps([b.model_dump() for b in batches], indent=1))

    # --- passages ------------------------------------------------------------------------------------

    def write_passages(self, passages: Iterable[Mapping[str, object]]) -> None:
        """passages.jsonl, written whole once per run (rows: id, document, start, end, text)."""
        self.path.mkdir(parents=True, exist_ok=True)
        file = self.file(PASSAGES)
        file.write_text("".join(json.dumps(p) + "\n" for p in passages), encoding="utf-8")

    def read_passages(self) -> dict[str, PassageRow]:
        """passages.jsonl by passage id ({} when absent)."""
        return {str(row["id"]): row for row in self._rows(PASSAGES)}

    # --- overrides -----------------------------------------------------------------------------------

    def read_overrides(self) -> list[OverrideRecord]:
        """Every row of overrides.jsonl in the order written ([] when absent); a torn last line is counted."""
        read = read_jsonl(self.file(OVERRIDES), OverrideRecord.model_validate_json)
        if read.torn_tail:
            self.torn[OVERRIDES] = self.torn.get(OVERRIDES, 0) + 1
        return read.rows

    def current_overrides(self) -> dict[tuple[str, str], OverrideRecord]:
        """The override in force per (question id, unit id): the latest row for it."""
        return latest(self.read_overrides())

    def append_override(self, row: OverrideRecord) -> None:
        """Append one override (cutting off a torn tail first: each append is its own writer)."""
        path = self.file(OVERRIDES)
        repair_tail(path)
        append_jsonl(path, [row.model_dump_json()])

    def _rows(self, name: str) -> list[Any]:
        read = read_jsonl(self.file(name))
        if read.torn_tail:
            self.torn[name] = self.torn.get(name, 0) + 1
        return read.rows


def _write_atomic(path: Path, text: str) -> None:
    """Write a whole file so that a kill leaves either the old or the new content, never half. A write
    that fails (a full disk) removes its temporary file."""
    temporary = path.with_name(path.name + ".tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise


__all__ = [
    "ANSWERS", "ASSESSMENTS", "BATCHES", "CACHE", "CHECKPOINTS", "CLUSTERS", "CONFIG", "DEBATES", "EMBEDDINGS", "FIGURES", "INDIVIDUAL",
    "HUMAN_SAMPLE", "JUDGMENTS", "LOCK", "LEDGER", "OUTCOMES", "OVERRIDES", "PASSAGES", "PassageRow", "PROVENANCE", "QUESTIONS", "RECORD_FILES", "REPORT_HTML",
    "REPORT_JSON", "REPORT_MD", "REQUEST", "EXAM_OUTPUTS", "LOG", "exam_output", "foreign_entries", "remove_exam_outputs", "RUN_INFO", "RunDir", "RunRecords", "SELF_CHECK", "SubmittedBatch", "UNITS", "VERDICTS", "report_paths", "safe_name",
]
