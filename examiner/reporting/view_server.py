"""`examiner view`: a local web page to review a run's verdicts and override them with a reason.

Why it is built this way:
- loopback only (127.0.0.1) and no account: it is one person's tool on their own machine. Because any web
  page that person opens could still post to a local port, a write needs the random token this server put
  in its own page (checked in constant time), a Host header naming the loopback address (so a rebound DNS
  name cannot reach it) and, when the browser sends one, an Origin of this server;
- every string of the run (questions, answers, reasons, corpus text, ids) is untrusted and is escaped;
  the page's one small script is allowed by a per-response nonce in the Content-Security-Policy;
- filtering is done on the server from query parameters, so the page works without script at all;
- an override is appended to overrides.jsonl while holding the run's lock (core/runlock.py): a run that
  another process is writing (an exam still going, a resume) is shown but refuses overrides, and an exam
  cannot start writing in the middle of an append. verdicts.jsonl is never written.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
from collections.abc import Callable
from dataclasses import replace
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from pydantic import ValidationError

from examiner.core.overrides import OverrideRecord, utc_now
from examiner.core.rundir import VERDICTS, RunDir
from examiner.core.errors import UserError
from examiner.core.owned import refuse_links
from examiner.core.runlock import RunDirInUse, hold_run_dir, refuse_if_in_use
from examiner.reporting.answer_fold import answer_html
from examiner.reporting.html import passage_html
from examiner.reporting.review_style import PAGE_CSS
from examiner.reporting.with_overrides import LABELS
from examiner.reporting.review import FILTERS, ReviewRow, choices, filtered, review_rows
from examiner.reporting.run_reader import load_run
from examiner.reporting.sample_page import add_sample_routes

HOST = "127.0.0.1"
HEADER_BYTES = 16 * 1024
"""Most bytes of request headers a request may carry; more is answered 431 (Request Header Fields Too Large)."""
PARSER_BYTES = 1024 * 1024
"""Longest header line the HTTP parser reads, so a header above HEADER_BYTES still reaches the 431 check; a
longer one is refused by the parser (400), logged as one line without a traceback."""


class _OneLineErrors(logging.Filter):
    """The server's log of a request it could not parse, as one short line: no traceback, no echo of the
    request's (possibly huge) bytes. The server goes on serving either way."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError):
            reason = (str(exc.message).splitlines() or [type(exc).__name__])[0][:120]
            record.msg, record.args = f"refused a request it could not read ({exc.code}: {reason})", None
            record.exc_info, record.exc_text = None, None
        return True


SERVER_LOG = logging.getLogger("examiner.view.server")
SERVER_LOG.addFilter(_OneLineErrors())
PAGE_ROWS = 100
"""Verdicts shown per page (the rest are a `next` link away)."""


FILTER_SCRIPT = """
for (const box of document.querySelectorAll('form.filters select')) {
  box.addEventListener('change', () => box.form.submit());
}
"""
"""Submit the filter form when a select box changes (the button does the same without script)."""


class ReviewServer:
    """The page and the override endpoint for one run directory."""

    def __init__(self, run_dir: str | Path, who: str) -> None:
        self.run_dir = Path(run_dir)
        self.rundir = RunDir(self.run_dir)
        self.who = who
        self.token = secrets.token_urlsafe(32)
        self.port = 0
        """Set once the server listens (the Host and Origin checks need it)."""
        self._rows: list[ReviewRow] = []
        self._rows_of: tuple[int, int] | None = None
        self.run_id = ""
        self.status = ""

    # --- data --------------------------------------------------------------------------------------------

    def rows(self) -> list[ReviewRow]:
        """The run's rows with the overrides in force now; the run itself is re-read only when
        verdicts.jsonl changed (a run still going), overrides on every request."""
        file = self.rundir.file(VERDICTS)
        version = (file.stat().st_mtime_ns, file.stat().st_size) if file.is_file() else (0, 0)
        if self._rows_of != version:
            run = load_run(self.run_dir)
            self._rows, self._rows_of = review_rows(run), version
            self.run_id, self.status = run.info.run_id, run.info.status
        current = self.rundir.current_overrides()
        return [replace(row, override=current.get((row.question_id, row.unit_id))) for row in self._rows]

    def in_use(self) -> str | None:
        """Why overrides are refused now (another process writes the run), or None."""
        try:
            refuse_if_in_use(self.run_dir)
        except RunDirInUse as exc:
            return str(exc)
        return None

    # --- checks ------------------------------------------------------------------------------------------

    def _origins(self) -> set[str]:
        return {f"{HOST}:{self.port}", f"localhost:{self.port}"}

    @web.middleware
    async def guard(self, request: web.Request, handler: Callable[[web.Request], Any]) -> web.StreamResponse:
        """Loopback Host only on every request; on a write also this server's Origin and token. A run file
        a handler cannot read (examiner's UserError) is answered 422 with its one line."""
        size = sum(len(name) + len(value) + 4 for name, value in request.raw_headers)
        if size > HEADER_BYTES:
            return _error(431, f"request headers too large ({size} bytes; at most {HEADER_BYTES})")
        if request.host not in self._origins():
            return _error(403, "this page is served to 127.0.0.1 only")
        if request.method == "POST":
            origin = request.headers.get("Origin")
            if origin is not None and origin not in {f"http://{o}" for o in self._origins()}:
                return _error(403, "override refused: the request did not come from this page")
        try:
            return await handler(request)
        except UserError as exc:  # a run file that cannot be read (a damaged line): say which, never a 500
            return _error(422, f"{exc}".splitlines()[0])

    # --- handlers ----------------------------------------------------------------------------------------

    async def page(self, request: web.Request) -> web.Response:
        wanted = {name: request.query.get(name, "") for name in FILTERS}
        try:
            page = max(1, int(request.query.get("page", "1")))
        except ValueError:
            page = 1
        rows = self.rows()
        nonce = secrets.token_urlsafe(16)
        body = render_page(self, rows, wanted, page, nonce, self.in_use())
        response = web.Response(text=body, content_type="text/html", charset="utf-8")
        response.headers["Content-Security-Policy"] = (
            f"default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-{nonce}'; "
            "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"  # no-referrer would make the form post `Origin: null`
        return response

    async def override(self, request: web.Request) -> web.StreamResponse:
        form = await request.post()
        if not hmac.compare_digest(str(form.get("token", "")), self.token):
            return _error(403, "override refused: the page's token does not match (reload the page)")
        key = (str(form.get("question_id", "")), str(form.get("unit_id", "")))
        verdict = next((row for row in self.rows() if (row.question_id, row.unit_id) == key), None)
        if verdict is None:
            return _error(400, "no verdict of this run has that question and unit")
        try:
            before = verdict.override.verdict if verdict.override is not None else verdict.verdict
            row = OverrideRecord(question_id=key[0], unit_id=key[1], verdict_before=before, verdict=str(form.get("new", "")),
                                 reason=str(form.get("reason", "")), who=str(form.get("who", "")), at=utc_now())
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            return _error(400, f"override not saved: {problems}")
        try:
            with hold_run_dir(self.run_dir):
                self.rundir.append_override(row)
        except RunDirInUse as exc:
            return _error(409, f"override not saved: {exc} (the run is being written; try when it has stopped)")
        except UserError as exc:  # a link in the run folder
            return _error(409, f"override not saved: {exc}")
        except OSError as exc:  # a read-only run directory, a full disk: say so on the page, keep serving
            where = exc.filename or self.run_dir
            return _error(500, f"override not saved: cannot write {where}: {exc.strerror or exc}")
        back = {name: str(form.get(name, "")) for name in FILTERS if form.get(name)}
        raise web.HTTPSeeOther(f"/?{urlencode(back)}#v-{verdict.verdict_id}")

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self.guard], client_max_size=64 * 1024,
                              handler_args={"max_line_size": PARSER_BYTES, "max_field_size": PARSER_BYTES,
                                            "logger": SERVER_LOG})
        app.router.add_get("/", self.page)
        app.router.add_post("/override", self.override)
        add_sample_routes(app, self)  # the "label a random sample" mode (reporting/sample_page.py)
        return app


def _error(status: int, message: str) -> web.Response:
    text = (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>examiner view</title></head>"
            f"<body><p class=\"error\">{escape(message)}</p><p><a href=\"/\">back to the list</a></p></body></html>")
    return web.Response(status=status, text=text, content_type="text/html", charset="utf-8")


# --- the page -------------------------------------------------------------------------------------------------

def _select(name: str, values: list[str], chosen: str) -> str:
    options = ["<option value=\"\">(all)</option>"]
    options += [f"<option value=\"{escape(v)}\"{' selected' if v == chosen else ''}>{escape(v)}</option>"
                for v in values]
    return f"<label>{escape(name)}<select name=\"{escape(name)}\">{''.join(options)}</select></label>"


def _row_html(server: ReviewServer, row: ReviewRow, wanted: dict[str, str]) -> str:
    e = escape
    parts = [f"<article class=\"row v-{e(row.verdict)}\" id=\"v-{e(row.verdict_id)}\" "
             f"data-verdict-id=\"{e(row.verdict_id)}\">",
             f"<div class=\"note\">{e(row.target)} · round {row.round} · cluster <code>{e(row.cluster)}</code> · "
             f"{e(row.qtype)} · unit <code>{e(row.unit_id)}</code></div>",
             f"<div><span class=\"label\">question</span> {e(row.question)}</div>",
             f"<div><span class=\"label\">answer</span> {answer_html(row.answer)}</div>",
             f"<div><span class=\"label\">verdict</span> <b class=\"verdict\">{e(row.verdict)}</b> "
             f"<span class=\"reason\">{e(row.reason)}</span></div>",
             f"<div><span class=\"label\">unit</span> {e(row.unit_text)}</div>"]
    parts += [passage_html(src) for src in row.sources]
    if row.override is not None:
        o = row.override
        parts.append(f"<div class=\"in-force\"><span class=\"label\">override</span> <b class=\"new\">{e(o.verdict)}</b> "
                     f"by {e(o.who)} at {e(o.at)}: <span class=\"why\">{e(o.reason)}</span></div>")
    hidden = {"token": server.token, "question_id": row.question_id, "unit_id": row.unit_id,
              **{k: v for k, v in wanted.items() if v}}
    options = "".join(f"<option value=\"{label}\">{label}</option>" for label in LABELS)
    parts.append("<form class=\"override\" method=\"post\" action=\"/override\">"
                 + "".join(f"<input type=\"hidden\" name=\"{e(k)}\" value=\"{e(v)}\">" for k, v in hidden.items())
                 + f"<select name=\"new\" aria-label=\"new verdict\">{options}</select>"
                 "<input name=\"reason\" required placeholder=\"reason (required)\" aria-label=\"reason\">"
                 f"<input name=\"who\" required value=\"{e(server.who)}\" aria-label=\"who\" size=\"10\">"
                 "<button type=\"submit\">override</button></form>")
    parts.append("</article>")
    return "".join(parts)


def render_page(server: ReviewServer, rows: list[ReviewRow], wanted: dict[str, str], page: int, nonce: str,
                in_use: str | None) -> str:
    """The review page: filters, one page of matching verdicts with their evidence and override forms."""
    e = escape
    shown = filtered(rows, wanted)
    first = (page - 1) * PAGE_ROWS
    overridden = sum(row.override is not None for row in rows)
    out = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
           f"<title>Review {e(server.run_id)}</title><style>{PAGE_CSS}</style></head><body>",
           f"<h1>Review: {e(server.run_id)}</h1>",
           f"<p class=\"note\">{e(str(server.run_dir))} · status {e(server.status)} · {len(rows)} verdicts · "
           f"<span id=\"overridden\">{overridden}</span> overridden (kept in overrides.jsonl; verdicts.jsonl is "
           "never changed) · <a href=\"/sample\" id=\"sample-mode\">label a random sample</a> (calibrates the "
           "report's accuracy; kept apart from overrides)</p>"]
    if in_use:
        out.append(f"<p class=\"banner\">{e(in_use)}: overrides are refused while the run is being written.</p>")
    out.append("<form class=\"filters\" method=\"get\" action=\"/\">")
    out += [_select(name, values, wanted.get(name, "")) for name, values in choices(rows).items()]
    out.append("<button type=\"submit\" id=\"apply\">filter</button></form>")
    out.append(f"<p class=\"note\" id=\"shown\">{len(shown)} of {len(rows)} verdicts match; showing "
               f"{min(first + 1, len(shown))}–{min(first + PAGE_ROWS, len(shown))}.</p>")
    out += [_row_html(server, row, wanted) for row in shown[first:first + PAGE_ROWS]]
    links = []
    query = {k: v for k, v in wanted.items() if v}
    if page > 1:
        links.append(f"<a href=\"/?{e(urlencode({**query, 'page': page - 1}))}\">previous</a>")
    if first + PAGE_ROWS < len(shown):
        links.append(f"<a href=\"/?{e(urlencode({**query, 'page': page + 1}))}\">next</a>")
    if links:
        out.append(f"<p>{' · '.join(links)}</p>")
    out.append(f"<script nonce=\"{e(nonce)}\">{FILTER_SCRIPT}</script></body></html>")
    return "".join(out)


async def serve(run_dir: str | Path, *, port: int, who: str, ready: Callable[[str], None]) -> None:
    """Serve the review page on 127.0.0.1:port (0: any free port) until cancelled; `ready` gets the URL."""
    refuse_links(Path(run_dir))  # overrides are written into the run folder: never through a link
    server = ReviewServer(run_dir, who)
    server.rows()  # read the run before listening: a damaged run fails here with its one-line error
    runner = web.AppRunner(server.app(), access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, HOST, port)
        try:
            await site.start()
        except OSError as exc:  # the port is taken or not ours to use: say so in one line
            raise UserError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from None
        server.port = int(runner.addresses[0][1])
        ready(f"http://{HOST}:{server.port}/")
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


__all__ = ["HOST", "PAGE_ROWS", "ReviewServer", "render_page", "serve"]
