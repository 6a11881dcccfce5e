"""The memorisation probe (examiner/exam/memory_probe.py, examiner.api.memory_probe, `examiner probe-memory`)
against a simulated target whose memory the test decides: it finds a gap on the documents the target read
and none on those it did not, the ledger holds two calls per sentence, and bad input is one line."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from examiner.api.memory_probe import MemoryProbeOptions, probe_memory
from examiner.cli.main import main
from examiner.corpus.reading import make_document
from examiner.exam.memory_probe import exact, held_back, overlap
from examiner.reporting.model.memory_probe import MemoryProbeReport
from examiner.reporting.reading import load_report
from examiner.simulator import SimulatedServer

WATER = Path("corpora/harbor-water")


def settings(memorised: list[str]) -> dict[str, object]:
    sim = {"provider": "simulated", "model": "sim-reader", "price_input_per_1m": 2.5, "price_output_per_1m": 10.0,
           "max_concurrency": 16, "options": {"memorised": memorised}}
    return {"endpoints": {"reader": sim}, "roles": {"candidate": "reader"}}


@pytest.fixture()
def sides(tmp_path: Path) -> tuple[Path, Path]:
    """Two disjoint sets of eight harbor-water documents: the probed corpus and the control."""
    files = sorted(WATER.glob("*.md"))
    corpus, control = tmp_path / "corpus", tmp_path / "control"
    for folder, part in ((corpus, files[:8]), (control, files[8:16])):
        folder.mkdir()
        for f in part:
            shutil.copy(f, folder / f.name)
    return corpus, control


def test_sentences_are_cut_in_half_seeded_and_only_prose_is_probed() -> None:
    text = ("# A heading that is not prose at all\n\nThe harbour filters were rebuilt in the spring of 2019 after "
            "a long survey of the old sand beds. Short one. | a | table | row | with | many | cells | in | it | "
            "here |\n\nEvery sample taken at the quay is logged within the hour by the duty chemist on call.")
    doc = make_document("d.md", text)
    items = held_back([doc], "corpus", per_document=5, seed=3)
    assert [f"{i.start} {i.ending}" for i in items] == [
        "The harbour filters were rebuilt in the spring of 2019 after a long survey of the old sand beds.",
        "Every sample taken at the quay is logged within the hour by the duty chemist on call."]
    assert all(len(i.start.split()) == len((i.start + " " + i.ending).split()) // 2 for i in items)
    assert held_back([doc], "corpus", per_document=1, seed=3) == held_back([doc], "corpus", per_document=1, seed=3)
    assert items[0].title == "A heading that is not prose at all"


def test_overlap_scores_the_completion_cut_to_the_held_back_length() -> None:
    assert overlap("of the old sand beds. And then much more text follows here", "of the old sand beds.") == 1.0
    assert overlap("nothing in common whatsoever", "of the old sand beds.") == 0.0
    assert exact("Of the OLD sand beds, then more", "of the old sand beds.")
    assert not exact("of the new sand beds", "of the old sand beds.")


def test_a_target_that_read_the_corpus_shows_a_gap_there_and_none_on_the_control(sides: tuple[Path, Path],
                                                                                 tmp_path: Path) -> None:
    corpus, control = sides
    options = MemoryProbeOptions(corpus=(str(corpus),), control=(str(control),), out=str(tmp_path / "out"),
                                 sentences=4, quiet=True)
    result = probe_memory(options, settings(["corpus/*"]), notes=lambda _: None)
    s = result.report.summary
    assert s.sides["corpus"].documents == 8 and s.sides["control"].documents == 8
    # recalled word for word with chance 0.8 guided, 0.25 general: a gap near 0.55 less filler's overlap
    assert 0.35 < s.sides["corpus"].gap.mean < 0.65 and s.sides["corpus"].gap.low > 0.1
    assert s.sides["control"].gap.low <= 0.0 <= s.sides["control"].gap.high
    assert s.auroc.auroc > 0.75 and s.auroc.low > 0.5, s.auroc
    assert s.difference.low > 0
    sentences = result.report.sentences
    ledger = [json.loads(line) for line in (tmp_path / "out" / "ledger.jsonl").read_text().splitlines()]
    answered = [r for r in ledger if r.get("stage") == "memory_probe" and r.get("event", r.get("kind")) != "started"]
    assert sentences > 16 and result.report.calls == 2 * sentences
    assert {r.get("stage") for r in ledger} == {"memory_probe"} and len(answered) >= 2 * sentences
    md = (tmp_path / "out" / "memory_probe.md").read_text()
    assert "no document or sentence is declared memorised" in md and "AUROC of Min-K%++" in md
    assert len((tmp_path / "out" / "completions.jsonl").read_text().splitlines()) == sentences
    loaded = load_report(tmp_path / "out" / "memory_probe.json")  # the typed reader of every report
    assert isinstance(loaded.report, MemoryProbeReport) and loaded.note is None
    assert loaded.report.summary.auroc == s.auroc and loaded.report.documents == result.report.documents


def test_min_k_plus_plus_is_higher_on_the_side_the_simulated_target_read(sides: tuple[Path, Path],
                                                                        tmp_path: Path) -> None:
    """The simulator draws each token's standardised log-probability from N(1, 1) on a read document and
    N(0, 1) elsewhere (docs/SIMULATOR.md), so the read side's Min-K%++ is higher by about 1."""
    corpus, control = sides
    options = MemoryProbeOptions(corpus=(str(corpus),), control=(str(control),), out=str(tmp_path / "out"),
                                 sentences=4, quiet=True)
    report = probe_memory(options, settings(["control/*"]), notes=lambda _: None).report
    assert report.min_k_plus_plus and report.min_k_plus_plus.computed and report.min_k_plus_plus.k_percent == 20.0
    s = report.summary
    read, unread = s.sides["control"].min_k_plus_plus, s.sides["corpus"].min_k_plus_plus
    assert read and unread and read.documents == unread.documents == 8
    assert 0.5 < read.mean - unread.mean < 1.5, (read, unread)
    assert unread.high < read.low
    assert s.min_k_auroc and s.min_k_difference
    assert s.min_k_auroc.high < 0.5 and s.min_k_difference.high < 0  # corpus over control: below
    records = [json.loads(line) for line in (tmp_path / "out" / "completions.jsonl").read_text().splitlines()]
    assert all(r["min_k_tokens"] >= 8 and math.isfinite(r["min_k_plus_plus"]) for r in records)


def test_an_openai_compatible_target_gets_no_min_k_and_the_report_says_why(sides: tuple[Path, Path],
                                                                          tmp_path: Path) -> None:
    corpus, control = sides
    with SimulatedServer() as url:
        config = {"endpoints": {"api": {"provider": "openai", "base_url": url, "model": "sim", "max_concurrency": 8}},
                  "roles": {"candidate": "api"}}
        options = MemoryProbeOptions(corpus=(str(corpus),), control=(str(control),), out=str(tmp_path / "out"),
                                     sentences=1, quiet=True)
        report = probe_memory(options, config, notes=lambda _: None).report
    info = report.min_k_plus_plus
    assert info and not info.computed and "top 5 to 20 log-probabilities" in (info.reason or "")
    assert report.summary.min_k_auroc is None and report.summary.sides["corpus"].min_k_plus_plus is None
    written = json.loads((tmp_path / "out" / "memory_probe.json").read_text())
    assert "min_k_auroc" not in written["summary"] and "min_k_plus_plus" not in written["summary"]["sides"]["corpus"]
    md = (tmp_path / "out" / "memory_probe.md").read_text()
    assert "Min-K%++ is not computed: endpoint api is an OpenAI-compatible API" in md and "| Min-K%++ |" not in md


def test_a_target_that_read_neither_side_gives_an_auroc_interval_around_one_half(sides: tuple[Path, Path],
                                                                                tmp_path: Path) -> None:
    corpus, control = sides
    options = MemoryProbeOptions(corpus=(str(corpus),), control=(str(control),), out=str(tmp_path / "out"),
                                 sentences=4, quiet=True)
    s = probe_memory(options, settings([]), notes=lambda _: None).report.summary
    assert s.auroc.low < 0.5 < s.auroc.high
    assert s.min_k_auroc and s.min_k_auroc.low < 0.5 < s.min_k_auroc.high
    assert s.sides["corpus"].gap.low < 0.0 < s.sides["corpus"].gap.high


def test_the_command_prints_the_table_and_refuses_bad_input_in_one_line(sides: tuple[Path, Path], tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    corpus, control = sides
    out = tmp_path / "cli"
    assert main(["probe-memory", str(corpus), "--control", str(control), "--sentences", "2", "--simulate",
                 "--quiet", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "AUROC of the gap" in printed and "control: control" in printed and "AUROC of Min-K%++" in printed
    assert max(len(line) for line in printed.splitlines() if "│" in line or "┃" in line) <= 80
    assert json.loads((out / "memory_probe.json").read_text())["target"] == "sim-local"
    for argv, words in ((["--sentences", "0"], "--sentences must be 1 or more"),
                        (["--control", str(corpus)], "share a path"),
                        (["--control", str(corpus / "01-about.md")], "share a path"),
                        (["--max-documents", "1"], "--max-documents must be 2 or more"),
                        (["--min-k-percent", "0"], "--min-k-percent must be above 0")):
        assert main(["probe-memory", str(corpus), *argv, "--simulate", "--quiet", "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert words in err and len(err.splitlines()) == 1


def test_a_target_that_answers_no_call_is_an_outage_exit_75(sides: tuple[Path, Path], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    corpus, control = sides
    config = settings([])
    config["endpoints"]["reader"].update(max_attempts=1, options={"faults": {"server_error": 1.0}})  # type: ignore[index]
    path = tmp_path / "down.yaml"
    path.write_text(json.dumps(config))
    assert main(["probe-memory", str(corpus), "--control", str(control), "--sentences", "1", "--quiet",
                 "--config", str(path), "--out", str(tmp_path / "down")]) == 75
    err = capsys.readouterr().err
    assert "every probe call failed" in err and "endpoint reader" in err
    report = json.loads((tmp_path / "down" / "memory_probe.json").read_text())
    assert report["failed"] == report["sentences"] > 0
