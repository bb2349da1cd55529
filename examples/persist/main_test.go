package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestRunResumes(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	// At 2/s the bucket refills in 1.5 s: a stall that long between the
	// first run's calls and its save would be needed to make the second
	// start full. (At 20/s a 150 ms stall under -race in CI did.)
	args := []string{"-state", state, "-limit", "2", "-burst", "3", "-calls", "3", "-runs", "2"}
	var stdout bytes.Buffer
	if err := run(context.Background(), args, &stdout); err != nil {
		t.Fatalf("run(%q) = %v\noutput:\n%s", args, err, stdout.String())
	}
	if _, err := os.Stat(state); err != nil {
		t.Fatalf("state file: %v", err)
	}
	out := stdout.String()
	// The second run resumes a nearly empty bucket, not a full one.
	i := strings.Index(out, "Run 2 of 2")
	if i < 0 || strings.Contains(out[i:], "start: 3.00 tokens") {
		t.Errorf("run(%q): the second run did not resume the saved bucket:\n%s", args, out)
	}
}

func TestRunBadStateFile(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(state, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-state", state, "-limit", "50", "-burst", "2", "-calls", "2"}
	var stdout bytes.Buffer
	if err := run(context.Background(), args, &stdout); err != nil {
		t.Fatalf("run(%q) = %v\noutput:\n%s", args, err, stdout.String())
	}
	if !strings.Contains(stdout.String(), "unreadable") {
		t.Errorf("run(%q) did not report the bad state file:\n%s", args, stdout.String())
	}
}
