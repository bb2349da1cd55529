package throttle

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"
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

// A program's first byte picks the bucket's configuration; then each
// answer is seven bytes: status, limit, remaining, reset, Retry-After and
// window, each an index into the tables below (taken modulo their length),
// and how long the answer took (×10 ms).
var (
	stuckConfigs = []Config{
		{},                      // learns its rate
		{Limit: 10},             // told the rate
		{Pace: PaceBurst},       // spends a window's quota at once
		{Limit: rate.Inf},       // no local limit: only cooldowns
		{Limit: 0.01, Burst: 1}, // told a rate slower than MaxCooldown
	}
	stuckStatuses  = []int{http.StatusOK, http.StatusTooManyRequests, http.StatusServiceUnavailable, 0}
	stuckCounts    = []float64{-1, 0, 1, 2, 29, 30, 5000, 1e12}
	stuckDurations = []time.Duration{0, 999 * time.Millisecond, time.Second, 3 * time.Second, time.Minute, time.Hour, 10 * 365 * 24 * time.Hour}
)

var neverStuckSeeds = [][]byte{
	{0, 0, 5, 4, 3, 0, 0, 1},                      // 29 of 30 left, reset in 3 s
	{0, 1, 5, 1, 6, 0, 0, 1},                      // a 429 whose reset is ten years out
	{0, 1, 0, 0, 0, 6, 0, 1},                      // a bare 429 whose Retry-After is ten years
	{0, 0, 5, 1, 0, 0, 5, 1, 0, 5, 1, 0, 0, 5, 1}, // spent, no reset, an hour's window
	{0, 3, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1}, // no answer, then a bare 429
	{0, 0, 7, 7, 6, 0, 6, 0, 1, 7, 1, 6, 6, 6, 0}, // absurd counts and lengths
	{1, 0, 5, 1, 0, 0, 5, 1},                      // told the rate, spent for an hour
	{2, 0, 6, 0, 5, 0, 0, 1},                      // PaceBurst, spent until an hour's reset
	{3, 1, 0, 0, 0, 0, 0, 1},                      // no local limit, a bare 429
	{4, 0, 5, 1, 0, 0, 5, 1},                      // a crawl the user asked for
}

func runNeverStuck(t *testing.T, program []byte) {
	const maxCooldown = 20 * time.Second
	if len(program) == 0 {
		return
	}
	c := stuckConfigs[int(program[0])%len(stuckConfigs)]
	c.MaxWait, c.MaxCooldown = -1, maxCooldown
	b := NewBucket(c)
	program = program[1:]
	// The told rate is the user's own wait, not the server's.
	bound := 2*maxCooldown + 5*time.Second
	if c.Limit > 0 && c.Limit != rate.Inf {
		bound += time.Duration(float64(time.Second) / float64(c.Limit))
	}
	pick := func(i int, n int) int { return int(program[i]) % n }
	var latest time.Duration // the longest an answer took
	for i := 0; i+6 < len(program); i += 7 {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		fl, err := b.Begin(ctx)
		cancel()
		if err != nil {
			t.Fatalf("answer %d: the bucket refused for longer than MaxCooldown + window: %v", i/7, err)
		}
		latency := time.Duration(program[i+6]) * 10 * time.Millisecond
		latest = max(latest, latency)
		time.Sleep(latency)
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
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	start := time.Now()
	fl, err := b.Begin(ctx)
	if err != nil {
		t.Fatalf("after the answers the bucket refused for longer than MaxCooldown + window: %v (state %+v)", err, b.Stats())
	}
	fl.DoneQuota(http.StatusOK, Quota{Limit: -1, Remaining: -1})
	// Every wait the model plans ends within MaxCooldown of the answer that
	// planned it, and the reset's uncertainty (a second for whole-second
	// resets, and the answer's latency) aside, as the README promises; the
	// told rate's own wait apart.
	tight := maxCooldown + time.Second + latest + (bound - 2*maxCooldown - 5*time.Second)
	if waited := time.Since(start); waited > tight {
		t.Fatalf("waited %v after the last answer, more than MaxCooldown and slack (%v)", waited, tight)
	}
	if testing.Verbose() {
		t.Logf("the last request waited %v", time.Since(start))
	}
}
