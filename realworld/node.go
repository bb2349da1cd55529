package realworld

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The servers whose limiters run in Node.js (express-rate-limit,
// @fastify/rate-limit, @nestjs/throttler) are scripts in realworld/node,
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

// nodeDir is realworld/node, found from this file's path: the tests and
// cmd/table run from different directories.
func nodeDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "node")
	if !ok || !filepath.IsAbs(file) {
		return "", fmt.Errorf("%w: cannot locate realworld/node (built with -trimpath?)", ErrUnavailable)
	}
	if _, err := os.Stat(filepath.Join(dir, "common.js")); err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return dir, nil
}

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

// nodeStartTimeout bounds how long node may take to print its port.
const nodeStartTimeout = 20 * time.Second

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
	// The child's stdin is a pipe we hold open: should this process die
	// without Close, the pipe closes and the script (--watch-stdin) stops.
	stdin, hold, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdout := &firstLine{line: make(chan string, 1)}
	var stderr capped
	args := append([]string{script, "--limit", strconv.Itoa(limit),
		"--window-ms", strconv.FormatInt(window.Milliseconds(), 10), "--watch-stdin"}, flags...)
	cmd := exec.Command(node, args...)
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, &stderr
	err = cmd.Start()
	stdin.Close()
	if err != nil {
		hold.Close()
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	var port string
	select {
	case port = <-stdout.line:
	case err := <-exited:
		hold.Close()
		return nil, fmt.Errorf("node %s exited before listening (%v): %s%s", script, err, stdout.String(), stderr.String())
	case <-time.After(nodeStartTimeout):
		_ = cmd.Process.Kill()
		<-exited
		hold.Close()
		return nil, fmt.Errorf("node %s printed no port within %v: %s", script, nodeStartTimeout, stderr.String())
	}
	if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
		_ = cmd.Process.Kill()
		<-exited
		hold.Close()
		return nil, fmt.Errorf("node %s: first line %q is not a port", script, port)
	}

	base := "http://127.0.0.1:" + port + "/"
	e := &nodeInstance{script: script, cmd: cmd, exited: exited, hold: hold, stderr: &stderr, countURL: base + "__admitted", admitted: -1}
	return &Instance{URL: base, admitted: e.count, close: e.close}, nil
}

// nodeInstance is a running server script.
type nodeInstance struct {
	script   string
	cmd      *exec.Cmd
	exited   chan error
	hold     *os.File // the write end of the child's stdin
	stderr   *capped
	countURL string

	once     sync.Once
	mu       sync.Mutex
	stopped  bool
	admitted int64 // read last before stopping; -1 if that failed
	closeErr error
}

// count is the server's count of what it admitted: asked while it runs,
// the last answer once it is stopped.
func (e *nodeInstance) count() int64 {
	e.mu.Lock()
	stopped, n := e.stopped, e.admitted
	e.mu.Unlock()
	if stopped {
		return n
	}
	n, err := e.ask()
	if err != nil {
		return -1
	}
	return n
}

// ask reads GET /__admitted, on a connection of its own that it closes.
func (e *nodeInstance) ask() (int64, error) {
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get(e.countURL)
	if err != nil {
		return -1, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64))
	if err != nil {
		return -1, err
	}
	if resp.StatusCode != http.StatusOK {
		return -1, fmt.Errorf("%s: %s", e.countURL, resp.Status)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return -1, fmt.Errorf("%s: %q is not a count", e.countURL, b)
	}
	return n, nil
}

// close reads the final count, stops node (SIGTERM, then SIGKILL after
// 5 s) and waits for it. It is safe to call more than once.
func (e *nodeInstance) close() error {
	e.once.Do(func() {
		n, askErr := e.ask()
		waitErr := terminate(e.cmd, e.exited)
		e.hold.Close()
		if waitErr != nil {
			waitErr = fmt.Errorf("node %s: %w: %s", e.script, waitErr, e.stderr.String())
		}
		e.mu.Lock()
		e.stopped, e.admitted = true, n
		e.closeErr = errors.Join(askErr, waitErr)
		e.mu.Unlock()
	})
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closeErr
}

// maxOutput is how much of a child's output is kept for error messages.
const maxOutput = 16 << 10

// capped keeps the first maxOutput bytes written to it.
type capped struct {
	mu sync.Mutex
	b  []byte
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.b = append(c.b, p[:min(len(p), maxOutput-len(c.b))]...)
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.b)
}

// firstLine is a [capped] that sends its first line, without the newline,
// on line once it is complete.
type firstLine struct {
	capped
	line chan string // buffered, 1
	sent bool        // guarded by capped.mu
}

func (f *firstLine) Write(p []byte) (int, error) {
	n, _ := f.capped.Write(p)
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := bytes.IndexByte(f.b, '\n'); i >= 0 && !f.sent {
		f.sent = true
		f.line <- strings.TrimSpace(string(f.b[:i]))
	}
	return n, nil
}
