package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestRun(t *testing.T) {
	args := []string{"-duration", "2s", "-latency", "10ms", "-workers", "6", "-calls", "2"}
	var stdout bytes.Buffer
	if err := run(context.Background(), args, &stdout); err != nil {
		t.Fatalf("run(%q) = %v\noutput:\n%s", args, err, stdout.String())
	}
	out := stdout.String()
	for _, want := range []string{"Part 1", "#core", "#search", "Part 2", "calls succeeded"} {
		if !strings.Contains(out, want) {
			t.Errorf("run(%q) output lacks %q:\n%s", args, want, out)
		}
	}
	if strings.Contains(out, "failed on the client side") {
		t.Errorf("run(%q): calls failed in part 1:\n%s", args, out)
	}
}

func TestRunBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-duration", "0s"}, {"-workers", "0"}, {"extra"}} {
		if err := run(context.Background(), args, &bytes.Buffer{}); err == nil {
			t.Errorf("run(%q) = nil, want an error", args)
		}
	}
}
