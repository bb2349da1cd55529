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

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"github", []string{"-dialect", "github"}},
		{"ietf-sliding", []string{"-dialect", "ietf", "-algorithm", "sliding"}},
		{"none-token", []string{"-dialect", "none", "-algorithm", "token", "-latency", "0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "chart.png")
			args := append([]string{"-duration", "2s", "-tabs", "3", "-rate", "10", "-out", out}, tc.args...)
			var stdout bytes.Buffer
			if err := run(context.Background(), args, &stdout); err != nil {
				t.Fatalf("run(%q) = %v\noutput:\n%s", args, err, stdout.String())
			}
			for _, want := range []string{"Naive:", "Throttled:", "Summary", "429 Too Many Requests", "Chart: "} {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("run(%q) output lacks %q:\n%s", args, want, stdout.String())
				}
			}
			png, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("chart: %v", err)
			}
			if !bytes.HasPrefix(png, []byte("\x89PNG")) {
				t.Errorf("chart %s is not a PNG", out)
			}
		})
	}
}

func TestRunBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-dialect", "klingon"},
		{"-algorithm", "lottery"},
		{"-tabs", "0"},
		{"-duration", "1s"},
		{"-rate", "0"},
		{"extra"},
	} {
		var stdout bytes.Buffer
		if err := run(context.Background(), args, &stdout); err == nil {
			t.Errorf("run(%q) = nil, want an error", args)
		}
	}
}
