"""The practice room's web application: one page, its assets, and a JSON API over kata/web/room.py.

Who may do what:
  - every request needs the server's token (the `token` query parameter of the address `kata serve`
    prints, then the cookie that sets; or the X-Kata-Token header), else 403;
  - the Host header must name 127.0.0.1 or localhost (at the server's port), else 403, so a page of
    another site that points its own name at this machine (DNS rebinding) gets nothing;
  - a request that changes anything is a POST carrying the token in its X-Kata-Token header (a
    cookie alone is not enough, and a foreign Origin is refused), so another site cannot submit
    a form to it; a GET changes nothing;
  - every path names a kata, a file role, a session or an asset by name, looked up in the
    workbook's own lists: anything else is 404, so no request reaches a file outside them;
  - the reference and hidden tests follow the command line's rules (room.solution, review.review).

    GET  /                       the page (the token's cookie set, then redirected to drop it)
    GET  /static/NAME            editor.js, app.js, style.css
    GET  /api/state              the session, its clock and questions (`kata status`)
    GET  /api/catalog            katas and exams (`kata list`)
    GET  /api/plan/TARGET        the briefing `kata start TARGET` shows
    GET  /api/kata/SLUG          the prompt (`kata show`), the files, hints shown
    GET  /api/file/SLUG/ROLE     one file's text and digest
    GET  /api/solution/SLUG      the reference (`kata solution`)
    GET  /api/review[/ID]        a review (`kata review`)
    GET  /api/progress           the progress charts (`kata progress`, `kata history`)
    POST /api/start              {target, minutes, reveal, abandon}
    POST /api/save/SLUG/ROLE     {text, base, force}; 409 when the file changed since `base`
    POST /api/keep/SLUG/ROLE     {text}: the editor's text into .kata/archive/
    POST /api/check/SLUG         Run (`kata check`)
    POST /api/submit/SLUG        Submit (`kata submit`)
    POST /api/hint/SLUG          the next hint (`kata hint`)
    POST /api/finish             `kata finish`
    POST /api/settle             the deadline's auto-submit
"""

from __future__ import annotations

import hmac
import json
import sqlite3
from pathlib import Path
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from kata.catalog import CatalogError, Workbook
from kata.store import StoreError
from kata.web import review as past
from kata.web import room
from kata.workspace import WorkspaceError

STATIC = Path(__file__).resolve().parent / "static"
TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".html": "text/html; charset=utf-8", ".png": "image/png", ".svg": "image/svg+xml"}
HOSTS = ("127.0.0.1", "localhost")
HEADERS = {  # on every answer: nothing from elsewhere, no framing, no token in a Referer
    "content-security-policy": ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                                "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; "
                                "base-uri 'none'; form-action 'self'"),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
READS = ("GET", "HEAD")
MAX_BODY = 2 * 1024 * 1024  # bytes: a workspace file's text is far smaller


def _host_port(netloc: str) -> tuple[str, str]:
    """('localhost', '8000') of 'localhost:8000'; a missing port is ''."""
    name, _, port = netloc.rpartition(":") if not netloc.endswith("]") else (netloc, "", "")
    return (name, port) if name else (netloc, "")


class Guard:
    """ASGI middleware: the Host, token and Origin rules above, and the headers on every answer."""

    def __init__(self, app, token: str, port: int | None):
        self.app, self.token, self.port = app, token, port
        self.cookie = f"kata-token-{port or 0}"

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message):
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [
                    (k.encode(), v.encode()) for k, v in HEADERS.items() if k.encode() not in have]
            await send(message)

        request = Request(scope)
        why = self.refusal(request)
        if why is not None:
            await PlainTextResponse(f"forbidden: {why}\n", 403)(scope, receive, with_headers)
            return
        length = request.headers.get("content-length", "0")
        if not length.isdigit() or int(length) > MAX_BODY:
            await _too_large()(scope, receive, with_headers)
            return
        await self.app(scope, receive, with_headers)

    def refusal(self, request: Request) -> str | None:
        """Why the request is refused, or None."""
        host = request.headers.get("host", "")
        name, port = _host_port(host)
        if name not in HOSTS or (self.port and port and port != str(self.port)):
            return "this server answers only to 127.0.0.1 and localhost"
        if request.method in READS:
            given = (request.query_params.get("token") or request.headers.get("x-kata-token")
                     or request.cookies.get(self.cookie) or "")
        else:
            given = request.headers.get("x-kata-token", "")
            origin = request.headers.get("origin")
            if origin is not None:  # the page's own origin: this scheme, host and port
                parts = urlsplit(origin)
                if parts.scheme != "http" or _host_port(parts.netloc) != (name, port) or parts.path not in ("", "/"):
                    return "a request from another site (its Origin is not this page's)"
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return "no valid token: open the address `kata serve` printed"
        return None


TOO_LARGE = f"the request body is over {MAX_BODY // (1024 * 1024)} MiB: the room refuses it"


def _too_large() -> JSONResponse:
    return JSONResponse({"error": TOO_LARGE}, 413)


def _answer(data) -> JSONResponse:
    return JSONResponse(data)


async def _call(fn, *args, **kwargs) -> Response:
    """Run a room function in a worker thread; its refusals and the user's errors as JSON."""
    try:
        return _answer(await run_in_threadpool(fn, *args, **kwargs))
    except room.Refused as exc:
        return JSONResponse({"error": str(exc), **exc.data}, exc.status)
    except (CatalogError, StoreError, WorkspaceError) as exc:
        return JSONResponse({"error": str(exc)}, 400)
    except sqlite3.DatabaseError as exc:
        return JSONResponse({"error": f"the store is damaged ({exc}): run `kata doctor`"}, 500)


async def _body(request: Request) -> dict:
    raw = b""
    async for chunk in request.stream():  # a body sent without a length is counted as it comes
        raw += chunk
        if len(raw) > MAX_BODY:
            raise room.Refused(413, TOO_LARGE)
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise room.Refused(400, "the body must be a JSON object")
    return data


def create_app(wb: Workbook, token: str, port: int | None = None) -> Guard:
    """The application for workbook `wb`, answering only to `token` (and, if given, `port`)."""
    assets = {p.name: p for p in STATIC.iterdir() if p.is_file()}
    shell = (STATIC / "index.html").read_text(encoding="utf-8")
    cookie = f"kata-token-{port or 0}"

    async def page(request: Request) -> Response:
        if "token" in request.query_params:  # the address printed: keep the token in a cookie
            answer: Response = RedirectResponse("/", 303)
            answer.set_cookie(cookie, token, httponly=True, samesite="strict", path="/")
            return answer
        return HTMLResponse(shell.replace("{{TOKEN}}", token))

    async def static(request: Request) -> Response:
        path = assets.get(request.path_params["name"])
        if path is None:
            return PlainTextResponse("not found\n", 404)
        return Response(path.read_bytes(), media_type=TYPES.get(path.suffix, "application/octet-stream"))

    def get(fn, *names):
        async def endpoint(request: Request) -> Response:
            return await _call(fn, wb, *(request.path_params[n] for n in names))
        return endpoint

    async def plan(request: Request) -> Response:
        q = request.query_params
        try:
            minutes = float(q["minutes"]) if q.get("minutes") else None
        except ValueError:
            return JSONResponse({"error": "minutes must be a number"}, 400)
        return await _call(room.briefing, wb, request.path_params["target"], minutes, q.get("reveal") or None)

    async def review(request: Request) -> Response:
        return await _call(past.review, wb, request.path_params.get("sid"))

    def post(fn, *names, fields: dict[str, tuple[tuple[type, ...], bool]] | None = None):
        """An action: `fields` maps each body field to (the types it may have, required)."""
        async def endpoint(request: Request) -> Response:
            try:
                body = await _body(request) if fields else {}
                kwargs = _fields(body, fields or {})
            except room.Refused as exc:
                return JSONResponse({"error": str(exc)}, exc.status)
            return await _call(fn, wb, *(request.path_params[n] for n in names), **kwargs)
        return endpoint

    text: dict[str, tuple[tuple[type, ...], bool]] = {"text": ((str,), True)}
    routes = [
        Route("/", page), Route("/static/{name}", static),
        Route("/api/state", get(room.state)), Route("/api/catalog", get(room.catalog)),
        Route("/api/plan/{target}", plan), Route("/api/kata/{slug}", get(room.kata_page, "slug")),
        Route("/api/file/{slug}/{role}", get(room.read_file, "slug", "role")),
        Route("/api/solution/{slug}", get(room.solution, "slug")),
        Route("/api/review", review), Route("/api/review/{sid:int}", review),
        Route("/api/progress", get(past.progress)),
        Route("/api/start", post(room.start, fields={
            "target": ((str,), True), "minutes": ((int, float, type(None)), False),
            "reveal": ((str, type(None)), False), "abandon": ((bool,), False)}), methods=["POST"]),
        Route("/api/save/{slug}/{role}", post(room.save, "slug", "role", fields={
            **text, "base": ((str, type(None)), True), "force": ((bool,), False)}), methods=["POST"]),
        Route("/api/keep/{slug}/{role}", post(room.keep_copy, "slug", "role", fields=text), methods=["POST"]),
        Route("/api/check/{slug}", post(room.check, "slug"), methods=["POST"]),
        Route("/api/submit/{slug}", post(room.submit, "slug"), methods=["POST"]),
        Route("/api/hint/{slug}", post(room.hint, "slug"), methods=["POST"]),
        Route("/api/finish", post(room.finish), methods=["POST"]),
        Route("/api/settle", post(room.settle), methods=["POST"]),
    ]
    return Guard(Starlette(routes=routes), token, port)


def _fields(body: dict, fields: dict[str, tuple[tuple[type, ...], bool]]) -> dict:
    """The body's fields checked against their types (bool is not a number here); Refused(400)."""
    out = {}
    for name, (types, required) in fields.items():
        if name not in body:
            if required:
                raise room.Refused(400, f"the body needs '{name}'")
            continue
        value = body[name]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise room.Refused(400, f"'{name}' has the wrong type")
        out[name] = value
    return out
