# Flask-Limiter in a Flask application, for the realworld tests
# (../python.go starts it), speaking the same protocol as the Node.js
# servers (../node/common.js):
#
#   python3 flask_app.py [--limit 30] [--window-ms 3000]
#       [--strategy moving-window|fixed-window] [--headers on|off] [--watch-stdin]
#
# One default limit, "LIMIT per WINDOW milliseconds", keyed by the client's
# address (flask_limiter.util.get_remote_address), in Flask-Limiter's default
# in-memory storage, with the strategy given (Flask-Limiter's own default is
# fixed-window). --headers on sets RATELIMIT_HEADERS_ENABLED, which is off by
# default: then every answer carries X-RateLimit-Limit, -Remaining, -Reset
# and Retry-After. GET / answers 200 "ok" to what the limiter admits; GET
# /__admitted (exempt) answers the count of those.
#
# It listens on 127.0.0.1, port 0, on werkzeug's threaded server, and prints
# the port as the first line of stdout. SIGTERM or SIGINT stops it; with
# --watch-stdin so does the end of stdin.

import argparse
import logging
import signal
import sys
import threading

from flask import Flask
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from werkzeug.serving import make_server


def positive(s):
    if not s.isdigit() or int(s) <= 0:
        raise argparse.ArgumentTypeError(f"{s!r}: want a positive whole number")
    return int(s)


def main():
    p = argparse.ArgumentParser(prog="flask_app.py")
    p.add_argument("--limit", type=positive, default=30)
    p.add_argument("--window-ms", type=positive, default=3000)
    p.add_argument("--strategy", choices=["moving-window", "fixed-window"], default="moving-window")
    p.add_argument("--headers", choices=["on", "off"], default="on")
    p.add_argument("--watch-stdin", action="store_true")
    args = p.parse_args()
    if args.window_ms % 1000:
        p.error("--window-ms: Flask-Limiter's limits are in whole seconds")

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    app = Flask(__name__)
    app.config["RATELIMIT_HEADERS_ENABLED"] = args.headers == "on"
    limiter = Limiter(
        get_remote_address,
        app=app,
        default_limits=[f"{args.limit} per {args.window_ms // 1000} second"],
        strategy=args.strategy,
        storage_uri="memory://",
    )

    admitted = 0
    lock = threading.Lock()

    @app.get("/")
    def root():
        nonlocal admitted
        with lock:
            admitted += 1
        return "ok\n", 200, {"Content-Type": "text/plain"}

    @app.get("/__admitted")
    @limiter.exempt
    def count():
        with lock:
            n = admitted
        return f"{n}\n", 200, {"Content-Type": "text/plain"}

    server = make_server("127.0.0.1", 0, app, threaded=True)
    print(server.port, flush=True)

    stopping = threading.Event()

    def stop(*_):
        if not stopping.is_set():
            stopping.set()
            # shutdown waits for serve_forever to return: not on its thread.
            threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if args.watch_stdin:
        def watch():
            sys.stdin.read()
            stop()
        threading.Thread(target=watch, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
