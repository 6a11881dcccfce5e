"""The exam report (`examiner run`, `examiner report RUN`): its sections as typed models.

Built once per run by examiner/reporting/build.py from the figures of summary.py; the Markdown, HTML and
terminal renderers read this model, and report.json is its dump. docs/REPORT-SCHEMA.md describes each
section; docs/METHODS.md section 1 says how the figures are computed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from examiner.core.names import ExamJudgeMethod, ExamModeName
from examiner.core.records import RunStatus
from examiner.reporting.model.cascade import CascadeSection
from examiner.reporting.model.stopping import StoppingSection
from examiner.reporting.model.wording import WordingCheckSection
from examiner.reporting.model.base import SCHEMA_VERSION, Figure, Section
from examiner.reporting.model.bias import BiasAudit
from examiner.reporting.model.calibration import ExamCalibration
from examiner.reporting.model.common import BilledTotals
from examiner.reporting.model.endpoints import EndpointIdentity
from examiner.reporting.model.knowledge import TargetKnowledge

HealthStatus = Literal["pass", "warn", "fail", "info", "not_measured", "incomplete"]


class RunSection(Section):
    """What the run was: its id, status, settings, corpus and record counts (from run.json and the records)."""

    path: str
    run_id: str
    status: RunStatus
    stop_reason: str | None
    mode: ExamModeName
    judge_mode: ExamJudgeMethod
    judges: list[str]
    targets: list[str]
    corpus_paths: list[str]
    documents: int
    passages: int
    units: int
    questions: int
    answers: int
    verdicts: int
    started: float | None
    finished: float | None
    duration_s: float | None
    outcomes_derived: bool
    """True when outcomes.jsonl was missing and the unit outcomes were rebuilt from the verdicts."""
    passage_source_note: str | None
    """Why source passages came from the run's passages.jsonl or the unit text (None: from the corpus)."""
    language: str
    languages: dict[str, int]


class UnitCounts(Section):
    """Units per final status."""

    correct: int
    incorrect: int
    unanswered: int
    uncovered: int
    abstained: int = 0
    """Covered units whose answer declined (judged `abstained`); 0 in reports written before the label."""


class Estimate(Section):
    """A ratio num/den with its 95% interval (examiner.stats.intervals.accuracy_interval): the Wilson interval
    with design effect and t on groups - 1 df, the groups being the source documents (or the exam clusters
    when every unit comes from one document), the same at every size; clipped to [0, 1]."""

    value: Figure
    low: Figure
    high: Figure
    num: int | float
    den: int | float
    clusters: int
    """Exam clusters among the units counted."""
    groups: int | None = None
    """Independent groups the interval rests on (absent in reports written before: clusters resampled)."""
    grouped_by: Literal["documents", "clusters"] | None = None
    method: str | None = None
    """How the interval was made (e.g. 'Wilson with design effect, t on documents - 1 df'; reports written
    before issue 40: 'cluster bootstrap (percentile, documents)' at 30 groups or more)."""
    small_sample: bool | None = None
    """True when there were fewer than 30 groups (the t reference then has few degrees of freedom)."""


class ClusterRow(Section):
    cluster: str
    round: int | None
    correct: int
    incorrect: int
    accuracy: Figure
    abstained: int = 0
    topic: str | None = None
    """A few key terms of the cluster's units (top TF-IDF terms, examiner/reporting/topics.py; no model call)."""
    question: str | None = None
    """The examiner's first question to the cluster, without its unit list, shortened."""


class QtypeRow(Section):
    qtype: str
    correct: int
    incorrect: int
    accuracy: Figure
    abstained: int = 0


class ConvergencePoint(Section):
    """Uncovered units left after a round; the round's own figures where the run recorded its summary."""

    round: int
    remaining: int
    pool_before: int | None = None
    clusters: int | None = None
    questions: int | None = None
    probes: int | None = None
    covered: int | None = None


class BaselineMetric(Section):
    """Mean of a classic metric over the answers and its correlations with the judge's share of correct."""

    mean: Figure
    n: int
    pearson: Figure
    spearman: Figure
    kendall: Figure
    n_pairs: int


class Baselines(Section):
    answers: int
    bleu: BaselineMetric
    embedding_similarity: BaselineMetric


class LanguageRow(Section):
    language: str
    name: str
    units: int
    covered: int
    correct: int
    incorrect: int
    accuracy: Figure
    abstained: int = 0


class SourceSpan(Section):
    """A unit's source span and the passage around it; `origin` says where the text was read."""

    document: str
    passage_id: str
    start: int
    end: int
    from_corpus: bool
    page: int | str | None = None
    span_text: str
    passage_text: str
    passage_start: int
    passage_end: int
    origin: str


class IncorrectUnit(Section):
    """A unit the target got wrong, with its question, the answer, the judge's reason and its sources."""

    unit_id: str
    unit_text: str
    round: int | None
    cluster: str | None
    question_id: str | None
    question: str
    answer_id: str | None
    answer_excerpt: str
    verdict_id: str | None
    reason: str
    sources: list[SourceSpan]


class IncorrectSample(Section):
    """How many incorrect units are shown of how many, the seed of the sample, where the rest is."""

    shown: int
    total: int
    seed: int
    full_records: str


class TargetSection(Section):
    """Everything about one examined model."""

    target: str
    units: int
    counts: UnitCounts
    accuracy: Estimate
    coverage: Estimate
    per_cluster: list[ClusterRow]
    per_cluster_total: int
    per_qtype: list[QtypeRow]
    convergence: list[ConvergencePoint]
    ignored_histogram: dict[int, int]
    """Times a unit was targeted without being covered -> units (the counts are object keys, as text, in report.json)."""
    baselines: Baselines
    per_language: list[LanguageRow]
    incorrect: list[IncorrectUnit]
    incorrect_sample: IncorrectSample
    rounds: int


class CostFigures(BilledTotals):
    """Billed totals of a group of ledger records and the same per unit of the corpus."""

    calls_per_unit: float
    input_tokens_per_unit: float
    output_tokens_per_unit: float
    cents_per_unit: float


class PaperRow(CostFigures):
    """A row of the cost table in the paper's layout (a stage, with the questions it handled)."""

    stage: str
    questions: int


class RoleCost(CostFigures):
    role: str


class StageCost(CostFigures):
    role: str
    stage: str


class EndpointCost(CostFigures):
    role: str
    endpoint: str


class PricingCost(CostFigures):
    role: str
    batch: bool


class InFlight(Section):
    """Calls killed in flight that no resume has settled yet, and the most they can have cost."""

    calls: int
    worst_case_usd: float


class Billed(Section):
    calls: int
    usd: float


class PossiblyBilled(Section):
    """Sent calls whose reply never came to use (lost after sending: late, cut or dropped; or killed in
    flight), with the most they can have cost; `unsettled`: those killed in flight no resume has settled."""

    calls: int
    worst_case_usd: float
    unsettled: int


class Cancelled(Section):
    """Calls examiner cancelled with a request out (possibly billed), with the most they can have cost."""

    calls: int
    worst_case_usd: float


class Settlement(Section):
    """How the ledger's sent requests ended: billed; possibly billed (lost after sending, or killed in
    flight); cancelled with a request out. Possibly billed and cancelled calls are held against the budget
    at their worst case."""

    billed: Billed
    possibly_billed: PossiblyBilled
    cancelled: Cancelled


class CostSection(Section):
    """Cost per unit of the corpus in the paper's layout, and per role, stage, endpoint and pricing."""

    units: int
    paper: list[PaperRow]
    by_role: list[RoleCost]
    by_stage: list[StageCost]
    by_endpoint: list[EndpointCost]
    by_pricing: list[PricingCost]
    total: CostFigures
    failed_requests: int
    in_flight: InFlight
    settlement: Settlement
    torn_ledger_lines: int


class SkippedFile(Section):
    path: str = "?"
    reason: str = ""


class SkippedPassage(Section):
    document: str
    passage_id: str
    reason: str


class CountsSection(Section):
    """What was skipped, unparseable, rejected or ignored (lists bounded, counts whole)."""

    skipped_files: int
    skipped_file_list: list[SkippedFile]
    skipped_passages: int
    skipped_passage_list: list[SkippedPassage]
    decoded_with_replacement: int
    unparseable_judgments: int
    unparseable_questions: int
    leak_rejections: int
    ignored_verdicts: int
    dropped_targets: int
    questions_without_targets: int
    failed_requests: int
    unreadable_record_lines: dict[str, int]


class PanelAgreementRow(Section):
    target: str
    member: str
    agreed: int
    compared: int
    unscored: int
    agreement: Figure


class JudgePanel(Section):
    """Per-member agreement with a judge panel's majority (all targets, then per target)."""

    members: list[str]
    verdicts: int
    tied_or_unscored: int
    agreement: list[PanelAgreementRow]


class HumanAgreement(Section):
    """A judge's verdicts against people's labels: agreement, Cohen's kappa, the confusion table."""

    items: int
    compared: int
    judge_unscored: int
    agreed: int
    agreement: Figure
    cohen_kappa: Figure
    labels: list[str]
    confusion: dict[str, dict[str, int]]
    """Rows: the judge's label; columns: the person's."""


class JudgeVsPeople(HumanAgreement):
    """The exam's judge against the overrides; with a panel, each member too."""

    members: dict[str, HumanAgreement]


class OverriddenTarget(Section):
    """One target's accuracy, coverage and counts as the judge gave them and with the overrides."""

    overrides: int
    accuracy_judge: Estimate
    coverage_judge: Estimate
    counts_judge: UnitCounts
    accuracy_with_overrides: Estimate
    coverage_with_overrides: Estimate
    counts_with_overrides: UnitCounts


class OverridesSection(Section):
    """People's overrides (overrides.jsonl) and the figures with them applied."""

    file: str
    overrides: int
    changed: int
    unmatched: int
    per_target: dict[str, int]
    targets: dict[str, OverriddenTarget]
    judge_vs_people: JudgeVsPeople


class Threshold(Section):
    warn: Figure
    fail: Figure
    higher_is_worse: bool


class Example(Section):
    id: str
    text: str


class HealthCheck(Section):
    name: str
    what: str
    status: HealthStatus
    figure: Figure
    detail: str
    threshold: Threshold | None
    examples: list[Example]


class SelfAgreement(Section):
    """The judge's agreement with itself on re-judged answers (units reordered)."""

    answers: int
    compared: int
    agreed: int
    value: Figure
    low: Figure
    high: Figure
    changed: list[Example]


class HealthSection(Section):
    """The run's health (examiner.exam.health): checks of the examiner and judge behaving sanely."""

    status: HealthStatus
    checks: list[HealthCheck]
    self_agreement: SelfAgreement
    trustworthy: bool


class ProvenancePlan(Section):
    """Whether provenance.graphml was written, with its node count and the size limit."""

    file: str
    nodes: int
    limit: int
    written: bool
    note: str


class PassedText(Section):
    """Answers cut to `max_passed_chars` before a judge or the examiner read them (examiner.core.passed_text)."""

    limit: int
    """The run's max_passed_chars: most characters of one model's text put into another model's prompt."""
    answers: int
    answers_cut: int
    """Answers longer than `limit`: every prompt they went into held their first characters and the marker."""
    longest_answer: int
    """Characters of the longest answer."""


class GateExample(Section):
    """One draft the question gate flagged, with the check and its reason."""

    round: int
    question: str
    check: str
    reason: str
    outcome: Literal["rewritten", "rejected", "tagged"]
    """`rewritten`: a new question replaced it; `rejected`: it and its rewrite were rejected, its units went
    back to the pool; `tagged`: kept and asked, tagged guessable."""


class QuestionGateSection(Section):
    """The question gate (examiner/exam/gate/): what it checked, kept, rewrote and rejected, and why."""

    questions: int
    """Cluster questions the gate checked (one per cluster and round, whatever the number of targets)."""
    passed_first: int
    """Kept as first written."""
    rewritten: int
    """Rejected once and rewritten; `rejected` of them were rejected again."""
    rejected: int
    """Never asked: the draft and its rewrite were both rejected; their units went back to the pool."""
    guessable: int
    """Asked questions tagged guessable (the guesser answered them right without the corpus)."""
    failed: dict[str, int]
    """Check name -> drafts (first drafts and rewrites) that failed it."""
    examples: list[GateExample]
    """Up to 20 flagged drafts, the earliest rounds first."""


class ExamReport(Section):
    """report.json of an exam run."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["exam"] = "exam"
    run: RunSection
    targets: dict[str, TargetSection]
    cost: CostSection
    counts: CountsSection
    judge_panel: JudgePanel | None
    overrides: OverridesSection | None = None
    calibration: ExamCalibration | None = None
    """Accuracy calibrated by people's labels of a random sample (human_sample.jsonl); None without one."""
    health: HealthSection | None = None
    provenance: ProvenancePlan | None = None
    bias_audit: BiasAudit | None = None
    """The judge bias audit (examiner/reporting/bias_audit.py); None in reports written before it."""
    stopping: StoppingSection | None = None
    """A `--stop-when` run's rule, stop point, sequences and saving (examiner/reporting/stopping_section.py);
    None without one."""
    cascade: CascadeSection | None = None
    """A judge cascade's tiers, calibration and spend (examiner/reporting/cascade_section.py); None without one."""
    passed_text: PassedText | None = None
    """Answers cut before another model read them (examiner/reporting/passed_section.py); None in reports
    written before it."""
    question_gate: QuestionGateSection | None = None
    """The question gate's checks (examiner/reporting/gate_section.py); None when the gate was off."""
    wording: WordingCheckSection | None = None
    """The wording check's variance parts and rank flips (examiner/reporting/wording_section.py); None without
    `--paraphrases`."""
    figures: dict[str, str] = Field(default_factory=dict)
    """Figure name -> PNG path relative to the run folder (`map:<target>` for the maps)."""
    endpoints: dict[str, EndpointIdentity] = Field(default_factory=dict)
    """Endpoint alias -> its model, server (URL without credentials) and roles (reporting/endpoint_identity.py);
    empty in reports written before it."""
    knowledge: dict[str, TargetKnowledge] = Field(default_factory=dict)
    """Target -> what it knows, invents and declines, overall and per topic, with its confidence's calibration
    (examiner/reporting/knowledge.py); empty in reports written before it."""


