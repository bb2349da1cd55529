package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/go-throttle/throttle/redisstore/redistest"
)

// TestMain also serves as the child processes: the parent re-executes
// os.Executable(), which under test is this test binary, with childFlag
// first. The test flags all start with -test., so they cannot be mistaken
// for it.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == childFlag {
		if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

var lateRE = regexp.MustCompile(`refused (\d+) \(429\); (\d+) of them after the first window`)

// runShort runs the command with short flags and the extra args, and
// checks what every run must print.
func runShort(t *testing.T, extra ...string) string {
	t.Helper()
	args := append([]string{"-procs", "2", "-workers", "2", "-duration", "3s", "-window", "1s", "-rate", "10"}, extra...)
	var stdout bytes.Buffer
	if err := run(t.Context(), args, &stdout); err != nil {
		t.Fatalf("run(%q) = %v\noutput:\n%s", args, err, stdout.String())
	}
	out := stdout.String()
	t.Logf("run(%q):\n%s", args, out)
	m := lateRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("run(%q) output lacks the totals line (%v):\n%s", args, lateRE, out)
	}
	// A smoke test on a shared machine with 1 s windows: the figures are
	// asserted by redisstore's TestSharedAcrossProcesses; here a loose bound.
	if late, _ := strconv.Atoi(m[2]); late > 5 {
		t.Errorf("run(%q): %d 429s after the first window, want at most 5", args, late)
	}
	for _, want := range []string{"Quota: 10/s × 3s = 30 requests", "% of the quota used"} {
		if !strings.Contains(out, want) {
			t.Errorf("run(%q) output lacks %q:\n%s", args, want, out)
		}
	}
	return out
}

func TestRun(t *testing.T) {
	t.Parallel()
	addr, _, _ := redistest.Start(t)
	out := runShort(t, "-redis", addr, "-start-redis=false")
	if want := "Redis at " + addr + " answered PING"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

func TestRunStartsRedis(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	addr := deadAddr(t)
	out := runShort(t, "-redis", addr, "-start-redis")
	if want := "No Redis answered at " + addr + ": started a private redis-server"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

func TestRunNoRedis(t *testing.T) {
	t.Parallel()
	addr := deadAddr(t)
	args := []string{"-redis", addr, "-start-redis=false"}
	var stdout bytes.Buffer
	err := run(t.Context(), args, &stdout)
	if want := "redis-server is not running at " + addr; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("run(%q) = %v, want an error containing %q", args, err, want)
	}
}

func TestRunBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"-procs", "0"},
		{"-workers", "0"},
		{"-rate", "0"},
		{"-rate", "0.1", "-window", "1s"},
		{"-window", "1500ms"},
		{"-duration", "0s"},
		{"extra"},
		{childFlag, "-redis", "x"},
	} {
		var stdout bytes.Buffer
		if err := run(t.Context(), args, &stdout); err == nil {
			t.Errorf("run(%q) = nil, want an error", args)
		}
	}
}

// deadAddr returns a loopback address where nothing listens.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
