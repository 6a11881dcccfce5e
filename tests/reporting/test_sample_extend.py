"""Extending the random sample people label (issue 38, item 7): `examiner review --extend N` and the sample
page's "add units" draw the next N units of one seeded order, keep the first draw and its labels, and the
calibrated (PPI++) figure appears once a target has 20 labels."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from examiner.api import ReviewSampleOptions, review_sample
from examiner.cli.main import main
from examiner.core.errors import UserError
from examiner.core.human_sample import read_sample
from examiner.core.rundir import HUMAN_SAMPLE
from examiner.reporting import load_run
from examiner.reporting import calibration_section as cs
from examiner.reporting.human_sample import extend_sample, extension_order, population
from examiner.reporting.view_server import ReviewServer


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated exam of six harbor-water documents: one target with more than 20 judged units."""
    corpus = tmp_path_factory.mktemp("harbor6")
    for source in sorted(Path("corpora/harbor-water").glob("*.md"))[:6]:
        shutil.copy(source, corpus / source.name)
    out = tmp_path_factory.mktemp("extend") / "run"
    assert main(["run", str(corpus), "--simulate", "--out", str(out), "--quiet"]) == 0
    return out


@pytest.fixture()
def run_dir(sim_run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(sim_run, copy)
    return copy


def _label_every_drawn_unit(run_dir: Path, tmp_path: Path) -> None:
    """Fill in the sheet as the judge decided (one in three called the other way) and import it."""
    sheet = tmp_path / "sheet.jsonl"
    review_sample(ReviewSampleOptions(run_dir=str(run_dir), sheet=str(sheet), who="ana"))
    run = load_run(run_dir)
    rows = [json.loads(line) for line in sheet.read_text(encoding="utf-8").splitlines()]
    sheet.unlink()  # examiner writes a fresh one next time
    filled = tmp_path / "filled.jsonl"
    for n, row in enumerate(rows):
        if row["verdict"] is None:
            judge = run.outcomes[row["target"]][row["unit_id"]].status
            row["verdict"] = judge if n % 3 else ("incorrect" if judge == "correct" else "correct")
    filled.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    review_sample(ReviewSampleOptions(run_dir=str(run_dir), labels=str(filled), who="ana"))


def test_extend_by_5_keeps_the_draw_and_its_labels_and_ppi_appears_at_20(run_dir: Path, tmp_path: Path) -> None:
    run = load_run(run_dir)
    assert len(population(run)) > cs.MIN_LABELS == 20
    review_sample(ReviewSampleOptions(run_dir=str(run_dir), size=15, seed=4, who="ana"))
    _label_every_drawn_unit(run_dir, tmp_path)
    before = read_sample(run_dir)
    assert before is not None and len(before.labels()) == 15
    section = cs.exam_calibration(load_run(run_dir))
    assert section is not None
    target = section["targets"]["sim-local"]
    assert target["labelled"] == 15 and target["ppi"] is None
    assert "needs at least 20" in target["note"] and "--extend N" in target["note"]

    result = review_sample(ReviewSampleOptions(run_dir=str(run_dir), extend=5, who="bo"))
    assert result.extended == 5 and result.draw["drawn"] == 20 and result.labelled == 15
    assert any("extended the sample by 5 units" in line for line in result.lines())
    assert any("needs 20 labelled units per target" in line and "--extend N" in line for line in result.lines())
    after = read_sample(run_dir)
    assert after is not None
    assert after.draw == before.draw  # the first draw, untouched
    assert after.labels() == before.labels()  # and every label given
    added = after.units[15:]
    assert added == extension_order(load_run(run_dir), after.draw)[""][:5]  # the next 5 of the seeded order
    assert not {(u.target, u.unit_id) for u in added} & {(u.target, u.unit_id) for u in before.units}

    _label_every_drawn_unit(run_dir, tmp_path)
    section = cs.exam_calibration(load_run(run_dir))
    assert section is not None
    target = section["targets"]["sim-local"]
    assert target["labelled"] == 20 and target["ppi"] is not None and target["note"] is None
    assert (section["draw"]["drawn"], section["draw"]["extended"]) == (20, 5)
    assert "5 of them added later from the same seeded order" in cs.draw_text(section)


def test_extensions_follow_one_order_and_stop_when_the_population_is_used_up(run_dir: Path, tmp_path: Path) -> None:
    review_sample(ReviewSampleOptions(run_dir=str(run_dir), size=10, seed=7))
    twice = tmp_path / "twice"
    shutil.copytree(run_dir, twice)
    review_sample(ReviewSampleOptions(run_dir=str(run_dir), extend=5))
    review_sample(ReviewSampleOptions(run_dir=str(twice), extend=2))
    review_sample(ReviewSampleOptions(run_dir=str(twice), extend=3))
    one, two = read_sample(run_dir), read_sample(twice)
    assert one is not None and two is not None and one.units == two.units  # 5 at once == 2 then 3
    size = len(population(load_run(run_dir)))
    review_sample(ReviewSampleOptions(run_dir=str(run_dir), extend=1000))
    full = read_sample(run_dir)
    assert full is not None and len(full.units) == size == len({(u.target, u.unit_id) for u in full.units})
    with pytest.raises(UserError, match="nothing to extend"):
        review_sample(ReviewSampleOptions(run_dir=str(run_dir), extend=1))


def test_an_extension_is_refused_when_the_judged_units_changed(run_dir: Path) -> None:
    review_sample(ReviewSampleOptions(run_dir=str(run_dir), size=10, seed=7))
    path = run_dir / HUMAN_SAMPLE
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[0]["population"] -= 1  # drawn from another set of judged units (as after a resume)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(UserError, match="cannot be extended as the same random draw"):
        review_sample(ReviewSampleOptions(run_dir=str(run_dir), extend=5))
    sample = read_sample(run_dir)
    assert sample is not None and not sample.extensions


def test_a_per_target_sample_extends_each_target(sample_run_copy: Path) -> None:
    review_sample(ReviewSampleOptions(run_dir=str(sample_run_copy), size=3, seed=2, per_target=True))
    sample = read_sample(sample_run_copy)
    assert sample is not None
    extension = extend_sample(load_run(sample_run_copy), sample, 2)
    assert [u.target for u in extension.units] == ["alpha", "alpha", "beta", "beta"]
    order = extension_order(load_run(sample_run_copy), sample.draw)
    assert extension.units == order["alpha"][:2] + order["beta"][:2]


async def test_the_page_says_what_ppi_needs_and_adds_units(run_dir: Path) -> None:
    review_sample(ReviewSampleOptions(run_dir=str(run_dir), size=6, seed=1))
    server = ReviewServer(run_dir, who="ana")
    client = TestClient(TestServer(server.app(), host="127.0.0.1"))
    await client.start_server()
    server.port = client.port
    try:
        page = await (await client.get("/sample")).text()
        assert "sim-local: 0 labels of 6 drawn" in page and "needs 20 labels per target" in page
        assert 'action="/sample/extend"' in page and "--extend N" in page
        assert (await client.post("/sample/extend", data={"more": "4", "token": "guess"})).status == 403
        bad = await client.post("/sample/extend", data={"more": "x", "token": server.token})
        assert bad.status == 400
        done = await client.post("/sample/extend", data={"more": "4", "who": "bo", "token": server.token},
                                 allow_redirects=False)
        assert done.status == 303 and done.headers["Location"] == "/sample#s-7"
        sample = read_sample(run_dir)
        assert sample is not None and len(sample.units) == 10 and sample.extensions[0].who == "bo"
        page = await (await client.get("/sample")).text()
        assert page.count('class="row sample"') == 10 and "4 of them added later" in page
    finally:
        await client.close()


def test_the_report_gives_the_judges_accuracy_one_interval(run_dir: Path, tmp_path: Path) -> None:
    """The calibration table's "judge alone" is the headline accuracy: the report shows one interval for it,
    the headline's (issue 38, item 12: [52.3, 76.3] beside [53.8, 75.2] for one accuracy)."""
    review_sample(ReviewSampleOptions(run_dir=str(run_dir), size=20, seed=4, who="ana"))
    _label_every_drawn_unit(run_dir, tmp_path)
    assert main(["report", str(run_dir)]) == 0
    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    headline = report["targets"]["sim-local"]["accuracy"]
    judge = report["calibration"]["targets"]["sim-local"]["judge_raw"]
    assert (judge["estimate"], judge["low"], judge["high"]) == (headline["value"], headline["low"], headline["high"])
    assert "the report's accuracy" in judge["method"]
