"""The review page's "label a random sample" mode (`examiner view`, /sample).

Why a mode of its own: overrides made while browsing are chosen (a reviewer stops on what looks wrong),
so they cannot calibrate the judge's accuracy. Here examiner draws the sample (seeded, recorded in
human_sample.jsonl before anyone labels: reporting/human_sample.py), shows the drawn units one after the
other in the order drawn, and hides the judge's verdict and reason so the person labels the answer
itself. Labels are appended to human_sample.jsonl under the run's lock, as overrides are; overrides.jsonl
is never written here. The same checks guard every write as on the main page (the server's middleware:
loopback Host, Origin; here the page's token). A sample too small for the calibrated figure (PPI++ needs
MIN_LABELS labels per target) can be extended here ("add units") or with `examiner review --extend N`:
the next units of the same seeded order, the labels given kept.
"""

from __future__ import annotations

import hmac
from html import escape
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web
from pydantic import ValidationError

from examiner.core.errors import UserError
from examiner.core.human_sample import (DamagedSample, HumanSample, SampleLabel, append_extension, append_labels,
                                        read_sample, write_draw)
from examiner.core.overrides import utc_now
from examiner.core.runlock import RunDirInUse, hold_run_dir
from examiner.reporting.answer_fold import answer_html
from examiner.reporting.html import passage_html
from examiner.reporting.calibration_section import MIN_LABELS
from examiner.reporting.human_sample import draw_sample, extend_sample, population
from examiner.reporting.review import ReviewRow
from examiner.reporting.review_style import PAGE_CSS
from examiner.reporting.run_reader import load_run
from examiner.reporting.with_overrides import LABELS



class ReviewServer(Protocol):
    """What this mode needs of the review server (examiner/reporting/view_server.py's ReviewServer)."""

    run_dir: Path
    run_id: str
    token: str
    who: str

    def rows(self) -> list[ReviewRow]: ...

    def in_use(self) -> str | None: ...

SAMPLE_NOTE = ("Label each drawn unit: is the answer correct about this unit, incorrect, abstained (it declines or "
               "hedges without a claim), or unrelated to it? The "
               "judge's verdict is hidden so that it does not sway you. These labels calibrate the report's accuracy "
               "(\"Calibrated by people\"); overrides made on the main page are kept apart and never used for it.")


def _error(status: int, message: str) -> web.Response:
    text = (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>examiner view</title></head>"
            f"<body><p class=\"error\">{escape(message)}</p><p><a href=\"/sample\">back to the sample</a></p></body></html>")
    return web.Response(status=status, text=text, content_type="text/html", charset="utf-8")


def _write_refused(what: str, exc: Exception, run_dir: Any) -> web.Response:
    """The answer to a change of the sample the run folder refused (`what`: e.g. "sample not drawn"): 409 while
    the run is being written, 422 for a damaged sample file, 400 for other bad input, 500 when writing failed."""
    if isinstance(exc, RunDirInUse):
        return _error(409, f"{what}: {exc} (the run is being written; try when it has stopped)")
    if isinstance(exc, DamagedSample):
        return _error(422, f"{what}: {exc}")
    if isinstance(exc, OSError):
        return _error(500, f"{what}: cannot write {exc.filename or run_dir}: {exc.strerror or exc}")
    return _error(400, f"{what}: {exc}")


def _token_ok(server: ReviewServer, form: Any) -> bool:
    return hmac.compare_digest(str(form.get("token", "")), server.token)


def _draw_form(server: ReviewServer) -> str:
    e = escape
    return ("<form class=\"draw\" method=\"post\" action=\"/sample/draw\">"
            f"<input type=\"hidden\" name=\"token\" value=\"{e(server.token)}\">"
            "<label>units <input name=\"size\" type=\"number\" min=\"1\" value=\"100\" required></label> "
            "<label>seed <input name=\"seed\" type=\"number\" value=\"0\" required></label> "
            "<label><input name=\"per_target\" type=\"checkbox\" value=\"1\"> per target</label> "
            f"<label>who <input name=\"who\" required value=\"{e(server.who)}\" size=\"10\"></label> "
            "<button type=\"submit\" id=\"draw\">draw the sample</button></form>")


def _extend_form(server: ReviewServer) -> str:
    e = escape
    return ("<form class=\"draw\" method=\"post\" action=\"/sample/extend\">"
            f"<input type=\"hidden\" name=\"token\" value=\"{e(server.token)}\">"
            "<label>more units <input name=\"more\" type=\"number\" min=\"1\" value=\"10\" required></label> "
            f"<label>who <input name=\"who\" required value=\"{e(server.who)}\" size=\"10\"></label> "
            "<button type=\"submit\" id=\"extend\">add units</button></form>")


def labels_text(sample: HumanSample) -> str:
    """How many labels each target has, that the calibrated figure needs MIN_LABELS, and how to get there."""
    labels = sample.labels()
    counts: dict[str, list[int]] = {}
    for unit in sample.units:
        c = counts.setdefault(unit.target, [0, 0])
        c[0] += 1
        c[1] += (unit.target, unit.unit_id) in labels
    per_target = "; ".join(f"{target}: {labelled} labels of {drawn} drawn" for target, (drawn, labelled) in counts.items())
    short = [target for target, (_, labelled) in counts.items() if labelled < MIN_LABELS]
    need = (f"The calibrated (PPI++) accuracy needs {MIN_LABELS} labels per target"
            + (f" ({', '.join(short)} below it): label the drawn units, and when every one is labelled add "
               "more with \"add units\" below (or `examiner review RUN_DIR --extend N`). The units added are the "
               "next of the same seeded order, so the labels given stay valid and the sample stays a uniform "
               "random draw." if short else "; every target has them."))
    return f"{per_target}. {need}"


def _unit_html(server: ReviewServer, position: int, unit: Any, row: Any, given: SampleLabel | None) -> str:
    e = escape
    parts = [f"<article class=\"row sample\" id=\"s-{position}\" data-unit-id=\"{e(unit.unit_id)}\" "
             f"data-target=\"{e(unit.target)}\">",
             f"<div class=\"note\">#{position} · {e(unit.target)} · unit <code>{e(unit.unit_id)}</code></div>"]
    if row is not None:
        parts += [f"<div><span class=\"label\">question</span> {e(row.question)}</div>",
                  f"<div><span class=\"label\">answer</span> {answer_html(row.answer)}</div>",
                  f"<div><span class=\"label\">unit</span> {e(row.unit_text)}</div>"]
        parts += [passage_html(src) for src in row.sources]
    if given is not None:
        parts.append(f"<div class=\"in-force\"><span class=\"label\">your label</span> <b class=\"given\">"
                     f"{e(given.verdict)}</b> by {e(given.who)} at {e(given.at)}"
                     + (f": <span class=\"why\">{e(given.note)}</span>" if given.note else "") + "</div>")
    options = "".join(f"<option value=\"{label}\"{' selected' if given and given.verdict == label else ''}>{label}"
                      "</option>" for label in LABELS)
    parts.append("<form class=\"override\" method=\"post\" action=\"/sample/label\">"
                 f"<input type=\"hidden\" name=\"token\" value=\"{e(server.token)}\">"
                 f"<input type=\"hidden\" name=\"target\" value=\"{e(unit.target)}\">"
                 f"<input type=\"hidden\" name=\"unit_id\" value=\"{e(unit.unit_id)}\">"
                 f"<input type=\"hidden\" name=\"position\" value=\"{position}\">"
                 f"<select name=\"verdict\" aria-label=\"label\">{options}</select>"
                 "<input name=\"note\" placeholder=\"note (optional)\" aria-label=\"note\">"
                 f"<input name=\"who\" required value=\"{e(server.who)}\" aria-label=\"who\" size=\"10\">"
                 "<button type=\"submit\">label</button></form></article>")
    return "".join(parts)


def render_sample_page(server: ReviewServer, sample: HumanSample | None, in_use: str | None, population_size: int) -> str:
    """The sample mode's page: the draw form when none is drawn, else the draw's facts and the drawn units."""
    e = escape
    out = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
           f"<title>Sample {e(server.run_id)}</title><style>{_css()}</style></head><body>",
           f"<h1>Label a random sample: {e(server.run_id)}</h1>",
           "<p><a href=\"/\" id=\"browse\">back to browsing every verdict</a></p>",
           f"<p class=\"note\">{e(SAMPLE_NOTE)}</p>"]
    if in_use:
        out.append(f"<p class=\"banner\">{e(in_use)}: labels are refused while the run is being written.</p>")
    if sample is None:
        out += [f"<p id=\"no-sample\">No sample drawn yet. examiner draws it at random (seeded) from the "
                f"{population_size} judged units and records how in human_sample.jsonl.</p>", _draw_form(server)]
        return "".join(out) + "</body></html>"
    d, labels, units = sample.draw, sample.labels(), sample.units
    drawn = {u.verdict_id for u in units}
    rows = {(r.target, r.unit_id): r for r in server.rows() if r.verdict_id in drawn}
    added = len(units) - len(d.units)
    extended = f", {added} of them added later from the same seeded order" if added else ""
    out.append(f"<p class=\"note\" id=\"draw-facts\">Sample {e(d.draw_id)}: {len(units)} of {d.population} judged "
               f"units drawn {e(d.method)} (seed {d.seed}, size {d.size}{extended}) by {e(d.who)} at {e(d.at)}. "
               f"<span id=\"labelled\">{len(labels)}</span> of {len(units)} labelled.</p>")
    out.append(f"<p class=\"note\" id=\"ppi-needs\">{e(labels_text(sample))}</p>")
    if len(units) < d.population:
        out.append(_extend_form(server))
    for position, unit in enumerate(units, 1):
        out.append(_unit_html(server, position, unit, rows.get((unit.target, unit.unit_id)),
                              labels.get((unit.target, unit.unit_id))))
    return "".join(out) + "</body></html>"


def _css() -> str:

    return PAGE_CSS + "form.draw{display:flex;gap:.8em;flex-wrap:wrap;align-items:end;background:#eef2f7;padding:.6em}"


def _headers(response: web.Response) -> web.Response:
    response.headers["Content-Security-Policy"] = ("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
                                                   "frame-ancestors 'none'; base-uri 'none'")
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    return response


def add_sample_routes(app: web.Application, server: ReviewServer) -> None:
    """GET /sample (the mode's page), POST /sample/draw (draw once), POST /sample/extend (add the next units of
    the seeded order), POST /sample/label (append a label)."""

    async def page(request: web.Request) -> web.Response:
        server.rows()  # reads the run (and its id) when it changed
        try:
            sample = read_sample(server.run_dir)
        except DamagedSample as exc:
            return _error(422, f"sample not shown: {exc}")
        size = len(population(load_run(server.run_dir))) if sample is None else 0
        body = render_sample_page(server, sample, server.in_use(), size)
        return _headers(web.Response(text=body, content_type="text/html", charset="utf-8"))

    async def draw(request: web.Request) -> web.StreamResponse:
        form = await request.post()
        if not _token_ok(server, form):
            return _error(403, "draw refused: the page's token does not match (reload the page)")
        try:
            size, seed = int(str(form.get("size", ""))), int(str(form.get("seed", "0")))
        except ValueError:
            return _error(400, "sample not drawn: the size and the seed must be whole numbers")
        if size < 1 or seed < 0:
            return _error(400, f"sample not drawn: the size must be 1 or more and the seed 0 or more (got size {size}, "
                               f"seed {seed})")
        who = str(form.get("who", "")).strip() or server.who
        try:
            with hold_run_dir(server.run_dir):
                method = "per-target" if form.get("per_target") else "uniform"
                write_draw(server.run_dir, draw_sample(load_run(server.run_dir), size, seed=seed, method=method, who=who))
        except (RunDirInUse, DamagedSample, UserError, OSError) as exc:
            return _write_refused("sample not drawn", exc, server.run_dir)
        raise web.HTTPSeeOther("/sample")

    async def extend(request: web.Request) -> web.StreamResponse:
        form = await request.post()
        if not _token_ok(server, form):
            return _error(403, "extension refused: the page's token does not match (reload the page)")
        try:
            more = int(str(form.get("more", "")))
        except ValueError:
            return _error(400, "sample not extended: the number of units must be a whole number")
        if more < 1:
            return _error(400, f"sample not extended: the number of units must be 1 or more (got {more})")
        who = str(form.get("who", "")).strip() or server.who
        try:
            with hold_run_dir(server.run_dir):
                sample = read_sample(server.run_dir)
                if sample is None:
                    return _error(400, "sample not extended: no sample drawn yet")
                before = len(sample.units)
                append_extension(server.run_dir, extend_sample(load_run(server.run_dir), sample, more, who=who))
        except (RunDirInUse, DamagedSample, UserError, OSError) as exc:
            return _write_refused("sample not extended", exc, server.run_dir)
        raise web.HTTPSeeOther(f"/sample#s-{before + 1}")

    async def label(request: web.Request) -> web.StreamResponse:
        form = await request.post()
        if not _token_ok(server, form):
            return _error(403, "label refused: the page's token does not match (reload the page)")
        key = (str(form.get("target", "")), str(form.get("unit_id", "")))
        try:
            with hold_run_dir(server.run_dir):
                sample = read_sample(server.run_dir)
                unit = next((u for u in sample.units if (u.target, u.unit_id) == key), None) if sample else None
                if sample is None or unit is None:
                    return _error(400, "label not saved: that unit is not in the drawn sample")
                row = SampleLabel(draw_id=sample.draw.draw_id, target=unit.target, unit_id=unit.unit_id,
                                  verdict_id=unit.verdict_id, verdict=str(form.get("verdict", "")),  # type: ignore[arg-type]
                                  who=str(form.get("who", "")), at=utc_now(), note=str(form.get("note", "")).strip(),
                                  source="page")
                append_labels(server.run_dir, [row])
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            return _error(400, f"label not saved: {problems}")
        except (RunDirInUse, DamagedSample, OSError) as exc:
            return _write_refused("label not saved", exc, server.run_dir)
        position = str(form.get("position", ""))
        raise web.HTTPSeeOther("/sample" + (f"#s-{int(position) + 1}" if position.isdigit() else ""))

    app.router.add_get("/sample", page)
    app.router.add_post("/sample/draw", draw)
    app.router.add_post("/sample/extend", extend)
    app.router.add_post("/sample/label", label)


__all__ = ["SAMPLE_NOTE", "add_sample_routes", "labels_text", "render_sample_page"]
