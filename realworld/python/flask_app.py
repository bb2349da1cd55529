# Flask-Limiter in a Flask application, for the realworld tests
# (../python.go starts it), speaking the same protocol as the Node.js
# servers (../node/common.js), with serving.py's flags and serving loop:
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

import logging
import sys
import threading

from flask import Flask
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from werkzeug.serving import make_server

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import serving  # noqa: E402 (after the line above)


def main():
    p = serving.parser("flask_app.py")
    p.add_argument("--strategy", choices=["moving-window", "fixed-window"], default="moving-window")
    p.add_argument("--headers", choices=["on", "off"], default="on")
    args = serving.parse(p)

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
    serving.serve(server, args.watch_stdin)


if __name__ == "__main__":
    main()
