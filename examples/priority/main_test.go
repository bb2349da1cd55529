package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-throttle/throttle/throttletest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestScenario runs both runs in virtual time against the in-memory API
// and checks what the example claims: with priorities the user's p99 wait
// is a token or two, well below the FIFO queue's, while the sync still
// fetches about as many pages and the quota is used.
func TestScenario(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := options{rate: 20, workers: 8, every: 300 * time.Millisecond, duration: 20 * time.Second, latency: 20 * time.Millisecond}
		var rs []result
		for _, prioritized := range []bool{false, true} {
			h := throttletest.NewHandler(o.server())
			r := scenario(context.Background(), "http://api.test", h, o, prioritized)
			r.server = h.Stats().Counts
			rs = append(rs, r)
		}
		var out bytes.Buffer
		report(&out, o, rs)
		t.Log("\n" + out.String())
		fifo, prio := rs[0], rs[1]
		for _, r := range rs {
			if r.userErrs > 0 || r.server.Refused > 0 {
				t.Errorf("%s: %d user errors, %d refused by the server", r.name, r.userErrs, r.server.Refused)
			}
			if used := float64(r.server.Admitted) / (float64(o.rate) * o.duration.Seconds()); used < 0.9 {
				t.Errorf("%s: %.0f%% of the quota used, want at least 90%%", r.name, 100*used)
			}
		}
		if p99 := quantile(prio.user, 0.99); p99 > o.latency+2*time.Second/time.Duration(o.rate) {
			t.Errorf("priority: user p99 %v, want at most two tokens (%v) beyond the latency", p99, 2*time.Second/time.Duration(o.rate))
		}
		if fp, pp := quantile(fifo.user, 0.99), quantile(prio.user, 0.99); fp < 3*pp {
			t.Errorf("user p99: fifo %v, priority %v: want fifo at least 3× priority", fp, pp)
		}
		if prio.pages < fifo.pages*9/10 {
			t.Errorf("sync pages: priority %d, fifo %d: the sync lost more than 10%%", prio.pages, fifo.pages)
		}
	})
}

func TestRun(t *testing.T) {
	var out bytes.Buffer
	args := []string{"-duration", "1s", "-rate", "20", "-workers", "3", "-every", "100ms", "-latency", "1ms"}
	if err := run(context.Background(), args, &out); err != nil {
		t.Fatalf("run(%q) = %v\n%s", args, err, out.String())
	}
	for _, want := range []string{"fifo", "priority", "user p99", "quota used"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("run(%q) output lacks %q:\n%s", args, want, out.String())
		}
	}
}

func TestRunBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-rate", "0"},
		{"-workers", "0"},
		{"-every", "0s"},
		{"-duration", "10ms"},
		{"-latency", "-1s"},
		{"extra"},
	} {
		var out bytes.Buffer
		if err := run(context.Background(), args, &out); err == nil {
			t.Errorf("run(%q) = nil, want an error", args)
		}
	}
}
