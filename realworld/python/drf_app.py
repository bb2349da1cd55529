# Django REST framework's throttling in a Django application, for the
# realworld tests (../python.go starts it), speaking the same protocol as
# the other script servers (../script.go), with serving.py's flags and
# serving loop:
#
#   python3 drf_app.py [--limit 30] [--window-ms 3000] [--watch-stdin]
#
# One APIView with one throttle, a SimpleRateThrottle keyed by the client's
# address (AnonRateThrottle's key) in Django's default cache (local memory).
# DRF's rates are "N/s", "N/m", "N/h" or "N/d"; a window of other seconds
# is set as users do, by overriding parse_rate. SimpleRateThrottle is a
# sliding log of the requests it admitted (a refused one is not logged).
# A 2xx says nothing of the quota; a 429 carries Retry-After: the wait until
# the log's oldest request leaves it, rounded up (Throttled takes the
# ceiling). GET / answers 200 "ok" to what the throttle admits; GET
# /__admitted (not throttled) answers the count of those.
#
# It listens on 127.0.0.1, port 0, on wsgiref's server, one request at a
# time (as a synchronous worker serves them: DRF's throttle reads and writes
# its history without a lock, and threads would lose some of it), and prints
# the port as the first line of stdout. SIGTERM or SIGINT stops it; with
# --watch-stdin so does the end of stdin.

import sys
from wsgiref.simple_server import WSGIRequestHandler, make_server

import django
from django.conf import settings

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import serving  # noqa: E402 (after the line above)


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass  # no line per request


def main():
    args = serving.parse(serving.parser("drf_app.py"))

    settings.configure(
        DEBUG=False,
        ALLOWED_HOSTS=["*"],
        ROOT_URLCONF=__name__,
        SECRET_KEY="realworld",
        INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "rest_framework"],
        MIDDLEWARE=[],
        REST_FRAMEWORK={
            "DEFAULT_AUTHENTICATION_CLASSES": [],
            "DEFAULT_PERMISSION_CLASSES": [],
            "UNAUTHENTICATED_USER": None,
        },
    )
    django.setup()

    from django.http import HttpResponse
    from django.urls import path
    from rest_framework.throttling import AnonRateThrottle
    from rest_framework.views import APIView

    limit, window = args.limit, args.window_ms // 1000

    class Throttle(AnonRateThrottle):
        rate = f"{limit}/{window}s"  # parse_rate reads it; only None would turn it off

        def parse_rate(self, rate):
            return limit, window

    admitted = 0

    class Root(APIView):
        throttle_classes = [Throttle]

        def get(self, request):
            nonlocal admitted
            admitted += 1
            return HttpResponse("ok\n", content_type="text/plain")

    def count(request):
        return HttpResponse(f"{admitted}\n", content_type="text/plain")

    global urlpatterns
    urlpatterns = [path("", Root.as_view()), path("__admitted", count)]

    from django.core.wsgi import get_wsgi_application

    server = make_server("127.0.0.1", 0, get_wsgi_application(), handler_class=QuietHandler)
    serving.serve(server, args.watch_stdin)


urlpatterns = []

if __name__ == "__main__":
    main()
