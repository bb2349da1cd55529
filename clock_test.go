package throttle

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInstantArithmetic(t *testing.T) {
	tests := []struct {
		name string
		got  instant
		want instant
	}{
		{"add rounds to the nanosecond", instant(10).add(2.5), 13},
		{"add rounds down below half", instant(10).add(2.4), 12},
		{"add goes back", instant(10).add(-12.4), -2},
		{"never stays never", never.add(-1e18), never},
		{"+Inf is never", instant(0).add(math.Inf(1)), never},
		{"NaN is never", instant(0).add(math.NaN()), never},
		{"beyond the horizon is the horizon", instant(horizon - 10).add(20), horizon},
		{"far back is the horizon", instant(-horizon + 10).add(-1e300), -horizon},
		{"-Inf is the horizon", instant(0).add(math.Inf(-1)), -horizon},
		{"the nanosecond at 200 days", instant(200 * 24 * time.Hour).add(1), instant(200*24*time.Hour) + 1},
		{"a duration beyond the horizon", sinceEpoch(time.Duration(math.MaxInt64)), horizon},
		{"a duration far back", sinceEpoch(time.Duration(math.MinInt64)), -horizon},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.got)
		})
	}
	assert.Equal(t, math.Inf(1), never.sub(0), "never.sub")
	assert.Equal(t, math.Inf(-1), instant(0).sub(never), "sub(never)")
	assert.Equal(t, -2.0*horizon, instant(-horizon).sub(horizon), "sub does not overflow across the horizon")
	day200 := instant(200 * 24 * time.Hour)
	assert.Equal(t, 1.0, (day200 + 1).sub(day200), "one nanosecond, 200 days on")
}

// FuzzInstant checks add and sub against exact arithmetic: add stays within
// the horizon, becomes never only for never, +Inf and NaN, and is exact to
// the rounding wherever nothing is clamped; sub never overflows.
func FuzzInstant(f *testing.F) {
	for _, s := range []struct {
		t int64
		d float64
	}{
		{10, 2.5}, {10, -12.4}, {0, math.Inf(1)}, {0, math.Inf(-1)}, {0, math.NaN()},
		{horizon - 10, 20}, {-horizon + 10, -1e300}, {int64(200 * 24 * time.Hour), 1},
		{math.MaxInt64, -1e18}, {math.MinInt64, 0},
	} {
		f.Add(s.t, s.d)
	}
	f.Fuzz(func(t *testing.T, ti int64, d float64) {
		x := sinceEpoch(time.Duration(ti))
		if ti == math.MaxInt64 {
			x = never
		}
		got := x.add(d)
		switch {
		case x == never || math.IsInf(d, 1) || math.IsNaN(d):
			require.Equal(t, never, got, "%d.add(%v)", x, d)
			return
		case got < -horizon || got > horizon:
			t.Fatalf("%d.add(%v) = %d, beyond the horizon", x, d, got)
		}
		if s := float64(x) + d; math.Abs(s) < horizon/2 && math.Abs(d) < 1<<52 {
			require.Equal(t, math.Round(d), got.sub(x), "%d.add(%v).sub(%d)", x, d, x)
		}
		require.GreaterOrEqual(t, got.sub(-horizon), 0.0, "%d.sub(-horizon) overflows", got)
		require.GreaterOrEqual(t, instant(horizon).sub(got), 0.0, "horizon.sub(%d) overflows", got)
	})
}

// TestBucketFarFromItsEpoch runs one scenario on a bucket whose clock
// starts at its epoch and on one whose clock reads 200 days, past the 104
// days after which float64 nanoseconds lose the nanosecond: both must admit,
// refuse and wake their waiters at the same nanoseconds.
func TestBucketFarFromItsEpoch(t *testing.T) {
	configs := []Config{
		{Limit: 3, Burst: 1},                 // a fractional interval
		{Limit: 7, Burst: 2, MaxQueue: 8},    // waiters behind a burst
		{Limit: 1e6 / 7, Burst: 1},           // an interval of 7 µs
		{Limit: 4, Burst: 1, MaxWait: 750e6}, // MaxWait at the third waiter's planned instant
		{Limit: 1e-6, Burst: 2000},           // a burst beyond maxTau: no lock-free path
	}
	for _, c := range configs {
		t.Run(fmt.Sprintf("limit=%v/burst=%d", c.Limit, c.Burst), func(t *testing.T) {
			var logs [2][]string
			for i, age := range []time.Duration{0, 200 * 24 * time.Hour} {
				synctest.Test(t, func(t *testing.T) { logs[i] = farScenario(t, c, age) })
			}
			assert.Equal(t, logs[0], logs[1], "the bucket 200 days from its epoch, against a new one")
		})
	}
}

// farScenario drains a bucket whose clock reads age, queues waiters behind
// it, then probes Allow nanosecond by nanosecond around each next token,
// and returns what happened when, in nanoseconds since it started.
func farScenario(t *testing.T, c Config, age time.Duration) []string {
	start := time.Now()
	b := newBucket(c, start.Add(-age), sinceEpoch(age))
	since := func() int64 { return int64(time.Since(start)) }
	var log []string
	var mu sync.Mutex
	note := func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, fmt.Sprintf("%d: ", since())+fmt.Sprintf(f, a...))
	}

	require.True(t, b.AllowN(c.Burst), "a full bucket")
	note("tokens %v", b.Tokens())
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			err := b.Wait(context.Background())
			note("waiter %d: %v", i, err)
		})
		synctest.Wait() // queued in this order
	}
	wg.Wait()
	note("tokens %v", b.Tokens())

	// The next tokens, to the nanosecond: refused until the instant the
	// bucket plans for them, admitted from then on.
	iv := time.Duration(float64(time.Second) / float64(c.Limit))
	for range 3 {
		time.Sleep(iv - 3*time.Nanosecond)
		for j := 0; !b.Allow(); j++ {
			require.Less(t, j, 10, "Allow refused for 10 ns past the token's instant")
			time.Sleep(time.Nanosecond)
		}
		note("allowed, tokens %v", b.Tokens())
	}
	return log
}
