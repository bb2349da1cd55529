package realworld

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"
)

// The servers whose limiter is Flask-Limiter run python/flask_app.py (see
// script.go for what it shares with the Node.js servers) with Debian's
// Python 3 and its packages: apt-get install python3-flask-limiter (3.3.0
// in bookworm, with limits 2.8.0 and Flask 2.2.2). It serves on werkzeug's
// threaded server, a thread per connection. Django REST framework's runs
// python/drf_app.py: apt-get install python3-djangorestframework.

// Flask is Flask-Limiter 3.3.0 in Flask 2.2.2, one default limit of 30 per
// 3 seconds keyed by the client's address, in its in-memory storage, with
// its moving-window strategy (the default is fixed-window) and its headers
// on (RATELIMIT_HEADERS_ENABLED; they are off by default). The moving
// window is a sliding log of what it admitted: each admitted request counts
// for 3 s after it; a refused one is not logged. It sends on every answer,
// the 200s too,
//
//	X-RateLimit-Limit: 30
//	X-RateLimit-Remaining: 29   (30 less the log's requests of the last 3 s)
//	X-RateLimit-Reset: 1764581103
//	                            (Unix s: the newest logged request's second
//	                             plus 4, when the log will be empty, and more)
//	Retry-After: 3              (that reset less now, truncated: 3 nearly always)
//
// and a 429 has an HTML body. The reset moves on with the clock, as gin's
// does, but the log gives each request back 3 s after it was counted.
func Flask() Server {
	return Server{
		Name:      "flask",
		Algorithm: "sliding log (moving window)",
		Headers:   "X-RateLimit-Limit/Remaining/Reset (Unix s, when the newest logged request expires, + 1 s), Retry-After (s, truncated) on every answer",
		Quota:     Quota{Limit: defLimit, Window: defWindow},
		start:     func() (*Instance, error) { return startFlask(defLimit, defWindow, "--headers", "on") },
	}
}

// FlaskBare is [Flask] as Flask-Limiter is set up by default: no headers,
// a bare 429 (an HTML body).
func FlaskBare() Server {
	s := Flask()
	s.Name, s.Headers = "flask-bare", ""
	s.start = func() (*Instance, error) { return startFlask(defLimit, defWindow, "--headers", "off") }
	return s
}

// startFlask runs python/flask_app.py with the given quota and further
// flags.
func startFlask(limit int, window time.Duration, flags ...string) (*Instance, error) {
	return startPython(flaskPython, "flask_app.py", limit, window, flags...)
}

// DRF is Django REST framework 3.14's throttling in Django 3.2 (Debian
// bookworm's python3-djangorestframework), run by python/drf_app.py: one
// view with AnonRateThrottle's key, 30 per 3 s, in Django's local-memory
// cache, served one request at a time. SimpleRateThrottle is a sliding log
// of the requests it admitted. It states nothing on a 2xx; a 429 carries
//
//	Retry-After: 3   (until the log's oldest request leaves it, rounded up)
//
// and a JSON body.
func DRF() Server {
	return Server{
		Name:      "drf",
		Algorithm: "sliding log (SimpleRateThrottle)",
		Headers:   "only Retry-After on 429 (s, rounded up: when the oldest logged request expires)",
		Quota:     Quota{Limit: defLimit, Window: defWindow},
		start:     func() (*Instance, error) { return startDRF(defLimit, defWindow) },
	}
}

// startDRF runs python/drf_app.py with the given quota.
func startDRF(limit int, window time.Duration) (*Instance, error) {
	return startPython(drfPython, "drf_app.py", limit, window)
}

// startPython runs the script python/<script> under the Python 3 that
// python finds, with the given quota and further flags.
func startPython(python func() (string, error), script string, limit int, window time.Duration, flags ...string) (*Instance, error) {
	py, err := python()
	if err != nil {
		return nil, err
	}
	dir, err := scriptDir("python", script)
	if err != nil {
		return nil, err
	}
	return startScript(py, dir, script, limit, window, flags...)
}

// flaskPython and drfPython return a Python 3 that imports the server's
// limiter, or an error matching [ErrUnavailable].
var (
	flaskPython = sync.OnceValues(func() (string, error) {
		return pythonWith("flask_limiter", "python3-flask-limiter")
	})
	drfPython = sync.OnceValues(func() (string, error) {
		return pythonWith("rest_framework", "python3-djangorestframework")
	})
)

// pythonWith returns a Python 3 that imports module: Debian's
// /usr/bin/python3 first, where apt installs package, then python3 on PATH.
func pythonWith(module, pkg string) (string, error) {
	candidates := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	for _, py := range candidates {
		if _, err := os.Stat(py); err != nil {
			continue
		}
		if exec.Command(py, "-c", "import "+module).Run() == nil {
			return py, nil
		}
	}
	return "", fmt.Errorf("%w: no python3 that imports %s (apt-get install %s)", ErrUnavailable, module, pkg)
}
