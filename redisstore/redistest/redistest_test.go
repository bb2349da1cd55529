package redistest

import (
	"fmt"
	"runtime"
	"testing"
)

func TestStartStopRestart(t *testing.T) {
	addr, stop, restart := Start(t)
	if err := ping(addr); err != nil {
		t.Fatalf("ping after Start: %v", err)
	}
	stop()
	if err := ping(addr); err == nil {
		t.Fatalf("ping after stop: the server still answers at %s", addr)
	}
	stop() // harmless
	restart()
	if err := ping(addr); err != nil {
		t.Fatalf("ping after restart on %s: %v", addr, err)
	}
	restart() // from running, too
	if err := ping(addr); err != nil {
		t.Fatalf("ping after a second restart on %s: %v", addr, err)
	}
}

// recorder is a testing.TB whose Skip and Fatal end the calling goroutine,
// as the real ones do, and are recorded.
type recorder struct {
	testing.TB
	skipped, fatal string
}

func (r *recorder) Skip(args ...any) { r.skipped = fmt.Sprint(args...); runtime.Goexit() }
func (r *recorder) Fatal(args ...any) {
	r.fatal = fmt.Sprint(args...)
	runtime.Goexit()
}

func TestMissingServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		r := &recorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			Start(r)
		}()
		<-done
		if ci == "true" && r.fatal == "" || ci != "true" && r.skipped == "" {
			t.Errorf("with CI=%q and no redis-server: Start skipped %q, failed %q; want it to %s",
				ci, r.skipped, r.fatal, map[bool]string{true: "fail", false: "skip"}[ci == "true"])
		}
	}
}
