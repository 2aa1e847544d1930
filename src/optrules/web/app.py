"""The web app's HTTP side (Starlette): pages, JSON API, server-sent events of a run's progress.

API (all JSON unless said):

* ``GET /api/limits``: what a run and an upload may use (defaults and most);
* ``GET /api/datasets``: the bundled datasets;
* ``POST /api/uploads`` (multipart ``file``): store a CSV; returns its key, columns and a preview;
* ``GET /api/tables/{key}``: columns and preview of an upload or ``dataset:NAME``;
* ``POST /api/runs`` ``{table, target, model, params, sensitive}``: validate and queue a run (400 with a
  message; ``sensitive``: the column of the two groups a fairness constraint compares, with ``params.fairness``);
* ``GET /api/runs``, ``GET /api/runs/{id}``: status, last progress point, result when done;
* ``GET /api/runs/{id}/events``: ``text/event-stream`` of progress points, then an ``end`` event;
* ``POST /api/runs/{id}/rashomon`` ``{params: {epsilon_percent, group, time_limit, max_memory}}``: queue
  the enumeration of every rule list within that % of a finished rule-list run's optimum (a run of
  kind ``rashomon``; its result holds the set's size, certificate and analysis);
* ``POST /api/runs/{id}/frontier`` ``{params: {bounds, time_limit, max_memory}}``: queue the certified
  optimum under each bound of a finished fit under a fairness constraint (a run of kind ``frontier``: the
  trade-off curve, a point per bound);
* ``POST /api/runs/{id}/cancel``; ``GET /api/runs/{id}/model.json``: the model as a download.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import secrets
import socket
from importlib import resources

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..families import default_family
from ..parameters import DEFAULT_TIME_LIMIT
from .runs import FINISHED, MAX_TIME_LIMIT, InputError, RunManager, memory_limits_mb
from .uploads import UploadRefused

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
STATE_CHANGING = ("POST", "PUT", "PATCH", "DELETE")
#: the largest JSON request body (a run's settings are a few hundred bytes)
MAX_JSON_BYTES = 64 * 1024
#: headers of every response: no other site may frame the app, and no browser may guess a type
SECURITY_HEADERS = [(b"x-frame-options", b"DENY"), (b"content-security-policy", b"frame-ancestors 'none'"),
                    (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]


def _hostname(value: str) -> str:
    """``127.0.0.1`` of ``127.0.0.1:8000``, ``::1`` of ``[::1]:8000``."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class RefuseOtherSites:
    """What another web site can make a browser send is refused (as Jupyter does for its local server):

    * a ``Host`` header that does not name this server (DNS rebinding: a foreign name resolving to
      127.0.0.1) gets 403, on every request, reads included;
    * with an access ``token`` (``optrules serve`` makes one per start), every ``/api/`` request must
      carry it, in the cookie that opening the printed link sets or in an ``Authorization: token ...``
      header (for scripts); 401 otherwise. It keeps out other users of this machine, who can reach
      127.0.0.1 too;
    * a state-changing request (POST, ...) needs an ``Origin`` header naming this very server (scheme,
      host and port): a page on another origin, or a form posted from one, gets 403. A request whose
      ``Authorization`` header carries the token is exempt: a page cannot set that header on another
      origin without a CORS preflight, which this server never grants;
    * a run is submitted as ``application/json`` only (415 otherwise): a cross-site ``text/plain``
      body is a "simple" request that browsers send without asking.
    """

    def __init__(self, app, allowed_hosts, token: str | None = None):
        self.app = app
        self.allowed_hosts = {h.lower().strip("[]") for h in allowed_hosts}
        self.token = token

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        problem = self.problem(scope)
        if problem is None:
            return await self.app(scope, receive, send_with_headers)
        await _error(problem[1], problem[0])(scope, receive, send_with_headers)

    def problem(self, scope) -> tuple[int, str] | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if _hostname(host) not in self.allowed_hosts:
            return 403, f"host {host!r} is not this server's: open the app at its own address"
        by_header = self.token is not None and _same(headers.get("authorization", "").partition(" ")[2], self.token)
        if self.token is not None and scope["path"].startswith("/api/") and not by_header:
            if not _same(_cookie(headers.get("cookie", ""), token_cookie(scope)), self.token):
                return 401, ("this server needs its access token: open the link that 'optrules serve' printed "
                             "(http://.../?token=...)")
        if scope["method"] in STATE_CHANGING and not by_header:
            origin = headers.get("origin", "")
            if origin.lower() not in {f"{scheme}://{host}".lower() for scheme in ("http", "https")}:
                return 403, f"requests that change something must come from the app's own page (Origin {origin or 'missing'})"
        if (scope["method"] in STATE_CHANGING and _takes_json(scope["path"])
                and not headers.get("content-type", "").startswith("application/json")):
            return 415, "runs are submitted as application/json"
        return None


def _takes_json(path: str) -> bool:
    """Requests with a JSON body: a run, a Rashomon set of a run."""
    return path == "/api/runs" or (path.startswith("/api/runs/") and path.endswith(("/rashomon", "/frontier")))


def _same(given: str, token: str) -> bool:
    return bool(given) and secrets.compare_digest(given.encode(), token.encode())


def _cookie(header: str, name: str) -> str:
    """The value of cookie ``name`` in a ``Cookie`` header, read as browsers send it (``a=1; b=2``), each
    pair on its own: another local app's cookie (JSON, spaces, ``a[b]=1``) hides none of the others, as
    ``http.cookies.SimpleCookie`` let it (it drops every cookie after one it cannot parse)."""
    for pair in header.split(";"):
        key, equals, value = pair.strip().partition("=")
        if equals and key.strip() == name:
            return value.strip().strip('"')
    return ""


def token_cookie(scope) -> str:
    """The cookie's name carries the port: cookies are shared by every port of a host."""
    server = scope.get("server") or ("", 0)
    return f"optrules-token-{server[1] or 0}"


def _error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _json_object(request: Request):
    """The request's JSON object body (at most :data:`MAX_JSON_BYTES`, counted as it arrives), or the
    error response saying why there is none."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_JSON_BYTES:
            return _error(f"the request body passed {MAX_JSON_BYTES // 1024} KB: a run's settings are far smaller", 413)
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks))
    except RecursionError:
        return _error("the request body is JSON nested too deep")
    except (ValueError, UnicodeDecodeError):  # (ValueError: also an integer of thousands of digits)
        return _error("the request body is not JSON")
    return body if isinstance(body, dict) else _error("the request body must be a JSON object")


def _json(data, status: int = 200) -> Response:
    # browsers reject NaN/Infinity in JSON: allow_nan=False makes a stray one an error here, not there
    return Response(json.dumps(data, default=_plain, allow_nan=False), status_code=status, media_type="application/json")


def _plain(value):
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def create_app(manager: RunManager | None = None, workers: int = 1, max_upload_mb: float = 50.0,
               allowed_hosts=LOOPBACK_NAMES, token: str | None = None,
               max_upload_total_mb: float | None = None) -> Starlette:
    """The app; ``manager`` (runs and tables) is created if not given and shut down with the app.
    ``allowed_hosts``: the names a request's ``Host`` may carry; ``token``: the access token every API
    request needs (None: none; see :class:`RefuseOtherSites`)."""
    manager = manager or RunManager(
        workers=workers, max_upload_bytes=int(max_upload_mb * 2**20),
        max_upload_total_bytes=None if max_upload_total_mb is None else int(max_upload_total_mb * 2**20))
    api = Api(manager, token)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        manager.shutdown()  # cancel what runs, stop the workers

    app = Starlette(routes=api.routes(), lifespan=lifespan)
    app.state.manager = manager
    app.add_middleware(RefuseOtherSites, allowed_hosts=allowed_hosts, token=token)
    return app


class Api:
    """The page and the JSON API over a :class:`RunManager`: one method a route (:meth:`routes`).
    Requests reach it through :class:`RefuseOtherSites`, which checks their host, origin and ``token``."""

    def __init__(self, manager: RunManager, token: str | None):
        self.manager = manager
        self.token = token
        self.static = resources.files("optrules.web").joinpath("static")

    def routes(self) -> list:
        return [
            Route("/", self.index),
            Route("/api/limits", self.limits),
            Route("/api/datasets", self.datasets),
            Route("/api/families", self.families),
            Route("/api/uploads", self.upload, methods=["POST"]),
            Route("/api/tables/{key}", self.table),
            Route("/api/runs", self.runs, methods=["GET"]),
            Route("/api/runs", self.submit, methods=["POST"]),
            Route("/api/runs/{run_id}", self.run_detail),
            Route("/api/runs/{run_id}/cancel", self.cancel, methods=["POST"]),
            Route("/api/runs/{run_id}/rashomon", self.rashomon, methods=["POST"]),
            Route("/api/runs/{run_id}/frontier", self.frontier, methods=["POST"]),
            Route("/api/runs/{run_id}/events", self.events),
            Route("/api/runs/{run_id}/model.json", self.model_json),
            Mount("/static", StaticFiles(directory=str(self.static)), name="static"),
        ]

    async def index(self, request: Request) -> Response:
        given = request.query_params.get("token")
        if given is not None:  # the printed link: keep the token in a cookie, and take it out of the address
            if self.token is None or not _same(given, self.token):
                return Response("wrong access token: open the link that 'optrules serve' printed", 401,
                                media_type="text/plain")
            response = RedirectResponse("/", 303)
            response.set_cookie(token_cookie(request.scope), self.token, httponly=True, samesite="strict")
            return response
        return Response(self.static.joinpath("index.html").read_text(), media_type="text/html",
                        headers={"Cache-Control": "no-store"})

    async def limits(self, request: Request) -> Response:
        default_mb, most_mb = memory_limits_mb()
        return _json({
            "time_limit": {"default": DEFAULT_TIME_LIMIT, "max": MAX_TIME_LIMIT},
            "max_memory_mb": {"default": round(default_mb), "max": round(most_mb)},
            "max_upload_mb": self.manager.uploads.max_file_bytes / 2**20,
            "max_upload_total_mb": self.manager.uploads.max_total_bytes / 2**20,
        })

    async def families(self, request: Request) -> Response:
        """The model families and the settings of each (the page builds its form from these)."""
        from ..families import families as registry

        return _json([family.describe() for family in registry().values()])

    async def datasets(self, request: Request) -> Response:
        from ..data.datasets import DATASETS

        return _json([{"key": f"dataset:{name}", "name": name, "description": description}
                      for name, (_, description) in DATASETS.items()])

    async def upload(self, request: Request) -> Response:
        # a declared size over the limit is refused before reading; the rest is counted as it streams
        manager = self.manager
        declared = request.headers.get("content-length") or "0"
        if declared.isdigit() and int(declared) > manager.max_upload_bytes + 64 * 1024:
            return _error(f"the file is {int(declared) / 2**20:.1f} MB, over the limit of "
                          f"{manager.max_upload_bytes / 2**20:.1f} MB", 413)
        try:
            info = await manager.receive_upload(request.headers.get("content-type", ""), request.stream())
        except UploadRefused as error:
            return _error(str(error), error.status)
        except InputError as error:
            return _error(str(error))
        return _json(info)

    async def table(self, request: Request) -> Response:
        try:
            return _json(await asyncio.to_thread(self.manager.table_info, request.path_params["key"]))
        except InputError as error:
            return _error(str(error), 404)

    async def submit(self, request: Request) -> Response:
        body = await _json_object(request)
        if isinstance(body, Response):
            return body
        fields = {"table": body.get("table"), "target": body.get("target"),
                  "model": body.get("model", default_family().name), "sensitive": body.get("sensitive") or ""}
        wrong = [name for name, value in fields.items() if not isinstance(value, str)]
        if wrong:
            return _error(f"{', '.join(wrong)} must be text (a table key, a column name, a model family)")
        try:
            run = await asyncio.to_thread(self.manager.submit, fields["table"], fields["target"], fields["model"],
                                          body.get("params") or {}, fields["sensitive"])
        except InputError as error:
            return _error(str(error), error.status)
        return _json(run.summary(), 201)

    async def rashomon(self, request: Request) -> Response:
        return await self._child_run(request, self.manager.submit_rashomon)

    async def frontier(self, request: Request) -> Response:
        return await self._child_run(request, self.manager.submit_frontier)

    async def _child_run(self, request: Request, submit) -> Response:
        """A run made from a finished one (its Rashomon set, its trade-off curve): ``submit(run_id, params)``."""
        body = await _json_object(request)
        if isinstance(body, Response):
            return body
        try:
            run = await asyncio.to_thread(submit, request.path_params["run_id"], body.get("params") or {})
        except InputError as error:
            return _error(str(error), 404 if str(error).startswith("no run") else error.status)
        return _json(run.summary(), 201)

    def _run_or_none(self, request: Request):
        try:
            return self.manager.get(int(request.path_params["run_id"]))
        except (KeyError, ValueError):
            return None

    async def runs(self, request: Request) -> Response:
        return _json([run.summary() for run in sorted(self.manager.runs.values(), key=lambda r: -r.id)])

    async def run_detail(self, request: Request) -> Response:
        run = self._run_or_none(request)
        if run is None:
            return _error("no such run", 404)
        return _json({**run.summary(), "points": run.points, "result": run.result})

    async def cancel(self, request: Request) -> Response:
        run = self._run_or_none(request)
        if run is None:
            return _error("no such run", 404)
        self.manager.cancel(run.id)
        return _json(run.summary())

    async def model_json(self, request: Request) -> Response:
        run = self._run_or_none(request)
        if run is None or run.result is None:
            return _error("no model for this run (yet)", 404)
        return Response(json.dumps(run.result["model"], indent=2, default=_plain, allow_nan=False),
                        media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="optrules-run-{run.id}.json"'})

    async def events(self, request: Request) -> Response:
        run = self._run_or_none(request)
        if run is None:
            return _error("no such run", 404)
        return StreamingResponse(_event_stream(run, request), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})


async def _event_stream(run, request: Request):
    """A run's status, then its progress points as they come, each status change, and its end."""
    sent = 0
    yield f"event: status\ndata: {json.dumps(run.summary(), default=_plain)}\n\n"
    last_status = run.status
    while True:
        points = run.points[sent:]
        for point in points:
            yield f"event: progress\ndata: {json.dumps(point)}\n\n"
        sent += len(points)
        if run.status != last_status:
            last_status = run.status
            yield f"event: status\ndata: {json.dumps(run.summary(), default=_plain)}\n\n"
        if run.status in FINISHED and sent >= len(run.points):
            yield f"event: end\ndata: {json.dumps(run.summary(), default=_plain)}\n\n"
            return
        if await request.is_disconnected():
            return
        await asyncio.sleep(0.2)


def new_token() -> str:
    return secrets.token_urlsafe(24)


class HideTokens(logging.Filter):
    """Access-log lines carry the request's address: the token of the printed link is written ``***``."""

    _TOKEN = re.compile(r"(token=)[^&\s\"]*")

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args:
            record.args = tuple(self._TOKEN.sub(r"\1***", a) if isinstance(a, str) else a for a in record.args)
        record.msg = self._TOKEN.sub(r"\1***", str(record.msg))
        return True


def host_names(host: str) -> tuple[str, ...]:
    """The names a request's ``Host`` may carry for a server bound to ``host``: loopback's, ``host``
    itself, and for a wildcard address (0.0.0.0, ::, what a user asks for to be reached from the
    network) this machine's own names and addresses."""
    names = {*LOOPBACK_NAMES, host}
    if host in ("0.0.0.0", "::", ""):
        machine = socket.gethostname()
        names |= {machine, socket.getfqdn()}
        with contextlib.suppress(OSError):
            names |= {info[4][0] for info in socket.getaddrinfo(machine, None)}
    return tuple(sorted(n for n in names if n))


def bind_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` (not yet listening), or the ``OSError`` that says why not: taken
    before the app's link is printed, so that a port another server holds is an error, not a link to it."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # (as uvicorn binds: a restart finds the port)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def serve(host: str = "127.0.0.1", port: int = 8000, workers: int = 1, max_upload_mb: float = 50.0,
          token: str | None = None, max_upload_total_mb: float | None = None, sock: socket.socket | None = None) -> None:
    """Run the app with uvicorn (blocking) on ``host``:``port`` (or on ``sock``, bound there by
    :func:`bind_socket`); loopback only unless told otherwise."""
    import uvicorn

    app = create_app(workers=workers, max_upload_mb=max_upload_mb, allowed_hosts=host_names(host),
                     token=token, max_upload_total_mb=max_upload_total_mb)
    logging.getLogger("uvicorn.access").addFilter(HideTokens())
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="info"))
    server.run(sockets=None if sock is None else [sock])
