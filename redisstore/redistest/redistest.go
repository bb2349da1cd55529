// Package redistest starts throwaway redis-server processes for tests: one
// per call to [Start], on a free loopback port, with persistence off and a
// temporary directory, killed when the test ends.
//
// It needs the redis-server binary on $PATH (Debian: apt-get install
// redis-server). Without it Start skips the test, unless the environment has
// CI=true, where a missing server is a broken setup and the test fails.
package redistest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// readyTimeout bounds how long a fresh server may take to answer PING.
const readyTimeout = 10 * time.Second

// Start starts a redis-server for the test t and returns its address
// ("127.0.0.1:port"), a stop function that kills it, and a restart function
// that kills it (if running) and starts a fresh, empty one on the same
// address, returning once it answers. The server is killed when t ends;
// calling stop or restart again, or after the test, is harmless. Stop and
// restart may be called from any goroutine, but not while Start runs.
//
// Start and restart fail t if the server does not come up; restart fails it
// too if the port was taken meanwhile.
func Start(t testing.TB) (addr string, stop func(), restart func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "redistest: redis-server not found on $PATH (apt-get install redis-server): " + err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	s := &server{t: t, bin: bin, dir: t.TempDir()}
	// A port found free may be taken before the server binds it; try another.
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("redistest: finding a free port: %v", err)
		}
		s.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		err = s.start()
		if err == nil {
			break
		}
		if attempt == 4 {
			t.Fatalf("redistest: %v", err)
		}
	}
	t.Cleanup(s.stop)
	return s.addr, s.stop, s.restart
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type server struct {
	t        testing.TB
	bin, dir string
	addr     string // fixed after Start

	mu     sync.Mutex
	cmd    *exec.Cmd     // nil when stopped; guarded by mu
	exited chan struct{} // closed once cmd has been reaped; guarded by mu
	out    bytes.Buffer  // the server's log, for failure messages; guarded by mu
}

func (s *server) start() error {
	host, port, _ := net.SplitHostPort(s.addr)
	cmd := exec.Command(s.bin,
		"--bind", host,
		"--port", port,
		"--save", "",
		"--appendonly", "no",
		"--dir", s.dir,
		"--daemonize", "no",
		"--loglevel", "warning",
	)
	w := lockedWriter{mu: &s.mu, b: &s.out}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()

	deadline := time.Now().Add(readyTimeout)
	for {
		if err := ping(s.addr); err == nil {
			return nil
		}
		select {
		case <-exited:
			s.mu.Lock()
			s.cmd = nil
			log := s.out.String()
			s.mu.Unlock()
			return fmt.Errorf("redis-server on %s exited at start:\n%s", s.addr, log)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return fmt.Errorf("redis-server on %s did not answer PING within %v", s.addr, readyTimeout)
		}
	}
}

func (s *server) stop() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Kill()
	// Once reaped, the listening socket is closed; redis-server binds with
	// SO_REUSEADDR, so a restart can take the port at once.
	<-exited
}

func (s *server) restart() {
	s.t.Helper()
	s.stop()
	if err := s.start(); err != nil {
		s.t.Fatalf("redistest: restart: %v", err)
	}
}

// ping reports whether a Redis server answers PING at addr.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
