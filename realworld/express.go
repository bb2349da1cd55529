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

// Express is express-rate-limit 8.7.5 (npm) in Express 5, run by Node.js,
// in the setup its README gives: 30 per 3 s (windowMs 3000) by client IP
// (its default key), the default MemoryStore, standardHeaders "draft-8",
// legacyHeaders off.
//
// The MemoryStore keeps a fixed window per key that opens at the first
// request after the previous window ended (resetTime = now + windowMs): it
// is aligned to no clock and not to the process's start. Every request is
// counted before it is checked, the refused ones too (harmless in a fixed
// window: the count dies with it); the 31st is refused. It sends, on a 200
// and on a 429 alike (r is 0 on every 429),
//
//	RateLimit: "30-in-3sec"; r=29; t=3
//	RateLimit-Policy: "30-in-3sec"; q=30; w=3; pk=:MTJjYTE3YjQ5YWYy:
//
// where t is the seconds until the window ends, rounded up (3 while 2.001 s
// are left: up to 1 s late), w the window in seconds rounded up, and pk the
// base64 of 12 hex digits of the key's SHA-256. A 429 also carries
// Retry-After with the same rounded-up seconds as t, and the body "Too many
// requests, please try again later." as text/html.
//
// Node.js and npm must be installed (apt-get install nodejs npm). The first
// Start in a process runs npm ci in realworld/express if its node_modules is
// missing or older than its package-lock.json; each Start then runs its own
// node server.js on a free loopback port. Close stops it (SIGTERM, then
// SIGKILL after 5 s); the admitted count is the server's own, read from its
// GET /__admitted (a path the limiter skips) while it runs and once more
// before it stops.
func Express() Server {
	return Server{
		Name:          "express",
		Algorithm:     "fixed window from first request",
		Headers:       `RateLimit "…"; r=; t= (s, rounded up) + RateLimit-Policy q=; w= (IETF draft-8), Retry-After on 429`,
		Quota:         Quota{Limit: defLimit, Window: defWindow},
		CountsRefused: true,
		start:         func() (*Instance, error) { return startExpress("draft-8", defLimit, defWindow) },
	}
}

// ExpressDraft6 is [Express] with standardHeaders "draft-6": the same fixed
// window, which sends on a 200 and on a 429 alike (Remaining 0 on every 429)
//
//	RateLimit-Policy: 30;w=3
//	RateLimit-Limit: 30
//	RateLimit-Remaining: 29
//	RateLimit-Reset: 3
//
// with Reset the seconds until the window ends, rounded up, as [Express]'s t,
// and on a 429 also Retry-After with the same value.
func ExpressDraft6() Server {
	s := Express()
	s.Name = "express-draft6"
	s.Headers = "RateLimit-Limit/Remaining/Reset (s, rounded up) + RateLimit-Policy 30;w=3 (IETF draft-6), Retry-After on 429"
	s.start = func() (*Instance, error) { return startExpress("draft-6", defLimit, defWindow) }
	return s
}

// expressDir is realworld/express, found from this file's path: the tests
// and cmd/table run from different directories.
func expressDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "express")
	if !ok || !filepath.IsAbs(file) {
		return "", fmt.Errorf("%w: cannot locate realworld/express (built with -trimpath?)", ErrUnavailable)
	}
	if _, err := os.Stat(filepath.Join(dir, "server.js")); err != nil {
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

// npmInstalled installs realworld/express's packages once per process, so
// that servers started at the same time do not run npm ci over each other.
var npmInstalled = sync.OnceValue(func() error {
	dir, err := expressDir()
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

// expressStartTimeout bounds how long node may take to print its port.
const expressStartTimeout = 20 * time.Second

// startExpress runs server.js with the given header draft and quota.
func startExpress(headers string, limit int, window time.Duration) (*Instance, error) {
	node, err := NodePath()
	if err != nil {
		return nil, err
	}
	if err := npmInstalled(); err != nil {
		return nil, err
	}
	dir, err := expressDir()
	if err != nil {
		return nil, err
	}
	// The child's stdin is a pipe we hold open: should this process die
	// without Close, the pipe closes and server.js (--watch-stdin) stops.
	stdin, hold, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdout := &firstLine{line: make(chan string, 1)}
	var stderr capped
	cmd := exec.Command(node, "server.js",
		"--headers", headers, "--limit", strconv.Itoa(limit),
		"--window-ms", strconv.FormatInt(window.Milliseconds(), 10), "--watch-stdin")
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
		return nil, fmt.Errorf("node server.js exited before listening (%v): %s%s", err, stdout.String(), stderr.String())
	case <-time.After(expressStartTimeout):
		_ = cmd.Process.Kill()
		<-exited
		hold.Close()
		return nil, fmt.Errorf("node server.js printed no port within %v: %s", expressStartTimeout, stderr.String())
	}
	if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
		_ = cmd.Process.Kill()
		<-exited
		hold.Close()
		return nil, fmt.Errorf("node server.js: first line %q is not a port", port)
	}

	base := "http://127.0.0.1:" + port + "/"
	e := &expressInstance{cmd: cmd, exited: exited, hold: hold, stderr: &stderr, countURL: base + "__admitted", admitted: -1}
	return &Instance{URL: base, admitted: e.count, close: e.close}, nil
}

// expressInstance is a running server.js.
type expressInstance struct {
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
func (e *expressInstance) count() int64 {
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
func (e *expressInstance) ask() (int64, error) {
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
func (e *expressInstance) close() error {
	e.once.Do(func() {
		n, askErr := e.ask()
		waitErr := terminate(e.cmd, e.exited)
		e.hold.Close()
		if waitErr != nil {
			waitErr = fmt.Errorf("node server.js: %w: %s", waitErr, e.stderr.String())
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
