"""`kata serve`: the practice room's web server, on 127.0.0.1 only, behind a random token.

    kata serve [--port N] [--no-browser]

It binds 127.0.0.1 (a free port unless --port names one), prints the address with its token, as
notebook servers do, opens the browser on it (the live session, or the katas when none is live),
and serves until Ctrl-C. The page and its assets ship in the package (kata/web/static/), so it
fetches nothing from elsewhere. The server needs the `serve` extra (starlette, uvicorn); without
it `missing()` names the install command and nothing else is imported.
"""

from __future__ import annotations

import importlib.util
import secrets
import socket
import threading
import time
from collections.abc import Callable

PACKAGES = ("starlette>=0.37", "uvicorn>=0.30")  # the `serve` extra (pyproject.toml)
HOST = "127.0.0.1"


def missing() -> str | None:
    """The one-line error when the server's packages are not installed, else None. It names
    the Python kata runs on: kata is not on a package index, so `pip install
    'kata-workbook[serve]'` only works from a clone, and a pipx install has a Python of its own."""
    import shlex
    import sys

    absent = [spec for spec in PACKAGES if importlib.util.find_spec(spec.split(">")[0]) is None]
    if not absent:
        return None
    names = " and ".join(spec.split(">")[0] for spec in absent)
    specs = " ".join(spec.split(">")[0] for spec in absent)  # short, to be copied whole
    return (f"kata serve needs {names}, in the Python kata runs on: "
            f"`{shlex.quote(sys.executable)} -m pip install {specs}` (installed with pipx: "
            f"`pipx inject kata-workbook {specs}`; from a clone: `pip install -e '.[serve]'`)")


class PortError(Exception):
    """The port asked for cannot be used (one line for the learner)."""


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:`port` (0: a free one); PortError names a port in use."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart right after a stop
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise PortError(f"127.0.0.1:{port} cannot be used ({exc.strerror or exc}): "
                      "pick another --port, or leave it out for a free one") from None
    sock.listen(64)
    return sock


def serve(wb, port: int = 0, open_browser: bool = True, say: Callable[[str], None] = print) -> None:
    """Serve the practice room for workbook `wb` until Ctrl-C (or SIGTERM)."""
    import uvicorn

    from kata.web.app import create_app

    sock = bind(port)
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(24)
    url = f"http://{HOST}:{port}/?token={token}"
    config = uvicorn.Config(create_app(wb, token, port), log_level="warning", access_log=False,
                            lifespan="off", timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    say(f"The practice room is at {url}")
    say("Ctrl-C stops it.")
    if open_browser:
        threading.Thread(target=_open_when_up, args=(server, url), daemon=True).start()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # the server stops on Ctrl-C, then passes the signal on: done
        pass
    finally:
        sock.close()
        from kata.session import close_stores

        close_stores()
    say("Stopped.")


def _open_when_up(server, url: str) -> None:
    import webbrowser

    for _ in range(100):
        if server.started:
            webbrowser.open(url)
            return
        time.sleep(0.05)
