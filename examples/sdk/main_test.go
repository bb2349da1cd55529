package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestRun(t *testing.T) {
	args := []string{"-workers", "3", "-calls", "3", "-limit", "4", "-window", "500ms"}
	var stdout bytes.Buffer
	if err := run(context.Background(), args, &stdout); err != nil {
		t.Fatalf("run(%q) = %v\noutput:\n%s", args, err, stdout.String())
	}
	for _, want := range []string{"9 calls in", "a caller with a 50ms deadline", "The bucket: pacing at"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("run(%q) output lacks %q:\n%s", args, want, stdout.String())
		}
	}
}

func TestParseReply(t *testing.T) {
	r, err := parseReply("BUSY limit=10 remaining=0 reset=1700000000123 window=2000 retry=450")
	if err != nil {
		t.Fatalf("parseReply: %v", err)
	}
	q := r.quota
	if r.status != statusBusy || q.Limit != 10 || q.Remaining != 0 || q.Window != 2*time.Second ||
		q.RetryAfter != 450*time.Millisecond || !q.Reset.Equal(time.UnixMilli(1700000000123)) {
		t.Errorf("parseReply(BUSY ...) = %+v", r)
	}
	r, err = parseReply("OK 12.50")
	if err != nil {
		t.Fatalf("parseReply: %v", err)
	}
	if r.status != statusOK || r.price != 12.5 || r.quota.Limit != -1 || r.quota.Remaining != -1 {
		t.Errorf("parseReply(OK 12.50) = %+v, want unknown quota (-1)", r)
	}
	for _, bad := range []string{"", "OK", "OK x", "HUH", "OK 1 remaining=-3", "BUSY limit=x"} {
		if _, err := parseReply(bad); err == nil {
			t.Errorf("parseReply(%q) = nil error, want one", bad)
		}
	}
}
