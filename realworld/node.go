package realworld

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// The servers whose limiters run in Node.js (express-rate-limit,
// @fastify/rate-limit, @nestjs/throttler, koa-ratelimit,
// rate-limiter-flexible) are scripts in realworld/node,
// one per library, that share node/common.js. Node.js and npm must be
// installed (apt-get install nodejs npm). The first Start in a process runs
// npm ci in realworld/node if its node_modules is missing or older than its
// package-lock.json; each Start then runs its own node <script> on a free
// loopback port. Close stops it (SIGTERM, then SIGKILL after 5 s); the
// admitted count is the server's own, read from its GET /__admitted (a path
// the limiter skips) while it runs and once more before it stops.

// Fastify is @fastify/rate-limit 11.2.0 in Fastify 5.12.8, in the setup its
// README gives: max 30, timeWindow 3000 ms, keyed by client IP, its default
// local store. That store keeps a fixed window per key that opens at the
// first request after the previous window ended; every request is counted,
// the refused ones too (harmless in a fixed window). It sends on a 200 and
// on a 429 alike (Remaining 0 on every 429)
//
//	x-ratelimit-limit: 30
//	x-ratelimit-remaining: 29
//	x-ratelimit-reset: 3        (seconds until the window ends, rounded up)
//
// and on a 429 also retry-after, the same seconds, with a JSON body.
func Fastify() Server {
	return Server{
		Name:          "fastify",
		Algorithm:     "fixed window from first request",
		Headers:       "x-ratelimit-limit/remaining/reset (s, rounded up), retry-after on 429",
		Quota:         Quota{Limit: defLimit, Window: defWindow},
		CountsRefused: true,
		start:         func() (*Instance, error) { return startNode("fastify.js", defLimit, defWindow) },
	}
}

// Nest is @nestjs/throttler 6.7.1 in NestJS 11, in the setup its README
// gives: ThrottlerModule.forRoot([{ttl: 3000, limit: 30}]) and
// ThrottlerGuard as the global guard, keyed by client IP, its default
// in-memory storage. What it enforces is a sliding log: each admitted
// request counts for 3 s after it, and the one that would make 31 within
// 3 s blocks the key for a whole ttl from then (blockDuration defaults to
// ttl), after which its count starts from 0. Its reset is neither: the
// key's record expires 3 s after it was made and is then made again, a
// fixed window from the first request that gates nothing. It sends on a
// 200
//
//	X-RateLimit-Limit: 30
//	X-RateLimit-Remaining: 29   (30 less the requests of the last 3 s)
//	X-RateLimit-Reset: 3        (seconds until that record expires, rounded up)
//
// and on a 429 only Retry-After, the seconds until the block ends, rounded
// up, with a JSON body. A request refused while blocked is not counted.
func Nest() Server {
	return Server{
		Name:      "nest",
		Algorithm: "sliding log; over the limit, blocked for the window",
		Headers:   "X-RateLimit-Limit/Remaining/Reset (s, rounded up; the reset of a record, not of the log) on 2xx, only Retry-After on 429",
		Quota:     Quota{Limit: defLimit, Window: defWindow},
		// At exactly the steady rate, a request now and then comes a
		// moment before the one 3 s earlier has expired, and the key is
		// blocked for 3 s.
		RefusesSteadyRate: true,
		start:             func() (*Instance, error) { return startNode("nest.js", defLimit, defWindow) },
	}
}

// Koa is koa-ratelimit 6.0.0 in Koa 3.3.0, in the setup its README gives:
// its memory driver, duration 3000 ms, max 30, keyed by client IP. Its
// record of a key opens at the first request after the last one expired,
// a fixed window from the first request; a refused request is not
// counted. It sends on a 200 and on a 429 alike
//
//	X-RateLimit-Limit: 30
//	X-RateLimit-Remaining: 29
//	X-RateLimit-Reset: 1796427308.123456   (Unix seconds, to the microsecond)
//
// and on a 429 also Retry-After, the seconds until the reset, truncated.
func Koa() Server {
	return Server{
		Name:      "koa",
		Algorithm: "fixed window from first request",
		Headers:   "X-RateLimit-Limit/Remaining/Reset (Unix s, to the µs), Retry-After (s, truncated) on 429",
		Quota:     Quota{Limit: defLimit, Window: defWindow},
		start:     func() (*Instance, error) { return startNode("koa.js", defLimit, defWindow) },
	}
}

// Flexible is rate-limiter-flexible 11.4.0's RateLimiterMemory (points 30,
// duration 3 s, keyed by client IP) behind a node:http server that sends
// the headers its README gives on every answer, admitted or refused:
//
//	Retry-After: 2.873             (msBeforeNext ÷ 1000: s, to the ms)
//	X-RateLimit-Limit: 30
//	X-RateLimit-Remaining: 29
//	X-RateLimit-Reset: 1796427308  (Unix s, rounded up)
//
// A key's points expire together a duration after the first: a fixed
// window from the first request. A refused request is counted too (which
// a fixed window does not feel).
func Flexible() Server {
	return Server{
		Name:          "flexible",
		Algorithm:     "fixed window from first request",
		Headers:       "X-RateLimit-Limit/Remaining/Reset (Unix s, rounded up), Retry-After (s, to the ms) on every answer",
		Quota:         Quota{Limit: defLimit, Window: defWindow},
		CountsRefused: true,
		start:         func() (*Instance, error) { return startNode("flexible.js", defLimit, defWindow) },
	}
}

// nodeDir is realworld/node.
func nodeDir() (string, error) { return scriptDir("node", "common.js") }

// NodePath returns the Node.js binary, or an error matching [ErrUnavailable].
func NodePath() (string, error) {
	for _, name := range []string{"node", "nodejs"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: node not on PATH (apt-get install nodejs npm)", ErrUnavailable)
}

// npmInstalled installs realworld/node's packages once per process, so
// that servers started at the same time do not run npm ci over each other.
var npmInstalled = sync.OnceValue(func() error {
	dir, err := nodeDir()
	if err != nil {
		return err
	}
	if fresh(filepath.Join(dir, "node_modules", ".package-lock.json"), filepath.Join(dir, "package-lock.json")) {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("%w: npm not on PATH, needed once to install %s/node_modules (apt-get install npm)", ErrUnavailable, dir)
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: npm ci in %s: %v\n%s", ErrUnavailable, dir, err, out)
	}
	return nil
})

// fresh reports whether installed (npm's record of node_modules) exists and
// is no older than lock.
func fresh(installed, lock string) bool {
	in, err := os.Stat(installed)
	if err != nil {
		return false
	}
	l, err := os.Stat(lock)
	return err == nil && !in.ModTime().Before(l.ModTime())
}

// startNode runs the server script (express.js, fastify.js, nest.js: see
// node/common.js) with the given quota and further flags.
func startNode(script string, limit int, window time.Duration, flags ...string) (*Instance, error) {
	node, err := NodePath()
	if err != nil {
		return nil, err
	}
	if err := npmInstalled(); err != nil {
		return nil, err
	}
	dir, err := nodeDir()
	if err != nil {
		return nil, err
	}
	return startScript(node, dir, script, limit, window, flags...)
}
