"""``optrules serve``: the local web app."""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console

from ..escape import printable


# -- serve ----------------------------------------------------------------------------------------------
def _token_from_file(path: str | None) -> str | None:
    if not path:
        return None
    try:
        token = Path(path).read_text(encoding="utf-8-sig").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise SystemExit(f"error: cannot read the token file {path}: {error}") from None
    if len(token) < 16 or not token.isprintable():
        raise SystemExit(f"error: the token in {path} must be one line of at least 16 printable characters")
    return token


def cmd_serve(args, console: Console) -> int:
    from urllib.parse import quote

    try:
        from ..web.app import bind_socket, new_token, serve
    except ImportError as error:
        raise SystemExit(f"error: the web app needs its extra dependencies ({error.name} is not installed): "
                         "pip install 'optrules[web]'") from None

    if args.max_upload_mb <= 0 or (args.max_upload_total_mb is not None and args.max_upload_total_mb < args.max_upload_mb):
        raise ValueError("--max-upload-mb must be positive and --max-upload-total-mb at least as large")
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        console.print(f"[bold yellow]warning:[/] serving on {args.host}: anyone who reaches this machine "
                      + ("can upload data and start searches" if args.no_token else "and has the link can use the app")
                      + " (plain HTTP: the token and data cross the network unencrypted)")
    if args.token:
        console.print("[bold yellow]warning:[/] --token shows in the process list (ps) to every user of this "
                      "machine: prefer --token-file or the OPTRULES_TOKEN environment variable")
    token = None if args.no_token else (args.token or _token_from_file(args.token_file)
                                        or os.environ.get("OPTRULES_TOKEN") or new_token())
    if args.no_token:
        console.print("[bold yellow]warning:[/] no access token: every user of this machine can use the app")
    host = f"[{args.host}]" if ":" in args.host else args.host
    try:  # the port first: a link printed before a failed start would lead to another server
        sock = bind_socket(args.host, args.port)
    except OSError as error:
        raise SystemExit(f"error: cannot serve on {host}:{args.port}: {printable(error.strerror or str(error))} "
                         "(another server holds the port? --port chooses another)") from None
    address = f"http://{host}:{args.port}/" + (f"?token={quote(token)}" if token else "")
    console.print(f"optrules web app: open {address}  (Ctrl-C to stop)", soft_wrap=True)
    serve(args.host, args.port, args.workers, args.max_upload_mb, token, args.max_upload_total_mb, sock=sock)
    return 0


def _add_serve_command(commands) -> None:
    serve = commands.add_parser(
        "serve", help="start the local web app: upload a CSV, watch the search converge, download the model",
        description="A small web app on this machine (127.0.0.1 by default): upload a CSV or pick a bundled "
                    "dataset, choose the target and the model, start runs (they queue), watch the best "
                    "objective and the lower bound meet, read and download the certified model.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--workers", type=int, default=1, help="runs fitted at the same time (default 1; others queue)")
    serve.add_argument("--max-upload-mb", type=float, default=50.0, help="largest CSV accepted, MB (default 50)")
    serve.add_argument("--max-upload-total-mb", type=float, default=None,
                       help="uploads kept on disk at most, MB (default 10 x --max-upload-mb); the oldest go first")
    access = serve.add_mutually_exclusive_group()
    access.add_argument("--token", default=None,
                        help="the access token the page and API need (default: $OPTRULES_TOKEN, or a new random one "
                             "at each start); it shows in the process list: prefer --token-file")
    access.add_argument("--token-file", default=None,
                        help="read the access token from this file (one line), out of sight of the process list")
    access.add_argument("--no-token", action="store_true",
                        help="no access token: anyone who can reach the port (other users of this machine "
                             "included) can use the app")
    serve.set_defaults(handler=cmd_serve)
