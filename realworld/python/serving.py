# What the Python servers of the realworld tests (flask_app.py, drf_app.py)
# share: the flags of ../script.go's protocol, and serving until told to stop.

import argparse
import signal
import sys
import threading


def parser(prog):
    """An argument parser with the protocol's flags: --limit, --window-ms
    (whole seconds: these limiters count in them) and --watch-stdin."""
    p = argparse.ArgumentParser(prog=prog)
    p.add_argument("--limit", type=_positive, default=30)
    p.add_argument("--window-ms", type=_positive, default=3000)
    p.add_argument("--watch-stdin", action="store_true")
    return p


def parse(p):
    """Parses the arguments, refusing a window that is not whole seconds."""
    args = p.parse_args()
    if args.window_ms % 1000:
        p.error("--window-ms: this limiter's windows are in whole seconds")
    return args


def serve(server, watch_stdin):
    """Prints server's port as the first line of stdout, then serves until
    SIGTERM or SIGINT, or with watch_stdin the end of stdin."""
    print(server.server_port, flush=True)
    stopping = threading.Event()

    def stop(*_):
        if not stopping.is_set():
            stopping.set()
            # shutdown waits for serve_forever to return: not on its thread.
            threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if watch_stdin:
        def watch():
            sys.stdin.read()
            stop()
        threading.Thread(target=watch, daemon=True).start()
    server.serve_forever()


def _positive(s):
    if not s.isdigit() or int(s) <= 0:
        raise argparse.ArgumentTypeError(f"{s!r}: want a positive whole number")
    return int(s)
