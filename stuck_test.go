package throttle

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// FuzzNeverStuck feeds a bucket that learns its rate a run of answers its
// fuzz input spells (statuses, counts, resets near and absurdly far,
// Retry-After, windows, answers that never came), then stops answering,
// and checks the server model's promise: no state refuses for longer than
// the server's window plus MaxCooldown. Whatever the answers said, a caller
// that comes after them gets its request out within that bound, a new
// window's worth of slack included.
func FuzzNeverStuck(f *testing.F) {
	for _, seed := range neverStuckSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, program []byte) {
		if len(program) > 6*64 {
			return // longer runs of answers test nothing more
		}
		synctest.Test(t, func(t *testing.T) { runNeverStuck(t, program) })
	})
}

// Each answer of a program is six bytes: status, limit, remaining, reset,
// Retry-After and window, each an index into the tables below (taken
// modulo their length), and then how long the answer took (×10 ms).
var (
	stuckStatuses  = []int{http.StatusOK, http.StatusTooManyRequests, http.StatusServiceUnavailable, 0}
	stuckCounts    = []float64{-1, 0, 1, 2, 29, 30, 5000, 1e12}
	stuckDurations = []time.Duration{0, 999 * time.Millisecond, time.Second, 3 * time.Second, time.Minute, time.Hour, 10 * 365 * 24 * time.Hour}
)

var neverStuckSeeds = [][]byte{
	{0, 5, 4, 3, 0, 0, 1},                      // 29 of 30 left, reset in 3 s
	{1, 5, 1, 6, 0, 0, 1},                      // a 429 whose reset is ten years out
	{1, 0, 0, 0, 6, 0, 1},                      // a bare 429 whose Retry-After is ten years
	{0, 5, 1, 0, 0, 5, 1, 0, 5, 1, 0, 0, 5, 1}, // spent, no reset, an hour's window
	{3, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1}, // no answer, then a bare 429
	{0, 7, 7, 6, 0, 6, 0, 1, 7, 1, 6, 6, 6, 0}, // absurd counts and lengths
}

func runNeverStuck(t *testing.T, program []byte) {
	const maxCooldown = 20 * time.Second
	b := NewBucket(Config{MaxWait: -1, MaxCooldown: maxCooldown})
	pick := func(i int, n int) int { return int(program[i]) % n }
	for i := 0; i+6 < len(program); i += 7 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*maxCooldown+5*time.Second)
		fl, err := b.Begin(ctx)
		cancel()
		if err != nil {
			t.Fatalf("answer %d: the bucket refused for longer than MaxCooldown + window: %v", i/7, err)
		}
		time.Sleep(time.Duration(program[i+6]) * 10 * time.Millisecond)
		status := stuckStatuses[pick(i, len(stuckStatuses))]
		q := Quota{
			Limit:      stuckCounts[pick(i+1, len(stuckCounts))],
			Remaining:  stuckCounts[pick(i+2, len(stuckCounts))],
			RetryAfter: stuckDurations[pick(i+4, len(stuckDurations))],
			Window:     stuckDurations[pick(i+5, len(stuckDurations))],
		}
		if d := stuckDurations[pick(i+3, len(stuckDurations))]; d > 0 {
			q.Reset = time.Now().Add(d)
		}
		fl.DoneQuota(status, q)
	}
	// The answers said what they said; the server would now admit. Within
	// MaxCooldown (every wait the server asks for) plus the longest window
	// (itself bounded by MaxCooldown), and a second's slack for whole-second
	// resets, a request goes out.
	ctx, cancel := context.WithTimeout(context.Background(), 2*maxCooldown+5*time.Second)
	defer cancel()
	start := time.Now()
	fl, err := b.Begin(ctx)
	if err != nil {
		t.Fatalf("after the answers the bucket refused for longer than MaxCooldown + window: %v (state %+v)", err, b.Stats())
	}
	fl.DoneQuota(http.StatusOK, Quota{Limit: -1, Remaining: -1})
	if waited := time.Since(start); waited > 2*maxCooldown+2*time.Second {
		t.Fatalf("waited %v", waited)
	}
}
