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

// The servers that run as scripts (Node.js, Python) speak one protocol:
//
//	<interpreter> <script> --limit N --window-ms MS --watch-stdin [flags]
//
// The script listens on 127.0.0.1, port 0, and prints the port as the first
// line of stdout; GET /__admitted, which its limiter skips, answers the
// count of what it admitted; SIGTERM stops it cleanly, and so does the end
// of its stdin, a pipe held here, so that it does not outlive a parent that
// died without Close.

// scriptDir is realworld/<name>, found from this file's path (the tests
// and cmd/table run from different directories), with file in it.
func scriptDir(name, file string) (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(self) {
		return "", fmt.Errorf("%w: cannot locate realworld/%s (built with -trimpath?)", ErrUnavailable, name)
	}
	dir := filepath.Join(filepath.Dir(self), name)
	if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return dir, nil
}

// scriptStartTimeout bounds how long a script may take to print its port.
const scriptStartTimeout = 20 * time.Second

// startScript runs the server script in dir with the interpreter bin, the
// given quota and further flags, and waits for the port it prints.
func startScript(bin, dir, script string, limit int, window time.Duration, flags ...string) (*Instance, error) {
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
	cmd := exec.Command(bin, args...)
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
		return nil, fmt.Errorf("%s exited before listening (%v): %s%s", script, err, stdout.String(), stderr.String())
	case <-time.After(scriptStartTimeout):
		_ = cmd.Process.Kill()
		<-exited
		hold.Close()
		return nil, fmt.Errorf("%s printed no port within %v: %s", script, scriptStartTimeout, stderr.String())
	}
	if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
		_ = cmd.Process.Kill()
		<-exited
		hold.Close()
		return nil, fmt.Errorf("%s: first line %q is not a port", script, port)
	}

	base := "http://127.0.0.1:" + port + "/"
	e := &scriptInstance{script: script, cmd: cmd, exited: exited, hold: hold, stderr: &stderr, countURL: base + "__admitted", admitted: -1}
	return &Instance{URL: base, admitted: e.count, close: e.close}, nil
}

// scriptInstance is a running server script.
type scriptInstance struct {
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
func (e *scriptInstance) count() int64 {
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
func (e *scriptInstance) ask() (int64, error) {
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

// close reads the final count, stops the script (SIGTERM, then SIGKILL
// after 5 s) and waits for it. It is safe to call more than once.
func (e *scriptInstance) close() error {
	e.once.Do(func() {
		n, askErr := e.ask()
		waitErr := terminate(e.cmd, e.exited)
		e.hold.Close()
		if waitErr != nil {
			waitErr = fmt.Errorf("%s: %w: %s", e.script, waitErr, e.stderr.String())
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
